// The collective serving worker: rank 0 queues HTTP requests from httplib's threads and leads the
// ranks through them one at a time on the serving thread; the other ranks follow the broadcasts.

#include <tunekit/error.hpp>
#include <tunekit/serve.hpp>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <utility>
#include <vector>

namespace tunekit::serve {

namespace {

// The wire format of one step: a frame of fixed size every rank receives first, holding the
// header and, when they fit, the path and body; a larger request follows in a second broadcast.
enum class step_kind : std::uint64_t { request = 1, heartbeat = 2, stop = 3 };
constexpr std::uint64_t header_magic = 0x74756e656b697431; // "tunekit1"

struct header {
  std::uint64_t magic = header_magic;
  step_kind kind = step_kind::heartbeat;
  std::uint64_t sequence = 0; // for a stop: the stop_reason
  std::uint64_t path_bytes = 0;
  std::uint64_t body_bytes = 0;
};

constexpr std::size_t inline_capacity = frame_bytes - sizeof(header);

struct frame {
  header h;
  std::array<char, inline_capacity> inline_payload{};
};
static_assert(sizeof(frame) == frame_bytes);

std::span<std::byte> bytes_of(std::string &s) {
  return {reinterpret_cast<std::byte *>(s.data()), s.size()};
}

template <class T> std::span<std::byte> bytes_of(T &value) {
  return {reinterpret_cast<std::byte *>(&value), sizeof(T)};
}

// SIGTERM while some worker serves: set by the handler, read by the serving thread.
volatile std::sig_atomic_t g_sigterm = 0;
extern "C" void on_sigterm(int /*signal*/) { g_sigterm = 1; }

constexpr std::size_t max_failure_text = 1000;
constexpr auto signal_poll = std::chrono::milliseconds(20);

response text_response(int status, std::string body) {
  return response{status, std::move(body), "text/plain"};
}

// A request (or a stop) waiting on rank 0 for its turn.
struct job {
  bool stop = false;
  stop_reason reason = stop_reason::stop_request;
  std::string payload; // path then body
  std::size_t path_bytes = 0;
  std::promise<response> answer;
};

} // namespace

const char *to_string(stop_reason r) noexcept {
  switch (r) {
  case stop_reason::stop_request:
    return "stop request";
  case stop_reason::stop_call:
    return "stop call";
  case stop_reason::signal:
    return "SIGTERM";
  case stop_reason::communicator_failed:
    return "communicator failed";
  }
  return "unknown";
}

struct worker::impl {
  communicator &comm;
  handler fn;
  options opts;
  int port = 0;
  bool served = false;

  // Rank 0 only.
  std::unique_ptr<httplib::Server> server;
  std::thread listener;
  std::atomic<bool> listener_done{false};
  std::mutex mutex; // guards everything below
  std::condition_variable wake;
  std::deque<std::shared_ptr<job>> queue;
  bool accepting = true;
  std::string state = "starting";
  std::uint64_t served_count = 0;
  std::uint64_t failed_count = 0;
  std::uint64_t rejected_count = 0;
  std::string last_error;

  // Set on any rank when a step's reduction says some rank saw SIGTERM.
  bool stop_wanted = false;

  impl(communicator &c, handler f, options o) : comm(c), fn(std::move(f)), opts(std::move(o)) {}
  impl(const impl &) = delete;
  impl &operator=(const impl &) = delete;
  ~impl() {
    if (server && !served) {
      start_listening(); // a worker that never served: close its socket through httplib
      stop_listening();
    }
  }

  void start_listening() {
    listener = std::thread([this] {
      server->listen_after_bind();
      listener_done = true;
    });
  }

