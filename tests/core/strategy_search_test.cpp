// A tuner's search over a space larger than its budget: a strategy chooses what to measure, the
// cache entry and the tuning log record how, transfer starts it from other keys' winners, and a
// candidate preparer sees each batch before it is measured.

#include "test_support.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using tunekit::config;
using tunekit::config_space;
using tunekit::key;
using tunekit::source;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

namespace {

// 8^4 = 4096 configs; the optimum is at (a, b, c, d) = (5, 2, 6, 3) scaled by the key's n.
config_space big_space() {
  std::vector<tunekit::value> v;
  for (int i = 0; i < 8; ++i) {
    v.emplace_back(i);
  }
  return config_space::product({{"a", v}, {"b", v}, {"c", v}, {"d", v}});
}

double bowl(const config &c, const key &k) {
  const auto n = k.size() > 0 ? k[0].as_int() % 3 : 0;
  auto at = [&](const char *name, std::int64_t best) {
    const auto d = static_cast<double>(c.get_int(name) - best);
    return d * d;
  };
  return 1.0 + at("a", 5 - n) + 0.5 * at("b", 2) + at("c", 6) + 0.25 * at("d", 3);
}

// Records the order in which configs are measured.
struct order_log {
  std::shared_ptr<std::vector<config>> seen = std::make_shared<std::vector<config>>();
  [[nodiscard]] tunekit::simulated_measurer::cost_function cost() const {
    return [seen = seen](const config &c, const key &k) {
      seen->push_back(c);
      return bowl(c, k);
    };
  }
};

class strategy_search : public ::testing::Test {
protected:
  tunekit::tuner_options opts(std::size_t budget, tunekit::simulated_measurer::cost_function cost) {
    meas = std::make_shared<tunekit::simulated_measurer>(std::move(cost));
    auto o = tunekit_test::options(cache.path(), meas, log);
    o.search.budget.max_evaluations = budget;
    o.search.seed = 7;
    return o;
  }
  static auto make(tunekit::tuner_options o) {
    return tunekit::autotune(
        "bowl", big_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
        [](int /*n*/, const config &c) { return c.get_int("a"); }, std::move(o));
  }
  // Tunes key 3 within 40 evaluations with transfer from the cache: the configs in the order
  // measured, and the start and transfer points measured.
  std::pair<std::vector<config>, std::size_t> transfer_run() {
    order_log order;
    auto o = opts(40, order.cost());
    o.search.transfer_from_cache = true;
    auto g = make(o);
    static_cast<void>(g(3));
    return {*order.seen, g.tuner().last_search()->search->transferred};
  }
  temp_dir cache;
  log_capture log;
  std::shared_ptr<tunekit::simulated_measurer> meas;
};

TEST_F(strategy_search, a_space_beyond_the_budget_is_searched_within_it) {
  auto f = make(opts(100, bowl));
  EXPECT_EQ(f(3), 5);
  EXPECT_EQ(f.tuner().last_source(), source::search);
  EXPECT_LE(meas->candidates_measured(), 100U);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  ASSERT_TRUE(e->search.has_value());
  EXPECT_EQ(e->search->strategy, "hybrid");
  EXPECT_EQ(e->search->seed, 7U);
  EXPECT_EQ(e->search->max_evaluations, 100U);
  EXPECT_EQ(e->search->space_size, 4096U);
  EXPECT_EQ(e->search->evaluations, e->candidates.size());
  EXPECT_EQ(e->search->evaluations, meas->candidates_measured());
  EXPECT_EQ(e->search->stop, "evaluations");
  // The optimum of this smooth bowl is found within 100 of 4096.
  EXPECT_EQ(e->winner, (config{{"a", 5}, {"b", 2}, {"c", 6}, {"d", 3}})) << e->winner.to_string();
  // The log says how the candidates were chosen; the entry reads back with its search record.
  const auto path = f.tuner().cache_path(key{3});
  const std::string log_text =
      tunekit_test::read_text(path.parent_path() / (path.stem().string() + ".log"));
  EXPECT_NE(log_text.find("strategy hybrid seed 7: " + std::to_string(e->search->evaluations) +
                          " of 4096 candidates measured"),
            std::string::npos)
      << log_text;
  const auto back = tunekit::cache_entry_from_json(tunekit_test::read_text(path));
  EXPECT_EQ(back.search, e->search);
  // A second tuner is answered by the cache.
  auto g = make(opts(100, bowl));
  EXPECT_EQ(g(3), 5);
  EXPECT_EQ(g.tuner().last_source(), source::cache);
  EXPECT_EQ(meas->candidates_measured(), 0U);
}

TEST_F(strategy_search, a_space_within_the_budget_is_measured_whole) {
  auto f = make(opts(4096, bowl));
  EXPECT_EQ(f(3), 5);
  EXPECT_EQ(meas->candidates_measured(), 4096U);
  EXPECT_FALSE(f.tuner().last_search()->search.has_value());
}

TEST_F(strategy_search, the_same_seed_measures_the_same_candidates) {
  order_log first;
  order_log second;
  auto f = make(opts(60, first.cost()));
  static_cast<void>(f(3));
  temp_dir other;
  auto o = opts(60, second.cost());
  o.process->env.cache_dir = other.path();
  auto g = make(o);
  static_cast<void>(g(3));
  ASSERT_FALSE(first.seen->empty());
  EXPECT_EQ(*first.seen, *second.seen);
}

TEST_F(strategy_search, the_entry_records_the_order_of_measurement) {
  order_log order;
  auto f = make(opts(40, order.cost()));
  static_cast<void>(f(3));
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value() && e->search.has_value());
  // The candidates are listed in candidate order; `order` says which was measured when.
  ASSERT_EQ(e->search->order.size(), order.seen->size());
  for (std::size_t i = 0; i < order.seen->size(); ++i) {
    EXPECT_EQ(e->candidates[e->search->order[i]].config, (*order.seen)[i]) << i;
  }
  const auto back =
      tunekit::cache_entry_from_json(tunekit_test::read_text(f.tuner().cache_path(key{3})));
  EXPECT_EQ(back.search->order, e->search->order);
}

