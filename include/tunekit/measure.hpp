#pragma once
/// \file measure.hpp
/// How a candidate is timed: the measurement policy, the pluggable measurer interface, a host
/// measurer (steady clock) and a simulated measurer for deterministic tests.

#include <tunekit/config.hpp>
#include <tunekit/detail/function_ref.hpp>
#include <tunekit/key.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

/// How the timed runs of a candidate are reduced to its score.
enum class statistic { mean, median, min };
[[nodiscard]] std::string_view to_string(statistic s) noexcept;

/// Runs per candidate. The defaults are the seed's: 5 warmup runs, 10 timed runs, mean.
struct measure_policy {
  int warmup = 5;
  int runs = 10;
  statistic stat = statistic::mean;
  /// Opt-in early stop for big spaces. With a factor f > 0, a candidate whose mean over its first
  /// `early_stop_after` timed runs already exceeds f times the best score of the search so far
  /// (`candidate_info::best_ms`) gets no more runs: the measurer returns those samples, and the
  /// tuner records the candidate as ok with their statistics and the reason. 0: off (every
  /// candidate gets `runs` timed runs). Must be 0 or at least 1.
  double early_stop_factor = 0;
  /// Timed runs before the early-stop check (at least 1; no check when it is `runs` or more).
  int early_stop_after = 2;
  friend bool operator==(const measure_policy &, const measure_policy &) = default;
};

/// Summary of a candidate's timed runs, in milliseconds.
struct sample_stats {
  double mean = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double stddev = 0;
  /// Timed runs summarised; 0 where unknown (entries written before it was stored, measurements
  /// made elsewhere that give one time).
  std::size_t count = 0;
  /// Runs outside Tukey's fences: below the first quartile, or above the third, by more than 1.5
  /// times the interquartile range (a run slowed by another process, a clock change). Counted,
  /// not dropped: the policy's statistic still sees every run.
  std::size_t outliers = 0;
  /// The value the policy's statistic selects.
  [[nodiscard]] double score(statistic s) const noexcept;
};

/// Summarises timed runs; throws `tunekit::error` on an empty list or a non-finite or negative
/// sample.
[[nodiscard]] sample_stats summarize(const std::vector<double> &samples_ms);

/// What a measurer is told about the candidate it times.
struct candidate_info {
  std::string_view tuner;
  const tunekit::key &key;
  const tunekit::config &config;
  std::size_t index; ///< position in the list being measured
  std::size_t count; ///< length of that list
  /// The best valid score of this search so far on this rank, in milliseconds (+infinity before
  /// the first): what `measure_policy::early_stop_factor` compares with.
  double best_ms = std::numeric_limits<double>::infinity();
  /// Set when the tuned function writes its arguments (a reset hook, `tuned_function::with_reset`):
  /// puts them back as the caller passed them. A measurer calls it before every run, warmup and
  /// timed, outside its timed region; a run not preceded by it calls it itself, inside the timed
  /// region, so that a measurer that ignores it still runs every candidate on the caller's data.
  const detail::function_ref<void()> *reset = nullptr;
};

/// Whether the policy's early-stop check falls after `timed_runs` timed runs of a candidate: the
/// early stop is on, there is a best score to compare with, exactly `early_stop_after` runs are
/// done and more are due. A measurer that times asynchronously waits for those runs only then.
[[nodiscard]] bool early_stop_due(const measure_policy &policy, double best_ms,
                                  std::size_t timed_runs) noexcept;

/// Whether a measurer stops a candidate now, having timed `samples_ms`: the check is due
/// (`early_stop_due`) and their mean exceeds `early_stop_factor * best_ms`. Measurers ask after
/// every timed run and return the samples when it answers true.
[[nodiscard]] bool stop_early(const measure_policy &policy, double best_ms,
                              std::span<const double> samples_ms) noexcept;

/// Times one candidate. `run` performs one call of the tuned function with the candidate's config;
/// the measurer calls it `policy.warmup` times, then `policy.runs` times timed, and returns one
/// time in milliseconds per timed run (fewer when `stop_early` says so: the policy's early stop).
/// When `info.reset` is set it calls that before each run, untimed (`reset_before_run`).
/// Exceptions from `run` propagate to the tuner, which records them as the candidate's failure;
/// throw `fatal_candidate_error` for failures that must stop tuning.
class measurer {
public:
  measurer() = default;
  measurer(const measurer &) = delete;
  measurer &operator=(const measurer &) = delete;
  virtual ~measurer() = default;

  [[nodiscard]] virtual std::vector<double> measure(const candidate_info &info,
                                                    detail::function_ref<void()> run,
                                                    const measure_policy &policy) = 0;
  /// Short name recorded in cache entries ("host", "simulated", "cuda").
  [[nodiscard]] virtual std::string name() const = 0;
};

/// Calls `info.reset` when it is set: what a measurer does before each run of a candidate, outside
/// its timed region.
inline void reset_before_run(const candidate_info &info) {
  if (info.reset != nullptr) {
    (*info.reset)();
  }
}

/// Work a candidate needs before it can run, done ahead on other threads while the device measures
/// the candidates already prepared: compiling a runtime-compiled kernel is the example
/// (`tunekit::cuda::kernel_program`). The tuner hands it each batch it is about to measure, in
/// order; running a candidate waits for its own preparation.
class candidate_preparer {
public:
  candidate_preparer() = default;
  candidate_preparer(const candidate_preparer &) = delete;
  candidate_preparer &operator=(const candidate_preparer &) = delete;
  virtual ~candidate_preparer() = default;

  /// Starts preparing `configs` without waiting for it.
  virtual void prepare(std::span<const config> configs) = 0;
  /// Milliseconds spent preparing `c` (a compile, or reading its cached binary), once it is done;
  /// nullopt when unknown. Recorded beside the measured time.
  [[nodiscard]] virtual std::optional<double> prepare_ms(const config &c) const = 0;
};

/// Wall-clock measurer for host functions. The optional `sync` hook is called once after the warmup
/// runs and after every timed run, inside the timed region, so that asynchronous work (a device
/// queue) is included in the time.
class host_measurer final : public measurer {
public:
  explicit host_measurer(std::function<void()> sync = {});
  [[nodiscard]] std::vector<double> measure(const candidate_info &info,
                                            detail::function_ref<void()> run,
                                            const measure_policy &policy) override;
  [[nodiscard]] std::string name() const override { return "host"; }

private:
  std::function<void()> m_sync;
};

/// Deterministic measurer for tests: still calls `run` (warmup + runs times, so failures behave as
/// in real tuning), but reports `cost(config, key)` milliseconds per run, multiplied by
/// `1 + relative_noise * N(0, 1)` from a generator seeded with `seed`. A cost function that throws
/// fails the candidate with its message.
class simulated_measurer final : public measurer {
public:
  using cost_function = std::function<double(const config &, const key &)>;

  explicit simulated_measurer(cost_function cost, double relative_noise = 0.0,
                              std::uint64_t seed = 0);
  [[nodiscard]] std::vector<double> measure(const candidate_info &info,
                                            detail::function_ref<void()> run,
                                            const measure_policy &policy) override;
  [[nodiscard]] std::string name() const override { return "simulated"; }

  /// Candidates measured so far (a cache hit measures none).
  [[nodiscard]] std::size_t candidates_measured() const noexcept { return m_candidates; }
  /// Calls of `run` made so far.
  [[nodiscard]] std::size_t runs() const noexcept { return m_runs; }

private:
  cost_function m_cost;
  double m_noise;
  std::uint64_t m_state;
  std::size_t m_candidates = 0;
  std::size_t m_runs = 0;
};

} // namespace tunekit
