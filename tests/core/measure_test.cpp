#include "test_support.hpp"

#include <tunekit/error.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/tunekit.hpp>
#include <tunekit/winner_cache.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
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

// The opt-in early stop for big spaces (`measure_policy::early_stop_factor`).

namespace {
measure_policy early_stop(double factor, int after, int warmup = 1, int runs = 10) {
  measure_policy p;
  p.warmup = warmup;
  p.runs = runs;
  p.early_stop_factor = factor;
  p.early_stop_after = after;
  return p;
}

candidate_info info_with_best(const fixture &f, double best_ms) {
  return candidate_info{"t", f.k, f.c, 0, 1, best_ms};
}
} // namespace

TEST(early_stop, is_off_by_default_and_checked_once_after_the_set_runs) {
  const measure_policy off;
  EXPECT_EQ(off.early_stop_factor, 0.0);
  EXPECT_EQ(off.early_stop_after, 2);
  EXPECT_TRUE(std::isinf(fixture{}.info().best_ms));
  const std::vector<double> slow{9.0, 9.0};
  EXPECT_FALSE(tunekit::stop_early(off, 1.0, slow));

  const auto p = early_stop(2.0, 2);
  EXPECT_TRUE(tunekit::stop_early(p, 1.0, slow));
  EXPECT_FALSE(tunekit::stop_early(p, 5.0, slow)); // 9 is not above 2 x 5
  EXPECT_FALSE(tunekit::stop_early(p, std::numeric_limits<double>::infinity(), slow));
  EXPECT_FALSE(tunekit::stop_early(p, 1.0, std::vector<double>{9.0}));           // too soon
  EXPECT_FALSE(tunekit::stop_early(p, 1.0, std::vector<double>{9.0, 9.0, 9.0})); // checked at 2
  EXPECT_FALSE(tunekit::stop_early(p, 4.5, slow)); // equal to the bound: not beyond it
  EXPECT_TRUE(tunekit::early_stop_due(p, 1.0, 2));
  EXPECT_FALSE(tunekit::early_stop_due(p, 1.0, 3));
  // No check when the set runs are all the runs there are.
  EXPECT_FALSE(tunekit::early_stop_due(early_stop(2.0, 10), 1.0, 10));
}

TEST(early_stop, simulated_measurer_returns_the_partial_samples_of_a_slow_candidate) {
  fixture f; // BLOCK=256 costs 3 ms
  tunekit::simulated_measurer m(tunekit_test::block_cost);
  int calls = 0;
  auto run = [&] { ++calls; };
  auto samples = m.measure(info_with_best(f, 1.0), run, early_stop(2.0, 3));
  EXPECT_EQ(samples, (std::vector<double>{3.0, 3.0, 3.0}));
  EXPECT_EQ(calls, 1 + 3);
  EXPECT_EQ(m.runs(), 4U);
  // Within the factor, with no best yet, or with the early stop off: every run.
  calls = 0;
  EXPECT_EQ(m.measure(info_with_best(f, 1.5), run, early_stop(2.0, 3)).size(), 10U);
  EXPECT_EQ(m.measure(f.info(), run, early_stop(2.0, 3)).size(), 10U);
  EXPECT_EQ(m.measure(info_with_best(f, 1.0), run, early_stop(0.0, 3)).size(), 10U);
  EXPECT_EQ(calls, 3 * 11);
}

TEST(early_stop, host_measurer_stops_a_slow_candidate) {
  fixture f;
  tunekit::host_measurer m;
  int calls = 0;
  auto run = [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  const auto samples = m.measure(info_with_best(f, 0.01), run, early_stop(3.0, 2, 0, 50));
  EXPECT_EQ(samples.size(), 2U);
  EXPECT_EQ(calls, 2);
  for (double s : samples) {
    EXPECT_GE(s, 1.9);
  }
}

namespace {
// BLOCK 512 (1 ms) first, then 256 (3 ms), 2048 (4 ms), 1024 (2 ms): with a factor of 2.5 the
// 3 and 4 ms candidates stop after two runs, the 2 ms one runs to the end.
struct early_stop_tuning {
  tunekit_test::temp_dir dir;
  tunekit_test::log_capture log;
  std::shared_ptr<tunekit::simulated_measurer> meas =
      std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);

  auto tune(const measure_policy &p) {
    auto o = tunekit_test::options(dir.path(), meas, log);
    o.policy = p;
    return tunekit::autotune(
        "early", tunekit::config_space::product({{"BLOCK", {512, 256, 2048, 1024}}}),
        [](int n) { return key{n}; }, tunekit::keep_all{}, [](int, const config &) {}, o);
  }
};
} // namespace

