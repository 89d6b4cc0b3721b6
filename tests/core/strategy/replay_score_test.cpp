// The countings of a replay (failures charged or free, recorded costs) and the time-based score.

#include <tunekit/error.hpp>
#include <tunekit/strategy/replay.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using tunekit::failure_counting;
using tunekit::search_evaluation;

constexpr double inf = std::numeric_limits<double>::infinity();

// Kernel Tuner 1.x records: times with their compile and benchmark times, a compile failure with
// its compile time, a runtime failure without one, and a config a restriction excludes.
const char *costed_file = R"({
  "kernel_name": "k", "tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3, 4, 5]},
  "cache": {
    "1": {"time": 4.0, "compile_time": 900, "benchmark_time": 100, "framework_time": 0.5},
    "2": {"time": 2.0, "compile_time": 1000, "verification_time": 10, "benchmark_time": 90},
    "3": {"time": "CompilationFailedConfig", "compile_time": 700},
    "4": {"time": "RuntimeFailedConfig"},
    "5": {"time": "InvalidConfig"}
  }
})";

std::size_t index_of(const tunekit::replay_table &t, int x) {
  return *t.space.index_of(tunekit::config{{"x", x}});
}

TEST(replay_counting, restricted_entries_are_left_out_and_costs_are_read) {
  const auto t = tunekit::parse_replay_table(costed_file, "costed.json");
  EXPECT_EQ(t.space.valid_count(), 4U); // "InvalidConfig" is not a config a run measures
  EXPECT_FALSE(t.space.is_valid(index_of(t, 5)));
  EXPECT_EQ(t.failures, 2U);
  EXPECT_DOUBLE_EQ(t.cost_of(index_of(t, 1)), 1000.5);
  EXPECT_DOUBLE_EQ(t.cost_of(index_of(t, 2)), 1100.0);
  EXPECT_DOUBLE_EQ(t.cost_of(index_of(t, 3)), 700.0);
  EXPECT_TRUE(std::isnan(t.cost_of(index_of(t, 4))));
  EXPECT_TRUE(t.has_costs()); // every success records its cost (a failure need not)
  const auto plain = tunekit::parse_replay_table(
      R"({"tune_params": {"x": [1, 2]}, "cache": {"1": {"time": 1}, "2": {"time": 2}}})", "p");
  EXPECT_FALSE(plain.has_costs());
  EXPECT_EQ(plain.failures, 0U);
}

TEST(replay_counting, best_within_a_budget_charges_failures_or_not) {
  const std::vector<search_evaluation> h = {{0, inf}, {1, 3.0}, {2, inf}, {3, 2.0}, {4, 1.0}};
  EXPECT_EQ(tunekit::best_within(h, 0, failure_counting::charged), inf);
  EXPECT_EQ(tunekit::best_within(h, 1, failure_counting::charged), inf);
  EXPECT_EQ(tunekit::best_within(h, 2, failure_counting::charged), 3.0);
  EXPECT_EQ(tunekit::best_within(h, 4, failure_counting::charged), 2.0);
  EXPECT_EQ(tunekit::best_within(h, 1, failure_counting::free), 3.0);
  EXPECT_EQ(tunekit::best_within(h, 2, failure_counting::free), 2.0);
  EXPECT_EQ(tunekit::best_within(h, 3, failure_counting::free), 1.0);
  EXPECT_EQ(tunekit::best_within(h, 99, failure_counting::free), 1.0);
}

TEST(replay_counting, the_cost_axis_is_recorded_time_or_evaluations) {
  auto t = tunekit::parse_replay_table(costed_file, "costed.json");
  const std::vector<search_evaluation> h = {
      {index_of(t, 3), inf}, {index_of(t, 1), 4.0}, {index_of(t, 4), inf}, {index_of(t, 2), 2.0}};
  // Every success records its cost: milliseconds. A charged failure costs its compile, or where
  // it records nothing the median of the recorded costs (700, 1000.5, 1100).
  ASSERT_TRUE(t.has_costs());
  EXPECT_EQ(tunekit::cumulative_cost(t, h, failure_counting::charged),
            (std::vector<double>{700, 1700.5, 2701, 3801}));
  EXPECT_EQ(tunekit::cumulative_cost(t, h, failure_counting::free),
            (std::vector<double>{0, 1000.5, 1000.5, 2100.5}));
  // Its own cost where the failure records one.
  t.costs_ms[*t.space.position_of(index_of(t, 4))] = 50;
  EXPECT_EQ(tunekit::cumulative_cost(t, h, failure_counting::charged),
            (std::vector<double>{700, 1700.5, 1750.5, 2850.5}));
  // A success that records no cost: the axis is evaluations.
  t.costs_ms[*t.space.position_of(index_of(t, 1))] = std::numeric_limits<double>::quiet_NaN();
  ASSERT_FALSE(t.has_costs());
  EXPECT_EQ(tunekit::cumulative_cost(t, h, failure_counting::charged),
            (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(tunekit::cumulative_cost(t, h, failure_counting::free),
            (std::vector<double>{0, 1, 1, 2}));
}

TEST(replay_counting, failures_added_from_another_file) {
  const auto t = tunekit::parse_replay_table(
      R"({"tune_params": {"x": [1, 2, 3]}, "cache": {"1": {"time": 1}, "2": {"time": 2}}})", "t");
  const std::vector<tunekit::config> other = {
      {{"x", 2}}, {{"x", 3}}, {{"x", 3}}, {{"x", 9}}, {{"y", 1}}};
  const auto w = tunekit::with_failures(t, other);
  EXPECT_EQ(w.space.valid_count(), 3U); // 3 added once; 2 already there; 9 and y do not fit
  EXPECT_EQ(w.failures, 1U);
  EXPECT_TRUE(std::isinf(w.time_of(*w.space.index_of({{"x", 3}}))));
  EXPECT_EQ(w.time_of(*w.space.index_of({{"x", 2}})), 2.0);
  EXPECT_EQ(w.best_time_ms, 1.0);
}

TEST(replay_counting, failures_added_to_a_costed_file_keep_its_time_axis) {
  const auto t = tunekit::parse_replay_table(
      R"({"tune_params": {"x": [1, 2, 3]}, "cache": {"1": {"time": 1, "compile_time": 100},
          "2": {"time": 2, "compile_time": 300}}})",
      "t");
  const auto w = tunekit::with_failures(t, std::vector<tunekit::config>{{{"x", 3}}});
  ASSERT_TRUE(w.has_costs());
  const std::vector<search_evaluation> h = {{*w.space.index_of({{"x", 3}}), inf},
                                            {*w.space.index_of({{"x", 1}}), 1.0}};
  // The added failure records nothing: charged, it costs the median recorded cost.
  EXPECT_EQ(tunekit::cumulative_cost(w, h, failure_counting::charged),
            (std::vector<double>{200, 300}));
  EXPECT_EQ(tunekit::cumulative_cost(w, h, failure_counting::free), (std::vector<double>{0, 100}));
}

