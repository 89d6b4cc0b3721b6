#include "http.hpp"

#include <httplib.h>

#include <chrono>
#include <utility>

namespace tunekit::serve::detail {

namespace {

// Answers `res` with what the queue gives `j` once its turn came.
void answer(request_queue &queue, std::shared_ptr<job> j, httplib::Response &res) {
  const response r = queue.submit(std::move(j)).get();
  res.status = r.status;
  res.set_content(r.body, r.content_type);
}

} // namespace

http_endpoint::http_endpoint(const options &opts, request_queue &queue, int ranks)
    : m_server(std::make_unique<httplib::Server>()) {
  httplib::Server &server = *m_server;
  const auto threads = static_cast<std::size_t>(opts.http_threads);
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_payload_max_length(opts.max_request_bytes);
  server.set_keep_alive_timeout(static_cast<time_t>(opts.keep_alive.count()));
  server.set_tcp_nodelay(true);
  // httplib's default also sets SO_REUSEPORT, which would let a second worker bind a port in
  // use and share its connections.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.Get("/health", [&queue, ranks](const httplib::Request &, httplib::Response &res) {
    res.set_content(queue.health(ranks), "application/json");
  });
  if (opts.stop_endpoint) {
    server.Post("/stop", [&queue](const httplib::Request &, httplib::Response &res) {
      auto j = std::make_shared<job>();
      j->stop = true;
      answer(queue, std::move(j), res);
    });
  }
  server.Post(".*", [&queue](const httplib::Request &req, httplib::Response &res) {
    auto j = std::make_shared<job>();
    j->path_bytes = req.path.size();
    j->payload.reserve(req.path.size() + req.body.size());
    j->payload.append(req.path).append(req.body);
    answer(queue, std::move(j), res);
  });
  // Errors httplib answers by itself (malformed HTTP, a body over the limit, no such endpoint)
  // get a reason; the request never reaches the other ranks.
  const std::size_t max_bytes = opts.max_request_bytes;
  const httplib::Server::HandlerWithResponse on_error =
      [&queue, max_bytes](const httplib::Request &req, httplib::Response &res) {
        if (!res.body.empty()) {
          return httplib::Server::HandlerResponse::Unhandled; // a response of ours
        }
        std::string reason;
        if (res.status == 413) {
          reason = "tunekit::serve: the request body is larger than " + std::to_string(max_bytes) +
                   " bytes (options::max_request_bytes)";
        } else if (res.status == 400) {
          reason = "tunekit::serve: malformed HTTP request (a POST needs a Content-Length)";
        } else if (res.status == 404) {
          reason = "tunekit::serve: no endpoint " + req.method + " " + req.path +
                   " (POST any path: a request; GET /health; POST /stop)";
        } else {
          reason = "tunekit::serve: HTTP status " + std::to_string(res.status);
        }
        if (res.status != 404) {
          queue.note_rejected(reason);
        }
        res.set_content(reason + "\n", "text/plain");
        return httplib::Server::HandlerResponse::Handled;
      };
  server.set_error_handler(on_error);
}

http_endpoint::~http_endpoint() {
  if (!m_started) {
    start();
  }
  if (m_listener.joinable()) {
    stop();
  }
}

int http_endpoint::bind(const options &opts) {
  if (opts.port == 0) {
    return m_server->bind_to_any_port(opts.host);
  }
  return m_server->bind_to_port(opts.host, opts.port) ? opts.port : -1;
}

void http_endpoint::start() {
  m_started = true;
  m_listener = std::thread([this] {
    m_server->listen_after_bind();
    m_listener_done = true;
  });
}

// httplib's stop() acts only once the listening loop runs, so wait for it to start.
void http_endpoint::stop() {
  while (!m_server->is_running() && !m_listener_done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  m_server->stop();
  m_listener.join();
}

} // namespace tunekit::serve::detail
