#pragma once
// A search among a tuner's kept candidates (DESIGN.md, step 6 of the resolution chain): who
// measures what, the measure loop, the worst-rank reduction and the winner rule. The result is
// a list of candidate records and the winner's index; storing it is the tuner's business.

#include "progress.hpp"
#include "rank_log.hpp"

#include <tunekit/communicator.hpp>
#include <tunekit/config.hpp>
#include <tunekit/detail/function_ref.hpp>
#include <tunekit/error.hpp>
#include <tunekit/key.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/strategy/run_search.hpp>
#include <tunekit/tuner.hpp>
#include <tunekit/winner_cache.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tunekit::detail {

/// The winner rule: the smallest finite time; a tie goes to the lowest index, so every rank picks
/// the same candidate from the same reduced times. nullopt when no time is finite.
[[nodiscard]] std::optional<std::size_t> pick_winner(std::span<const double> times) noexcept;

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
  const search_settings &settings;
  candidate_preparer *preparer = nullptr;
  /// Configs to measure first when a strategy searches (already agreed across ranks).
  std::span<const config> start_configs{};
  /// The space's declared parameters (a product space without pinned values), else empty.
  std::vector<parameter> declared{};
  /// Live progress even without `verbose` (`TUNEKIT_PROGRESS=1`); drawn on local rank 0 only.
  bool progress = false;
  /// Where progress goes; null: `progress_output::to_stderr()`.
  const progress_output *progress_out = nullptr;
};

/// What a search found.
struct search_result {
  /// One per candidate (pruned ones included) after an exhaustive search; the measured ones, in
  /// candidate order, after a strategy's.
  std::vector<candidate_record> records;
  std::size_t winner = 0;   ///< index into `records`
  std::size_t measured = 0; ///< candidates measured
  double seconds = 0;
  std::optional<search_record> strategy; ///< set when a strategy chose the candidates
};

/// Measures the kept candidates (all of them when they fit in the budget, else those a strategy
/// proposes), each rank its own share, reduces the times across the ranks (worst rank counts),
/// and picks the winner. Throws `tunekit::error` when nothing is valid on every rank, and
/// `fatal_candidate_error` on the rank whose candidate left the device unusable (the others stop
/// with an error that says so).
[[nodiscard]] search_result measure_and_pick(const search_input &in);

} // namespace tunekit::detail
