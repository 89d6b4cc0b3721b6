#pragma once
// A search among a tuner's kept candidates (DESIGN.md, step 6 of the resolution chain): who
// measures what, the measure loop, the worst-rank reduction and the winner rule. The result is
// a list of candidate records and the winner's index; storing it is the tuner's business.

#include "rank_log.hpp"

#include <tunekit/communicator.hpp>
#include <tunekit/config.hpp>
#include <tunekit/detail/function_ref.hpp>
#include <tunekit/error.hpp>
#include <tunekit/key.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/winner_cache.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tunekit::detail {

/// The winner rule: the smallest finite time; a tie goes to the lowest index, so every rank picks
/// the same candidate from the same reduced times. nullopt when no time is finite.
[[nodiscard]] std::optional<std::size_t> pick_winner(std::span<const double> times) noexcept;

/// Which rank measures each candidate. Without the split (or with one rank) every rank measures
/// every kept candidate; with it, the j-th kept candidate belongs to rank j % size.
[[nodiscard]] std::vector<int> split_ownership(const std::vector<bool> &kept, int rank, int size,
                                               bool split);

/// The error of a search in which nothing passed: `what`, how many were measured, and one line per
/// measured candidate with its status and reason.
[[nodiscard]] error no_valid_config(const std::string &what, std::size_t measured,
                                    std::span<const candidate_record> records);

/// Everything one search needs.
struct search_input {
  std::string_view tuner;
  const std::string &what; ///< context for messages: "tuner 'x', key (...)"
  const key &k;
  const std::vector<config> &candidates;
  const std::vector<bool> &kept;
  communicator &comm;
  bool parallel_split = false;
  measurer &meas;
  const measure_policy &policy;
  function_ref<void(const config &)> run;
  function_ref<bool(const config &)> check;
  const rank_log &log;
  bool verbose = false;
};

/// What a search found.
struct search_outcome {
  std::vector<candidate_record> records; ///< one per candidate, pruned ones included
  std::size_t winner = 0;
  std::size_t measured = 0; ///< kept candidates
  double seconds = 0;
};

/// Measures the kept candidates this rank owns, reduces the times across the ranks (worst rank
/// counts), and picks the winner. Throws `tunekit::error` when nothing is valid on every rank, and
/// `fatal_candidate_error` (on every rank: the failing one after the reduction) when a candidate
/// left the device unusable.
[[nodiscard]] search_outcome measure_and_pick(const search_input &in);

} // namespace tunekit::detail
