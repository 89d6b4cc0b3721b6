#include "frame.hpp"
#include "loops.hpp"
#include "sigterm.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

namespace tunekit::serve::detail {

namespace {

constexpr auto signal_poll = std::chrono::milliseconds(20);

// Broadcasts request `sequence` of `j`: its frame and, when the payload does not fit, its bytes.
void broadcast_request(communicator &comm, std::uint64_t sequence, job &j) {
  frame f;
  f.h.kind = step_kind::request;
  f.h.sequence = sequence;
  f.h.path_bytes = j.path_bytes;
  f.h.body_bytes = j.payload.size() - j.path_bytes;
  const bool fits = j.payload.size() <= inline_capacity;
  if (fits) {
    std::copy(j.payload.begin(), j.payload.end(), f.inline_payload.begin());
  }
  comm.broadcast(bytes_of(f), 0);
  if (!fits) {
    comm.broadcast(bytes_of(j.payload), 0);
  }
}

// Answers what is still queued, stops the HTTP server and waits for its threads.
void shut_down(request_queue &queue, http_endpoint &http, const summary &s) {
  const auto left = queue.close(std::string("stopped (") + to_string(s.reason) + ")");
  for (const auto &j : left) {
    j->answer.set_value(text_response(
        503, std::string("tunekit::serve: the worker stopped (") + to_string(s.reason) +
                 ") before this request's turn" + (s.error.empty() ? "" : ": " + s.error)));
  }
  http.stop();
}

} // namespace

summary lead(step_context &ctx, request_queue &queue, http_endpoint &http, const options &opts) {
  summary s;
  queue.set_state("serving");
  http.start();
  auto last_step = std::chrono::steady_clock::now();
  std::shared_ptr<job> current;
  try {
    for (;;) {
      const auto now = std::chrono::steady_clock::now();
      current = queue.next(std::min(last_step + opts.heartbeat, now + signal_poll));
      if (sigterm_received() || ctx.stop_wanted) {
        if (current) { // not this one's turn any more: shut_down answers it with the rest
          queue.push_front(std::move(current));
        }
        send_stop(ctx.comm, stop_reason::signal);
        s.reason = stop_reason::signal;
        break;
      }
      if (!current) {
        if (std::chrono::steady_clock::now() - last_step >= opts.heartbeat) {
          send_heartbeat(ctx);
          last_step = std::chrono::steady_clock::now();
        }
        continue;
      }
      if (current->stop) {
        send_stop(ctx.comm, current->reason);
        s.reason = current->reason;
        current->answer.set_value(text_response(200, "stopping every rank\n"));
        current.reset();
        break;
      }
      const std::uint64_t sequence = s.requests;
      broadcast_request(ctx.comm, sequence, *current);
      const std::uint64_t failed_before = s.failed;
      response r = execute(ctx, sequence, current->payload, current->path_bytes, s);
      queue.finish_request(sequence, r, s.failed != failed_before);
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
    queue.note_error(e.what());
  }
  shut_down(queue, http, s);
  return s;
}

} // namespace tunekit::serve::detail
