#pragma once
/// \file strategy/replay.hpp
/// Replay of a measured space: a Kernel Tuner cache file (`.json`, or gzip-compressed) read into a
/// `search_space` whose valid set is the configs in the file, with each one's measured time. A
/// strategy run over it "measures" by looking times up, so strategies are compared without a GPU
/// and with the best possible time known.
///
/// File format: `{"tune_params_keys": [names], "tune_params": {name: [values]}, "cache":
/// {"v1,v2,...": {"time": ms} | {"time": "error text"} | {"__error__": "InvalidConfig", ...}}}`;
/// an entry marked `InvalidConfig` (a restriction of the space excludes it) is left out of the
/// valid set, as a tuner with the same restrictions never proposes it, while an entry that records
/// any other error (it failed to compile or run) is a valid config that fails when measured;
/// the cache key joins the values of `tune_params_keys` (else of `tune_params`, in file order)
/// with commas, as Python prints them. The parser is the one `cache import kernel-tuner` uses
/// (formats/kernel_tuner.hpp).

#include <tunekit/config.hpp>
#include <tunekit/strategy/run_search.hpp>
#include <tunekit/strategy/search_space.hpp>

#include <cstddef>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

/// A measured space.
struct replay_table {
  /// Where it came from (the path, or the name given to `parse_replay_table`).
  std::string source;
  /// `device_name` and `kernel_name` of the file when present, else empty.
  std::string device_name;
  std::string kernel_name;
  /// Parameters from `tune_params`; valid configs: the cache entries (failed ones included,
  /// `InvalidConfig` ones left out).
  search_space space;
  /// Time of each cache entry by its position in the list (`space.position_of`), in
  /// milliseconds; +infinity for an entry that records an error.
  std::vector<double> times;
  /// What measuring each entry cost the run that recorded it, by position, in milliseconds: the
  /// sum of its `compile_time`, `verification_time`, `benchmark_time` and `framework_time`
  /// members (Kernel Tuner's record of an evaluation, the strategy's own time left out); NaN for
  /// an entry that records none of them.
  std::vector<double> costs_ms;
  /// Entries that record a failure (+infinity in `times`).
  std::size_t failures = 0;
  /// Smallest time in the file.
  double best_time_ms = std::numeric_limits<double>::infinity();

  /// The recorded time of `index`; +infinity when it failed or is not in the file.
  [[nodiscard]] double time_of(std::size_t index) const;
  /// The recorded cost of measuring `index` (`costs_ms`); NaN when none is recorded or it is not
  /// in the file.
  [[nodiscard]] double cost_of(std::size_t index) const;
  /// Whether the cost axis is tuning time: every entry with a time records its cost (a failure
  /// may record none; charged, it costs the median of the recorded costs).
  [[nodiscard]] bool has_costs() const;
  /// Every entry's config, by position.
  [[nodiscard]] std::vector<config> configs() const;
  /// The `k` fastest configs, fastest first (ties to the earlier entry): what another device
  /// would transfer from this one.
  [[nodiscard]] std::vector<config> best_configs(std::size_t k) const;
  /// An evaluator that looks times up (for `run_search`); it refers to this table.
  [[nodiscard]] batch_evaluator evaluator() const;
};

/// The table with `configs` added as entries that failed (no time, no cost): configs it already
/// has, configs that do not fit its parameters (a missing field, a value outside a domain) and
/// repeats are skipped. For a measured space whose failures were left out of the file, e.g. the
/// configs another device of the same kernel measured and this one lacks.
[[nodiscard]] replay_table with_failures(const replay_table &table,
                                         std::span<const config> configs);

/// How configs that fail (to compile, launch or run) count in a replay.
enum class failure_counting {
  /// A failure is an evaluation: it uses one of the budget's evaluations and, on a time axis, costs
  /// what the file records for it (else the median cost of the file's entries), as a real run pays
  /// for its compile.
  charged,
  /// A failure is told to the strategy and costs nothing: the counting of comparisons whose
  /// budgets count successful measurements only.
  free,
};

/// The best time (milliseconds) found within `budget` evaluations of `history` (a search over
/// `table`), failures counted as `counting` says; +infinity when none succeeded.
[[nodiscard]] double best_within(std::span<const search_evaluation> history, std::size_t budget,
                                 failure_counting counting);

/// The cost of a replayed search after each evaluation of `history`: milliseconds of tuning when
/// the table records what each entry cost (`has_costs`), else evaluations (one each), failures
/// counted as `counting` says.
[[nodiscard]] std::vector<double> cumulative_cost(const replay_table &table,
                                                  std::span<const search_evaluation> history,
                                                  failure_counting counting);

/// The range of the time-based score: from the cost at which random search is expected to have
/// come `start` of the way from the median to the optimum of the table's times, to where it is
/// expected to have come `end` of the way (the 0.5 and 0.96 of the methodology's own evaluation),
/// sampled at `resolution` points.
struct score_settings {
  double start = 0.5;
  double end = 0.96;
  std::size_t resolution = 1000;
};

/// The cost (in `cumulative_cost`'s unit) at which the score's range ends: a replay must run at
/// least this far for `time_score` to see its whole range.
[[nodiscard]] double score_range_end(const replay_table &table,
                                     const score_settings &settings = {});

/// The time-based performance score of Willemsen, Schoonhoven, Filipič and van Werkhoven ("A
/// methodology for comparing optimization algorithms for auto-tuning", FGCS 2024): over the
/// score's range of costs, the mean over `runs` of the best time found by each cost, standardised
/// against random search's exactly calculated expectation at that cost (the order statistic at
/// `round(M (N + 1) / (M + 1))` of the N valid times sorted worst first, M the cost over the mean
/// cost of an evaluation) as (random - found) / (random - optimum), and averaged over the range:
/// 0 is random search, 1 the optimum from the start, below 0 worse than random. A run's best
/// before its first success is the worst valid time.
[[nodiscard]] double time_score(const replay_table &table,
                                std::span<const std::vector<search_evaluation>> runs,
                                failure_counting counting, const score_settings &settings = {});

/// Reads a Kernel Tuner cache file, gzip-compressed or not (told apart by content). Throws
/// `tunekit::error` naming the file and what is wrong: unreadable, not gzip or JSON, a missing or
/// malformed `tune_params` or `cache`, a cache key whose values do not match the parameters, an
/// entry without a time, no entry with a time at all.
[[nodiscard]] replay_table load_replay_table(const std::filesystem::path &path);

/// Parses the JSON text of a Kernel Tuner cache file; `source` names it in errors.
[[nodiscard]] replay_table parse_replay_table(std::string_view json_text, std::string_view source);

} // namespace tunekit