  // httplib's stop() acts only once the listening loop runs, so wait for it to start.
  void stop_listening() {
    while (!server->is_running() && !listener_done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    server->stop();
    listener.join();
  }

  void note_error(const std::string &what) {
    const std::lock_guard lock(mutex);
    last_error = what;
  }

  // Queues a job; answers at once when the worker no longer accepts or the queue is full.
  std::future<response> submit(std::shared_ptr<job> j) {
    auto answer = j->answer.get_future();
    std::string refused;
    {
      const std::lock_guard lock(mutex);
      if (!accepting) {
        refused = "tunekit::serve: the worker has stopped";
      } else if (!j->stop && queue.size() >= opts.max_queued) {
        refused = "tunekit::serve: " + std::to_string(queue.size()) +
                  " requests are already queued (options::max_queued)";
        ++rejected_count;
        last_error = refused;
      } else {
        queue.push_back(j);
      }
    }
    if (!refused.empty()) {
      j->answer.set_value(text_response(503, refused));
    } else {
      wake.notify_one();
    }
    return answer;
  }

  void configure_server() {
    server = std::make_unique<httplib::Server>();
    const auto threads = static_cast<std::size_t>(opts.http_threads);
    server->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server->set_payload_max_length(opts.max_request_bytes);
    server->set_keep_alive_timeout(static_cast<time_t>(opts.keep_alive.count()));
    server->set_tcp_nodelay(true);
    // httplib's default also sets SO_REUSEPORT, which would let a second worker bind a port in
    // use and share its connections.
    server->set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    server->Get("/health", [this](const httplib::Request &, httplib::Response &res) {
      res.set_content(health(), "application/json");
    });
    if (opts.stop_endpoint) {
      server->Post("/stop", [this](const httplib::Request &, httplib::Response &res) {
        auto j = std::make_shared<job>();
        j->stop = true;
        const response r = submit(std::move(j)).get();
        res.status = r.status;
        res.set_content(r.body, r.content_type);
      });
    }
    server->Post(".*", [this](const httplib::Request &req, httplib::Response &res) {
      auto j = std::make_shared<job>();
      j->path_bytes = req.path.size();
      j->payload.reserve(req.path.size() + req.body.size());
      j->payload.append(req.path).append(req.body);
      const response r = submit(std::move(j)).get();
      res.status = r.status;
      res.set_content(r.body, r.content_type);
    });
    // Errors httplib answers by itself (malformed HTTP, a body over the limit, no such endpoint)
    // get a reason; the request never reaches the other ranks.
    const httplib::Server::HandlerWithResponse on_error = [this](const httplib::Request &req,
                                                                 httplib::Response &res) {
      if (!res.body.empty()) {
        return httplib::Server::HandlerResponse::Unhandled; // a response of ours
      }
      std::string reason;
      if (res.status == 413) {
        reason = "tunekit::serve: the request body is larger than " +
                 std::to_string(opts.max_request_bytes) + " bytes (options::max_request_bytes)";
      } else if (res.status == 400) {
        reason = "tunekit::serve: malformed HTTP request (a POST needs a Content-Length)";
      } else if (res.status == 404) {
        reason = "tunekit::serve: no endpoint " + req.method + " " + req.path +
                 " (POST any path: a request; GET /health; POST /stop)";
      } else {
        reason = "tunekit::serve: HTTP status " + std::to_string(res.status);
      }
      if (res.status != 404) {
        const std::lock_guard lock(mutex);
        ++rejected_count;
        last_error = reason;
      }
      res.set_content(reason + "\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    };
    server->set_error_handler(on_error);
  }

  std::string health() {
    nlohmann::json j;
    const std::lock_guard lock(mutex);
    j["state"] = state;
    j["ranks"] = comm.size();
    j["requests_served"] = served_count;
    j["requests_failed"] = failed_count;
    j["requests_rejected"] = rejected_count;
    j["queued"] = queue.size();
    j["last_error"] = last_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(last_error);
    return j.dump();
  }

  // --- the steps every rank makes -------------------------------------------------------------

  void send_stop(stop_reason why) {
    frame f;
    f.h.kind = step_kind::stop;
    f.h.sequence = static_cast<std::uint64_t>(why);
    comm.broadcast(bytes_of(f), 0);
  }

  // The reduction closing a step: which ranks' handler threw, and whether some rank saw SIGTERM.
  std::vector<double> reduce_outcome(bool failed_here) {
    std::vector<double> flags(static_cast<std::size_t>(comm.size()) + 1, 0.0);
    flags[static_cast<std::size_t>(comm.rank())] = failed_here ? 1.0 : 0.0;
    flags.back() = g_sigterm != 0 ? 1.0 : 0.0;
    comm.all_reduce_max(flags);
    stop_wanted = stop_wanted || flags.back() > 0.0;
    return flags;
  }

  // Runs the handler on this rank, closes the step with the reduction and, when the handler threw
  // somewhere, brings each failing follower's message to rank 0. Returns rank 0's answer.
  response execute(std::uint64_t sequence, const std::string &payload, std::size_t path_bytes,
                   summary &s) {
    const std::string_view all(payload);
    const request rq{sequence, all.substr(0, path_bytes), all.substr(path_bytes)};
    std::optional<response> out;
    std::string failure;
    try {
      out = fn(rq);
    } catch (const std::exception &e) {
      failure = e.what();
    } catch (...) {
      failure = "an exception that is not a std::exception";
    }
    if (failure.empty() && !out) {
      failure = "no response";
    }
    const std::vector<double> flags = reduce_outcome(!failure.empty());
    ++s.requests;
    std::vector<int> failed;
    for (int r = 0; r < comm.size(); ++r) {
      if (flags[static_cast<std::size_t>(r)] > 0.0) {
        failed.push_back(r);
      }
    }
    if (failed.empty()) {
      return std::move(*out);
    }
    ++s.failed;
    std::string text =
        "tunekit::serve: request " + std::to_string(sequence) + ": the handler threw on rank";
    text += failed.size() > 1 ? "s " : " ";
    for (std::size_t i = 0; i < failed.size(); ++i) {
      text += (i > 0 ? ", " : "") + std::to_string(failed[i]);
    }
    text += " of " + std::to_string(comm.size());
    for (const int r : failed) {
      std::string message;
      if (r == comm.rank()) {
        message = failure.substr(0, max_failure_text);
      }
      if (r != 0) { // rank 0's own message needs no broadcast
        std::uint64_t n = message.size();
        comm.broadcast(bytes_of(n), r);
        message.resize(static_cast<std::size_t>(n));
        comm.broadcast(bytes_of(message), r);
      }
      text += "; rank " + std::to_string(r) + ": " + message;
    }
    return text_response(500, std::move(text));
  }

  // --- rank 0 -----------------------------------------------------------------------------------

  std::shared_ptr<job> next_job(std::chrono::steady_clock::time_point until) {
    std::unique_lock lock(mutex);
    wake.wait_until(lock, until, [this] { return !queue.empty(); });
    if (queue.empty()) {
      return nullptr;
    }
    auto j = std::move(queue.front());
    queue.pop_front();
    return j;
  }

  void finish_request(std::uint64_t sequence, const response &r, bool failed) {
    const std::lock_guard lock(mutex);
    served_count = sequence + 1;
    if (failed) {
      ++failed_count;
      last_error = r.body;
    }
  }

  summary lead() {
    summary s;
    {
      const std::lock_guard lock(mutex);
      state = "serving";
    }
    start_listening();
    auto last_step = std::chrono::steady_clock::now();
    std::shared_ptr<job> current;
    try {
      for (;;) {
        const auto now = std::chrono::steady_clock::now();
        current = next_job(std::min(last_step + opts.heartbeat, now + signal_poll));
        if (g_sigterm != 0 || stop_wanted) {
          if (current) { // not this one's turn any more: shut_down answers it with the rest
            const std::lock_guard lock(mutex);
            queue.push_front(std::move(current));
          }
          send_stop(stop_reason::signal);
          s.reason = stop_reason::signal;
          break;
        }
        if (!current) {
          if (std::chrono::steady_clock::now() - last_step >= opts.heartbeat) {
            frame f;
            f.h.kind = step_kind::heartbeat;
            comm.broadcast(bytes_of(f), 0);
            static_cast<void>(reduce_outcome(false));
            last_step = std::chrono::steady_clock::now();
          }
          continue;
        }
        if (current->stop) {
          send_stop(current->reason);
          s.reason = current->reason;
          current->answer.set_value(text_response(200, "stopping every rank\n"));
          current.reset();
          break;
        }
        frame f;
        f.h.kind = step_kind::request;
        f.h.sequence = s.requests;
        f.h.path_bytes = current->path_bytes;
        f.h.body_bytes = current->payload.size() - current->path_bytes;
        const bool fits = current->payload.size() <= inline_capacity;
        if (fits) {
          std::copy(current->payload.begin(), current->payload.end(), f.inline_payload.begin());
        }
        comm.broadcast(bytes_of(f), 0);
        if (!fits) {
          comm.broadcast(bytes_of(current->payload), 0);
        }
        const std::uint64_t sequence = f.h.sequence;
        const std::uint64_t failed_before = s.failed;
        response r = execute(sequence, current->payload, current->path_bytes, s);
        finish_request(sequence, r, s.failed != failed_before);
        current->answer.set_value(std::move(r));
        current.reset();
        last_step = std::chrono::steady_clock::now();
      }
    } catch (const std::exception &e) {
      s.reason = stop_reason::communicator_failed;
      s.error = e.what();
      if (current) {
        current->answer.set_value(text_response(
            503, std::string("tunekit::serve: the ranks are out of step (a rank died, hangs, or "
                             "entered other collectives); every rank stops: ") +
                     e.what()));
      }
      note_error(e.what());
    }
    shut_down(s);
    return s;
  }

  // Answers what is still queued, stops the HTTP server and waits for its threads.
  void shut_down(const summary &s) {
    std::deque<std::shared_ptr<job>> left;
    {
      const std::lock_guard lock(mutex);
      accepting = false;
      state = std::string("stopped (") + to_string(s.reason) + ")";
      left.swap(queue);
    }
    for (auto &j : left) {
      j->answer.set_value(text_response(
          503, std::string("tunekit::serve: the worker stopped (") + to_string(s.reason) +
                   ") before this request's turn" + (s.error.empty() ? "" : ": " + s.error)));
    }
    stop_listening();
  }

  // --- the other ranks --------------------------------------------------------------------------

  summary follow() {
    summary s;
    std::string payload;
    try {
      for (;;) {
        frame f;
        comm.broadcast(bytes_of(f), 0);
        const header &h = f.h;
        if (h.magic != header_magic) {
          throw error("tunekit::serve: rank " + std::to_string(comm.rank()) +
                      " received a broadcast that is not a worker step (the ranks are out of "
                      "step)");
        }
        if (h.kind == step_kind::stop) {
          s.reason = static_cast<stop_reason>(h.sequence);
          break;
        }
        if (h.kind == step_kind::heartbeat) {
          static_cast<void>(reduce_outcome(false));
          continue;
        }
        const auto n = static_cast<std::size_t>(h.path_bytes + h.body_bytes);
        if (n <= inline_capacity) {
          payload.assign(f.inline_payload.data(), n);
        } else {
          payload.resize(n);
          comm.broadcast(bytes_of(payload), 0);
        }
        static_cast<void>(execute(h.sequence, payload, static_cast<std::size_t>(h.path_bytes), s));
      }
    } catch (const std::exception &e) {
      s.reason = stop_reason::communicator_failed;
      s.error = e.what();
    }
    return s;
  }
};

worker::worker(communicator &comm, handler fn, options opts)
    : m_impl(std::make_unique<impl>(comm, std::move(fn), std::move(opts))) {
  const options &o = m_impl->opts;
  if (!m_impl->fn) {
    throw error("tunekit::serve::worker: the handler is empty");
  }
  if (o.port < 0 || o.port > 65535) {
    throw error("tunekit::serve::worker: port " + std::to_string(o.port) +
                " is not a TCP port (0 picks a free one)");
  }
  if (o.max_queued == 0 || o.http_threads < 1 || o.max_request_bytes == 0) {
    throw error("tunekit::serve::worker: max_queued, http_threads and max_request_bytes must be "
                "positive");
  }
  if (o.heartbeat.count() <= 0) {
    throw error("tunekit::serve::worker: the heartbeat interval must be positive");
  }
  std::array<std::int64_t, 2> bound{0, 0}; // listening?, port
  if (comm.rank() == 0) {
    m_impl->configure_server();
    const int port = o.port == 0 ? m_impl->server->bind_to_any_port(o.host)
                                 : (m_impl->server->bind_to_port(o.host, o.port) ? o.port : -1);
    bound = {port > 0 ? 1 : 0, port};
  }
  comm.broadcast(std::as_writable_bytes(std::span(bound)), 0);
  if (bound[0] == 0) {
    throw error("tunekit::serve::worker: rank 0 could not listen on " + o.host + ":" +
                std::to_string(o.port));
  }
  m_impl->port = static_cast<int>(bound[1]);
}

worker::~worker() = default;

int worker::port() const noexcept { return m_impl->port; }

void worker::stop() {
  if (m_impl->comm.rank() != 0) {
    return;
  }
  auto j = std::make_shared<job>();
  j->stop = true;
  j->reason = stop_reason::stop_call;
  static_cast<void>(m_impl->submit(std::move(j)));
}

summary worker::serve() {
  if (m_impl->served) {
    throw error("tunekit::serve::worker: serve() was already called; build a new worker");
  }
  m_impl->served = true;
  struct sigaction previous {};
  if (m_impl->opts.catch_sigterm) {
    g_sigterm = 0;
    struct sigaction action {};
    action.sa_handler = on_sigterm;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, &previous);
  }
  summary s = m_impl->comm.rank() == 0 ? m_impl->lead() : m_impl->follow();
  if (m_impl->opts.catch_sigterm) {
    sigaction(SIGTERM, &previous, nullptr);
  }
  return s;
}

} // namespace tunekit::serve
