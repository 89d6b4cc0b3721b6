// The default strategy's own mechanisms: the trust region around a best that stopped improving,
// the late polish of its radius-two neighbourhood, and the space-filling start.

#include "strategy/strategies.hpp"

#include <tunekit/strategy/run_search.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

namespace {

using tunekit::search_space;

// Times where nothing leads to the optimum (0.5): every config takes 2.0 but `winner` (1.0).
tunekit::batch_evaluator needle(std::size_t winner, std::size_t optimum) {
  return [=](std::span<const std::size_t> batch) {
    std::vector<double> out;
    for (auto i : batch) {
      out.push_back(i == optimum ? 0.5 : i == winner ? 1.0 : 2.0);
    }
    return out;
  };
}

// A plateau (every config 2.0) with one transferred winner (1.0) and, one parameter away from it,
// the optimum (0.5): nothing in the times points at it but its being a neighbour of the best. Once
// the best stops improving, the default strategy searches the best's Hamming neighbourhood (28
// configs here), so it finds the optimum within the start, 6 random configs, the stall of 10 and
// that neighbourhood, where a global search would need thousands of the 4096 configs.
TEST(hybrid, searches_the_neighbourhood_of_a_best_that_stopped_improving) {
  std::vector<tunekit::value> eight = {0, 1, 2, 3, 4, 5, 6, 7};
  auto s = search_space::product({{"A", eight}, {"B", eight}, {"C", eight}, {"D", eight}}, {});
  const std::size_t winner = *s.index_of({{"A", 2}, {"B", 5}, {"C", 1}, {"D", 6}});
  const std::size_t optimum = *s.index_of({{"A", 2}, {"B", 5}, {"C", 7}, {"D", 6}});
  const auto times = needle(winner, optimum);
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    auto strat = tunekit::make_strategy("hybrid");
    tunekit::search_options o;
    o.seed = seed;
    o.start_points = {winner};
    auto r = tunekit::run_search(s, *strat, {.max_evaluations = 50}, times, o);
    EXPECT_EQ(r.best_index, optimum) << "seed " << seed;
  }
}

// Twelve switches (4096 configs); every config takes 2.0 but a known winner (1.0) and the optimum
// (0.5), two switches away from the winner. Nothing in the times leads there, and the winner's
// Hamming neighbourhood holds nothing better, so restarts keep searching elsewhere. After 200
// evaluations the default strategy polishes the best config so far: its radius-two neighbourhood
// (66 configs) is within its allowance of 100 proposals, so it finds the optimum by evaluation
// 300 for every seed (random search finds it in 300 of 4096 about once in fourteen), and two runs
// with one seed propose the same configs.
TEST(hybrid, polishes_the_radius_two_neighbourhood_of_the_best_late_in_a_search) {
  std::vector<tunekit::parameter> params;
  for (const char *n : {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L"}) {
    params.push_back({n, {false, true}});
  }
  auto s = search_space::product(params, {});
  const std::vector<std::uint32_t> switches = {1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1};
  const std::size_t winner = s.from_digits(switches);
  const std::size_t optimum = s.with_digit(s.with_digit(winner, 3, 0), 9, 1); // D and J switched
  const auto times = needle(winner, optimum);
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    std::vector<std::vector<std::size_t>> runs;
    for (int rep = 0; rep < 2; ++rep) {
      auto strat = tunekit::make_strategy("hybrid");
      tunekit::search_options o;
      o.seed = seed;
      o.batch_size = 4;
      o.start_points = {winner};
      auto r = tunekit::run_search(s, *strat, {.max_evaluations = 300}, times, o);
      EXPECT_EQ(r.best_index, optimum) << "seed " << seed;
      std::vector<std::size_t> order;
      for (const auto &e : r.history) {
        order.push_back(e.index);
      }
      runs.push_back(order);
    }
    EXPECT_EQ(runs[0], runs[1]) << "seed " << seed;
  }
}

// The first `count` configs a strategy proposes on `s`, every one told the same time.
std::vector<std::size_t> first_proposals(const search_space &s, const std::string &name,
                                         std::uint64_t seed, std::size_t count) {
  std::vector<std::size_t> proposed;
  auto strat = tunekit::make_strategy(name);
  tunekit::search_options o;
  o.seed = seed;
  (void)tunekit::run_search(
      s, *strat, {.max_evaluations = count},
      [&](std::span<const std::size_t> b) {
        proposed.insert(proposed.end(), b.begin(), b.end());
        return std::vector<double>(b.size(), 1.0);
      },
      o);
  return proposed;
}

