// The collective serving worker: rank 0 queues HTTP requests from httplib's threads (queue.cpp,
// http.cpp) and leads the ranks through them one at a time on the serving thread (leader.cpp);
// the other ranks follow the broadcasts (follower.cpp). Each step is a frame (frame.hpp) and a
// reduction (step.cpp).

#include "http.hpp"
#include "loops.hpp"
#include "queue.hpp"
#include "sigterm.hpp"
#include "step.hpp"

#include <tunekit/error.hpp>
#include <tunekit/serve.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <utility>

namespace tunekit::serve {

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
  detail::step_context steps{comm, fn};
  // Rank 0 only. The endpoint answers from the queue, so the queue is declared first and outlives
  // it.
  std::unique_ptr<detail::request_queue> queue;
  std::unique_ptr<detail::http_endpoint> http;

  impl(communicator &c, handler f, options o) : comm(c), fn(std::move(f)), opts(std::move(o)) {}
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
    m_impl->queue = std::make_unique<detail::request_queue>(o.max_queued);
    m_impl->http = std::make_unique<detail::http_endpoint>(o, *m_impl->queue, comm.size());
    const int port = m_impl->http->bind(o);
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
  auto j = std::make_shared<detail::job>();
  j->stop = true;
  j->reason = stop_reason::stop_call;
  static_cast<void>(m_impl->queue->submit(std::move(j)));
}

summary worker::serve() {
  if (m_impl->served) {
    throw error("tunekit::serve::worker: serve() was already called; build a new worker");
  }
  m_impl->served = true;
  const detail::sigterm_catcher catcher(m_impl->opts.catch_sigterm);
  if (m_impl->comm.rank() != 0) {
    return detail::follow(m_impl->steps);
  }
  return detail::lead(m_impl->steps, *m_impl->queue, *m_impl->http, m_impl->opts);
}

} // namespace tunekit::serve
