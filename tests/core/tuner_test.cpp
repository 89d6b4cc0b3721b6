// The function-level tuner: resolution (memory, cache, search), per-call options, failures and
// verbose output. Every timing comes from the simulated measurer, so each winner is fixed.

#include "test_support.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using tunekit::call_options;
using tunekit::candidate_status;
using tunekit::config;
using tunekit::config_space;
using tunekit::key;
using tunekit::source;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

namespace {

// What the wrapped functions saw.
struct probe {
  int key_calls = 0;
  int prune_calls = 0;
  std::vector<config> calls; // the config of every call of the tuned function, in order
};

// BLOCK x num_warps, 8 configs; with block_cost, BLOCK=512, num_warps=4 (#2) is fastest.
config_space block_space() {
  return config_space::product({{"BLOCK", {256, 512, 1024, 2048}}, {"num_warps", {4, 8}}});
}

const config fastest{{"BLOCK", 512}, {"num_warps", 4}};

// `scale(n, config)`: keyed by n, prunes blocks larger than n. Returns a number that identifies
// the call (its position among all calls) so a test can tell which call's result it got.
auto make_scale(const std::shared_ptr<probe> &p, tunekit::tuner_options o,
                config_space space = block_space()) {
  return tunekit::autotune(
      "scale", std::move(space),
      [p](int n) {
        ++p->key_calls;
        return key{n};
      },
      [p](const config &c, int n) {
        ++p->prune_calls;
        return c.get_int("BLOCK") <= n;
      },
      [p](int n, const config &c) {
        p->calls.push_back(c);
        return static_cast<long>(p->calls.size()) * 100000L + n;
      },
      std::move(o));
}

class tuner_test : public ::testing::Test {
protected:
  [[nodiscard]] tunekit::tuner_options opts(std::string version = "v1") const {
    return tunekit_test::options(dir.path(), meas, log, std::move(version));
  }
  [[nodiscard]] std::size_t json_files() const {
    std::size_t n = 0;
    for (const auto &f : tunekit_test::files_below(dir.path())) {
      n += f.extension() == ".json" ? 1 : 0;
    }
    return n;
  }

  temp_dir dir;
  log_capture log;
  std::shared_ptr<tunekit::simulated_measurer> meas =
      std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost, 0.02, 1);
  std::shared_ptr<probe> p = std::make_shared<probe>();
};

template <class F> std::string error_of(F f) {
  try {
    f();
  } catch (const tunekit::error &e) {
    return e.what();
  }
  return {};
}

bool has(const std::string &text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_F(tuner_test, first_call_measures_every_unpruned_config_then_runs_the_winner) {
  auto scale = make_scale(p, opts());
  const long result = scale(1024);

  // 6 of 8 configs survive the prune (BLOCK=2048 is larger than n), each 5 warmup + 10 timed runs.
  EXPECT_EQ(meas->candidates_measured(), 6U);
  EXPECT_EQ(meas->runs(), 6U * 15U);
  ASSERT_EQ(p->calls.size(), 6U * 15U + 1U);
  EXPECT_EQ(p->calls.back(), fastest);
  // The caller gets the result of that last call with the winner.
  EXPECT_EQ(result, static_cast<long>(p->calls.size()) * 100000L + 1024);
  EXPECT_EQ(p->key_calls, 1);
  EXPECT_EQ(p->prune_calls, 8);
  for (const auto &c : p->calls) {
    EXPECT_LE(c.get_int("BLOCK"), 1024) << "a pruned config ran: " << c.to_string();
  }

  const auto &t = scale.tuner();
  EXPECT_EQ(t.last_source(), source::search);
  EXPECT_EQ(t.searches(), 1U);
  ASSERT_NE(t.find(key{1024}), nullptr);
  EXPECT_EQ(*t.find(key{1024}), fastest);

  const auto e = t.last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, key{1024});
  ASSERT_EQ(e->candidates.size(), 8U);
  EXPECT_EQ(e->winner_index, 2U);
  EXPECT_EQ(e->winner, fastest);
  std::size_t ok = 0;
  std::size_t pruned = 0;
  for (const auto &r : e->candidates) {
    if (r.status == candidate_status::ok) {
      ++ok;
      EXPECT_TRUE(std::isfinite(r.time_ms));
      EXPECT_NEAR(r.time_ms, tunekit_test::block_cost(r.config, e->key), 0.1);
    } else {
      EXPECT_EQ(r.status, candidate_status::pruned);
      EXPECT_EQ(r.config.get_int("BLOCK"), 2048);
      EXPECT_TRUE(std::isinf(r.time_ms));
      ++pruned;
    }
  }
  EXPECT_EQ(ok, 6U);
  EXPECT_EQ(pruned, 2U);
  EXPECT_EQ(e->policy, tunekit::measure_policy{});
  EXPECT_EQ(e->measurer, "simulated");
  EXPECT_EQ(e->world_size, 1);
}

