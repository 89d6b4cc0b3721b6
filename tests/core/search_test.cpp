// The search (src/core/search.cpp): the measurement policy, the winner rule (`detail::pick_winner`:
// the smallest finite time, ties to the lower index) and the worst-rank reduction through a
// communicator, with a fake second rank.

#include "tuner_fixture.hpp"

#include "search.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using tunekit::candidate_status;
using tunekit::config;
using tunekit::config_space;
using tunekit::key;
using namespace tunekit_test;

namespace {
std::string winner_for(const std::filesystem::path &dir, const log_capture &log,
                       tunekit::statistic stat) {
  auto o = tunekit_test::options(dir, std::make_shared<fixed_measurer>(), log);
  o.policy.stat = stat;
  o.use_disk_cache = false;
  auto f = tunekit::autotune(
      "stat", config_space{config{{"algo", "steady"}}, config{{"algo", "spiky"}}},
      [](int) { return key{}; }, tunekit::keep_all{},
      [](int, const config &c) { return c.get_string("algo"); }, o);
  return f(0);
}
} // namespace

TEST_F(tuner_test, policy_sets_the_number_of_runs) {
  auto o = opts();
  o.policy = {.warmup = 1, .runs = 3, .stat = tunekit::statistic::median};
  auto scale = make_scale(p, o);
  static_cast<void>(scale(1024));
  EXPECT_EQ(p->calls.size(), 6U * 4U + 1U);
  const auto e = scale.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->policy, o.policy);
}

TEST_F(tuner_test, the_policy_statistic_picks_the_winner) {
  EXPECT_EQ(winner_for(dir.path(), log, tunekit::statistic::mean), "steady");
  EXPECT_EQ(winner_for(dir.path(), log, tunekit::statistic::median), "spiky");
  EXPECT_EQ(winner_for(dir.path(), log, tunekit::statistic::min), "spiky");
}

TEST_F(tuner_test, ties_go_to_the_earlier_candidate) {
  auto m = std::make_shared<tunekit::simulated_measurer>(
      [](const config &c, const key &) { return c.get_int("num_warps") == 8 ? 1.0 : 2.0; });
  auto scale = make_scale(p, tunekit_test::options(dir.path(), m, log));
  static_cast<void>(scale(512));
  // BLOCK=256 and 512 with num_warps=8 tie; the earlier one in the space wins.
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 256}, {"num_warps", 8}}));
}

TEST_F(tuner_test, communicator_slot_worst_rank_counts) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  // On the other rank BLOCK=512/num_warps=4 failed and BLOCK=1024/num_warps=4 was slow.
  two_rank_communicator comm(0, {0, 0, inf, 0, 9.0, 0, 0, 0});
  auto scale = make_scale(p, opts());
  static_cast<void>(scale.with({.comm = &comm})(4096));
  EXPECT_GE(comm.min_calls, 1);
  EXPECT_GE(comm.max_calls, 2);
  const auto e = scale.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->world_size, 2);
  EXPECT_EQ(e->winner, (config{{"BLOCK", 512}, {"num_warps", 8}}));
  EXPECT_EQ(e->candidates[2].status, candidate_status::failed);
  EXPECT_EQ(e->candidates[2].reason, "failed on another rank");
  EXPECT_DOUBLE_EQ(e->candidates[4].time_ms, 9.0);
  EXPECT_EQ(json_files(), 1U); // rank 0 writes the cache
}

TEST_F(tuner_test, only_rank_zero_writes_the_cache) {
  two_rank_communicator comm(1, std::vector<double>(8, 0.0));
  auto o = opts();
  o.comm = &comm; // the tuner's default communicator
  auto scale = make_scale(p, o);
  static_cast<void>(scale(4096));
  EXPECT_GE(comm.max_calls, 1);
  EXPECT_EQ(p->calls.back(), fastest);
  EXPECT_EQ(json_files(), 0U);
}

