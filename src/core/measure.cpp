#include <tunekit/error.hpp>
#include <tunekit/measure.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>

namespace tunekit {

std::string_view to_string(statistic s) noexcept {
  switch (s) {
  case statistic::mean:
    return "mean";
  case statistic::median:
    return "median";
  case statistic::min:
    return "min";
  }
  return "unknown";
}

double sample_stats::score(statistic s) const noexcept {
  switch (s) {
  case statistic::mean:
    return mean;
  case statistic::median:
    return median;
  case statistic::min:
    return min;
  }
  return mean;
}

sample_stats summarize(const std::vector<double> &samples_ms) {
  if (samples_ms.empty()) {
    throw error("the measurer returned no timed samples");
  }
  for (double s : samples_ms) {
    if (!std::isfinite(s) || s < 0) {
      throw error("the measurer returned an invalid sample (" + std::to_string(s) + " ms)");
    }
  }
  std::vector<double> sorted = samples_ms;
  std::sort(sorted.begin(), sorted.end());
  const auto n = static_cast<double>(sorted.size());
  sample_stats st;
  st.min = sorted.front();
  st.max = sorted.back();
  st.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  const std::size_t mid = sorted.size() / 2;
  st.median = sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  double var = 0;
  for (double s : sorted) {
    var += (s - st.mean) * (s - st.mean);
  }
  st.stddev = sorted.size() > 1 ? std::sqrt(var / (n - 1)) : 0.0;
  st.count = sorted.size();
  if (sorted.size() >= 4) {
    // Quartiles by linear interpolation between the closest ranks.
    const auto quantile = [&](double q) {
      const double pos = q * (n - 1);
      const auto lo = static_cast<std::size_t>(pos);
      const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
      return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
    };
    const double q1 = quantile(0.25);
    const double q3 = quantile(0.75);
    const double fence = 1.5 * (q3 - q1);
    st.outliers = static_cast<std::size_t>(std::count_if(
        sorted.begin(), sorted.end(), [&](double s) { return s < q1 - fence || s > q3 + fence; }));
  }
  return st;
}

bool early_stop_due(const measure_policy &policy, double best_ms, std::size_t timed_runs) noexcept {
  return policy.early_stop_factor > 0 && std::isfinite(policy.early_stop_factor) &&
         std::isfinite(best_ms) && policy.early_stop_after >= 1 &&
         timed_runs == static_cast<std::size_t>(policy.early_stop_after) &&
         timed_runs < static_cast<std::size_t>(std::max(policy.runs, 0));
}

bool stop_early(const measure_policy &policy, double best_ms,
                std::span<const double> samples_ms) noexcept {
  if (!early_stop_due(policy, best_ms, samples_ms.size())) {
    return false;
  }
  const double mean = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) /
                      static_cast<double>(samples_ms.size());
  return mean > policy.early_stop_factor * best_ms;
}

host_measurer::host_measurer(std::function<void()> sync) : m_sync(std::move(sync)) {}

std::vector<double> host_measurer::measure(const candidate_info &info,
                                           detail::function_ref<void()> run,
                                           const measure_policy &policy) {
  for (int i = 0; i < policy.warmup; ++i) {
    reset_before_run(info);
    run();
  }
  if (m_sync) {
    m_sync();
  }
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(std::max(policy.runs, 0)));
  for (int i = 0; i < policy.runs; ++i) {
    if (info.reset != nullptr) {
      // Queued work of the reset (a device copy) finishes before the clock starts.
      (*info.reset)();
      if (m_sync) {
        m_sync();
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    run();
    if (m_sync) {
      m_sync();
    }
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (stop_early(policy, info.best_ms, samples)) {
      break;
    }
  }
  return samples;
}

simulated_measurer::simulated_measurer(cost_function cost, double relative_noise,
                                       std::uint64_t seed)
    : m_cost(std::move(cost)), m_noise(relative_noise), m_state(seed) {
  if (!m_cost) {
    throw error("simulated_measurer needs a cost function");
  }
}

namespace {
// splitmix64: a small, well-known generator whose sequence is identical on every platform
// (std::normal_distribution is not), so simulated timings are reproducible everywhere.
std::uint64_t next(std::uint64_t &state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double uniform01(std::uint64_t &state) {
  return (static_cast<double>(next(state) >> 11) + 0.5) * 0x1.0p-53;
}

double standard_normal(std::uint64_t &state) {
  // Box-Muller.
  const double u1 = uniform01(state);
  const double u2 = uniform01(state);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}
} // namespace

std::vector<double> simulated_measurer::measure(const candidate_info &info,
                                                detail::function_ref<void()> run,
                                                const measure_policy &policy) {
  ++m_candidates;
  const double cost = m_cost(info.config, info.key);
  for (int i = 0; i < policy.warmup; ++i) {
    ++m_runs;
    reset_before_run(info);
    run();
  }
  std::vector<double> samples;
  for (int i = 0; i < policy.runs; ++i) {
    ++m_runs;
    reset_before_run(info);
    run();
    const double noisy = cost * (1.0 + m_noise * standard_normal(m_state));
    samples.push_back(std::max(noisy, 0.0));
    if (stop_early(policy, info.best_ms, samples)) {
      break;
    }
  }
  return samples;
}

} // namespace tunekit