TEST_F(tuner_test, second_call_with_the_same_key_is_served_from_memory) {
  auto scale = make_scale(p, opts());
  static_cast<void>(scale(1024));
  const auto calls_before = p->calls.size();
  const auto prunes_before = p->prune_calls;

  const long result = scale(1024);
  EXPECT_EQ(meas->candidates_measured(), 6U); // nothing new measured
  ASSERT_EQ(p->calls.size(), calls_before + 1);
  EXPECT_EQ(p->calls.back(), fastest);
  EXPECT_EQ(result, static_cast<long>(p->calls.size()) * 100000L + 1024);
  EXPECT_EQ(p->key_calls, 2);
  EXPECT_EQ(p->prune_calls, prunes_before);
  EXPECT_EQ(scale.tuner().searches(), 1U);
  EXPECT_EQ(scale.tuner().last_source(), source::memory);
}

TEST_F(tuner_test, a_different_key_searches_again) {
  auto scale = make_scale(p, opts());
  static_cast<void>(scale(1024));
  static_cast<void>(scale(256));
  // Only BLOCK=256 fits n=256: two more candidates.
  EXPECT_EQ(meas->candidates_measured(), 8U);
  EXPECT_EQ(scale.tuner().searches(), 2U);
  EXPECT_EQ(scale.tuner().last_source(), source::search);
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 256}, {"num_warps", 4}}));
  // The first key's winner is still remembered.
  static_cast<void>(scale(1024));
  EXPECT_EQ(p->calls.back(), fastest);
  EXPECT_EQ(scale.tuner().searches(), 2U);
  EXPECT_EQ(json_files(), 2U);
}

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
  o.log = log2.sink();
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
  o.env->verbose = true;
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

TEST_F(tuner_test, a_throwing_candidate_is_skipped_with_its_reason) {
  auto scale = tunekit::autotune(
      "scale", block_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
      [p = p](int, const config &c) {
        p->calls.push_back(c);
        if (c.get_int("BLOCK") == 512) {
          throw std::runtime_error("too many resources requested for launch");
        }
        return c.get_int("BLOCK");
      },
      opts());
  EXPECT_EQ(scale(1024), 1024);
  EXPECT_EQ(meas->candidates_measured(), 8U); // tuning went on after the failures
  const auto e = scale.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->winner, (config{{"BLOCK", 1024}, {"num_warps", 4}}));
  for (const auto &r : e->candidates) {
    if (r.config.get_int("BLOCK") == 512) {
      EXPECT_EQ(r.status, candidate_status::failed);
      EXPECT_EQ(r.reason, "too many resources requested for launch");
      EXPECT_TRUE(std::isinf(r.time_ms));
    } else {
      EXPECT_EQ(r.status, candidate_status::ok) << r.config.to_string();
      EXPECT_TRUE(r.reason.empty());
    }
  }
}

TEST_F(tuner_test, a_throwing_cost_function_fails_only_that_candidate) {
  auto m = std::make_shared<tunekit::simulated_measurer>([](const config &c, const key &k) {
    if (c.get_int("num_warps") == 4) {
      throw std::runtime_error("out of registers");
    }
    return tunekit_test::block_cost(c, k);
  });
  auto scale = make_scale(p, tunekit_test::options(dir.path(), m, log));
  static_cast<void>(scale(1024));
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 512}, {"num_warps", 8}}));
  const auto e = scale.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->candidates[0].reason, "out of registers");
}