TEST_F(strategy_search, a_bad_order_is_refused) {
  auto f = make(opts(40, bowl));
  static_cast<void>(f(3));
  auto j = nlohmann::json::parse(tunekit_test::read_text(f.tuner().cache_path(key{3})));
  for (const auto &bad : {nlohmann::json::array({0, 0}), nlohmann::json::array({-1}),
                          nlohmann::json::array({40}), nlohmann::json("0")}) {
    j["search"]["order"] = bad;
    EXPECT_THROW(static_cast<void>(tunekit::cache_entry_from_json(j.dump())), tunekit::error)
        << bad.dump();
  }
}

TEST_F(strategy_search, start_configs_are_measured_first) {
  order_log order;
  auto o = opts(50, order.cost());
  const config start{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}};
  o.search.start_configs = {start, config{{"nope", 1}}};
  auto f = make(o);
  static_cast<void>(f(3));
  ASSERT_FALSE(order.seen->empty());
  EXPECT_EQ(order.seen->front(), start);
  EXPECT_EQ(f.tuner().last_search()->search->transferred, 1U);
}

TEST_F(strategy_search, transfer_starts_from_the_winners_of_other_keys) {
  auto f = make(opts(100, bowl));
  EXPECT_EQ(f(4), 4); // key 4 shifts the optimum to a = 4
  const config other_winner = f.tuner().last_search()->winner;
  const auto [seen, transferred] = transfer_run();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), other_winner);
  // The winner and the two fastest candidates not one parameter from a faster one taken.
  ASSERT_EQ(transferred, 3U);
  ASSERT_GE(seen.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = i + 1; j < 3; ++j) {
      int differ = 0;
      for (const char *p : {"a", "b", "c", "d"}) {
        differ += seen[i].get_int(p) != seen[j].get_int(p) ? 1 : 0;
      }
      EXPECT_GE(differ, 2) << seen[i].to_string() << " and " << seen[j].to_string();
    }
  }
  // Without the option nothing is transferred.
  temp_dir other;
  auto p = opts(40, bowl);
  p.process->env.cache_dir = other.path();
  auto h = make(p);
  static_cast<void>(h(3));
  EXPECT_EQ(h.tuner().last_search()->search->transferred, 0U);
}

// Entries of this hardware for other keys are the first sources, whatever their paths: only the
// first three sources' first points are measured before one agrees.
TEST_F(strategy_search, transfer_takes_this_hardwares_entries_before_other_hardwares) {
  auto f = make(opts(100, bowl));
  EXPECT_EQ(f(4), 4);
  const auto own = *f.tuner().last_search();
  // Four entries of other GPUs for the same key, whose fastest candidates are the slowest here.
  const tunekit::winner_cache stored(cache.path());
  for (int gpu = 0; gpu < 4; ++gpu) {
    auto e = own;
    e.hardware = {.kind = "cuda",
                  .name = "Other GPU " + std::to_string(gpu),
                  .arch = "sm_80",
                  .units = 108 + gpu,
                  .count = 1};
    std::size_t fastest = 0;
    for (std::size_t c = 0; c < e.candidates.size(); ++c) {
      e.candidates[c].time_ms = 1000.0 - e.candidates[c].time_ms;
      fastest = e.candidates[c].time_ms < e.candidates[fastest].time_ms ? c : fastest;
    }
    e.winner = e.candidates[fastest].config;
    e.winner_index = fastest;
    e.rerank.reset();
    static_cast<void>(stored.store(e, ""));
    ASSERT_NE(e.winner, own.winner);
  }
  const auto seen = transfer_run().first;
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), own.winner) << seen.front().to_string();
}

