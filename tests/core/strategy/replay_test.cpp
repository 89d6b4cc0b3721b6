#include "../test_support.hpp"

#include <tunekit/error.hpp>
#include <tunekit/strategy/replay.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#ifdef TUNEKIT_TEST_HAS_ZLIB
#include <zlib.h>
#endif

namespace {

using tunekit::config;

const char *good_file = R"({
  "device_name": "Test GPU", "kernel_name": "k",
  "tune_params_keys": ["bx", "t", "mode"],
  "tune_params": {"mode": ["a", "b"], "bx": [32, 64, 128], "t": [1.5, 2.0]},
  "cache": {
    "32,1.5,a": {"time": 3.0},
    "64,1.5,a": {"time": 2.0, "other": 1},
    "128,2.0,b": {"time": 1.25},
    "64,2.0,b": {"time": "RuntimeFailedConfig"}
  }
})";

std::string error_of(const std::string &text) {
  try {
    (void)tunekit::parse_replay_table(text, "bad.json");
  } catch (const tunekit::error &e) {
    return e.what();
  }
  return "no error";
}

TEST(replay, reads_parameters_times_and_failures) {
  auto t = tunekit::parse_replay_table(good_file, "good.json");
  EXPECT_EQ(t.device_name, "Test GPU");
  EXPECT_EQ(t.kernel_name, "k");
  ASSERT_EQ(t.space.dimensions(), 3U);
  EXPECT_EQ(t.space.parameters()[0].name, "bx"); // tune_params_keys order
  EXPECT_EQ(t.space.valid_count(), 4U);
  EXPECT_EQ(t.best_time_ms, 1.25);
  auto at = [&](const config &c) { return t.time_of(*t.space.index_of(c)); };
  EXPECT_EQ(at({{"bx", 64}, {"t", 1.5}, {"mode", "a"}}), 2.0);
  EXPECT_TRUE(std::isinf(at({{"bx", 64}, {"t", 2.0}, {"mode", "b"}}))); // failed
  EXPECT_TRUE(std::isinf(at({{"bx", 32}, {"t", 2.0}, {"mode", "b"}}))); // not in the file
  EXPECT_FALSE(t.space.is_valid(*t.space.index_of({{"bx", 32}, {"t", 2.0}, {"mode", "b"}})));
  auto best = t.best_configs(2);
  ASSERT_EQ(best.size(), 2U);
  EXPECT_EQ(best[0], (config{{"bx", 128}, {"t", 2.0}, {"mode", "b"}}));
  EXPECT_EQ(best[1], (config{{"bx", 64}, {"t", 1.5}, {"mode", "a"}}));
}

TEST(replay, a_search_over_a_table_finds_its_best_time) {
  auto t = tunekit::parse_replay_table(good_file, "good.json");
  auto strat = tunekit::make_strategy("hybrid");
  auto r = tunekit::run_search(t.space, *strat, {.max_evaluations = 10}, t.evaluator());
  EXPECT_EQ(r.evaluations, 4U); // the space is the set of configs in the file
  EXPECT_EQ(r.best_time_ms, 1.25);
}

TEST(replay, bad_files_are_clear_errors) {
  EXPECT_NE(error_of("{").find("bad.json: is not JSON"), std::string::npos);
  EXPECT_NE(error_of("[]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"cache": {}})").find("no 'tune_params'"), std::string::npos);
  EXPECT_NE(error_of(R"({"tune_params": {"a": [1]}})").find("no 'cache'"), std::string::npos);
  EXPECT_NE(error_of(R"({"tune_params": {"a": []}, "cache": {}})")
                .find("tune_params['a'] is not a non-empty array"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tune_params": {"a": [[1]]}, "cache": {}})").find("tune_params['a']"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tune_params": {"a": [1], "b": [2]}, "cache": {"1": {"time": 1}}})")
                .find("cache key \"1\" does not hold 2"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tune_params": {"a": [1]}, "cache": {"7": {"time": 1}}})")
                .find("'7' is not a value of parameter 'a'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tune_params": {"a": [1]}, "cache": {"1": {"t": 1}}})")
                .find("cache entry \"1\" has no 'time'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tune_params": {"a": [1]}, "cache": {"1": {"time": -1}}})")
                .find("finite, non-negative"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tune_params": {"a": [1]}, "cache": {"1": {"time": "InvalidConfig"}}})")
                .find("no cache entry with a time"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"tune_params_keys": ["b"], "tune_params": {"a": [1]}, "cache": {}})")
                .find("'tune_params_keys' names 'b'"),
            std::string::npos);
}

TEST(replay, missing_and_corrupt_files_are_clear_errors) {
  tunekit_test::temp_dir dir;
  try {
    (void)tunekit::load_replay_table(dir.path() / "absent.json");
    FAIL();
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("absent.json: cannot be opened"), std::string::npos);
  }
  const auto truncated = dir.path() / "truncated.json.gz";
  std::ofstream(truncated, std::ios::binary) << "\x1f\x8b\x08\x00garbage";
  EXPECT_THROW((void)tunekit::load_replay_table(truncated), tunekit::error);
}

TEST(replay, reads_plain_and_gzip_files) {
  tunekit_test::temp_dir dir;
  const auto plain = dir.path() / "plain.json";
  std::ofstream(plain) << good_file;
  EXPECT_EQ(tunekit::load_replay_table(plain).best_time_ms, 1.25);
#ifdef TUNEKIT_TEST_HAS_ZLIB
  const auto packed = dir.path() / "packed.json.gz";
  gzFile gz = gzopen(packed.string().c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  gzputs(gz, good_file);
  gzclose(gz);
  auto t = tunekit::load_replay_table(packed);
  EXPECT_EQ(t.best_time_ms, 1.25);
  EXPECT_EQ(t.source, packed.string());
#endif
}

} // namespace
