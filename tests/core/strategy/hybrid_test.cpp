// The default strategy's own mechanisms: the trust region around a best that stopped improving,
// the late polish of its radius-two neighbourhood, the late hill climber, and the space-filling
// start.

#include "strategy/gp.hpp"
#include "strategy/strategies.hpp"

#include <tunekit/strategy/run_search.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>

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

// The number of parameters in which configs `a` and `b` differ.
std::size_t parameters_apart(const search_space &s, std::size_t a, std::size_t b) {
  std::size_t differ = 0;
  for (std::size_t p = 0; p < s.dimensions(); ++p) {
    differ += s.digit(a, p) != s.digit(b, p) ? 1 : 0;
  }
  return differ;
}

// The smallest number of parameters in which two of `configs` differ.
std::size_t closest_pair(const search_space &s, const std::vector<std::size_t> &configs) {
  std::size_t closest = s.dimensions();
  for (std::size_t a = 0; a < configs.size(); ++a) {
    for (std::size_t b = 0; b < a; ++b) {
      closest = std::min(closest, parameters_apart(s, configs[a], configs[b]));
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
                       const tunekit::detail::hybrid_settings &settings,
                       std::size_t evaluations = 40) {
  double total = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    auto strat = tunekit::detail::make_hybrid_strategy(settings);
    total += tunekit::run_search(s, *strat, {.max_evaluations = evaluations}, times, {.seed = seed})
                 .best_time_ms;
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
  // The kernels alone: these spaces are sums over the parameters, which the additive model of
  // main effects would solve with either kernel (and the Gaussian process scores by distance, not
  // by the kernels).
  tunekit::detail::hybrid_settings chosen;
  chosen.main_effects = 0;
  chosen.gaussian_process = 0;
  tunekit::detail::hybrid_settings wide = chosen;
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

// `n` switches of four numeric values (0-3), named A, B, ...
search_space switches(std::size_t n) {
  std::vector<tunekit::parameter> params;
  for (std::size_t p = 0; p < n; ++p) {
    params.push_back({std::string(1, static_cast<char>('A' + p)), {0, 1, 2, 3}});
  }
  return search_space::product(params, {});
}

// Time 1 plus what each switch's value costs (`cost(switch, value)`).
tunekit::batch_evaluator
sum_over_switches(const search_space &s,
                  const std::function<double(std::size_t, std::uint32_t)> &cost) {
  return [&s, cost](std::span<const std::size_t> batch) {
    std::vector<double> out;
    for (auto i : batch) {
      double t = 1;
      for (std::size_t p = 0; p < s.dimensions(); ++p) {
        t += cost(p, static_cast<std::uint32_t>(s.digit(i, p)));
      }
      out.push_back(t);
    }
    return out;
  };
}

// The mean best time after `evaluations` (mean_best_after) is lower with `first` than `second`.
void expect_lower_with_first(const search_space &s, const tunekit::batch_evaluator &times,
                             const tunekit::detail::hybrid_settings &first,
                             const tunekit::detail::hybrid_settings &second,
                             std::size_t evaluations, const char *what) {
  const double a = mean_best_after(s, times, first, evaluations);
  const double b = mean_best_after(s, times, second, evaluations);
  std::printf("mean best after %zu, %s: %.3f / %.3f\n", evaluations, what, a, b);
  EXPECT_LT(a, b) << what;
}

// Method switches: six numeric parameters of four values (0-3) whose order means nothing. Each
// has one right value; of the wrong ones, the right value's neighbours in order are the slowest.
// A Gaussian over positions would carry a good config's weight onto exactly those neighbours, so
// the default starts domains of fewer than five values with an exact kernel (the good configs keep
// it here): over 20 seeds the mean best time after 25 evaluations is lower than with a kernel over
// their positions from the start.
TEST(hybrid, starts_small_numeric_domains_with_an_exact_kernel) {
  const auto s = switches(6);
  const std::uint32_t right[6] = {0, 3, 1, 2, 0, 3};
  const auto times = sum_over_switches(s, [&](std::size_t p, std::uint32_t v) {
    const auto d = v > right[p] ? v - right[p] : right[p] - v;
    return d == 0 ? 0.0 : d == 1 ? 1.0 : 0.5; // next to the right value: slowest
  });
  tunekit::detail::hybrid_settings exact;
  exact.main_effects = 0; // the kernels alone, as above
  exact.gaussian_process = 0;
  tunekit::detail::hybrid_settings spread = exact;
  spread.fewest_ordered = 3;
  ASSERT_GT(exact.fewest_ordered, 4U);
  expect_lower_with_first(s, times, exact, spread, 25, "exact kernel / kernel over positions");
}

// Main effects: eight switches of four values, each with its own right value and no order among
// the wrong ones, and time the sum of what each switch costs. Good configs get different switches
// right; the additive model puts together what each got right, which a mixture centred on each
// good config does not. Mean best time after 30 evaluations over 20 seeds, with the additive model
// (the default) and without: lower with it.
TEST(hybrid, puts_together_the_values_that_separate_good_configs_got_right) {
  const auto s = switches(8);
  const std::uint32_t right[8] = {2, 0, 3, 1, 1, 3, 0, 2};
  const double wrong[4] = {1.0, 0.6, 0.8, 0.7}; // by the value: no order to follow
  const auto times = sum_over_switches(
      s, [&](std::size_t p, std::uint32_t v) { return v == right[p] ? 0.0 : wrong[v]; });
  // The density ratio with and without the additive model (the Gaussian process, fitted with the
  // switches as categories, finds the optimum of this additive space within 30 either way).
  tunekit::detail::hybrid_settings with;
  with.gaussian_process = 0;
  tunekit::detail::hybrid_settings without = with;
  without.main_effects = 0;
  ASSERT_GT(with.main_effects, 0.0);
  expect_lower_with_first(s, times, with, without, 30, "with main effects / without");
}

// One ordered parameter of 21 positions (0-20), for the Gaussian process's tests.
search_space line_of_21() {
  std::vector<tunekit::value> positions;
  for (int v = 0; v <= 20; ++v) {
    positions.emplace_back(v);
  }
  return search_space::product({{"X", positions}}, {});
}

// The configs of `line_of_21` at `measured` and their log times, a bowl around `centre`.
std::pair<std::vector<std::vector<std::uint32_t>>, std::vector<double>>
bowl(const std::vector<std::uint32_t> &measured, double centre) {
  std::vector<std::vector<std::uint32_t>> x;
  std::vector<double> log_time;
  for (std::uint32_t p : measured) {
    x.push_back({p});
    log_time.push_back(0.01 * (static_cast<double>(p) - centre) *
                       (static_cast<double>(p) - centre));
  }
  return {x, log_time};
}

// The Gaussian process: one ordered parameter of 21 values, log time a bowl around position 14,
// measured at 0, 4, 8, 12 and 20. The unmeasured position of the largest expected improvement lies
// between the best measurement (12) and the slower ones on either side, not beyond them; with one
// result there is nothing to fit.
TEST(gaussian_process, expects_the_most_improvement_next_to_the_best_result_towards_the_slope) {
  const auto s = line_of_21();
  tunekit::detail::gaussian_process gp(s, {true});
  const std::vector<std::uint32_t> measured = {0, 4, 8, 12, 20};
  const auto [x, log_time] = bowl(measured, 14);
  EXPECT_FALSE(gp.fit({x.front()}, {log_time.front()}));
  ASSERT_TRUE(gp.fit(x, log_time));
  EXPECT_GT(gp.length(), 0.0);
  std::uint32_t pick = 0;
  double pick_ei = -1;
  for (std::uint32_t p = 0; p <= 20; ++p) {
    if (std::find(measured.begin(), measured.end(), p) != measured.end()) {
      continue;
    }
    const double ei = gp.expected_improvement({p});
    EXPECT_GE(ei, 0.0) << "position " << p;
    if (ei > pick_ei) {
      pick = p;
      pick_ei = ei;
    }
  }
  EXPECT_GE(pick, 9U);
  EXPECT_LE(pick, 19U);
}

// The lower confidence bound on the same bowl, measured at 0, 4, 8, 12, 14 and 20: with no
// deviations it is the prediction, lowest at the unmeasured position between the two best results
// (13); with many it is lowest where the process is least sure, the middle of the widest gap
// between measurements (17), however slow its neighbours.
TEST(gaussian_process, lower_confidence_bound_weighs_the_prediction_against_its_uncertainty) {
  const auto s = line_of_21();
  tunekit::detail::gaussian_process gp(s, {true});
  const std::vector<std::uint32_t> measured = {0, 4, 8, 12, 14, 20};
  const auto [x, log_time] = bowl(measured, 13);
  ASSERT_TRUE(gp.fit(x, log_time));
  auto lowest = [&](double deviations) {
    std::uint32_t pick = 0;
    double pick_bound = std::numeric_limits<double>::infinity();
    for (std::uint32_t p = 0; p <= 20; ++p) {
      if (std::find(measured.begin(), measured.end(), p) != measured.end()) {
        continue;
      }
      const double bound = gp.lower_confidence_bound({p}, deviations);
      EXPECT_LE(bound, gp.lower_confidence_bound({p}, 0.0)) << "position " << p;
      if (bound < pick_bound) {
        pick = p;
        pick_bound = bound;
      }
    }
    return pick;
  };
  EXPECT_EQ(lowest(0.0), 13U);
  EXPECT_EQ(lowest(100.0), 17U);
}

// A proposal of a batch not measured yet, told to the process at its own prediction (a kriging
// believer): on the bowl around position 14 measured at 0, 4, 8, 12 and 20 (the first of these
// tests) the mean stays everywhere, the uncertainty at the pending position falls (its bound of
// three deviations rises towards the mean), and so does its expected improvement, so that the next
// pick of the batch goes elsewhere.
TEST(gaussian_process, believing_a_pending_config_keeps_the_mean_and_lowers_the_uncertainty_there) {
  const auto s = line_of_21();
  tunekit::detail::gaussian_process gp(s, {true});
  const auto [x, log_time] = bowl({0, 4, 8, 12, 20}, 14);
  ASSERT_TRUE(gp.fit(x, log_time));
  std::vector<double> mean_before;
  for (std::uint32_t p = 0; p <= 20; ++p) {
    mean_before.push_back(gp.lower_confidence_bound({p}, 0.0));
  }
  const std::vector<std::uint32_t> pending = {15};
  const double bound_before = gp.lower_confidence_bound(pending, 3.0);
  const double improvement_before = gp.expected_improvement(pending);
  const double improvement_far_before = gp.expected_improvement({17});
  gp.believe({pending});
  for (std::uint32_t p = 0; p <= 20; ++p) {
    EXPECT_NEAR(gp.lower_confidence_bound({p}, 0.0), mean_before[p], 1e-9) << "position " << p;
  }
  EXPECT_GT(gp.lower_confidence_bound(pending, 3.0), bound_before + 0.1);
  EXPECT_LT(gp.expected_improvement(pending), 0.5 * improvement_before);
  EXPECT_GT(gp.expected_improvement({17}), 0.0);
  EXPECT_LE(gp.expected_improvement({17}), improvement_far_before);
}

// The hybrid fits a process with a small numeric domain as ordered and one with it as categories,
// and keeps the more likely. A four-value method switch (one value fast, the others equally slow,
// in no order) beside an ordered parameter of ten values: the process that treats the switch as
// categories is the more likely; when time falls with the switch's position, the ordered one is.
TEST(gaussian_process, is_more_likely_with_the_distance_that_fits_a_small_domain) {
  std::vector<tunekit::value> four = {0, 1, 2, 3};
  std::vector<tunekit::value> ten;
  for (int v = 0; v < 10; ++v) {
    ten.emplace_back(v);
  }
  const auto s = search_space::product({{"M", four}, {"X", ten}}, {});
  auto likelihoods = [&](auto &&switch_time) {
    std::vector<std::vector<std::uint32_t>> x;
    std::vector<double> log_time;
    for (std::uint32_t m = 0; m < 4; ++m) {
      for (std::uint32_t v = 0; v < 10; v += 2) {
        x.push_back({m, v});
        log_time.push_back(switch_time(m) +
                           0.02 * (static_cast<double>(v) - 6) * (static_cast<double>(v) - 6));
      }
    }
    tunekit::detail::gaussian_process ordered(s, {true, true});
    tunekit::detail::gaussian_process categories(s, {false, true});
    EXPECT_TRUE(ordered.fit(x, log_time));
    EXPECT_TRUE(categories.fit(x, log_time));
    return std::pair{ordered.log_likelihood(), categories.log_likelihood()};
  };
  const auto [switch_ordered, switch_categories] =
      likelihoods([](std::uint32_t m) { return m == 2 ? 0.0 : 1.0; });
  EXPECT_GT(switch_categories, switch_ordered);
  const auto [falling_ordered, falling_categories] =
      likelihoods([](std::uint32_t m) { return -0.4 * static_cast<double>(m); });
  EXPECT_GT(falling_ordered, falling_categories);
}

// Four ordered parameters of ten values and log time a tilted bowl whose floor couples two of them
// (their sum counts, not each alone).
search_space tilted_bowl_space() {
  std::vector<tunekit::value> ten;
  for (int v = 0; v < 10; ++v) {
    ten.emplace_back(v);
  }
  return search_space::product({{"A", ten}, {"B", ten}, {"C", ten}, {"D", ten}}, {});
}

tunekit::batch_evaluator tilted_bowl_times(const search_space &s) {
  return [&s](std::span<const std::size_t> batch) {
    std::vector<double> out;
    for (auto i : batch) {
      auto at = [&](std::size_t p) { return static_cast<double>(s.digit(i, p)) / 9.0; };
      const double sum = at(0) + at(1) - 1.3;
      const double diff = at(0) - at(1);
      const double c = at(2) - 0.7;
      const double d = at(3) - 0.2;
      out.push_back(std::exp(2 * sum * sum + 0.3 * diff * diff + c * c + 0.5 * d * d));
    }
    return out;
  };
}

// Expected improvement on a smooth space, the tilted bowl. Mean best time
// after 25 evaluations over 20 seeds, with the Gaussian process's share by expected improvement
// alone and without the process: lower with it.
TEST(hybrid, expected_improvement_finds_the_floor_of_a_smooth_space_sooner) {
  const auto s = tilted_bowl_space();
  const auto times = tilted_bowl_times(s);
  tunekit::detail::hybrid_settings with;
  with.confidence_bound = 0; // expected improvement alone (the bound's own test is below)
  tunekit::detail::hybrid_settings without;
  without.gaussian_process = 0;
  ASSERT_GT(with.gaussian_process, 0.0);
  expect_lower_with_first(s, times, with, without, 25, "with the Gaussian process / without");
}

// The confidence bound: on the tilted bowl above, the process's picks by the lower bound go where
// it is unsure, away from the configs measured so far; by expected improvement they keep close to
// the best. Over 20 seeds, evaluations 11-40 (the process fits from 10 results) lie farther from
// the nearest earlier config (parameters that differ) with a bound of many deviations than
// without the bound. On this smooth space the exploration costs a little: the default's mean best
// after 25 (1.050) is above expected improvement alone (1.040), within 10% of it.
TEST(hybrid, confidence_bound_picks_away_from_the_configs_measured) {
  const auto s = tilted_bowl_space();
  const auto times = tilted_bowl_times(s);
  auto mean_distance = [&](const tunekit::detail::hybrid_settings &settings) {
    double total = 0;
    std::size_t count = 0;
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      auto strat = tunekit::detail::make_hybrid_strategy(settings);
      const auto history =
          tunekit::run_search(s, *strat, {.max_evaluations = 40}, times, {.seed = seed}).history;
      for (std::size_t k = 10; k < history.size(); ++k) {
        std::size_t nearest = s.dimensions();
        for (std::size_t j = 0; j < k; ++j) {
          std::size_t differ = 0;
          for (std::size_t p = 0; p < s.dimensions(); ++p) {
            differ += s.digit(history[k].index, p) != s.digit(history[j].index, p) ? 1 : 0;
          }
          nearest = std::min(nearest, differ);
        }
        total += static_cast<double>(nearest);
        ++count;
      }
    }
    return total / static_cast<double>(count);
  };
  tunekit::detail::hybrid_settings wide;
  wide.confidence_bound = 1000;
  tunekit::detail::hybrid_settings without;
  without.confidence_bound = 0;
  const double away = mean_distance(wide);
  const double close = mean_distance(without);
  std::printf(
      "parameters apart from the nearest earlier config, bound of 1000 / none: %.3f / %.3f\n", away,
      close);
  EXPECT_GT(away, close);
  tunekit::detail::hybrid_settings with;
  ASSERT_GT(with.confidence_bound, 0.0);
  EXPECT_LT(mean_best_after(s, times, with, 25), 1.1 * mean_best_after(s, times, without, 25));
}

// With results from elsewhere (`expect_transfer`, or start points) the process picks by expected
// improvement alone: on the tilted bowl the default then proposes what it proposes without the
// bound, and a search of its own afterwards (`start` again, same object) proposes with the bound
// again, the same configs as a fresh strategy (the alternation starts over too).
TEST(hybrid, with_transfer_picks_by_expected_improvement_alone) {
  const auto s = tilted_bowl_space();
  const auto times = tilted_bowl_times(s);
  // The configs measured in 40 evaluations; with `transfer`, a source with nothing in it, so that
  // the driver calls `expect_transfer` and nothing else changes.
  auto proposals = [&](tunekit::strategy &strat, std::uint64_t seed, bool transfer) {
    tunekit::search_options options{.seed = seed};
    if (transfer) {
      options.transfer = {tunekit::transfer_source{}};
    }
    std::vector<std::size_t> out;
    for (const auto &e :
         tunekit::run_search(s, strat, {.max_evaluations = 40}, times, options).history) {
      out.push_back(e.index);
    }
    return out;
  };
  tunekit::detail::hybrid_settings no_bound;
  no_bound.confidence_bound = 0;
  std::size_t differ_alone = 0;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    auto strat = tunekit::detail::make_hybrid_strategy();
    auto plain = tunekit::detail::make_hybrid_strategy(no_bound);
    const auto expected = proposals(*plain, seed, false);
    EXPECT_EQ(proposals(*strat, seed, true), expected) << "seed " << seed;
    const auto alone = proposals(*strat, seed, false);
    differ_alone += alone != expected ? 1 : 0;
    EXPECT_EQ(proposals(*strat, seed, false), alone) << "seed " << seed;
    auto fresh = tunekit::detail::make_hybrid_strategy();
    EXPECT_EQ(proposals(*fresh, seed, false), alone) << "seed " << seed;
  }
  EXPECT_GT(differ_alone, 0U); // the bound changes the picks of a search of its own
}

// Batches (`count_pending`): the proposals of a batch not measured yet count, as bad results for
// the density ratio and at their predictions for the Gaussian process, so that a batch spreads
// instead of piling its proposals next to one another. On the tilted bowl in batches of eight,
// over 20 seeds, the model's batches (evaluations 9-40) differ in more parameters within the batch
// than without; with batches of one nothing is pending, and the proposals are the same either way.
TEST(hybrid, a_batch_counts_its_pending_proposals) {
  const auto s = tilted_bowl_space();
  const auto times = tilted_bowl_times(s);
  tunekit::detail::hybrid_settings with;
  ASSERT_TRUE(with.count_pending);
  tunekit::detail::hybrid_settings without;
  without.count_pending = false;
  auto history = [&](const tunekit::detail::hybrid_settings &settings, std::uint64_t seed,
                     std::size_t batch) {
    auto strat = tunekit::detail::make_hybrid_strategy(settings);
    std::vector<std::size_t> out;
    for (const auto &e : tunekit::run_search(s, *strat, {.max_evaluations = 40}, times,
                                             {.seed = seed, .batch_size = batch})
                             .history) {
      out.push_back(e.index);
    }
    return out;
  };
  auto spread_within_batches = [&](const tunekit::detail::hybrid_settings &settings) {
    double total = 0;
    std::size_t pairs = 0;
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      const auto h = history(settings, seed, 8);
      for (std::size_t start = 8; start + 8 <= h.size(); start += 8) {
        for (std::size_t i = start; i < start + 8; ++i) {
          for (std::size_t j = start; j < i; ++j) {
            for (std::size_t p = 0; p < s.dimensions(); ++p) {
              total += s.digit(h[i], p) != s.digit(h[j], p) ? 1.0 : 0.0;
            }
            ++pairs;
          }
        }
      }
    }
    return total / static_cast<double>(pairs);
  };
  const double spread_with = spread_within_batches(with);
  const double spread_without = spread_within_batches(without);
  std::printf("parameters apart within a batch of eight, counting pending / not: %.3f / %.3f\n",
              spread_with, spread_without);
  EXPECT_GT(spread_with, spread_without + 0.1);
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    EXPECT_EQ(history(with, seed, 1), history(without, seed, 1)) << "seed " << seed;
  }
}

