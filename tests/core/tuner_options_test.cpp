// The tuner's per-call options: autotune=false, verbose (per call and from the environment),
// set_defaults, pinned values and allow_arg_overwrite, and with_check.

#include "tuner_fixture.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

using tunekit::call_options;
using tunekit::candidate_status;
using tunekit::config;
using tunekit::key;
using tunekit::source;
using namespace tunekit_test;

TEST_F(tuner_test, autotune_false_runs_the_first_config_without_key_prune_or_measurement) {
  auto scale = make_scale(p, opts());
  const long result = scale.with({.autotune = false})(1024);
  ASSERT_EQ(p->calls.size(), 1U);
  EXPECT_EQ(p->calls[0], block_space()[0]);
  EXPECT_EQ(result, 100000L + 1024);
  EXPECT_EQ(p->key_calls, 0);
  EXPECT_EQ(p->prune_calls, 0);
  EXPECT_EQ(meas->candidates_measured(), 0U);
  EXPECT_EQ(scale.tuner().searches(), 0U);
  EXPECT_EQ(json_files(), 0U);
  EXPECT_TRUE(log.lines().empty()) << log.dump();

  // Even once a winner is known, autotune=false keeps to the first config.
  static_cast<void>(scale(1024));
  static_cast<void>(scale.with({.autotune = false})(1024));
  EXPECT_EQ(p->calls.back(), block_space()[0]);
}

TEST_F(tuner_test, verbose_reports_key_source_candidates_progress_and_winner) {
  auto scale = make_scale(p, opts());
  static_cast<void>(scale.with({.verbose = true})(1024));
  const auto infos = log.infos();
  ASSERT_FALSE(infos.empty());
  for (const auto &line : infos) {
    EXPECT_TRUE(has(line, "'scale'")) << line;
    EXPECT_TRUE(has(line, "(1024)")) << line;
  }
  // The source: a search of the 6 configs the prune kept.
  EXPECT_EQ(log.count(tunekit::log_level::info, {"search", "6 of 8"}), 1U) << log.dump();
  // One progress line per candidate, counting up to 6/6, each with its time and the best so far.
  for (int i = 1; i <= 6; ++i) {
    const std::string progress = "candidate " + std::to_string(i) + "/6";
    EXPECT_EQ(log.count(tunekit::log_level::info, {progress, " ms", "best so far"}), 1U)
        << progress << "\n"
        << log.dump();
  }
  // After the fastest is measured (#2 of the kept list), it stays the best so far.
  EXPECT_EQ(log.count(tunekit::log_level::info,
                      {"candidate 6/6", "best so far", "[BLOCK=512, num_warps=4]"}),
            1U)
      << log.dump();
  EXPECT_EQ(log.count(tunekit::log_level::info, {"winner [BLOCK=512, num_warps=4]"}), 1U)
      << log.dump();
  EXPECT_TRUE(log.warnings().empty()) << log.dump();

  // Second call: the source is memory, and it is said.
  log.clear();
  static_cast<void>(scale.with({.verbose = true})(1024));
  EXPECT_EQ(log.count(tunekit::log_level::info, {"(1024)", "memory", "[BLOCK=512, num_warps=4]"}),
            1U)
      << log.dump();

  // A fresh tuner: the source is the cache.
  log_capture log2;
  auto o = opts();
  o.process->log = log2.sink();
  auto again = make_scale(p, o);
  static_cast<void>(again.with({.verbose = true})(1024));
  EXPECT_EQ(log2.count(tunekit::log_level::info, {"(1024)", "cache", "[BLOCK=512, num_warps=4]"}),
            1U)
      << log2.dump();
}

TEST_F(tuner_test, quiet_calls_log_nothing) {
  auto scale = make_scale(p, opts());
  static_cast<void>(scale(1024));
  static_cast<void>(scale(1024));
  EXPECT_TRUE(log.lines().empty()) << log.dump();
}

TEST_F(tuner_test, verbose_from_the_environment_applies_to_every_call) {
  auto o = opts();
  o.process->env.verbose = true;
  auto scale = make_scale(p, o);
  static_cast<void>(scale(1024));
  EXPECT_EQ(log.count(tunekit::log_level::info, {"winner [BLOCK=512, num_warps=4]"}), 1U)
      << log.dump();
  log.clear();
  static_cast<void>(scale(1024));
  EXPECT_EQ(log.count(tunekit::log_level::info, {"(1024)", "memory"}), 1U) << log.dump();
}

