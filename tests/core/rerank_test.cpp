// The re-rank of a search's leaders (docs/search.md) and the spread of each candidate's runs: a
// scripted measurer whose first timing of a loser is lucky, so that only the re-rank finds the
// real winner; the record in the entry, read back and refused when broken; runs and outliers.

#include "test_support.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

using tunekit::config;
using tunekit::key;
using namespace tunekit_test;

namespace {

// A is 0.98 ms, B 1.00 ms (its first measurement a lucky 0.97), C 2.0 ms, D 0.995 ms (far down the
// list, in the band). Every run is reported; the function still runs.
class lucky_first final : public tunekit::measurer {
public:
  std::vector<double> measure(const tunekit::candidate_info &info,
                              tunekit::detail::function_ref<void()> run,
                              const tunekit::measure_policy &policy) override {
    const std::string algo = info.config.get_string("algo");
    const int seen = calls[algo]++;
    for (int i = 0; i < policy.warmup; ++i) {
      run();
    }
    std::vector<double> out;
    for (int i = 0; i < policy.runs; ++i) {
      run();
      double t = algo == "A" ? 0.98 : algo == "B" ? 1.0 : algo == "D" ? 0.995 : 2.0;
      if (algo == "B" && seen == 0) {
        t = 0.97;
      }
      out.push_back(t + (i % 2 == 0 ? 1e-4 : -1e-4)); // some noise: the re-rank's condition
    }
    return out;
  }
  [[nodiscard]] std::string name() const override { return "scripted"; }
  std::map<std::string, int> calls;
};

class rerank_test : public ::testing::Test {
protected:
  auto make(tunekit::rerank_settings rs = {}) {
    auto o = options(dir.path(), meas, log);
    o.policy = {2, 5, tunekit::statistic::mean};
    o.search.rerank = rs;
    return tunekit::autotune(
        "pick",
        tunekit::config_space({config{{"algo", "A"}}, config{{"algo", "B"}}, config{{"algo", "C"}},
                               config{{"algo", "D"}}}),
        [](int n) { return key{n}; }, tunekit::keep_all{},
        [this](int /*n*/, const config &c) { ran.push_back(c.get_string("algo")); }, o);
  }
  temp_dir dir;
  log_capture log;
  std::shared_ptr<lucky_first> meas = std::make_shared<lucky_first>();
  std::vector<std::string> ran;
};

TEST_F(rerank_test, a_noisy_loser_does_not_win_the_re_rank_decides_and_is_recorded) {
  auto f = make();
  f.with({.verbose = true})(1);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->winner.get_string("algo"), "A");
  EXPECT_EQ(ran.back(), "A"); // the call ran the re-rank's winner
  ASSERT_TRUE(e->rerank);
  const auto &r = *e->rerank;
  // B (0.97), A (0.98), D (0.995) are within 3% of 0.97; C is not. Best first.
  ASSERT_EQ(r.leaders, (std::vector<std::size_t>{1, 0, 3}));
  EXPECT_EQ(r.winner_before, 1U);
  EXPECT_EQ(r.rounds, 3);
  EXPECT_EQ(r.runs, 5);
  EXPECT_NEAR(r.scores[0], 1.0, 1e-4);
  EXPECT_NEAR(r.scores[1], 0.98, 1e-4);
  EXPECT_EQ(r.stats[1].count, 15U);
  // Each leader measured once per round, after the search's one measurement; C never again.
  EXPECT_EQ(meas->calls["A"], 4);
  EXPECT_EQ(meas->calls["B"], 4);
  EXPECT_EQ(meas->calls["D"], 4);
  EXPECT_EQ(meas->calls["C"], 1);
  // The candidates keep the search's times; the spread counts the runs.
  EXPECT_NEAR(e->candidates[1].time_ms, 0.97, 1e-4);
  EXPECT_EQ(e->candidates[1].stats.count, 5U);
  EXPECT_EQ(
      log.count(tunekit::log_level::info, {"re-ranked 3 leaders in 3 interleaved rounds of 5 runs",
                                           "the re-rank's winner replaces [algo=\"B\"]"}),
      1U);
  // The stored entry reads back with its re-rank; a second tuner serves A from it.
  const auto again =
      tunekit::winner_cache(dir.path()).load({"pick", "v1"}, test_hardware(), key{1});
  ASSERT_TRUE(again.found());
  ASSERT_TRUE(again.value->rerank);
  EXPECT_EQ(again.value->rerank->leaders, r.leaders);
  EXPECT_EQ(again.value->rerank->scores, r.scores);
  EXPECT_EQ(again.value->rerank->stats[1].count, 15U);
  auto g = make();
  g(1);
  EXPECT_EQ(g.tuner().last_source(), tunekit::source::cache);
  EXPECT_EQ(ran.back(), "A");
  // A table export puts the winner first even where the search timed another one faster.
  const auto fastest = tunekit::fastest_candidates(*again.value, 2);
  ASSERT_EQ(fastest.size(), 2U);
  EXPECT_EQ(fastest[0]->config.get_string("algo"), "A");
  EXPECT_EQ(fastest[1]->config.get_string("algo"), "B");
}

