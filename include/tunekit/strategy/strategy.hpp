#pragma once
/// \file strategy/strategy.hpp
/// Search strategies: ask for candidates, tell their times. A strategy is deterministic for a seed:
/// the same space, seed, start points, batch sizes and told times give the same proposals on every
/// machine, so every rank of a job proposes the same candidates from the same MAX-reduced timings.
/// Strategies never read a clock, and never iterate an unordered container.

#include <tunekit/strategy/search_space.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

/// A search strategy over a `search_space`, driven by ask/tell (see `run_search`).
///
/// Protocol: `start` once; then `ask` for a batch, `tell` the time of each candidate (in any
/// order, +infinity for a failure), ask again. A strategy may propose a candidate it was already
/// told about (the driver answers it again for free), and may be told about candidates it did not
/// propose (the transfer start points the driver evaluates first). An empty batch means the
/// strategy has nothing left to propose.
class strategy {
public:
  virtual ~strategy() = default;
  strategy() = default;
  strategy(const strategy &) = delete;
  strategy &operator=(const strategy &) = delete;

  /// The name `make_strategy` knows it by.
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// Resets the strategy for a new search of `space`, which must outlive the search. `start_points`
  /// are valid indices from other devices or keys (see `transfer_indices`); the driver evaluates
  /// them before the first `ask`, and a strategy may use them to seed itself.
  virtual void start(const search_space &space, std::uint64_t seed,
                     std::span<const std::size_t> start_points) = 0;
  /// Up to `max_batch` (>= 1) valid indices to measure next.
  [[nodiscard]] virtual std::vector<std::size_t> ask(std::size_t max_batch) = 0;
  /// The time of `index` in milliseconds; +infinity when it failed.
  virtual void tell(std::size_t index, double time_ms) = 0;
  /// Called by the driver after `start` when the search has transfer sources
  /// (`search_options::transfer`): the winners of other devices or keys are measured among the
  /// strategy's proposals, and their results are told once a source agrees with the results
  /// here. A strategy may then keep closer to the configs told than it would in a search of its
  /// own. The default ignores it.
  virtual void expect_transfer() {}
};

/// The names `make_strategy` accepts, the default first.
[[nodiscard]] std::vector<std::string> strategy_names();

/// The strategy called `name`: "hybrid" (the default for large spaces), "tpe", "genetic",
/// "local" (local search with restarts) or "random". Throws `tunekit::error` naming the known
/// strategies for any other name.
[[nodiscard]] std::unique_ptr<strategy> make_strategy(std::string_view name);

/// The name of the strategy used when none is given.
inline constexpr std::string_view default_strategy_name = "hybrid";

} // namespace tunekit
