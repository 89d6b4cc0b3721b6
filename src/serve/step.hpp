#pragma once
// The collectives every rank makes per step (private to tunekit::serve): the stop broadcast, the
// reduction that closes a step (which ranks' handler threw, whether some rank saw SIGTERM), and a
// request's execution with the broadcast of the failing ranks' messages to rank 0.

#include <tunekit/communicator.hpp>
#include <tunekit/serve.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tunekit::serve::detail {

/// What one rank brings to each step.
struct step_context {
  communicator &comm;
  const handler &fn;
  /// Set when a step's reduction says some rank saw SIGTERM.
  bool stop_wanted = false;
};

/// Rank 0 tells every rank to stop, for `why`.
void send_stop(communicator &comm, stop_reason why);

/// Rank 0 tells every rank that no request came: the step is a heartbeat.
void send_heartbeat(step_context &ctx);

/// The reduction closing a step: one flag per rank (its handler threw), then the SIGTERM flag.
std::vector<double> reduce_outcome(step_context &ctx, bool failed_here);

/// Runs the handler on this rank on request `sequence` (`payload`: path then body), closes the
/// step with the reduction and, when the handler threw somewhere, brings each failing follower's
/// message to rank 0. Returns rank 0's answer (500 naming the ranks when some failed); counts the
/// request, and its failure, in `s`.
response execute(step_context &ctx, std::uint64_t sequence, const std::string &payload,
                 std::size_t path_bytes, summary &s);

} // namespace tunekit::serve::detail
