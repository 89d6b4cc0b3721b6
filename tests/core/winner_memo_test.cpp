// The hot path's memo: a tuned function remembers the last winner it served and uses it again
// without a lookup while nothing changed the tuner's winners; any change sends it back to the
// lookup, so it never serves a forgotten or replaced winner.

#include "test_support.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

using tunekit::config;
using tunekit::key;
using tunekit::source;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

namespace {

class winner_memo_test : public ::testing::Test {
protected:
  auto make() {
    auto o = tunekit_test::options(
        cache.path(), std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost), log);
    o.use_disk_cache = false;
    return tunekit::autotune(
        "memo", tunekit::config_space::product({{"BLOCK", {256, 512, 1024}}}),
        [](int n) { return key{n}; }, tunekit::keep_all{},
        [](int n, const config &c) { return n + c.get_int("BLOCK"); }, o);
  }
  temp_dir cache;
  log_capture log;
};

TEST_F(winner_memo_test, a_forgotten_winner_is_never_served_again) {
  auto f = make();
  EXPECT_EQ(f(1), 513); // search
  EXPECT_EQ(f(1), 513); // lookup; the memo now holds it
  EXPECT_EQ(f(1), 513); // memo
  EXPECT_EQ(f.tuner().last_source(), source::memory);
  f.tuner().forget();
  EXPECT_EQ(f(1), 513);
  EXPECT_EQ(f.tuner().last_source(), source::search);
  EXPECT_EQ(f.tuner().searches(), 2U);
}

TEST_F(winner_memo_test, forgetting_some_keys_drops_theirs_only_and_the_memo_follows) {
  auto f = make();
  EXPECT_EQ(f(1), 513);
  EXPECT_EQ(f(2), 514);
  EXPECT_EQ(f(3), 515);
  tunekit::detail::tuner_access::remember(f.tuner(), key{3}, config{{"BLOCK", 1024}});
  EXPECT_EQ(f(2), 514); // the memo now holds key 2
  EXPECT_EQ(f(2), 514);
  f.tuner().forget({key{2}, key{3}, key{99}}); // key 99 was never resolved
  EXPECT_NE(f.tuner().find(key{1}), nullptr);
  EXPECT_EQ(f.tuner().find(key{2}), nullptr);
  EXPECT_EQ(f.tuner().find(key{3}), nullptr); // the replacement and the original both gone
  EXPECT_EQ(f(1), 513);
  EXPECT_EQ(f.tuner().last_source(), source::memory);
  EXPECT_EQ(f(2), 514); // not served from the memo: searched again
  EXPECT_EQ(f.tuner().last_source(), source::search);
  EXPECT_EQ(f.tuner().searches(), 4U);
  f.tuner().forget(std::vector<key>{}); // nothing to drop
  EXPECT_NE(f.tuner().find(key{1}), nullptr);
}

TEST_F(winner_memo_test, a_replaced_winner_is_served_at_once) {
  auto f = make();
  EXPECT_EQ(f(1), 513);
  EXPECT_EQ(f(1), 513);
  tunekit::detail::tuner_access::remember(f.tuner(), key{1}, config{{"BLOCK", 1024}});
  EXPECT_EQ(f(1), 1025);
}

TEST_F(winner_memo_test, keys_that_alternate_each_get_their_own_winner) {
  auto f = make();
  static_cast<void>(f(1));
  static_cast<void>(f(2));
  tunekit::detail::tuner_access::remember(f.tuner(), key{2}, config{{"BLOCK", 256}});
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(f(1), 513);
    EXPECT_EQ(f(2), 258);
  }
  // A new key (a search, an insert) in between changes nothing for the others.
  EXPECT_EQ(f(3), 515);
  EXPECT_EQ(f(1), 513);
  EXPECT_EQ(f.tuner().last_source(), source::memory);
}

TEST_F(winner_memo_test, copies_and_threads_share_winners_not_memos) {
  auto f = make();
  static_cast<void>(f(1));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto g = f;
      for (int i = 0; i < 2000; ++i) {
        const int n = 1 + (i + t) % 4; // keys 2-4 are resolved by whichever thread comes first
        wrong += g(n) == n + 512 ? 0 : 1;
      }
    });
  }
  for (auto &t : threads) {
    t.join();
  }
  EXPECT_EQ(wrong.load(), 0);
}

} // namespace
