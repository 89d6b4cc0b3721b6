// tunekit::decoded: the config decoded once into the caller's own type, so that a resolved call
// reads no field by name.

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

struct sizes {
  std::int64_t block;
  std::int64_t warps;
};

class decoded_test : public ::testing::Test {
protected:
  auto make() {
    auto o = tunekit_test::options(
        cache.path(), std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost), log);
    return tunekit::autotune(
        "decoded",
        tunekit::config_space::product({{"BLOCK", {256, 512, 1024}}, {"num_warps", {4, 8}}}),
        [](int n) { return key{n}; }, tunekit::keep_all{},
        tunekit::decoded{[decodes = decodes](const config &c) {
                           ++*decodes;
                           return sizes{c.get_int("BLOCK"), c.get_int("num_warps")};
                         },
                         [](int n, const sizes &s) { return n + s.block * 10 + s.warps; }},
        o);
  }
  temp_dir cache;
  log_capture log;
  std::shared_ptr<std::atomic<int>> decodes = std::make_shared<std::atomic<int>>(0);
};

TEST_F(decoded_test, candidates_and_the_winner_reach_the_function_decoded) {
  auto f = make();
  EXPECT_EQ(f(1), 1 + 5120 + 4); // BLOCK=512, num_warps=4 is fastest
  EXPECT_EQ(f.tuner().last_source(), source::search);
  // Each candidate is decoded for its measured runs, and the winner for the returned call.
  EXPECT_GE(decodes->load(), 6 + 1);
}

TEST_F(decoded_test, resolved_calls_decode_once_and_then_never) {
  auto f = make();
  static_cast<void>(f(1));
  const int after_search = decodes->load();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(f(1), 1 + 5120 + 4);
  }
  EXPECT_EQ(decodes->load(), after_search + 1);
  EXPECT_EQ(f.tuner().last_source(), source::memory);
  // Another key decodes its own winner once.
  static_cast<void>(f(2));
  const int after_second = decodes->load();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(f(2), 2 + 5120 + 4);
  }
  EXPECT_EQ(decodes->load(), after_second + 1);
}

TEST_F(decoded_test, disabled_calls_decode_the_first_config) {
  auto f = make();
  EXPECT_EQ(f.with({.autotune = false})(3), 3 + 2560 + 4);
  EXPECT_EQ(f.tuner().searches(), 0U);
}

TEST_F(decoded_test, concurrent_first_hot_calls_agree_on_one_decoded_winner) {
  auto f = make();
  static_cast<void>(f(1));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      auto g = f; // copies share the tuner and its winners
      for (int i = 0; i < 1000; ++i) {
        wrong += g(1) == 1 + 5120 + 4 ? 0 : 1;
      }
    });
  }
  for (auto &t : threads) {
    t.join();
  }
  EXPECT_EQ(wrong.load(), 0);
}

} // namespace