TEST_F(tuner_test, single_process_communicator_is_the_identity) {
  tunekit::single_process_communicator comm;
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 1);
  std::vector<double> v{1.0, 2.0};
  comm.all_reduce_max(v);
  comm.all_reduce_min(v);
  EXPECT_EQ(v, (std::vector<double>{1.0, 2.0}));
  auto scale = make_scale(p, opts());
  static_cast<void>(scale.with({.comm = &comm})(1024));
  EXPECT_EQ(p->calls.back(), fastest);
  EXPECT_EQ(scale.tuner().last_search()->world_size, 1);
}

namespace {
using tunekit::detail::pick_winner;
constexpr double infinite = std::numeric_limits<double>::infinity();
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

std::optional<std::size_t> winner_of(std::vector<double> times) { return pick_winner(times); }
} // namespace

TEST(pick_winner, the_smallest_time_wins) {
  EXPECT_EQ(winner_of({3.0, 1.0, 2.0}), 1U);
  EXPECT_EQ(winner_of({0.5}), 0U);
  EXPECT_EQ(winner_of({2.0, 3.0, 0.0}), 2U); // zero is a valid time
}

TEST(pick_winner, a_tie_goes_to_the_lower_index) {
  EXPECT_EQ(winner_of({2.0, 1.0, 1.0, 1.0}), 1U);
  EXPECT_EQ(winner_of({1.0, 1.0}), 0U);
  EXPECT_EQ(winner_of({infinite, 5.0, 3.0, 5.0, 3.0}), 2U);
}

TEST(pick_winner, infinite_and_nan_times_never_win) {
  EXPECT_EQ(winner_of({infinite, 4.0}), 1U);
  EXPECT_EQ(winner_of({not_a_number, 4.0, not_a_number}), 1U);
  EXPECT_EQ(winner_of({-infinite, 4.0}), 1U); // not a time either
  EXPECT_EQ(winner_of({4.0, not_a_number, 1.0}),
            2U); // a NaN between two finite times changes nothing
  EXPECT_EQ(winner_of({1.0, not_a_number, 4.0}), 0U);
}

TEST(pick_winner, nothing_finite_is_no_winner) {
  EXPECT_EQ(winner_of({}), std::nullopt);
  EXPECT_EQ(winner_of({infinite, infinite}), std::nullopt);
  EXPECT_EQ(winner_of({not_a_number, -infinite, infinite}), std::nullopt);
}

TEST_F(tuner_test, a_strategy_breaks_ties_by_candidate_order_in_a_sorted_space) {
  // An explicit list in descending order: the strategy's inferred domain sorts it ascending, so
  // its search indices run the other way from the candidates. Every candidate takes the same time.
  const config_space space{config{{"BLOCK", 2048}}, config{{"BLOCK", 1024}}, config{{"BLOCK", 512}},
                           config{{"BLOCK", 256}},  config{{"BLOCK", 128}},  config{{"BLOCK", 64}}};
  auto m = std::make_shared<tunekit::simulated_measurer>(
      [](const config &, const key &) { return 1.0; });
  auto o = tunekit_test::options(dir.path(), m, log);
  o.search.budget.max_evaluations = 4; // fewer than the 6 kept: a strategy searches
  auto f = tunekit::autotune(
      "ties", space, [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &c) { return c.get_int("BLOCK"); }, o);
  static_cast<void>(f(1));
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  ASSERT_TRUE(e->search.has_value());
  ASSERT_EQ(e->candidates.size(), 4U);
  // The measured candidates are listed in candidate order, so the winner of the tie is the
  // first listed one: the largest BLOCK measured, not the smallest (the lowest search index).
  std::int64_t largest = 0;
  for (const auto &r : e->candidates) {
    largest = std::max(largest, r.config.get_int("BLOCK"));
  }
  EXPECT_EQ(e->winner_index, 0U);
  EXPECT_EQ(e->winner.get_int("BLOCK"), largest);
  ASSERT_TRUE(e->space.has_value());
  EXPECT_EQ(space[e->space->winner], e->winner);
}

