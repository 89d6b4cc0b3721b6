#pragma once
/// \file strategy/run_search.hpp
/// The search driver: asks a strategy for batches, measures each distinct config once, and stops at
/// the first exhausted budget (evaluations, wall time, evaluations without improvement).
///
/// \code
/// auto space = tunekit::search_space::from(my_config_space);
/// auto strat = tunekit::make_strategy("hybrid");
/// auto result = tunekit::run_search(space, *strat, {.max_evaluations = 200},
///     [&](std::span<const std::size_t> batch) {
///       std::vector<double> times;
///       for (std::size_t i : batch) times.push_back(measure(space.to_config(i)));
///       return times;                       // +infinity for a failed candidate
///     });
/// if (result.best_index) use(space.to_config(*result.best_index));
/// \endcode

#include <tunekit/strategy/search_space.hpp>
#include <tunekit/strategy/strategy.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tunekit {

/// When a search stops: whichever limit is reached first. An evaluation is a distinct config
/// measured for the first time; a repeated proposal is answered from memory and costs nothing.
struct search_budget {
  /// Most evaluations (transfer start points included).
  std::size_t max_evaluations = 100;
  /// Most wall time of the whole search (zero: no limit), from `search_options::started`. A batch
  /// is started only where the recent batches say it ends within the limit: the search stops when
  /// the time so far and the median of the last three batches' durations (the smaller of two)
  /// reach it. With several ranks the decision to stop must be agreed: see
  /// `search_options::agree_stop`.
  std::chrono::duration<double> max_time{0};
  /// Stop after this many evaluations in a row that did not improve the best time (0: no limit).
  std::size_t patience = 0;
};

/// Why a search stopped.
enum class search_stop {
  evaluations, ///< `max_evaluations` reached
  time,        ///< `max_time` reached
  patience,    ///< `patience` evaluations without improvement
  exhausted,   ///< the strategy had nothing new to propose (every valid config measured, or stuck)
};

/// Name of a stop reason ("evaluations", "time", "patience", "exhausted").
[[nodiscard]] std::string_view to_string(search_stop s) noexcept;

/// Measures a batch of indices and returns one time per index, in order (milliseconds; +infinity
/// for a failure). With several ranks: measure, then MAX-reduce the vector across ranks.
using batch_evaluator = std::function<std::vector<double>(std::span<const std::size_t>)>;

/// One evaluation, in the order made.
struct search_evaluation {
  std::size_t index = 0;
  double time_ms = std::numeric_limits<double>::infinity();
};

/// Configs recorded for the same function elsewhere (another device, another key): a start that
/// is taken only as far as it proves right here. Its first point is measured first, like a start
/// point (for the first three sources; the others' once any source agrees), but the strategy is
/// told its results, and its further points are measured, only once the source agrees with this
/// device (`transfer_agrees`): what it measured ranks the configs measured here as they ranked
/// here, or, where it measured too few of them, its best point measured here is among the best
/// found here; and its best point is within 10% of the fastest result the search found alone. So
/// another device's winners lead a search where devices agree, and cost at most one evaluation,
/// without steering the strategy, where they do not.
struct transfer_source {
  /// Valid indices of its configs to start from, best first (e.g. `distinct_best`).
  std::vector<std::size_t> points{};
  /// What it measured, as indices into this space with their times (ms; +infinity for a failure),
  /// in any order; may be empty.
  std::vector<search_evaluation> measured{};
};

/// Whether `source` agrees with `here`, the evaluations of this search so far, of which those in
/// `started` are start or transfer points and the rest the search's own:
/// - over the configs both measured with a finite time, where there are at least 16, the rank
///   correlation (Spearman's, ties averaged) of its times with the times here is at least
///   `min_correlation`;
/// - with fewer, its best point measured here is within the best quarter of the finite times here,
///   and the search has at least six finite results of its own;
/// - either way its best point measured here, where there is one and the search has results of
///   its own, is within 10% of the fastest of them: a source whose winners are slower here than
///   what the search found alone is no guide to this device's optimum, however it ranks the rest.
[[nodiscard]] bool transfer_agrees(const transfer_source &source,
                                   std::span<const search_evaluation> here,
                                   double min_correlation = 0.5,
                                   std::span<const std::size_t> started = {});

