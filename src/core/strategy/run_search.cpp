#include "strategy_base.hpp"

#include <tunekit/error.hpp>
#include <tunekit/strategy/run_search.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace tunekit {

std::string_view to_string(search_stop s) noexcept {
  switch (s) {
  case search_stop::evaluations:
    return "evaluations";
  case search_stop::time:
    return "time";
  case search_stop::patience:
    return "patience";
  case search_stop::exhausted:
    return "exhausted";
  }
  return "unknown";
}

namespace {

using steady = std::chrono::steady_clock;

// Positions 1..n of `v` in ascending order, ties given their mean position.
std::vector<double> ranks(const std::vector<double> &v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && v[order[j]] == v[order[i]]) {
      ++j;
    }
    const double mean = (static_cast<double>(i + j - 1) / 2.0) + 1.0;
    for (std::size_t k = i; k < j; ++k) {
      r[order[k]] = mean;
    }
    i = j;
  }
  return r;
}

// Pearson's correlation of the ranks; 0 where either side has no spread.
double spearman(const std::vector<double> &x, const std::vector<double> &y) {
  const auto rx = ranks(x);
  const auto ry = ranks(y);
  const double n = static_cast<double>(rx.size());
  const double mean = (n + 1) / 2;
  double sxy = 0;
  double sxx = 0;
  double syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

// `transfer_agrees` with the source's times looked up by index; `started(index)` tells the start
// and transfer points from the search's own evaluations.
template <class Started>
bool agrees(const std::unordered_map<std::size_t, double> &theirs,
            const std::vector<std::size_t> &points, std::span<const search_evaluation> here,
            double min_correlation, const Started &started) {
  std::vector<double> x;
  std::vector<double> y;
  std::vector<double> finite_here;
  double its_best = std::numeric_limits<double>::infinity(); // its points measured here
  double own_best = std::numeric_limits<double>::infinity(); // the search's own results
  std::size_t own = 0;
  for (const auto &e : here) {
    if (std::find(points.begin(), points.end(), e.index) != points.end()) {
      its_best = std::min(its_best, e.time_ms);
    }
    if (!std::isfinite(e.time_ms)) {
      continue;
    }
    finite_here.push_back(e.time_ms);
    if (!started(e.index)) {
      own_best = std::min(own_best, e.time_ms);
      ++own;
    }
    if (auto it = theirs.find(e.index); it != theirs.end() && std::isfinite(it->second)) {
      x.push_back(it->second);
      y.push_back(e.time_ms);
    }
  }
  // Its winners must hold up against what the search found alone: on a device whose optimum lies
  // away from the other devices' winners, their rankings of the rest can still correlate, and a
  // small sample ranks a poor region's configs among the best (measured over the held-out spaces
  // with sources from budgeted searches, docs/search.md).
  constexpr double near_own_best = 1.1;
  if (std::isfinite(its_best) && own > 0 && its_best > near_own_best * own_best) {
    return false;
  }
  // A rank correlation over fewer configs is mostly noise (its standard error is about
  // 1/sqrt(n - 1): 0.26 at 16); the first judgement would compare other devices' winners only.
  constexpr std::size_t min_common = 16;
  if (x.size() >= min_common) {
    return spearman(x, y) >= min_correlation;
  }
  // Too few configs in common: its best point measured here must be among the best found here,
  // once the search has results of its own to compare it with (as many as the hybrid's start).
  constexpr std::size_t min_own = 6;
  if (own < min_own || !std::isfinite(its_best)) {
    return false;
  }
  const auto better_than_it = static_cast<std::size_t>(std::count_if(
      finite_here.begin(), finite_here.end(), [&](double t) { return t < its_best; }));
  return better_than_it * 4 < finite_here.size();
}

std::unordered_map<std::size_t, double> times_of(const transfer_source &source) {
  std::unordered_map<std::size_t, double> out;
  for (const auto &e : source.measured) {
    out.emplace(e.index, e.time_ms);
  }
  return out;
}

// Asks in a row that brought nothing new before the driver gives up on the strategy.
constexpr std::size_t max_idle_asks = 1000;

// Transfer sources (the first ones) whose first points are measured before any source agrees:
// chosen over the held-out spaces (docs/search.md, Transfer).
constexpr std::size_t first_points_before_agreement = 3;

// The batches whose durations predict the next one's under a wall-time limit.
constexpr std::size_t recent_batches = 3;

class search_run {
public:
  search_run(const search_space &space, strategy &strat, const search_budget &budget,
             const batch_evaluator &evaluate, const search_options &options)
      : m_space(space), m_strat(strat), m_budget(budget), m_evaluate(evaluate), m_options(options),
        m_checked_at(now()), m_started(options.started.value_or(m_checked_at)) {}

  search_outcome run() {
    if (m_options.batch_size == 0) {
      throw error("search batch size must be at least 1");
    }
    if (!m_evaluate) {
      throw error("search needs an evaluator");
    }
    std::vector<std::size_t> starts;
    std::unordered_set<std::size_t> seen; // membership only
    for (std::size_t i : m_options.start_points) {
      if (m_space.is_valid(i) && seen.insert(i).second) {
        starts.push_back(i);
      }
    }
    timed([&] {
      m_strat.start(m_space, m_options.seed, starts);
      if (!m_options.transfer.empty()) {
        m_strat.expect_transfer();
      }
    });
    const std::unordered_set<std::size_t> user_start = seen; // membership only
    // The first points of the first sources are measured after the start points, but the
    // strategy is told of a source's results only once the source agrees with the results here:
    // until then the search is the one it would be without transfer, and another device's region
    // cannot mislead its model. Its further points wait for its agreement. The other sources'
    // first points wait for any source to agree: on a device unlike the others, every other
    // device's winner is a poor config here, and one each would take much of a small budget.
    for (std::size_t k = 0; k < m_options.transfer.size(); ++k) {
      const auto &src = m_options.transfer[k];
      const bool waits = k >= first_points_before_agreement;
      m_sources.push_back({times_of(src), &src.points, waits ? 0U : 1U, 0, false, waits, {}});
      for (std::size_t i : src.points) {
        if (!user_start.contains(i)) {
          m_source_of.emplace(i, k); // the first source that names it
        }
      }
      if (!waits && !src.points.empty() && m_space.is_valid(src.points.front()) &&
          seen.insert(src.points.front()).second) {
        starts.push_back(src.points.front());
      }
    }

    std::size_t next_start = 0;
    std::size_t idle = 0;
    bool drained = false;          // the strategy has nothing more to propose
    std::deque<std::size_t> queue; // proposed (valid, not measured), in the order to measure
    while (!should_stop()) {
      const std::size_t left = m_budget.max_evaluations - m_out.evaluations;
      const std::size_t target = std::min(m_options.batch_size + m_options.lookahead, left);
      const std::size_t queued = queue.size();
      if (next_start < starts.size()) {
        while (next_start < starts.size() && queue.size() < target) {
          m_started_points.insert(starts[next_start]);
          queue.push_back(starts[next_start++]);
        }
      } else if (take_agreeing(queue, target); !drained && queue.size() < target) {
        const std::size_t want = target - queue.size();
        std::vector<std::size_t> batch;
        timed([&] { batch = m_strat.ask(want); });
        drained = batch.empty();
        if (batch.size() > want) {
          batch.resize(want);
        }
        m_out.proposals += batch.size();
        for (std::size_t i : batch) {
          if (!m_space.is_valid(i)) {
            timed([&] { m_strat.tell(i, infinity); });
          } else if (auto it = m_known.find(i); it != m_known.end()) {
            timed([&] { m_strat.tell(i, it->second); });
          } else if (std::find(queue.begin(), queue.end(), i) == queue.end()) {
            queue.push_back(i);
          }
        }
      }
      if (queue.size() > queued && m_options.on_propose) {
        const std::vector<std::size_t> proposed(queue.begin() + static_cast<std::ptrdiff_t>(queued),
                                                queue.end());
        m_options.on_propose(proposed, queued);
      }
      if (queue.empty()) {
        if (drained || ++idle > max_idle_asks) {
          m_out.stop = search_stop::exhausted;
          break;
        }
        continue;
      }
      idle = 0;
      const std::size_t take = std::min(m_options.batch_size, queue.size());
      const std::vector<std::size_t> fresh(queue.begin(),
                                           queue.begin() + static_cast<std::ptrdiff_t>(take));
      queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(take));
      measure(fresh);
    }
    return std::move(m_out);
  }

private:
  static constexpr double infinity = std::numeric_limits<double>::infinity();

  template <class F> void timed(F &&f) {
    const auto t0 = steady::now();
    f();
    m_out.strategy_seconds += std::chrono::duration<double>(steady::now() - t0).count();
  }

  // Judges the transfer sources that have results withheld or points left: one that agrees with
  // the results so far has its withheld results told to the strategy and its next point queued
  // (before the strategy's proposals, while the queue has room). A source that does not agree is
  // judged again once the evaluations have grown by an eighth (a few times per search, not after
  // every batch); one that agrees, at once, so that its points are taken in turn.
  void take_agreeing(std::deque<std::size_t> &queue, std::size_t target) {
    const std::size_t n = m_out.history.size();
    for (auto &src : m_sources) {
      const auto &points = *src.points;
      while (src.next < points.size() &&
             (!m_space.is_valid(points[src.next]) || m_known.count(points[src.next]) != 0 ||
              std::find(queue.begin(), queue.end(), points[src.next]) != queue.end())) {
        ++src.next;
      }
      const bool more = src.next < points.size() && queue.size() < target;
      if (src.waiting && m_out.agreed_sources > 0 && more) {
        // Another source agreed: the device is like the others, and this source's first point
        // is measured as the first sources' were (its result withheld until it agrees).
        src.waiting = false;
        if (src.next == 0) {
          queue.push_back(points[src.next++]);
          m_started_points.insert(queue.back());
          continue;
        }
      }
      const bool untold = !src.agreed && !src.withheld.empty();
      const bool judged_lately = src.judged_at > 0 && n < src.judged_at + src.judged_at / 8 + 1;
      if ((!more && !untold) || n == 0 || judged_lately) {
        continue;
      }
      if (!agrees(src.times, points, m_out.history, m_options.transfer_agreement,
                  [&](std::size_t i) { return m_started_points.contains(i); })) {
        src.judged_at = n;
        continue;
      }
      src.judged_at = 0;
      src.waiting = false;
      if (!src.agreed) {
        src.agreed = true;
        ++m_out.agreed_sources;
        for (const auto &o : src.withheld) {
          timed([&] { m_strat.tell(o.index, o.time_ms); });
        }
        src.withheld.clear();
      }
      if (more) {
        m_source_of.erase(points[src.next]); // told when measured
        queue.push_back(points[src.next++]);
        m_started_points.insert(queue.back());
      }
    }
  }

  void measure(const std::vector<std::size_t> &fresh) {
    std::vector<double> times = m_evaluate(fresh);
    if (times.size() != fresh.size()) {
      throw error("search evaluator returned " + std::to_string(times.size()) + " times for " +
                  std::to_string(fresh.size()) + " candidates");
    }
    for (std::size_t k = 0; k < fresh.size(); ++k) {
      double t = times[k];
      if (std::isnan(t) || t < 0) {
        t = infinity; // a time that cannot be compared is a failure
      }
      const std::size_t i = fresh[k];
      m_known.emplace(i, t);
      ++m_out.evaluations;
      m_out.started += m_started_points.count(i);
      m_out.history.push_back({i, t});
      const detail::observation o{i, t};
      if (detail::improves(o, m_best)) {
        // A tie to a smaller index is a new best but not an improvement of the time.
        m_since_improvement = m_best && t == m_best->time_ms ? m_since_improvement + 1 : 0;
        m_best = o;
        m_out.best_time_ms = t;
        m_out.best_index = i;
      } else {
        ++m_since_improvement;
      }
      m_out.trace.push_back(m_out.best_time_ms);
      // A transfer point the driver queued for a source that has not agreed: told once it does.
      // (The strategy is told what it proposed itself, a source's point or not.)
      if (auto it = m_source_of.find(i); it != m_source_of.end() && !m_sources[it->second].agreed &&
                                         m_started_points.contains(i)) {
        m_sources[it->second].withheld.push_back(o);
        continue;
      }
      timed([&] { m_strat.tell(i, t); });
    }
  }

  bool should_stop() {
    if (m_out.evaluations >= m_budget.max_evaluations) {
      m_out.stop = search_stop::evaluations;
      return true;
    }
    if (m_budget.patience > 0 && m_since_improvement >= m_budget.patience) {
      m_out.stop = search_stop::patience;
      return true;
    }
    if (m_budget.max_time.count() > 0) {
      const steady::time_point at = now();
      if (m_out.evaluations > m_checked_evaluations) {
        if (m_periods.size() == recent_batches) {
          m_periods.pop_front();
        }
        m_periods.push_back(at - m_checked_at);
      }
      m_checked_at = at;
      m_checked_evaluations = m_out.evaluations;
      // Stop before a batch that the recent ones say would end past the limit.
      const bool late =
          std::chrono::duration<double>(at - m_started) + expected_batch() >= m_budget.max_time;
      const bool stop = m_options.agree_stop ? m_options.agree_stop(late) : late;
      if (stop) {
        m_out.stop = search_stop::time;
        return true;
      }
    }
    return false;
  }

  [[nodiscard]] steady::time_point now() const {
    return m_options.clock ? m_options.clock() : steady::now();
  }

  // The expected duration of the next batch: the median of the recent batches (from one stop
  // check to the next), the smaller of two; zero before the first.
  [[nodiscard]] steady::duration expected_batch() const {
    if (m_periods.empty()) {
      return steady::duration::zero();
    }
    std::vector<steady::duration> sorted(m_periods.begin(), m_periods.end());
    std::sort(sorted.begin(), sorted.end());
    return sorted[(sorted.size() - 1) / 2];
  }

  const search_space &m_space;
  strategy &m_strat;
  const search_budget &m_budget;
  const batch_evaluator &m_evaluate;
  const search_options &m_options;
  steady::time_point m_checked_at; // the last stop check (the start of the batch after it)
  steady::time_point m_started;    // when the wall-time budget started
  std::size_t m_checked_evaluations = 0;
  std::deque<steady::duration> m_periods;          // the recent batches' durations, oldest first
  std::unordered_map<std::size_t, double> m_known; // lookups only, never iterated
  struct source_state {
    std::unordered_map<std::size_t, double> times; // lookups only
    const std::vector<std::size_t> *points;
    std::size_t next;      // the next of its points to consider
    std::size_t judged_at; // evaluations when it last failed to agree (0: judge at once)
    bool agreed;           // its results are told to the strategy
    bool waiting;          // its first point waits for any source to agree
    std::vector<detail::observation> withheld; // its results measured before it agreed
  };
  std::vector<source_state> m_sources;
  std::unordered_map<std::size_t, std::size_t> m_source_of; // transfer point -> source (lookups)
  std::unordered_set<std::size_t> m_started_points; // start and transfer points queued (lookups)
  std::size_t m_since_improvement = 0;
  std::optional<detail::observation> m_best; // in the strategies' order (`detail::better`)
  search_outcome m_out;
};

} // namespace

bool transfer_agrees(const transfer_source &source, std::span<const search_evaluation> here,
                     double min_correlation, std::span<const std::size_t> started) {
  return agrees(times_of(source), source.points, here, min_correlation, [&](std::size_t i) {
    return std::find(started.begin(), started.end(), i) != started.end();
  });
}

search_outcome run_search(const search_space &space, strategy &strat, const search_budget &budget,
                          const batch_evaluator &evaluate, const search_options &options) {
  return search_run(space, strat, budget, evaluate, options).run();
}

} // namespace tunekit