// The smallest number of parameters in which two of `configs` differ.
std::size_t closest_pair(const search_space &s, const std::vector<std::size_t> &configs) {
  std::size_t closest = s.dimensions();
  for (std::size_t a = 0; a < configs.size(); ++a) {
    for (std::size_t b = 0; b < a; ++b) {
      std::size_t differ = 0;
      for (std::size_t p = 0; p < s.dimensions(); ++p) {
        differ += s.digit(configs[a], p) != s.digit(configs[b], p) ? 1 : 0;
      }
      closest = std::min(closest, differ);
    }
  }
  return closest;
}

// The distinct values `configs` give each parameter, summed over the parameters.
std::size_t values_covered(const search_space &s, const std::vector<std::size_t> &configs) {
  std::size_t total = 0;
  for (std::size_t p = 0; p < s.dimensions(); ++p) {
    std::set<std::size_t> values;
    for (std::size_t c : configs) {
      values.insert(s.digit(c, p));
    }
    total += values.size();
  }
  return total;
}

// The default strategy's random start fills the space: each of its six random configs is, of 32
// uniform samples, the one with the most parameter values that no config before it has, then the
// one farthest from those before it. On 8 parameters of 4 values (seeds 0-9) its first four
// configs give 27-29 of the 32 parameter values (all 32: a Latin hypercube; uniform draws 19-24),
// and the closest two of its first six differ in 4-6 parameters (uniform draws: 1-4).
TEST(hybrid, starts_from_configs_spread_over_the_space) {
  std::vector<tunekit::value> four = {0, 1, 2, 3};
  std::vector<tunekit::parameter> params;
  for (const char *n : {"A", "B", "C", "D", "E", "F", "G", "H"}) {
    params.push_back({n, four});
  }
  const auto s = search_space::product(params, {});
  std::size_t hybrid_closest = 0;
  std::size_t random_closest = 0;
  std::size_t hybrid_covered = 0;
  std::size_t random_covered = 0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const auto h = first_proposals(s, "hybrid", seed, 6);
    const auto r = first_proposals(s, "random", seed, 6);
    const std::vector<std::size_t> h4(h.begin(), h.begin() + 4);
    const std::vector<std::size_t> r4(r.begin(), r.begin() + 4);
    EXPECT_GE(values_covered(s, h4), 26U) << "seed " << seed;
    EXPECT_GE(closest_pair(s, h), 4U) << "seed " << seed;
    hybrid_closest += closest_pair(s, h);
    random_closest += closest_pair(s, r);
    hybrid_covered += values_covered(s, h4);
    random_covered += values_covered(s, r4);
  }
  EXPECT_GE(hybrid_closest, random_closest + 10) << hybrid_closest << " vs " << random_closest;
  EXPECT_GE(hybrid_covered, random_covered + 40) << hybrid_covered << " vs " << random_covered;
}

} // namespace