TEST_F(tuner_test, set_defaults_applies_to_plain_calls) {
  auto scale = make_scale(p, opts());
  scale.set_defaults({.autotune = false});
  static_cast<void>(scale(1024));
  EXPECT_EQ(p->key_calls, 0);
  EXPECT_EQ(p->calls.back(), block_space()[0]);
}

TEST_F(tuner_test, pinned_config_field_is_an_error_naming_the_field) {
  auto scale = make_scale(p, opts());
  call_options o;
  o.pinned.set("BLOCK", 256);
  const std::string msg = error_of([&] { static_cast<void>(scale.with(o)(1024)); });
  EXPECT_TRUE(has(msg, "'BLOCK'")) << msg;
  EXPECT_TRUE(has(msg, "allow_arg_overwrite")) << msg;
  EXPECT_TRUE(has(msg, "'scale'")) << msg;
  EXPECT_TRUE(p->calls.empty());
  EXPECT_EQ(meas->candidates_measured(), 0U);

  // The same with autotune=false.
  o.autotune = false;
  EXPECT_TRUE(has(error_of([&] { static_cast<void>(scale.with(o)(1024)); }), "'BLOCK'"));
  EXPECT_TRUE(p->calls.empty());
}

TEST_F(tuner_test, allow_arg_overwrite_lets_the_pinned_value_win_and_stops_tuning_that_field) {
  auto scale = make_scale(p, opts());
  call_options o{.allow_arg_overwrite = true};
  o.pinned.set("BLOCK", 2048);
  static_cast<void>(scale.with(o)(4096));
  // The 4 BLOCK values collapse into one: only num_warps is tuned.
  EXPECT_EQ(meas->candidates_measured(), 2U);
  for (const auto &c : p->calls) {
    EXPECT_EQ(c.get_int("BLOCK"), 2048) << c.to_string();
  }
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 2048}, {"num_warps", 4}}));
  const auto e = scale.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->candidates.size(), 2U);
  // The pinned value is part of the key: another pinned value is another search...
  o.pinned.set("BLOCK", 256);
  static_cast<void>(scale.with(o)(4096));
  EXPECT_EQ(meas->candidates_measured(), 4U);
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 256}, {"num_warps", 4}}));
  // ...and the same pinned value again is answered from memory.
  o.pinned.set("BLOCK", 2048);
  static_cast<void>(scale.with(o)(4096));
  EXPECT_EQ(meas->candidates_measured(), 4U);
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 2048}, {"num_warps", 4}}));
  EXPECT_EQ(scale.tuner().last_source(), source::memory);

  // autotune=false with the flag: the first config with the caller's value.
  static_cast<void>(
      scale.with({.autotune = false, .allow_arg_overwrite = true, .pinned = o.pinned})(4096));
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 2048}, {"num_warps", 4}}));
}

TEST_F(tuner_test, pinned_value_that_is_not_a_field_is_passed_along) {
  auto scale = make_scale(p, opts());
  call_options o;
  o.pinned.set("alpha", 2.5);
  static_cast<void>(scale.with(o)(1024));
  EXPECT_EQ(meas->candidates_measured(), 6U);
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 512}, {"num_warps", 4}, {"alpha", 2.5}}));
  const auto e = scale.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, (key{1024, "pinned alpha", 2.5}));
}

TEST_F(tuner_test, with_check_marks_wrong_results) {
  auto scale = make_scale(p, opts());
  auto checked =
      scale.with_check([](const int &, const config &c) { return c.get_int("BLOCK") != 512; });
  static_cast<void>(checked(1024));
  const auto e = checked.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->winner, (config{{"BLOCK", 1024}, {"num_warps", 4}}));
  EXPECT_EQ(p->calls.back(), e->winner);
  std::size_t wrong = 0;
  for (const auto &r : e->candidates) {
    if (r.config.get_int("BLOCK") == 512) {
      EXPECT_EQ(r.status, candidate_status::wrong_result);
      EXPECT_EQ(r.reason, "wrong result");
      EXPECT_TRUE(std::isinf(r.time_ms));
      ++wrong;
    }
  }
  EXPECT_EQ(wrong, 2U);
  // The checked copy shares the tuner: the plain callable now uses that winner.
  static_cast<void>(scale(1024));
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 1024}, {"num_warps", 4}}));
  EXPECT_EQ(scale.tuner().searches(), 1U);
}