// Among this hardware's entries the nearest key comes first, whatever the paths.
TEST_F(strategy_search, transfer_takes_the_nearest_keys_entries_first) {
  auto f = make(opts(100, bowl));
  for (const int far : {20, 23, 26}) {
    EXPECT_EQ(f(far), 3) << far; // their optimum is at a = 3
  }
  EXPECT_EQ(f(4), 4);
  const config nearest_winner = f.tuner().last_search()->winner;
  const auto seen = transfer_run().first; // key 3: key 4 is 1 away, the others 17 or more
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), nearest_winner) << seen.front().to_string();
}

// Patience holds for a space beyond the evaluation budget and for one that fits it (4096
// candidates within 10,000, measured whole without a limit).
TEST_F(strategy_search, patience_stops_a_search_that_no_longer_improves) {
  for (const std::size_t evaluations : {500U, 10000U}) {
    temp_dir own_cache;
    auto o = opts(evaluations, [](const config &, const key &) { return 1.0; });
    o.process->env.cache_dir = own_cache.path();
    o.search.budget.patience = 10;
    auto f = make(o);
    static_cast<void>(f(3));
    const auto s = f.tuner().last_search()->search;
    ASSERT_TRUE(s.has_value()) << evaluations;
    EXPECT_EQ(s->stop, "patience") << evaluations;
    EXPECT_EQ(s->evaluations, 11U) << evaluations;
  }
}

TEST_F(strategy_search, an_unknown_strategy_is_an_error_naming_it) {
  auto o = opts(10, bowl);
  o.search.strategy = "annealing";
  auto f = make(o);
  try {
    static_cast<void>(f(3));
    FAIL() << "expected an error";
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("annealing"), std::string::npos) << e.what();
  }
}

// A preparer that records the batches it is handed and says each took 2 ms.
class recording_preparer final : public tunekit::candidate_preparer {
public:
  void prepare(std::span<const config> configs) override {
    batches.emplace_back(configs.begin(), configs.end());
  }
  [[nodiscard]] std::optional<double> prepare_ms(const config & /*c*/) const override {
    return 2.0;
  }
  std::vector<std::vector<config>> batches;
};

TEST_F(strategy_search, a_preparer_sees_every_batch_before_it_is_measured) {
  auto prep = std::make_shared<recording_preparer>();
  auto o = opts(4096, bowl);
  o.preparer = prep;
  auto f = make(o);
  static_cast<void>(f(3));
  ASSERT_EQ(prep->batches.size(), 1U); // exhaustive: everything at once, in measuring order
  EXPECT_EQ(prep->batches[0].size(), 4096U);
  EXPECT_EQ(prep->batches[0].front(), big_space()[0]);
  const auto e = f.tuner().last_search();
  EXPECT_EQ(e->candidates[0].prepare_ms, std::optional<double>(2.0));

  auto prep2 = std::make_shared<recording_preparer>();
  temp_dir other;
  auto p = opts(64, bowl);
  p.process->env.cache_dir = other.path();
  p.preparer = prep2;
  p.search.batch_size = 8;
  auto g = make(p);
  static_cast<void>(g(3));
  ASSERT_FALSE(prep2->batches.empty());
  std::size_t total = 0;
  for (const auto &b : prep2->batches) {
    EXPECT_LE(b.size(), 8U);
    total += b.size();
  }
  EXPECT_EQ(total, g.tuner().last_search()->search->evaluations);
  const std::string text = tunekit::tuning_log(*g.tuner().last_search(), 1.0);
  EXPECT_NE(text.find("[prepared in 2 ms]"), std::string::npos) << text;
}

TEST_F(strategy_search, with_lookahead_the_preparer_gets_proposals_before_their_batch) {
  auto prep = std::make_shared<recording_preparer>();
  auto o = opts(64, bowl);
  o.preparer = prep;
  o.search.batch_size = 4;
  o.search.lookahead = 8;
  auto f = make(o);
  static_cast<void>(f(3));
  ASSERT_FALSE(prep->batches.empty());
  // The first hand-over: the first batch and the eight proposed after it.
  EXPECT_EQ(prep->batches.front().size(), 12U);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e->search.has_value());
  EXPECT_EQ(e->search->lookahead, 8U);
  EXPECT_EQ(e->search->evaluations, 64U);
  const std::string text = tunekit::tuning_log(*e, 1.0);
  EXPECT_NE(text.find("batch 4, 8 proposed ahead"), std::string::npos) << text;
  // The entry keeps it.
  const auto back = tunekit::cache_entry_from_json(tunekit::to_json(*e));
  ASSERT_TRUE(back.search.has_value());
  EXPECT_EQ(back.search->lookahead, 8U);
}