// The additive model's and the Gaussian process's proposals and the shares they get are the same
// for the same seed (every rank of a split search proposes alike), also in batches.
TEST(hybrid, main_effects_propose_the_same_configs_for_the_same_seed) {
  const std::vector<tunekit::value> six = {0, 1, 2, 3, 4, 5};
  const auto s = search_space::product({{"A", six}, {"B", six}, {"C", six}, {"D", six}}, {});
  const tunekit::batch_evaluator times = [&s](std::span<const std::size_t> batch) {
    std::vector<double> out;
    for (auto i : batch) {
      double t = 1;
      for (std::size_t p = 0; p < 4; ++p) {
        t += static_cast<double>((s.digit(i, p) * 7 + p) % 6) * 0.3;
      }
      out.push_back(t);
    }
    return out;
  };
  for (std::size_t batch : {std::size_t{1}, std::size_t{4}}) {
    auto run = [&] {
      auto strat = tunekit::make_strategy("hybrid");
      return tunekit::run_search(s, *strat, {.max_evaluations = 80}, times,
                                 {.seed = 7, .batch_size = batch})
          .history;
    };
    const auto a = run();
    const auto b = run();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(a[k].index, b[k].index) << "evaluation " << k << ", batch " << batch;
    }
  }
}

} // namespace