namespace {

// Four parameters of eight values; the time grows with the distance from (5, 4, 3, 3), and every
// config with A + B > 9 fails, as larger tiles fail once they exceed a resource: the optimum lies
// at the edge of the failing region, where a model of the times alone keeps proposing. The
// default strategy also learns where configs fail (`avoid_failures`), so it measures fewer failures
// on the way and finds the same best.
struct failure_run {
  double failures = 0; // mean failures measured within the budget
  double found_ms = 0; // mean best time found
};

failure_run run_with_failures(bool avoid, std::size_t budget) {
  std::vector<tunekit::value> eight = {0, 1, 2, 3, 4, 5, 6, 7};
  auto s = search_space::product({{"A", eight}, {"B", eight}, {"C", eight}, {"D", eight}}, {});
  auto times = [&](std::span<const std::size_t> batch) {
    std::vector<double> out;
    for (auto i : batch) {
      const auto d = s.digits(i);
      if (d[0] + d[1] > 9) {
        out.push_back(std::numeric_limits<double>::infinity());
        continue;
      }
      const double a = d[0] - 5.0;
      const double b = d[1] - 4.0;
      const double c = d[2] - 3.0;
      const double e = d[3] - 3.0;
      out.push_back(1.0 + a * a + b * b + 0.5 * (c * c + e * e));
    }
    return out;
  };
  failure_run r;
  constexpr std::uint64_t seeds = 20;
  for (std::uint64_t seed = 0; seed < seeds; ++seed) {
    tunekit::detail::hybrid_settings settings;
    settings.avoid_failures = avoid;
    auto strat = tunekit::detail::make_hybrid_strategy(settings);
    tunekit::search_options o;
    o.seed = seed;
    auto out = tunekit::run_search(s, *strat, {.max_evaluations = budget}, times, o);
    for (const auto &e : out.history) {
      r.failures += std::isfinite(e.time_ms) ? 0.0 : 1.0 / seeds;
    }
    r.found_ms += out.best_time_ms / seeds;
  }
  return r;
}

TEST(hybrid, proposes_fewer_configs_where_configs_failed) {
  const auto avoiding = run_with_failures(true, 100);
  const auto blind = run_with_failures(false, 100);
  std::printf("failures measured in 100 evaluations: %.2f avoiding, %.2f blind; best %.3f, %.3f\n",
              avoiding.failures, blind.failures, avoiding.found_ms, blind.found_ms);
  EXPECT_LT(avoiding.failures, 0.75 * blind.failures)
      << "avoiding " << avoiding.failures << " blind " << blind.failures;
  EXPECT_LE(avoiding.found_ms, blind.found_ms + 0.05)
      << "avoiding " << avoiding.found_ms << " blind " << blind.found_ms;
}

// The configs one search measures, in order.
std::vector<std::size_t> measured(const search_space &s, tunekit::strategy &strat,
                                  const tunekit::batch_evaluator &times, std::uint64_t seed,
                                  std::size_t batch) {
  tunekit::search_options o;
  o.seed = seed;
  o.batch_size = batch;
  auto out = tunekit::run_search(s, strat, {.max_evaluations = 150}, times, o);
  std::vector<std::size_t> order;
  for (const auto &e : out.history) {
    order.push_back(e.index);
  }
  return order;
}

// Every rank proposes the same configs: the failure model is deterministic too.
// Three parameters of eight values, times scattered over 1-11 ms; with `fail_corner`, every
// config with A + C > 8 fails.
search_space cube() {
  std::vector<tunekit::value> eight = {0, 1, 2, 3, 4, 5, 6, 7};
  return search_space::product({{"A", eight}, {"B", eight}, {"C", eight}}, {});
}

tunekit::batch_evaluator scattered(const search_space &s, bool fail_corner) {
  return [s, fail_corner](std::span<const std::size_t> batch) {
    std::vector<double> out;
    for (auto i : batch) {
      const auto d = s.digits(i);
      out.push_back(fail_corner && d[0] + d[2] > 8 ? std::numeric_limits<double>::infinity()
                                                   : 1.0 + (d[0] * 7 + d[1] * 3 + d[2] * 5) % 11);
    }
    return out;
  };
}

TEST(hybrid, with_failures_one_seed_proposes_the_same_configs) {
  const auto s = cube();
  const auto times = scattered(s, true);
  const auto first = measured(s, *tunekit::make_strategy("hybrid"), times, 11, 4);
  EXPECT_EQ(first, measured(s, *tunekit::make_strategy("hybrid"), times, 11, 4));
  EXPECT_EQ(first.size(), 150U);
}

TEST(hybrid, without_failures_the_failure_model_changes_nothing) {
  const auto s = cube();
  const auto times = scattered(s, false);
  tunekit::detail::hybrid_settings blind;
  blind.avoid_failures = false;
  EXPECT_EQ(measured(s, *tunekit::make_strategy("hybrid"), times, 4, 1),
            measured(s, *tunekit::detail::make_hybrid_strategy(blind), times, 4, 1));
}

// The kernel width per ordered parameter. Two spaces of three ordered parameters of 16 values:
// in one, time is smooth along each parameter (a bowl); in the other it turns on exact values
// (each parameter is right or wrong, its neighbours no better than its far values). Mean best time
// after 40 evaluations over 20 seeds, with the width chosen from the measurements (the default)
// and with the wide kernel only: choosing never loses on the smooth space and wins on the other.
double mean_best_after(const search_space &s, const tunekit::batch_evaluator &times,
                       const tunekit::detail::hybrid_settings &settings) {
  double total = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    auto strat = tunekit::detail::make_hybrid_strategy(settings);
    total +=
        tunekit::run_search(s, *strat, {.max_evaluations = 40}, times, {.seed = seed}).best_time_ms;
  }
  return total / 20;
}