namespace {
// Records every event of a search.
struct recording_observer final : tunekit::detail::search_observer {
  std::size_t started = 0, batches = 0, reduced = 0, finished = 0;
  std::vector<std::size_t> begun, measured;
  std::vector<config> configs;
  std::optional<std::size_t> winner;
  void search_started(const tunekit::detail::search_plan &) override { ++started; }
  void batch_started(std::span<const config>) override { ++batches; }
  void candidate_started(std::size_t i, const config &) override { begun.push_back(i); }
  void candidate_measured(std::size_t i, const tunekit::candidate_record &r) override {
    measured.push_back(i);
    configs.push_back(r.config);
  }
  void batch_reduced(std::span<const std::size_t>, std::span<const double>, std::size_t) override {
    ++reduced;
  }
  void search_finished(const tunekit::detail::search_result &r) override {
    ++finished;
    winner = r.positions[r.winner];
  }
};

tunekit::detail::search_result observed_search(recording_observer &obs, std::size_t budget,
                                               const std::vector<bool> &kept) {
  const config_space space = tunekit_test::block_space();
  const std::vector<config> cands(space.begin(), space.end());
  const key k{4096};
  tunekit::simulated_measurer meas(tunekit_test::block_cost);
  const tunekit::measure_policy policy{.warmup = 0, .runs = 1};
  log_capture log;
  temp_dir dir;
  const tunekit::detail::rank_log rlog(log.sink(), {}, dir.path(), "tuner 'scale'");
  tunekit::search_settings settings;
  settings.budget.max_evaluations = budget;
  settings.batch_size = 2;
  tunekit::single_process_communicator comm;
  const tunekit::winner_cache cache(dir.path());
  const tunekit::hardware_info hw;
  const std::string what = "tuner 'scale', key (4096)";
  auto run = [](const config &) {};
  auto check = [](const config &) { return true; };
  return tunekit::detail::search({.tuner = "scale",
                                  .what = what,
                                  .k = k,
                                  .candidates = cands,
                                  .kept = kept,
                                  .comm = comm,
                                  .settings = settings,
                                  .declared = space.parameters(),
                                  .measure = {meas, policy, run, check},
                                  .transfer = {cache, false, {"scale", ""}, hw},
                                  .output = {.log = rlog, .observer = &obs}});
}
} // namespace

TEST(search_observer, receives_every_candidate_an_exhaustive_search_measures) {
  recording_observer obs;
  std::vector<bool> kept(8, true);
  kept[5] = false; // pruned: never measured, never observed
  const auto found = observed_search(obs, 1000, kept);
  EXPECT_EQ(obs.started, 1U);
  EXPECT_EQ(obs.batches, 1U); // one batch, one reduction
  EXPECT_EQ(obs.reduced, 1U);
  EXPECT_EQ(obs.finished, 1U);
  EXPECT_EQ(obs.begun, (std::vector<std::size_t>{0, 1, 2, 3, 4, 6, 7}));
  EXPECT_EQ(obs.measured, obs.begun);
  ASSERT_EQ(found.records.size(), obs.measured.size());
  for (std::size_t j = 0; j < found.records.size(); ++j) {
    EXPECT_EQ(found.positions[j], obs.measured[j]);
    EXPECT_EQ(found.records[j].config, obs.configs[j]);
  }
  EXPECT_EQ(obs.winner, 2U); // BLOCK=512, num_warps=4
}

TEST(search_observer, receives_every_candidate_a_strategy_measures) {
  recording_observer obs;
  const auto found = observed_search(obs, 4, std::vector<bool>(8, true));
  ASSERT_TRUE(found.strategy.has_value());
  EXPECT_EQ(obs.measured.size(), 4U);
  EXPECT_EQ(obs.batches, obs.reduced);
  EXPECT_GE(obs.batches, 2U); // batches of two
  // Every measured candidate was observed once, in the order the strategy measured them.
  ASSERT_EQ(found.strategy->order.size(), obs.measured.size());
  for (std::size_t j = 0; j < obs.measured.size(); ++j) {
    EXPECT_EQ(found.positions[found.strategy->order[j]], obs.measured[j]);
  }
  EXPECT_EQ(obs.winner, found.positions[found.winner]);
}