TEST_F(tuner_test, non_standard_exceptions_are_recorded_too) {
  auto scale = tunekit::autotune(
      "scale", block_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &c) {
        if (c.get_int("num_warps") == 4) {
          throw 42; // NOLINT(hicpp-exception-baseclass)
        }
        return 0;
      },
      opts());
  static_cast<void>(scale(1024));
  const auto e = scale.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->candidates[0].status, candidate_status::failed);
  EXPECT_FALSE(e->candidates[0].reason.empty());
  EXPECT_EQ(e->winner, (config{{"BLOCK", 512}, {"num_warps", 8}}));
}

TEST_F(tuner_test, all_candidates_failing_is_an_error_naming_tuner_key_and_each_reason) {
  auto scale = tunekit::autotune(
      "scale", block_space(),
      [](int n) {
        return key{n, "f32"};
      },
      [](const config &c, int) { return c.get_int("num_warps") == 8; },
      [p = p](int, const config &c) -> int {
        p->calls.push_back(c);
        throw std::runtime_error("launch failed for BLOCK " + std::to_string(c.get_int("BLOCK")));
      },
      opts());
  const std::string msg = error_of([&] { static_cast<void>(scale(1024)); });
  EXPECT_TRUE(has(msg, "'scale'")) << msg;
  EXPECT_TRUE(has(msg, "(1024, \"f32\")")) << msg;
  for (int block : {256, 512, 1024, 2048}) {
    EXPECT_TRUE(has(msg, "[BLOCK=" + std::to_string(block) + ", num_warps=8]")) << msg;
    EXPECT_TRUE(has(msg, "launch failed for BLOCK " + std::to_string(block))) << msg;
  }
  EXPECT_FALSE(has(msg, "num_warps=4")) << "pruned configs are not listed: " << msg;
  // Config 0 was not silently run afterwards, nothing was stored, nothing remembered.
  EXPECT_EQ(p->calls.size(), 4U); // the first warmup run of each candidate threw
  EXPECT_EQ(json_files(), 0U);
  EXPECT_EQ(scale.tuner().find(key{1024, "f32"}), nullptr);
  // The next call tries again rather than replaying a failure.
  EXPECT_FALSE(error_of([&] { static_cast<void>(scale(1024)); }).empty());
  EXPECT_EQ(meas->candidates_measured(), 8U);
}

TEST_F(tuner_test, empty_space_is_an_error) {
  const std::string msg =
      error_of([&] { static_cast<void>(make_scale(p, opts(), config_space{})); });
  EXPECT_TRUE(has(msg, "'scale'")) << msg;
  EXPECT_TRUE(has(msg, "empty")) << msg;
}

TEST_F(tuner_test, prune_removing_everything_is_an_error) {
  auto scale = make_scale(p, opts());
  const std::string msg = error_of([&] { static_cast<void>(scale(100)); });
  EXPECT_TRUE(has(msg, "'scale'")) << msg;
  EXPECT_TRUE(has(msg, "(100)")) << msg;
  EXPECT_TRUE(has(msg, "prune_fn")) << msg;
  EXPECT_TRUE(has(msg, "all 8")) << msg;
  EXPECT_TRUE(p->calls.empty());
  EXPECT_EQ(meas->candidates_measured(), 0U);
}

TEST_F(tuner_test, prune_removing_everything_gives_no_cache_warning_first) {
  // A stored winner for key (100), tuned when the prune still kept configs.
  auto keep = tunekit::autotune(
      "scale", block_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &) { return 0; }, opts());
  keep(100);
  ASSERT_EQ(json_files(), 1U);
  log.clear();
  auto scale = make_scale(p, opts());
  const std::string msg = error_of([&] { static_cast<void>(scale(100)); });
  EXPECT_TRUE(has(msg, "prune_fn")) << msg;
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(tuner_test, throwing_prune_is_an_error_naming_the_config) {
  auto scale = tunekit::autotune(
      "scale", block_space(), [](int n) { return key{n}; },
      [](const config &c, int) -> bool {
        if (c.get_int("BLOCK") == 1024) {
          throw std::runtime_error("shape unsupported");
        }
        return true;
      },
      [](int, const config &) { return 0; }, opts());
  const std::string msg = error_of([&] { static_cast<void>(scale(4096)); });
  EXPECT_TRUE(has(msg, "'scale'")) << msg;
  EXPECT_TRUE(has(msg, "prune_fn")) << msg;
  EXPECT_TRUE(has(msg, "BLOCK=1024, num_warps=4")) << msg;
  EXPECT_TRUE(has(msg, "shape unsupported")) << msg;
  EXPECT_EQ(meas->candidates_measured(), 0U);
}