TEST(hybrid, chooses_a_narrow_kernel_where_time_turns_on_exact_values) {
  std::vector<tunekit::value> sixteen;
  for (int v = 0; v < 16; ++v) {
    sixteen.emplace_back(v);
  }
  const auto s = search_space::product({{"A", sixteen}, {"B", sixteen}, {"C", sixteen}}, {});
  auto time_of = [&](bool exact) {
    return [&s, exact](std::span<const std::size_t> batch) {
      std::vector<double> out;
      for (auto i : batch) {
        const auto c = s.to_config(i);
        const std::int64_t target[3] = {11, 4, 13};
        const char *names[3] = {"A", "B", "C"};
        double t = 1;
        for (int p = 0; p < 3; ++p) {
          const auto d = static_cast<double>(std::llabs(c.get_int(names[p]) - target[p]));
          // exact: right, or a wrong value whose time does not say how far it is (by its parity)
          t += exact ? (d == 0 ? 0.0 : 1.0 + 0.25 * static_cast<double>(c.get_int(names[p]) % 2))
                     : 0.05 * d * d;
        }
        out.push_back(t);
      }
      return out;
    };
  };
  tunekit::detail::hybrid_settings chosen;
  tunekit::detail::hybrid_settings wide;
  wide.narrow_bandwidth = 0;
  ASSERT_GT(chosen.narrow_bandwidth, 0.0);
  const double smooth_chosen = mean_best_after(s, time_of(false), chosen);
  const double smooth_wide = mean_best_after(s, time_of(false), wide);
  const double exact_chosen = mean_best_after(s, time_of(true), chosen);
  const double exact_wide = mean_best_after(s, time_of(true), wide);
  std::printf("smooth: chosen %.3f wide %.3f; exact: chosen %.3f wide %.3f\n", smooth_chosen,
              smooth_wide, exact_chosen, exact_wide);
  EXPECT_LE(smooth_chosen, smooth_wide * 1.02);
  EXPECT_LT(exact_chosen, exact_wide);
}

// Method switches: six numeric parameters of four values (0-3) whose order means nothing. Each
// has one right value; of the wrong ones, the right value's neighbours in order are the slowest.
// A Gaussian over positions would carry a good config's weight onto exactly those neighbours, so
// the default starts domains of fewer than five values with an exact kernel (the good configs keep
// it here): over 20 seeds the mean best time after 25 evaluations is lower than with a kernel over
// their positions from the start.
TEST(hybrid, starts_small_numeric_domains_with_an_exact_kernel) {
  const std::vector<tunekit::value> four = {0, 1, 2, 3};
  const auto s = search_space::product(
      {{"A", four}, {"B", four}, {"C", four}, {"D", four}, {"E", four}, {"F", four}}, {});
  const tunekit::batch_evaluator times = [&s](std::span<const std::size_t> batch) {
    std::vector<double> out;
    for (auto i : batch) {
      const auto c = s.to_config(i);
      const std::int64_t right[6] = {0, 3, 1, 2, 0, 3};
      const char *names[6] = {"A", "B", "C", "D", "E", "F"};
      double t = 1;
      for (int p = 0; p < 6; ++p) {
        const auto d = std::llabs(c.get_int(names[p]) - right[p]);
        t += d == 0 ? 0.0 : d == 1 ? 1.0 : 0.5; // next to the right value: slowest
      }
      out.push_back(t);
    }
    return out;
  };
  auto mean_best = [&](const tunekit::detail::hybrid_settings &settings) {
    double total = 0;
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      auto strat = tunekit::detail::make_hybrid_strategy(settings);
      total += tunekit::run_search(s, *strat, {.max_evaluations = 25}, times, {.seed = seed})
                   .best_time_ms;
    }
    return total / 20;
  };
  tunekit::detail::hybrid_settings exact;
  tunekit::detail::hybrid_settings spread;
  spread.fewest_ordered = 3;
  ASSERT_GT(exact.fewest_ordered, 4U);
  const double with_exact = mean_best(exact);
  const double with_spread = mean_best(spread);
  std::printf("mean best after 25: exact kernel %.3f, kernel over positions %.3f\n", with_exact,
              with_spread);
  EXPECT_LT(with_exact, with_spread);
}

} // namespace