namespace {

// Times scattered over a small space with several local optima (3 parameters of 6 values).
search_space six_cube() {
  const std::vector<tunekit::value> six = {0, 1, 2, 3, 4, 5};
  return search_space::product({{"A", six}, {"B", six}, {"C", six}}, {});
}

double rugged_time(const search_space &s, std::size_t i) {
  const auto d = s.digits(i);
  return 1.0 + static_cast<double>((d[0] * 5 + d[1] * 3 + d[2] * 7 + d[0] * d[2]) % 13);
}

} // namespace

// From `climb_after` told configs on, with every other late mechanism off and a share of one,
// every proposal is the climber's: a Hamming neighbour of its config (which moves to the first
// faster neighbour told), or, once every neighbour has been told and none is faster (a local
// optimum), a fresh start, which comes after `climb_pause` proposals of the model. Followed from
// outside over 150 evaluations, seeds 0-4, without a pause and with one of ten.
TEST(hybrid, climbs_from_neighbour_to_faster_neighbour_late_in_a_search) {
  const auto s = six_cube();
  const tunekit::batch_evaluator times = [&s](std::span<const std::size_t> batch) {
    std::vector<double> out;
    for (auto i : batch) {
      out.push_back(rugged_time(s, i));
    }
    return out;
  };
  tunekit::detail::hybrid_settings climbing;
  climbing.climb_after = 20;
  climbing.climb = 1;
  climbing.polish = 0;
  climbing.stall = 0;
  climbing.restart = 0;
  climbing.explore = 0;
  for (std::size_t pause : {std::size_t{0}, std::size_t{10}}) {
    climbing.climb_pause = pause;
    for (std::uint64_t seed = 0; seed < 5; ++seed) {
      auto strat = tunekit::detail::make_hybrid_strategy(climbing);
      const auto history =
          tunekit::run_search(s, *strat, {.max_evaluations = 150}, times, {.seed = seed}).history;
      ASSERT_EQ(history.size(), 150U);
      std::set<std::size_t> told;
      std::optional<std::size_t> at;
      bool fresh = true;          // the climber's next proposal is a fresh start
      std::size_t model_turn = 0; // proposals left to the model after a local optimum
      std::size_t moves = 0;
      std::size_t local_optima = 0;
      std::size_t paused = 0;
      // On arriving, the climber goes on to the fastest neighbour told before, while one is
      // faster.
      auto settle = [&] {
        for (bool on = true; on;) {
          on = false;
          for (std::size_t c : s.neighbours(*at, tunekit::neighbourhood::hamming)) {
            if (told.contains(c) && rugged_time(s, c) < rugged_time(s, *at)) {
              at = c;
              on = true;
            }
          }
        }
      };
      for (std::size_t k = 0; k < history.size(); ++k) {
        const std::size_t p = history[k].index;
        told.insert(p);
        if (k < climbing.climb_after) {
          continue;
        }
        if (model_turn > 0) {
          --model_turn;
          ++paused;
          continue;
        }
        if (fresh) {
          at = p;
          fresh = false;
          settle();
        } else {
          ASSERT_EQ(parameters_apart(s, p, *at), 1U)
              << "pause " << pause << ", seed " << seed << ", evaluation " << k;
          if (rugged_time(s, p) < rugged_time(s, *at)) {
            at = p;
            settle();
            ++moves;
          }
        }
        const auto around = s.neighbours(*at, tunekit::neighbourhood::hamming);
        if (std::all_of(around.begin(), around.end(),
                        [&](std::size_t c) { return told.contains(c); })) {
          ++local_optima; // every neighbour told, none faster
          fresh = true;
          model_turn = pause;
        }
      }
      std::printf("pause %zu, seed %llu: %zu moves, %zu local optima, %zu paused\n", pause,
                  static_cast<unsigned long long>(seed), moves, local_optima, paused);
      EXPECT_GE(moves, 2U) << "pause " << pause << ", seed " << seed;
      EXPECT_GE(local_optima, 2U) << "pause " << pause << ", seed " << seed;
      EXPECT_GE(paused, pause * (local_optima - 1)) << "seed " << seed;
    }
  }
}

