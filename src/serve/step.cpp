#include "step.hpp"

#include "frame.hpp"
#include "queue.hpp"
#include "sigterm.hpp"

#include <exception>
#include <optional>
#include <string_view>
#include <utility>

namespace tunekit::serve::detail {

namespace {

constexpr std::size_t max_failure_text = 1000;

// "tunekit::serve: request 7: the handler threw on ranks 1, 3 of 4; rank 1: ...; rank 3: ...",
// each follower's message broadcast from that rank.
std::string failure_text(step_context &ctx, std::uint64_t sequence, const std::vector<int> &failed,
                         const std::string &failure) {
  communicator &comm = ctx.comm;
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
  return text;
}

} // namespace

void send_stop(communicator &comm, stop_reason why) {
  frame f;
  f.h.kind = step_kind::stop;
  f.h.sequence = static_cast<std::uint64_t>(why);
  comm.broadcast(bytes_of(f), 0);
}

void send_heartbeat(step_context &ctx) {
  frame f;
  f.h.kind = step_kind::heartbeat;
  ctx.comm.broadcast(bytes_of(f), 0);
  static_cast<void>(reduce_outcome(ctx, false));
}

std::vector<double> reduce_outcome(step_context &ctx, bool failed_here) {
  std::vector<double> flags(static_cast<std::size_t>(ctx.comm.size()) + 1, 0.0);
  flags[static_cast<std::size_t>(ctx.comm.rank())] = failed_here ? 1.0 : 0.0;
  flags.back() = sigterm_received() ? 1.0 : 0.0;
  ctx.comm.all_reduce_max(flags);
  ctx.stop_wanted = ctx.stop_wanted || flags.back() > 0.0;
  return flags;
}

response execute(step_context &ctx, std::uint64_t sequence, const std::string &payload,
                 std::size_t path_bytes, summary &s) {
  const std::string_view all(payload);
  const request rq{sequence, all.substr(0, path_bytes), all.substr(path_bytes)};
  std::optional<response> out;
  std::string failure;
  try {
    out = ctx.fn(rq);
  } catch (const std::exception &e) {
    failure = e.what();
  } catch (...) {
    failure = "an exception that is not a std::exception";
  }
  if (failure.empty() && !out) {
    failure = "no response";
  }
  const std::vector<double> flags = reduce_outcome(ctx, !failure.empty());
  ++s.requests;
  std::vector<int> failed;
  for (int r = 0; r < ctx.comm.size(); ++r) {
    if (flags[static_cast<std::size_t>(r)] > 0.0) {
      failed.push_back(r);
    }
  }
  if (failed.empty()) {
    return std::move(*out);
  }
  ++s.failed;
  return text_response(500, failure_text(ctx, sequence, failed, failure));
}

} // namespace tunekit::serve::detail
