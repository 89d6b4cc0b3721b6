// Threads: concurrent calls resolve different keys, and hot-path readers never miss a winner while
// the in-process table grows.

#include "tuner_fixture.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

using tunekit::config;
using tunekit::key;
using namespace tunekit_test;

TEST_F(tuner_test, concurrent_calls_with_different_keys) {
  // The probe is not thread-safe; this test uses its own function.
  std::atomic<int> runs{0};
  auto f = tunekit::autotune(
      "concurrent", block_space(), [](int n) { return key{n}; },
      [](const config &c, int n) { return c.get_int("BLOCK") <= n; },
      [&runs](int n, const config &c) {
        runs.fetch_add(1);
        return c.get_int("BLOCK") + n;
      },
      opts());
  std::vector<std::thread> threads;
  std::vector<std::int64_t> results(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      const int n = 1024 + i;
      for (int rep = 0; rep < 3; ++rep) {
        results[static_cast<std::size_t>(i)] = f(n);
      }
    });
  }
  for (auto &t : threads) {
    t.join();
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(results[static_cast<std::size_t>(i)], 512 + 1024 + i);
  }
  EXPECT_EQ(f.tuner().searches(), 4U);
  EXPECT_EQ(runs.load(), 4 * (6 * 15 + 1) + 4 * 2);
}

TEST_F(tuner_test, hot_path_readers_while_the_winner_table_grows) {
  // 4 threads resolve 25 keys each (the in-process table grows several times) and re-read every
  // key they resolved so far after each new one: a reader must never miss or see a wrong winner.
  auto o = opts();
  o.use_disk_cache = false;
  o.policy = {.warmup = 0, .runs = 1};
  auto f = tunekit::autotune(
      "growing", block_space(), [](int n) { return key{n}; },
      [](const config &c, int n) { return c.get_int("BLOCK") <= n; },
      [](int n, const config &c) { return c.get_int("BLOCK") * 10000 + n; }, o);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int j = 0; j < 25; ++j) {
        for (int i = 0; i <= j; ++i) {
          const int n = 256 + t + 4 * i;
          if (f(n) != 256 * 10000 + n) {
            wrong.fetch_add(1);
          }
        }
      }
    });
  }
  for (auto &t : threads) {
    t.join();
  }
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(f.tuner().searches(), 100U);
  for (int n = 256; n < 356; ++n) {
    ASSERT_NE(f.tuner().find(key{n}), nullptr) << n;
  }
}
