// The search (src/core/search.cpp): the measurement policy, the winner rule (`detail::pick_winner`:
// the smallest finite time, ties to the lower index) and the worst-rank reduction through a
// communicator, with a fake second rank.

#include "tuner_fixture.hpp"

#include "search.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

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
