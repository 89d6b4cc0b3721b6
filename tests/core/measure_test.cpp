#include "test_support.hpp"

#include <tunekit/error.hpp>
#include <tunekit/measure.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using tunekit::candidate_info;
using tunekit::config;
using tunekit::key;
using tunekit::measure_policy;
using tunekit::statistic;

namespace {
struct fixture {
  key k{1024};
  config c{{"BLOCK", 256}};
  [[nodiscard]] candidate_info info() const { return candidate_info{"t", k, c, 0, 1}; }
};
} // namespace

TEST(measure_policy, defaults_are_five_warmup_ten_timed_mean) {
  const measure_policy p;
  EXPECT_EQ(p.warmup, 5);
  EXPECT_EQ(p.runs, 10);
  EXPECT_EQ(p.stat, statistic::mean);
  EXPECT_EQ(tunekit::to_string(statistic::mean), "mean");
  EXPECT_EQ(tunekit::to_string(statistic::median), "median");
  EXPECT_EQ(tunekit::to_string(statistic::min), "min");
}

TEST(summarize, mean_median_min_max_stddev) {
  const auto s = tunekit::summarize({4.0, 1.0, 3.0, 2.0, 10.0});
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(50.0 / 4.0)); // sample standard deviation
  EXPECT_DOUBLE_EQ(s.score(statistic::mean), 4.0);
  EXPECT_DOUBLE_EQ(s.score(statistic::median), 3.0);
  EXPECT_DOUBLE_EQ(s.score(statistic::min), 1.0);
}

TEST(summarize, even_count_median_is_the_middle_average) {
  const auto s = tunekit::summarize({1.0, 2.0, 3.0, 100.0});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 26.5);
}

TEST(summarize, single_sample_has_no_spread) {
  const auto s = tunekit::summarize({7.0});
  EXPECT_DOUBLE_EQ(s.mean, 7.0);
  EXPECT_DOUBLE_EQ(s.median, 7.0);
  EXPECT_DOUBLE_EQ(s.stddev, 0.0);
}

TEST(summarize, rejects_empty_and_invalid_samples) {
  EXPECT_THROW(static_cast<void>(tunekit::summarize({})), tunekit::error);
  EXPECT_THROW(static_cast<void>(tunekit::summarize({1.0, -0.5})), tunekit::error);
  EXPECT_THROW(static_cast<void>(tunekit::summarize({1.0, NAN})), tunekit::error);
  EXPECT_THROW(static_cast<void>(tunekit::summarize({INFINITY})), tunekit::error);
}

TEST(host_measurer, runs_warmup_then_timed_runs) {
  fixture f;
  tunekit::host_measurer m;
  EXPECT_EQ(m.name(), "host");
  int calls = 0;
  auto run = [&] { ++calls; };
  const auto samples = m.measure(f.info(), run, measure_policy{});
  EXPECT_EQ(calls, 15);
  ASSERT_EQ(samples.size(), 10U);
  for (double s : samples) {
    EXPECT_GE(s, 0.0);
    EXPECT_TRUE(std::isfinite(s));
  }
  calls = 0;
  EXPECT_EQ(m.measure(f.info(), run, measure_policy{.warmup = 2, .runs = 3}).size(), 3U);
  EXPECT_EQ(calls, 5);
}

TEST(host_measurer, sync_hook_follows_every_timed_run) {
  fixture f;
  std::string events;
  tunekit::host_measurer m([&] { events += 'S'; });
  auto run = [&] { events += 'R'; };
  const auto samples = m.measure(f.info(), run, measure_policy{.warmup = 2, .runs = 3});
  EXPECT_EQ(samples.size(), 3U);
  // Warmup runs, one sync draining them, then each timed run followed by its sync.
  EXPECT_EQ(events, "RRSRSRSRS");
}

TEST(host_measurer, sync_time_is_inside_the_timed_region) {
  // A lower bound only: sleep_for never returns early, so this cannot flake on a slow machine.
  fixture f;
  tunekit::host_measurer m([] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); });
  auto run = [] {};
  const auto samples = m.measure(f.info(), run, measure_policy{.warmup = 0, .runs = 3});
  ASSERT_EQ(samples.size(), 3U);
  for (double s : samples) {
    EXPECT_GE(s, 1.0);
  }
}

TEST(host_measurer, exceptions_of_the_run_propagate) {
  fixture f;
  tunekit::host_measurer m;
  auto run = [] { throw std::runtime_error("out of shared memory"); };
  EXPECT_THROW(static_cast<void>(m.measure(f.info(), run, measure_policy{})), std::runtime_error);
}

TEST(simulated_measurer, reports_the_cost_and_counts_runs) {
  fixture f;
  tunekit::simulated_measurer m([](const config &c, const key &k) {
    return static_cast<double>(c.get_int("BLOCK")) / static_cast<double>(k[0].as_int());
  });
  EXPECT_EQ(m.name(), "simulated");
  int calls = 0;
  auto run = [&] { ++calls; };
  const auto samples = m.measure(f.info(), run, measure_policy{});
  EXPECT_EQ(calls, 15);
  EXPECT_EQ(m.runs(), 15U);
  EXPECT_EQ(m.candidates_measured(), 1U);
  ASSERT_EQ(samples.size(), 10U);
  for (double s : samples) {
    EXPECT_DOUBLE_EQ(s, 0.25);
  }
  static_cast<void>(m.measure(f.info(), run, measure_policy{.warmup = 0, .runs = 1}));
  EXPECT_EQ(m.candidates_measured(), 2U);
  EXPECT_EQ(m.runs(), 16U);
}

TEST(simulated_measurer, noise_is_reproducible_from_the_seed) {
  fixture f;
  auto cost = [](const config &, const key &) { return 2.0; };
  auto run = [] {};
  tunekit::simulated_measurer a(cost, 0.1, 42);
  tunekit::simulated_measurer b(cost, 0.1, 42);
  tunekit::simulated_measurer c(cost, 0.1, 43);
  const auto sa = a.measure(f.info(), run, measure_policy{});
  const auto sb = b.measure(f.info(), run, measure_policy{});
  const auto sc = c.measure(f.info(), run, measure_policy{});
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
  bool varies = false;
  for (double s : sa) {
    EXPECT_GE(s, 0.0);
    EXPECT_LT(std::abs(s - 2.0), 2.0 * 0.1 * 6) << "beyond six sigma";
    varies = varies || s != sa.front();
  }
  EXPECT_TRUE(varies);
  // The generator advances: the next candidate's samples differ from the first.
  EXPECT_NE(a.measure(f.info(), run, measure_policy{}), sa);
}

TEST(simulated_measurer, a_throwing_cost_fails_the_candidate) {
  fixture f;
  tunekit::simulated_measurer m([](const config &, const key &) -> double {
    throw std::runtime_error("too many registers");
  });
  auto run = [] {};
  try {
    static_cast<void>(m.measure(f.info(), run, measure_policy{}));
    FAIL() << "no exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "too many registers");
  }
}

TEST(simulated_measurer, needs_a_cost_function) {
  EXPECT_THROW(tunekit::simulated_measurer(nullptr), tunekit::error);
}