// The climber proposes alike for the same seed (every rank of a split search climbs alike), also
// in batches and with one strategy started twice, and before `climb_after` told configs the
// default search is the one without it.
TEST(hybrid, climbs_alike_for_the_same_seed_and_not_before_its_start) {
  const auto s = cube();
  const auto times = scattered(s, true);
  tunekit::detail::hybrid_settings without;
  without.climb = 0;
  const tunekit::detail::hybrid_settings defaults;
  ASSERT_GT(defaults.climb, 0.0);
  for (std::size_t batch : {std::size_t{1}, std::size_t{4}}) {
    auto search = [&](tunekit::strategy &strat) {
      const auto h = tunekit::run_search(s, strat, {.max_evaluations = 300}, times,
                                         {.seed = 3, .batch_size = batch})
                         .history;
      std::vector<std::size_t> order;
      for (const auto &e : h) {
        order.push_back(e.index);
      }
      return order;
    };
    auto run = [&](const tunekit::detail::hybrid_settings &settings) {
      return search(*tunekit::detail::make_hybrid_strategy(settings));
    };
    const auto a = run(defaults);
    EXPECT_EQ(a, run(defaults)) << "batch " << batch;
    // A strategy started again searches afresh: nothing of the climber's walk is left over.
    auto again = tunekit::detail::make_hybrid_strategy(defaults);
    EXPECT_EQ(search(*again), a) << "batch " << batch << ", first start";
    EXPECT_EQ(search(*again), a) << "batch " << batch << ", second start";
    const auto b = run(without);
    ASSERT_EQ(a.size(), 300U);
    ASSERT_EQ(b.size(), 300U);
    const auto start = static_cast<std::ptrdiff_t>(defaults.climb_after);
    EXPECT_TRUE(std::equal(a.begin(), a.begin() + start, b.begin())) << "batch " << batch;
    EXPECT_NE(a, b) << "batch " << batch; // the climber proposes after its start
  }
}
