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
[[nodiscard]] vote agree(communicator &comm, const std::string &what, const char *step,
                         const std::string &text, std::optional<std::size_t> proposal);

/// Element-wise MAX of `times` across the ranks: a candidate's time is its worst rank's, and a
/// candidate invalid (+inf) anywhere is invalid everywhere.
void reduce_worst(communicator &comm, const std::string &what, std::span<double> times);

} // namespace tunekit::detail