/// Settings of one search beyond its budget.
struct search_options {
  /// Seed of the strategy's random numbers (the same on every rank).
  std::uint64_t seed = 0;
  /// Most candidates per `evaluate` call. Batches change the proposals (the strategy learns
  /// between batches), so every rank must use the same batch size.
  std::size_t batch_size = 1;
  /// Proposals kept ahead of the measurement (0: none). Each `evaluate` call still measures up to
  /// `batch_size` candidates, the oldest proposals first, but the strategy is asked for this many
  /// more before it runs, and `on_propose` is told about them, so that their preparation (a
  /// compile) overlaps the measurement. The strategy learns later: a proposal is made without the
  /// results of the `lookahead` before it. Every rank must use the same.
  std::size_t lookahead = 0;
  /// Called with the candidates (valid, not measured before) as they are proposed, in the order
  /// they will be measured, before the `evaluate` call that measures them, and with `queued`: the
  /// proposals waiting ahead of the first of them. Each `evaluate` call takes the oldest
  /// `batch_size`, so the j-th is measured at position (queued + j) % batch_size of its batch
  /// while the batches before it are full (a batch is short when the strategy proposes fewer than
  /// asked, or at the end of the budget).
  std::function<void(std::span<const std::size_t> indices, std::size_t queued)> on_propose{};
  /// Valid indices measured first, e.g. `transfer_indices` of winners of other devices or keys
  /// (counted as evaluations; invalid or repeated ones skipped).
  std::vector<std::size_t> start_points{};
  /// Configs of other devices or keys, one source each, in the order to take them (every rank must
  /// pass the same). The first three sources' first points are measured after `start_points`,
  /// the others' once any source agrees; a source's further points only while it agrees with the
  /// results here (`transfer_source`).
  std::vector<transfer_source> transfer{};
  /// The rank correlation a source's times must have with the times here for its results to be
  /// told to the strategy and its further points measured (`transfer_agrees`).
  double transfer_agreement = 0.5;
  /// Called after each batch with this rank's wish to stop for wall time; returns the decision all
  /// ranks take (e.g. a MAX all-reduce of the flag). Unset: the local wish decides.
  std::function<bool(bool)> agree_stop{};
  /// When the wall-time budget started (unset: when `run_search` is called), e.g. when the caller
  /// began the work that sets the search up.
  std::optional<std::chrono::steady_clock::time_point> started{};
  /// The clock of the wall-time budget (unset: `std::chrono::steady_clock::now`), e.g. one that
  /// a replay of recorded times advances by each evaluation's recorded cost.
  std::function<std::chrono::steady_clock::time_point()> clock{};
};

/// What a search found.
struct search_outcome {
  /// Best valid config in the search's own order (smallest time; ties to the smaller
  /// search-space index), nullopt when none ran. This is the strategies' view, the one they steer
  /// their proposals by. A tuner does not take it as its winner: the tuner's single winner rule
  /// (smallest finite time, ties to the lowest candidate index) chooses among the measured
  /// candidates (`history`). The two orders differ where a space's domains were sorted
  /// (`search_space::from_configs`), so a tie can go to another config here than in the tuner.
  std::optional<std::size_t> best_index;
  double best_time_ms = std::numeric_limits<double>::infinity();
  /// Distinct configs measured.
  std::size_t evaluations = 0;
  /// Best time after each evaluation (+infinity until something ran); `trace.size() ==
  /// evaluations`.
  std::vector<double> trace;
  /// Every evaluation in order.
  std::vector<search_evaluation> history;
  search_stop stop = search_stop::evaluations;
  /// Wall time of the strategy's own work (ask and tell), in seconds.
  double strategy_seconds = 0;
  /// Number of candidates the strategy proposed (repeats included).
  std::size_t proposals = 0;
  /// Start points and transfer points measured.
  std::size_t started = 0;
  /// Transfer sources that agreed with this search (their results were told to the strategy).
  std::size_t agreed_sources = 0;
};

/// Runs `strat` over `space` until a budget is exhausted: start points first, then batches of up to
/// `options.batch_size` proposals, each distinct config measured once by `evaluate`. Proposals that
/// are invalid in `space` are told +infinity without being measured or counted. Throws
/// `tunekit::error` when `evaluate` returns the wrong number of times, or on a zero batch size.
[[nodiscard]] search_outcome run_search(const search_space &space, strategy &strat,
                                        const search_budget &budget,
                                        const batch_evaluator &evaluate,
                                        const search_options &options = {});

} // namespace tunekit