TEST_F(rerank_test, band_zero_turns_it_off_and_the_lucky_measurement_wins) {
  auto f = make({.band = 0});
  f(1);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->rerank);
  EXPECT_EQ(e->winner.get_string("algo"), "B");
  EXPECT_EQ(meas->calls["A"], 1);
}

TEST_F(rerank_test, leaders_are_capped_and_rounds_and_runs_are_settings) {
  auto f = make({.band = 0.03, .max_leaders = 2, .rounds = 2, .runs = 3});
  f(1);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e && e->rerank);
  EXPECT_EQ(e->rerank->leaders, (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(e->rerank->runs, 3);
  EXPECT_EQ(meas->calls["A"], 3);
  EXPECT_EQ(meas->calls["D"], 1);
  EXPECT_EQ(e->winner.get_string("algo"), "A");
}

TEST_F(rerank_test, a_quick_call_is_not_re_ranked) {
  auto f = make();
  f.with({.effort = tunekit::effort::quick})(1);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->rerank);
}

TEST_F(rerank_test, a_broken_re_rank_record_is_refused_with_the_field_named) {
  auto f = make();
  f(1);
  const auto path = f.tuner().cache_path(key{1});
  const std::string good = read_text(path);
  ASSERT_NE(good.find("\"rerank\""), std::string::npos);
  const auto refuse = [&](const std::string &from, const std::string &to, const std::string &says) {
    std::string bad = good;
    const auto at = bad.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bad.replace(at, from.size(), to);
    try {
      static_cast<void>(tunekit::cache_entry_from_json(bad));
      ADD_FAILURE() << "accepted: " << to;
    } catch (const tunekit::error &err) {
      EXPECT_NE(std::string(err.what()).find(says), std::string::npos) << err.what();
    }
  };
  refuse("\"winner_before\": 1", "\"winner_before\": 9", "'rerank.winner_before' 9");
  refuse("\"index\": 3,", "\"index\": 99,", "'rerank.leaders' must name distinct valid");
  refuse("\"score_ms\": ", "\"score_ms\": -1, \"was\": ", "'rerank.leaders.score_ms'");
  // An entry written before runs and outliers were counted reads, with the count unknown.
  const std::string old =
      std::regex_replace(good, std::regex(R"re(,\s*"count": \d+,\s*"outliers": \d+)re"), "");
  ASSERT_EQ(old.find("\"outliers\""), std::string::npos);
  const auto e = tunekit::cache_entry_from_json(old);
  EXPECT_EQ(e.candidates[0].stats.count, 0U);
  EXPECT_NEAR(e.candidates[0].stats.mean, 0.98, 1e-4);
}