// A table of n configs timed 1 .. n ms, in a domain of n + extra values.
tunekit::replay_table ramp(std::size_t n, std::size_t extra = 0) {
  std::vector<std::string> domain;
  std::vector<std::string> cache;
  for (std::size_t i = 1; i <= n + extra; ++i) {
    domain.push_back(std::to_string(i));
    if (i <= n) {
      std::string entry = "\"";
      entry.append(std::to_string(i)).append("\": {\"time\": ").append(std::to_string(i));
      entry.append("}");
      cache.push_back(std::move(entry));
    }
  }
  auto join = [](const std::vector<std::string> &parts) {
    std::string out;
    for (const auto &p : parts) {
      if (!out.empty()) {
        out.append(",");
      }
      out.append(p);
    }
    return out;
  };
  std::string text = R"({"tune_params": {"x": [)";
  text.append(join(domain)).append(R"(]}, "cache": {)").append(join(cache)).append("}}");
  return tunekit::parse_replay_table(text, "ramp");
}

std::vector<search_evaluation> in_order(const tunekit::replay_table &t,
                                        const std::vector<int> &xs) {
  std::vector<search_evaluation> h;
  for (int x : xs) {
    const std::size_t i = *t.space.index_of({{"x", x}});
    h.push_back({i, t.time_of(i)});
  }
  return h;
}

TEST(time_score, the_optimum_first_scores_one_random_search_zero_and_worse_below_zero) {
  const auto t = ramp(1000);
  std::vector<int> xs(1000);
  for (int i = 0; i < 1000; ++i) {
    xs[static_cast<std::size_t>(i)] = i + 1;
  }
  const std::vector<std::vector<search_evaluation>> best_first = {in_order(t, xs)};
  EXPECT_NEAR(tunekit::time_score(t, best_first, failure_counting::charged), 1.0, 1e-12);

  std::mt19937 gen(3);
  std::vector<std::vector<search_evaluation>> random_runs;
  for (int r = 0; r < 1000; ++r) {
    std::shuffle(xs.begin(), xs.end(), gen);
    random_runs.push_back(in_order(t, xs));
  }
  // Near zero: the methodology's baseline is the time at random search's expected rank after the
  // rounded number of evaluations, which sits a little below the expected best time of a run's
  // whole evaluations so far, so random search scores a little below zero.
  const double random = tunekit::time_score(t, random_runs, failure_counting::charged);
  EXPECT_LT(random, 0.02);
  EXPECT_GT(random, -0.2);

  std::sort(xs.begin(), xs.end(), std::greater<>());
  const std::vector<std::vector<search_evaluation>> worst_first = {in_order(t, xs)};
  EXPECT_LT(tunekit::time_score(t, worst_first, failure_counting::charged), -1.0);
}

TEST(time_score, charged_failures_take_time_from_the_search) {
  // Ten configs outside the file added as failures, then the optimum found after them: charged,
  // the failures push it later; free, it is first.
  std::vector<tunekit::config> failing;
  for (int x = 201; x <= 210; ++x) {
    failing.push_back({{"x", x}});
  }
  const auto t = tunekit::with_failures(ramp(200, 10), failing);
  ASSERT_EQ(t.failures, 10U);
  std::vector<search_evaluation> h =
      in_order(t, {201, 202, 203, 204, 205, 206, 207, 208, 209, 210});
  const auto rest = in_order(t, {1, 2, 3});
  h.insert(h.end(), rest.begin(), rest.end());
  const std::vector<std::vector<search_evaluation>> runs = {h};
  const double charged = tunekit::time_score(t, runs, failure_counting::charged);
  const double free = tunekit::time_score(t, runs, failure_counting::free);
  EXPECT_NEAR(free, 1.0, 1e-12);
  EXPECT_LT(charged, free);
  EXPECT_GT(tunekit::score_range_end(t), 1.0);
}

TEST(time_score, bad_settings_are_errors) {
  const auto t = ramp(10);
  const std::vector<std::vector<search_evaluation>> runs = {in_order(t, {1})};
  EXPECT_THROW((void)tunekit::time_score(t, runs, failure_counting::free, {.resolution = 1}),
               tunekit::error);
  EXPECT_THROW(
      (void)tunekit::time_score(t, runs, failure_counting::free, {.start = 0.9, .end = 0.5}),
      tunekit::error);
  EXPECT_THROW((void)tunekit::time_score(t, {}, failure_counting::free), tunekit::error);
}

} // namespace