TEST_F(tuner_test, throwing_key_fn_is_an_error_naming_the_tuner) {
  auto scale = tunekit::autotune(
      "scale", block_space(),
      [](int n) -> key {
        if (n < 0) {
          throw std::invalid_argument("negative length");
        }
        return key{n};
      },
      tunekit::keep_all{},
      [p = p](int, const config &c) {
        p->calls.push_back(c);
        return 0;
      },
      opts());
  const std::string msg = error_of([&] { static_cast<void>(scale(-1)); });
  EXPECT_TRUE(has(msg, "'scale'")) << msg;
  EXPECT_TRUE(has(msg, "key_fn")) << msg;
  EXPECT_TRUE(has(msg, "negative length")) << msg;
  EXPECT_TRUE(p->calls.empty());
  EXPECT_EQ(meas->candidates_measured(), 0U);
}

TEST_F(tuner_test, tuner_construction_errors) {
  EXPECT_THROW(tunekit::tuner("", block_space(), opts()), tunekit::error);
  auto o = opts();
  o.policy.runs = 0;
  EXPECT_TRUE(has(error_of([&] { tunekit::tuner t("scale", block_space(), o); }), "'scale'"));
  o = opts();
  o.policy.warmup = -1;
  EXPECT_THROW(tunekit::tuner("scale", block_space(), o), tunekit::error);
}

