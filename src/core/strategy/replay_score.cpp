// The countings of a replayed search: the best time within a budget with failures charged or free,
// the cost axis (recorded costs or evaluations), and the time-based score of Willemsen et al.

#include <tunekit/error.hpp>
#include <tunekit/strategy/replay.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tunekit {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

bool failed(const search_evaluation &e) { return !std::isfinite(e.time_ms); }

double median_of(std::vector<double> v) {
  if (v.empty()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) {
    return hi;
  }
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + hi) / 2;
}

// The valid (finite) times of the table, worst first.
std::vector<double> worst_first(const replay_table &table) {
  std::vector<double> d;
  for (double t : table.times) {
    if (std::isfinite(t)) {
      d.push_back(t);
    }
  }
  std::sort(d.begin(), d.end(), std::greater<>());
  return d;
}

// Costs of the valid entries (the unit axis: one each).
std::vector<double> valid_costs(const replay_table &table) {
  std::vector<double> c;
  const bool recorded = table.has_costs();
  for (std::size_t i = 0; i < table.times.size(); ++i) {
    if (std::isfinite(table.times[i])) {
      c.push_back(recorded ? table.costs_ms[i] : 1.0);
    }
  }
  return c;
}

// Evaluations random search is expected to need to come `fraction` of the way from the median to
// the optimum (the methodology's cutoff point).
double cutoff_evaluations(const std::vector<double> &worst_first_times, double fraction) {
  const std::size_t n = worst_first_times.size();
  const double best = worst_first_times.back();
  const double median = median_of(worst_first_times);
  const double target = best + (median - best) * (1 - fraction);
  std::size_t i = 0;
  while (i < n && worst_first_times[i] > target) {
    ++i;
  }
  return std::ceil(static_cast<double>(i) / static_cast<double>(n + 1 - i));
}

} // namespace

double best_within(std::span<const search_evaluation> history, std::size_t budget,
                   failure_counting counting) {
  double best = infinity;
  std::size_t used = 0;
  for (const auto &e : history) {
    const bool counts = counting == failure_counting::charged || !failed(e);
    if (counts && used == budget) {
      break;
    }
    used += counts ? 1 : 0;
    best = std::min(best, e.time_ms);
  }
  return best;
}

std::vector<double> cumulative_cost(const replay_table &table,
                                    std::span<const search_evaluation> history,
                                    failure_counting counting) {
  const bool recorded = table.has_costs();
  // A charged failure that records no cost, on a recorded axis: the median recorded cost.
  double failure_cost = 1.0;
  if (recorded) {
    std::vector<double> known;
    for (double c : table.costs_ms) {
      if (!std::isnan(c)) {
        known.push_back(c);
      }
    }
    failure_cost = median_of(std::move(known));
  }
  std::vector<double> out;
  out.reserve(history.size());
  double total = 0;
  for (const auto &e : history) {
    if (!failed(e)) {
      total += recorded ? table.cost_of(e.index) : 1.0;
    } else if (counting == failure_counting::charged) {
      const double c = recorded ? table.cost_of(e.index) : 1.0;
      total += std::isnan(c) ? failure_cost : c;
    }
    out.push_back(total);
  }
  return out;
}

double score_range_end(const replay_table &table, const score_settings &settings) {
  const auto dist = worst_first(table);
  if (dist.empty()) {
    return 0;
  }
  return cutoff_evaluations(dist, settings.end) * median_of(valid_costs(table));
}

double time_score(const replay_table &table, std::span<const std::vector<search_evaluation>> runs,
                  failure_counting counting, const score_settings &settings) {
  if (settings.resolution < 2 || !(settings.start < settings.end)) {
    throw error("time score: needs at least 2 points and a start before the end");
  }
  const auto dist = worst_first(table);
  if (dist.empty() || runs.empty()) {
    throw error("time score: no valid time or no run");
  }
  const auto costs = valid_costs(table);
  const double median_cost = median_of(costs);
  double mean_cost = 0;
  for (double c : costs) {
    mean_cost += c / static_cast<double>(costs.size());
  }
  const double from = cutoff_evaluations(dist, settings.start) * median_cost;
  const double to = cutoff_evaluations(dist, settings.end) * median_cost;
  const double n = static_cast<double>(dist.size());
  const double optimum = dist.back();
  std::vector<double> grid(settings.resolution);
  for (std::size_t k = 0; k < grid.size(); ++k) {
    grid[k] = from + (to - from) * static_cast<double>(k) / static_cast<double>(grid.size() - 1);
  }
  // The mean best-so-far of the runs at each point of the grid.
  std::vector<double> found(grid.size(), 0.0);
  for (const auto &history : runs) {
    const auto cost = cumulative_cost(table, history, counting);
    double best = dist.front();
    std::size_t e = 0;
    for (std::size_t k = 0; k < grid.size(); ++k) {
      while (e < history.size() && cost[e] <= grid[k]) {
        best = std::min(best, history[e].time_ms);
        ++e;
      }
      found[k] += best / static_cast<double>(runs.size());
    }
  }
  double sum = 0;
  std::size_t points = 0;
  for (std::size_t k = 0; k < grid.size(); ++k) {
    const double m = std::max(1.0, std::round(grid[k] / mean_cost));
    const auto at = static_cast<std::size_t>(std::min(n - 1, std::round(m * (n + 1) / (m + 1))));
    const double random = dist[at];
    if (random == optimum) {
      continue; // random search is expected at the optimum: nothing to standardise against
    }
    sum += (random - found[k]) / (random - optimum);
    ++points;
  }
  return points ? sum / static_cast<double>(points) : std::numeric_limits<double>::quiet_NaN();
}

} // namespace tunekit
