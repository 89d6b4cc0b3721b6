#include "strategy_base.hpp"

#include <tunekit/error.hpp>
#include <tunekit/strategy/run_search.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
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

// Asks in a row that brought nothing new before the driver gives up on the strategy.
constexpr std::size_t max_idle_asks = 1000;

class search_run {
public:
  search_run(const search_space &space, strategy &strat, const search_budget &budget,
             const batch_evaluator &evaluate, const search_options &options)
      : m_space(space), m_strat(strat), m_budget(budget), m_evaluate(evaluate), m_options(options),
        m_started(steady::now()) {}

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
    timed([&] { m_strat.start(m_space, m_options.seed, starts); });

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
          queue.push_back(starts[next_start++]);
        }
      } else if (!drained && queue.size() < target) {
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
        m_options.on_propose(proposed);
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
      const bool late =
          std::chrono::duration<double>(steady::now() - m_started) >= m_budget.max_time;
      const bool stop = m_options.agree_stop ? m_options.agree_stop(late) : late;
      if (stop) {
        m_out.stop = search_stop::time;
        return true;
      }
    }
    return false;
  }

  const search_space &m_space;
  strategy &m_strat;
  const search_budget &m_budget;
  const batch_evaluator &m_evaluate;
  const search_options &m_options;
  steady::time_point m_started;
  std::unordered_map<std::size_t, double> m_known; // lookups only, never iterated
  std::size_t m_since_improvement = 0;
  std::optional<detail::observation> m_best; // in the strategies' order (`detail::better`)
  search_outcome m_out;
};

} // namespace

search_outcome run_search(const search_space &space, strategy &strat, const search_budget &budget,
                          const batch_evaluator &evaluate, const search_options &options) {
  return search_run(space, strat, budget, evaluate, options).run();
}

} // namespace tunekit