TEST_F(tuner_test, fatal_candidate_error_stops_tuning_at_once) {
  auto scale = tunekit::autotune(
      "scale", block_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
      [p = p](int, const config &c) {
        p->calls.push_back(c);
        if (c.get_int("BLOCK") == 256 && c.get_int("num_warps") == 8) {
          throw tunekit::fatal_candidate_error("an illegal memory access was encountered");
        }
        return 0;
      },
      opts());
  try {
    static_cast<void>(scale(1024));
    FAIL() << "no fatal_candidate_error";
  } catch (const tunekit::fatal_candidate_error &e) {
    const std::string msg = e.what();
    EXPECT_TRUE(has(msg, "'scale'")) << msg;
    EXPECT_TRUE(has(msg, "(1024)")) << msg;
    EXPECT_TRUE(has(msg, "BLOCK=256, num_warps=8")) << msg;
    EXPECT_TRUE(has(msg, "illegal memory access")) << msg;
  }
  // Candidate #0 ran fully, #1 threw on its first warmup run, nothing after it ran.
  EXPECT_EQ(meas->candidates_measured(), 2U);
  EXPECT_EQ(p->calls.size(), 15U + 1U);
  EXPECT_EQ(json_files(), 0U);
  EXPECT_EQ(scale.tuner().find(key{1024}), nullptr);
  EXPECT_EQ(scale.tuner().searches(), 0U);
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

namespace {
// Fixed samples per config: "spiky" has a low minimum but a high mean.
class fixed_measurer final : public tunekit::measurer {
public:
  std::vector<double> measure(const tunekit::candidate_info &info,
                              tunekit::detail::function_ref<void()> run,
                              const tunekit::measure_policy & /*policy*/) override {
    run();
    if (info.config.get_string("algo") == "spiky") {
      return {1.0, 1.0, 10.0};
    }
    return {2.0, 2.0, 2.0};
  }
  [[nodiscard]] std::string name() const override { return "fixed"; }
};

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

TEST_F(tuner_test, without_disk_cache_nothing_is_written_or_read) {
  auto o = opts();
  o.use_disk_cache = false;
  static_cast<void>(make_scale(p, o)(1024));
  EXPECT_TRUE(tunekit_test::files_below(dir.path()).empty());
  auto again = make_scale(p, o);
  static_cast<void>(again(1024));
  EXPECT_EQ(again.tuner().last_source(), source::search);
  EXPECT_EQ(meas->candidates_measured(), 12U);
}

TEST_F(tuner_test, forget_drops_memory_and_the_cache_answers) {
  auto scale = make_scale(p, opts());
  static_cast<void>(scale(1024));
  scale.tuner().forget();
  EXPECT_EQ(scale.tuner().find(key{1024}), nullptr);
  static_cast<void>(scale(1024));
  EXPECT_EQ(scale.tuner().last_source(), source::cache);
  EXPECT_EQ(meas->candidates_measured(), 6U);
  EXPECT_EQ(p->calls.back(), fastest);
}

TEST_F(tuner_test, many_keys_are_remembered) {
  auto o = opts();
  o.use_disk_cache = false;
  auto scale = make_scale(p, o);
  for (int n = 256; n < 256 + 40; ++n) {
    static_cast<void>(scale(n));
  }
  EXPECT_EQ(scale.tuner().searches(), 40U);
  for (int n = 256; n < 256 + 40; ++n) {
    const config *c = scale.tuner().find(key{n});
    ASSERT_NE(c, nullptr) << n;
    EXPECT_EQ(*c, (config{{"BLOCK", 256}, {"num_warps", 4}}));
  }
  const auto measured = meas->candidates_measured();
  for (int n = 256; n < 256 + 40; ++n) {
    static_cast<void>(scale(n));
  }
  EXPECT_EQ(meas->candidates_measured(), measured);
}

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

TEST_F(tuner_test, void_function_writing_through_a_reference_argument) {
  // A launcher's shape: no result, an output argument, a key built as a vector of values.
  auto f = tunekit::autotune(
      "fill", block_space(),
      [](const std::vector<int> &out, int value) {
        return std::vector<tunekit::value>{static_cast<std::int64_t>(out.size()), value > 0};
      },
      tunekit::keep_all{},
      [](std::vector<int> &out, int value, const config &c) {
        for (auto &x : out) {
          x = value + static_cast<int>(c.get_int("BLOCK"));
        }
      },
      opts());
  std::vector<int> out(8, 0);
  int value = 1;
  f(out, value);
  EXPECT_EQ(out, std::vector<int>(8, 513)); // the last call ran the winner, BLOCK=512
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, (key{8, true}));
  value = 2;
  f(out, value);
  EXPECT_EQ(out, std::vector<int>(8, 514));
  EXPECT_EQ(f.tuner().last_source(), source::memory);
}

TEST_F(tuner_test, source_names) {
  EXPECT_EQ(tunekit::to_string(source::memory), "memory");
  EXPECT_EQ(tunekit::to_string(source::cache), "cache");
  EXPECT_EQ(tunekit::to_string(source::artifact), "artifact");
  EXPECT_EQ(tunekit::to_string(source::table), "table");
  EXPECT_EQ(tunekit::to_string(source::default_config), "default");
  EXPECT_EQ(tunekit::to_string(source::search), "search");
  EXPECT_EQ(tunekit::to_string(source::disabled), "disabled");
}

namespace {
// A job of two ranks seen from one of them: the other rank's timings are `other` (+inf: that
// candidate failed there). Agreement collectives see identical digests and proposals.
class two_rank_communicator final : public tunekit::communicator {
public:
  two_rank_communicator(int rank, std::vector<double> other)
      : m_rank(rank), m_other(std::move(other)) {}
  [[nodiscard]] int rank() const override { return m_rank; }
  [[nodiscard]] int size() const override { return 2; }
  void all_reduce_max(std::span<double> values) override {
    ++max_calls;
    // The timing reduction: one time per kept candidate, then the "a rank failed fatally" flag.
    if (values.size() == m_other.size() + 1) {
      for (std::size_t i = 0; i < m_other.size(); ++i) {
        values[i] = std::max(values[i], m_other[i]);
      }
    }
  }
  void all_reduce_min(std::span<double> /*values*/) override { ++min_calls; }
  void broadcast(std::span<std::byte> /*bytes*/, int /*root*/) override {}
  void barrier() override {}
  int max_calls = 0;
  int min_calls = 0;

private:
  int m_rank;
  std::vector<double> m_other;
};
} // namespace

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