TEST(early_stop, the_tuner_records_stopped_candidates_as_ok_with_the_reason) {
  early_stop_tuning t;
  auto f = t.tune(early_stop(2.5, 2));
  f(7);
  // 512 and 1024: 1 warmup + 10 timed runs; 256 and 2048: 1 warmup + 2 timed runs.
  EXPECT_EQ(t.meas->runs(), 2U * 11U + 2U * 3U);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->winner, (config{{"BLOCK", 512}}));
  ASSERT_EQ(e->candidates.size(), 4U);
  EXPECT_TRUE(e->candidates[0].reason.empty());
  EXPECT_TRUE(e->candidates[3].reason.empty());
  const auto &slow = e->candidates[1];
  EXPECT_EQ(slow.status, tunekit::candidate_status::ok);
  EXPECT_DOUBLE_EQ(slow.time_ms, 3.0);
  EXPECT_DOUBLE_EQ(slow.stats.mean, 3.0);
  EXPECT_EQ(slow.reason, "stopped early after 2 of 10 runs (3 ms > 2.5 x best 1 ms)");
  EXPECT_EQ(e->candidates[2].reason, "stopped early after 2 of 10 runs (4 ms > 2.5 x best 1 ms)");

  // The entry on disk and its log say so; the entry reads back with the reason and the policy.
  const auto path = f.tuner().cache_path(key{7});
  const auto text = tunekit_test::read_text(path);
  EXPECT_NE(text.find("\"early_stop_factor\": 2.5"), std::string::npos) << text;
  const auto back = tunekit::winner_cache::read(path);
  ASSERT_TRUE(back.found()) << back.detail;
  EXPECT_EQ(back.value->policy, early_stop(2.5, 2));
  EXPECT_EQ(back.value->candidates[1].reason, slow.reason);
  EXPECT_EQ(back.value->candidates[1].status, tunekit::candidate_status::ok);
  const auto log_text =
      tunekit_test::read_text(path.parent_path() / (path.stem().string() + ".log"));
  EXPECT_NE(log_text.find("early stop after 2 runs beyond 2.5 x best"), std::string::npos)
      << log_text;
  EXPECT_NE(log_text.find("; stopped early after 2 of 10 runs"), std::string::npos) << log_text;
}

TEST(early_stop, off_measures_every_run_and_writes_the_policy_as_before) {
  early_stop_tuning t;
  auto f = t.tune(measure_policy{.warmup = 1, .runs = 10});
  f(7);
  EXPECT_EQ(t.meas->runs(), 4U * 11U);
  const auto text = tunekit_test::read_text(f.tuner().cache_path(key{7}));
  EXPECT_EQ(text.find("early_stop"), std::string::npos) << text;
  EXPECT_EQ(f.tuner().last_search()->winner, (config{{"BLOCK", 512}}));
}

TEST(early_stop, the_tuner_refuses_a_factor_below_one_or_no_runs_before_the_check) {
  tunekit_test::temp_dir dir;
  tunekit_test::log_capture log;
  auto meas = std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
  for (const auto &p : {early_stop(0.5, 2), early_stop(-1.0, 2), early_stop(2.0, 0),
                        early_stop(std::numeric_limits<double>::infinity(), 2)}) {
    auto o = tunekit_test::options(dir.path(), meas, log);
    o.policy = p;
    EXPECT_THROW(tunekit::tuner("t", tunekit::config_space::product({{"BLOCK", {512}}}), o),
                 tunekit::error);
  }
}