// A preparer that compiles each batch before it returns (40 ms a batch, whatever its size).
class slow_preparer final : public tunekit::candidate_preparer {
public:
  void prepare(std::span<const config> /*configs*/) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
  }
  [[nodiscard]] std::optional<double> prepare_ms(const config & /*c*/) const override {
    return 40.0;
  }
};

// A time budget counts the compiles: measuring is free here (the simulated measurer), so only the
// preparer's time can stop the search within 200 ms, after at most six batches of four. The limit
// holds for a space beyond the evaluation budget and for one that fits it (4096 candidates within
// 10,000, measured whole without a limit): then the strategy orders it, so that what is measured
// in time is its choice.
TEST_F(strategy_search, a_time_budget_counts_the_time_spent_preparing) {
  for (const std::size_t evaluations : {1000U, 10000U}) {
    temp_dir own_cache;
    auto o = opts(evaluations, bowl);
    o.process->env.cache_dir = own_cache.path();
    o.preparer = std::make_shared<slow_preparer>();
    o.search.batch_size = 4;
    o.search.budget.max_time = std::chrono::milliseconds(200);
    auto f = make(o);
    static_cast<void>(f(3));
    const auto e = f.tuner().last_search();
    ASSERT_TRUE(e->search.has_value()) << evaluations;
    EXPECT_EQ(e->search->stop, "time") << evaluations;
    EXPECT_LE(e->search->evaluations, 24U) << evaluations;
    EXPECT_GE(e->search->evaluations, 4U) << evaluations;
    EXPECT_EQ(e->candidates.size(), e->search->evaluations) << evaluations;
  }
}

// With time to spare, the limited search measures every candidate and picks the exhaustive
// search's winner.
TEST_F(strategy_search, a_time_limit_that_allows_it_measures_the_whole_space) {
  auto o = opts(10000, bowl);
  o.search.budget.max_time = std::chrono::minutes(10);
  auto f = make(o);
  EXPECT_EQ(f(3), 5);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e->search.has_value());
  EXPECT_EQ(e->search->stop, "exhausted");
  EXPECT_EQ(e->search->evaluations, 4096U);
  EXPECT_EQ(e->candidates.size(), 4096U);
  const auto &w = e->candidates[e->winner_index].config;
  EXPECT_EQ(bowl(w, key{3}), 1.0) << w.to_string();
}

// Candidates whose fields differ share no parameter structure: the budget and the limits still
// hold, by random samples of the list (the start configs first), with a warning that says so.
TEST_F(strategy_search, candidates_without_a_shared_structure_are_sampled_within_the_budget) {
  std::vector<config> list;
  for (int a = 0; a < 150; ++a) {
    list.push_back(config{{"a", a}});
    list.push_back(config{{"a", a}, {"b", 1}});
  }
  auto cost = [](const config &c, const key &) {
    return 1.0 + std::abs(static_cast<double>(c.get_int("a") - 70)) + (c.contains("b") ? 0.5 : 0.0);
  };
  auto o = opts(40, cost);
  const config start{{"a", 70}};
  o.search.start_configs = {start};
  auto listed = [&](tunekit::tuner_options options) {
    return tunekit::autotune(
        "listed", config_space(list), [](int n) { return key{n}; }, tunekit::keep_all{},
        [](int /*n*/, const config &c) { return c.get_int("a"); }, std::move(options));
  };
  auto f = listed(o);
  EXPECT_EQ(f(3), 70);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e->search.has_value());
  EXPECT_EQ(e->search->strategy, "random");
  EXPECT_EQ(e->search->evaluations, 40U);
  EXPECT_EQ(e->candidates.size(), 40U);
  EXPECT_EQ(e->search->transferred, 1U);
  ASSERT_FALSE(e->search->order.empty());
  EXPECT_EQ(e->candidates[e->search->order.front()].config, start);
  const auto warnings = log.warnings();
  ASSERT_EQ(warnings.size(), 1U) << log.dump();
  EXPECT_NE(warnings[0].find("share no parameter structure"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("at random within the budget"), std::string::npos) << warnings[0];

  // A time limit holds for them too, where they fit the evaluation budget.
  temp_dir own_cache;
  auto p = opts(1000, cost);
  p.process->env.cache_dir = own_cache.path();
  p.search.budget.patience = 5;
  auto g = listed(p);
  static_cast<void>(g(3));
  const auto s = g.tuner().last_search()->search;
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->stop, "patience");
  EXPECT_LT(s->evaluations, 300U);
}

} // namespace