// A and B equal within their noise (B 0.1% slower, runs +-5%): the re-rank cannot tell them
// apart, so the search's winner (B, lucky the first time) stands.
class too_close final : public tunekit::measurer {
public:
  std::vector<double> measure(const tunekit::candidate_info &info,
                              tunekit::detail::function_ref<void()> run,
                              const tunekit::measure_policy &policy) override {
    const std::string algo = info.config.get_string("algo");
    const bool first = seen[algo]++ == 0;
    std::vector<double> out;
    for (int i = 0; i < policy.warmup + policy.runs; ++i) {
      run();
      if (i >= policy.warmup) {
        const double base = algo == "A" ? 0.98 : algo == "B" ? (first ? 0.97 : 0.981) : 2.0;
        out.push_back(base * (i % 2 == 0 ? 1.05 : 0.95));
      }
    }
    return out;
  }
  [[nodiscard]] std::string name() const override { return "scripted"; }
  std::map<std::string, int> seen;
};

TEST(rerank, leaders_it_cannot_tell_apart_keep_the_search_s_winner) {
  temp_dir dir;
  log_capture log;
  auto o = options(dir.path(), std::make_shared<too_close>(), log);
  o.policy = {1, 6, tunekit::statistic::mean};
  auto f = tunekit::autotune(
      "close", tunekit::config_space({config{{"algo", "A"}}, config{{"algo", "B"}}}),
      [](int n) { return key{n}; }, tunekit::keep_all{}, [](int, const config &) {}, o);
  f(1);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e && e->rerank);
  EXPECT_LT(e->rerank->scores[1], e->rerank->scores[0]); // A measured a little faster...
  EXPECT_EQ(e->winner.get_string("algo"), "B");          // ...but within the noise
}

TEST(default_candidate, the_entry_says_where_the_default_is_when_it_was_measured) {
  temp_dir dir;
  log_capture log;
  auto meas = std::make_shared<tunekit::simulated_measurer>(
      [](const config &c, const key &) {
        return 1.0 +
               static_cast<double>(std::abs(c.get_int("X") - 60) + std::abs(c.get_int("Y") - 50));
      },
      0.0, 1);
  std::vector<tunekit::value> xs;
  std::vector<tunekit::value> ys;
  for (std::int64_t v = 0; v < 8; ++v) {
    xs.emplace_back(v * 10);
    ys.emplace_back(v * 10);
  }
  const auto space = tunekit::config_space::product({{"X", xs}, {"Y", ys}});
  const auto tune = [&](std::string name, std::size_t budget) {
    auto o = options(dir.path(), meas, log);
    o.search.budget.max_evaluations = budget;
    o.search.start_configs = {config{{"X", 60}, {"Y", 50}}};
    auto f = tunekit::autotune(
        std::move(name), space, [](int n) { return key{n}; }, tunekit::keep_all{},
        [](int, const config &) {}, o);
    f(1);
    return std::pair{*f.tuner().last_search(), f.tuner().cache_path(key{1})};
  };
  // Measured whole: the first candidate is the default, and the entry says so.
  const auto [whole, path] = tune("whole", 1000);
  ASSERT_TRUE(whole.space && whole.space->default_candidate);
  EXPECT_EQ(*whole.space->default_candidate, 0U);
  EXPECT_EQ(whole.candidates[0].config, (config{{"X", 0}, {"Y", 0}}));
  const auto back = tunekit::cache_entry_from_json(read_text(path));
  ASSERT_TRUE(back.space && back.space->default_candidate);
  EXPECT_EQ(*back.space->default_candidate, 0U);
  // A strategy near the best never measured the default: nothing is said.
  const auto [part, unused] = tune("part", 4);
  static_cast<void>(unused);
  ASSERT_TRUE(part.space);
  EXPECT_NE(part.candidates[0].config, (config{{"X", 0}, {"Y", 0}}));
  EXPECT_FALSE(part.space->default_candidate);
}

TEST(sample_stats, runs_and_outliers_are_counted_and_old_entries_still_read) {
  const auto st = tunekit::summarize({1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.03, 0.97, 1.0, 10.0});
  EXPECT_EQ(st.count, 10U);
  EXPECT_EQ(st.outliers, 1U);                                  // the 10 ms run
  EXPECT_EQ(tunekit::summarize({1.0, 2.0, 3.0}).outliers, 0U); // too few runs to tell
  EXPECT_EQ(tunekit::summarize({1.0, 2.0, 3.0}).count, 3U);
}

} // namespace
