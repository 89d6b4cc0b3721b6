#pragma once
// How the ranks of a job agree (DESIGN.md, "Multi-rank rules"): a digest vote on what each rank is
// about to do, a wrapper that names the step when a collective times out, and the reduction that
// makes the worst rank count. The tuner and the contextual tuner both use these, so both fail the
// same way on every rank.

#include <tunekit/communicator.hpp>

#include <optional>
#include <span>
#include <string>
#include <utility>

namespace tunekit::detail {

/// Runs one collective step; a `communicator_timeout` is rethrown naming `what` and the step.
template <class F> void collective(const std::string &what, const char *step, F &&f) {
  try {
    std::forward<F>(f)();
  } catch (const communicator_timeout &e) {
    throw communicator_timeout(what + ": " + step + " timed out: " + e.what());
  }
}

/// The outcome of a vote.
struct vote {
  /// Every rank holds the same `text` (e.g. key and candidate list).
  bool same_text = true;
  /// Every rank holds the same text and the same proposal (nullopt counts as a proposal).
  bool same_proposal = true;
};

/// One vote across the ranks of `comm` on `text` (by SHA-256 digest) and `proposal` (an index or
/// none), in one MIN and one MAX all-reduce. With one rank both are trivially the same.
///
/// A rank that could not get as far as a ballot (its key_fn or prune_fn threw) passes its error
/// as `failure` and still votes, so that the others do not wait for it: when any rank failed,
/// every rank throws the same `tunekit::error` naming the lowest failing rank and its error (one
/// more broadcast carries the text). With one rank a failure is thrown as it is.
[[nodiscard]] vote agree(communicator &comm, const std::string &what, const char *step,
                         const std::string &text, std::optional<std::size_t> proposal,
                         const std::optional<std::string> &failure = std::nullopt);

/// Closes a search that used collectives: a rank that was late for the last reduction may still
/// complete it with the contributions the others left behind when they timed out, and would then
/// go on alone. This last collective is one such a rank cannot complete (the others no longer
/// call any), so it fails on the communicator's timeout like the others did. Nothing is stored
/// before it.
void confirm(communicator &comm, const std::string &what);

/// Element-wise MAX of `times` across the ranks: a candidate's time is its worst rank's, and a
/// candidate invalid (+inf) anywhere is invalid everywhere.
void reduce_worst(communicator &comm, const std::string &what, std::span<double> times);

} // namespace tunekit::detail
