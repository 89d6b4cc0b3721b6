#pragma once
// Step 6 of the resolution chain (DESIGN.md): a search among a call's kept candidates. It owns the
// whole step: whether every kept candidate is measured or a strategy chooses within the budget,
// where a strategy starts, who measures what, the measure loop, the worst-rank reduction and the
// one winner rule. Observers (src/core/search_observer.hpp) watch it; storing what it found is the
// tuner's business (the entry is built by `make_entry`, src/core/cache_entry.cpp).

#include "progress.hpp"
#include "rank_log.hpp"
#include "search_observer.hpp"

#include <tunekit/communicator.hpp>
#include <tunekit/config.hpp>
#include <tunekit/detail/function_ref.hpp>
#include <tunekit/error.hpp>
#include <tunekit/key.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/tuner_options.hpp>
#include <tunekit/winner_cache.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tunekit::detail {

/// The winner rule, the only one: the smallest finite time; a tie goes to the lowest index, so
/// every rank picks the same candidate from the same reduced times. A search calls it over its
/// measured candidates in candidate order, so a tie goes to the candidate that comes first in the
/// call's space, whatever order a strategy measured them in. nullopt when no time is finite.
[[nodiscard]] std::optional<std::size_t> pick_winner(std::span<const double> times) noexcept;

/// The error of a search in which nothing passed: "cannot find valid config for <what>: none of
/// the N measured candidates is valid:", then one line per measured candidate with its status and
/// reason (the phrase is the seed's, docs/contextual.md).
[[nodiscard]] no_valid_config_error no_valid_config(const std::string &what, std::size_t measured,
                                                    std::span<const candidate_record> records);

/// How candidates are measured.
struct measuring {
  measurer &meas;
  const measure_policy &policy;
  function_ref<void(const config &)> run;
  function_ref<bool(const config &)> check;
  /// Prepares candidates ahead of their measurement (compiles); null: nothing to prepare.
  candidate_preparer *preparer = nullptr;
  /// Puts the arguments the function writes back before each run of a candidate (handed to the
  /// measurer as `candidate_info::reset`); null: the function writes none.
  const function_ref<void(const config &)> *reset = nullptr;
};

/// Where a strategy's start points come from besides `search_settings::start_configs`: the winner
/// cache's entries of this function for other hardware or keys (`transfer_from_cache`).
struct transfer_origin {
  const winner_cache &cache;
  bool use_disk_cache = true; ///< false: the winner cache is not read
  function_identity function;
  const hardware_info &hw;
};

/// Who watches a search.
struct search_output {
  const rank_log &log;
  /// The INFO lines of a verbose call.
  bool verbose = false;
  /// Live progress even without `verbose` (`TUNEKIT_PROGRESS=1`); drawn on local rank 0 only.
  bool progress = false;
  /// Where progress goes; null: `progress_output::to_stderr()`.
  const progress_output *progress_out = nullptr;
  /// One more observer (a tool's, a test's); null: none.
  search_observer *observer = nullptr;
};

/// Everything one search needs.
struct search_request {
  std::string_view tuner;
  const std::string &what; ///< context for messages: "tuner 'x', key (...)"
  const key &k;            ///< the stored key
  const std::vector<config> &candidates;
  const std::vector<bool> &kept;
  communicator &comm;
  /// Rank-local work: the j-th candidate of a batch is measured by rank j % size alone.
  bool parallel_split = false;
  const search_settings &settings;
  /// The space's declared parameters (a product space without pinned values), else empty.
  std::vector<parameter> declared{};
  /// `TUNEKIT_ALWAYS_TUNE=1` (said in the verbose line).
  bool forced = false;
  measuring measure;
  transfer_origin transfer;
  search_output output;
  /// Records of candidates measured before (an entry of this key, hardware and code identity of
  /// another config space under the same policy and measurer; the tuner's prior measurements):
  /// taken instead of measuring them again. Null or empty: every candidate is measured. With
  /// several ranks, only the candidates every rank holds a record of are taken (one reduction,
  /// when not null), so that every rank measures the same list.
  const std::vector<candidate_record> *reused = nullptr;
};

/// What a search found.
struct search_result {
  /// The measured candidates in candidate order: every kept one when all were measured, else
  /// those a strategy chose. Pruned candidates are never listed.
  std::vector<candidate_record> records;
  /// The candidate index of each record.
  std::vector<std::size_t> positions;
  std::size_t winner = 0; ///< index into `records`, by `pick_winner`
  double seconds = 0;
  std::optional<search_record> strategy; ///< set when a strategy chose the candidates
  /// Set when the leaders were re-ranked (`winner` is then the re-rank's); `leaders` and
  /// `winner_before` index `records`.
  std::optional<rerank_record> rerank;
};

/// Measures the kept candidates (all of them when they fit in the budget and no time or patience
/// limit is set, else those a strategy proposes), each rank its own share, reduces the times across
/// the ranks (worst rank counts), and picks the winner. Throws `no_valid_config_error` when nothing
/// is valid on every rank, and `fatal_candidate_error` on the rank whose candidate left the device
/// unusable (the others stop with an error that says so).
[[nodiscard]] search_result search(const search_request &in);

} // namespace tunekit::detail
