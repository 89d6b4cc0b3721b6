// Failures: a candidate that throws or fails is skipped with its reason; nothing valid, an empty
// space, a prune that keeps nothing, a throwing prune_fn or key_fn and a fatal candidate are
// errors naming the tuner and the key.

#include "tuner_fixture.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

using tunekit::candidate_status;
using tunekit::config;
using tunekit::config_space;
using tunekit::key;
using namespace tunekit_test;

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
