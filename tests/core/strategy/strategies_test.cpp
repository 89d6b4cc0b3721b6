#include <tunekit/error.hpp>
#include <tunekit/strategy/run_search.hpp>

#include <gtest/gtest.h>

#include <set>

namespace {

using tunekit::config;
using tunekit::search_space;

// A smooth bowl over a constrained product: 8 x 8 x 6 x 2 = 768 points, about 40% valid
// ((X + Y) % 5 < 2), one optimum at X = 5, Y = 6, Z = 4, W = 1.
search_space bowl_space() {
  std::vector<tunekit::value> eight = {0, 1, 2, 3, 4, 5, 6, 7};
  return search_space::product(
      {{"X", eight}, {"Y", eight}, {"Z", {0, 1, 2, 3, 4, 5}}, {"W", {false, true}}},
      {[](const config &c) { return (c.get_int("X") + c.get_int("Y")) % 5 < 2; }});
}

double bowl_time(const search_space &s, std::size_t i) {
  const auto c = s.to_config(i);
  const double dx = static_cast<double>(c.get_int("X") - 5);
  const double dy = static_cast<double>(c.get_int("Y") - 6);
  const double dz = static_cast<double>(c.get_int("Z") - 4);
  return 1.0 + dx * dx + 0.5 * dy * dy + dz * dz + (c.get_bool("W") ? 0.0 : 3.0);
}

tunekit::batch_evaluator bowl(const search_space &s) {
  return [&s](std::span<const std::size_t> batch) {
    std::vector<double> out;
    for (auto i : batch) {
      out.push_back(bowl_time(s, i));
    }
    return out;
  };
}

class each_strategy : public ::testing::TestWithParam<std::string> {};

TEST_P(each_strategy, finds_the_optimum_of_a_small_constrained_space) {
  auto s = bowl_space();
  const std::size_t valid = s.valid_indices().size();
  const std::size_t optimum = *s.index_of({{"X", 5}, {"Y", 6}, {"Z", 4}, {"W", true}});
  ASSERT_TRUE(s.is_valid(optimum));
  // Random sampling needs the whole space to be sure; the others find it in a fraction.
  const std::size_t budget = GetParam() == "random" ? valid : valid / 3;
  int found = 0;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    auto strat = tunekit::make_strategy(GetParam());
    tunekit::search_options o;
    o.seed = seed;
    auto r = tunekit::run_search(s, *strat, {.max_evaluations = budget}, bowl(s), o);
    found += r.best_index == optimum ? 1 : 0;
  }
  EXPECT_EQ(found, 5) << GetParam() << " with a budget of " << budget << " of " << valid;
}

TEST_P(each_strategy, proposes_the_same_candidates_for_the_same_seed) {
  auto s = bowl_space();
  for (std::size_t batch : {1U, 4U}) {
    std::vector<std::vector<std::size_t>> runs;
    for (int rep = 0; rep < 2; ++rep) {
      auto strat = tunekit::make_strategy(GetParam());
      tunekit::search_options o;
      o.seed = 42;
      o.batch_size = batch;
      auto r = tunekit::run_search(s, *strat, {.max_evaluations = 60}, bowl(s), o);
      std::vector<std::size_t> order;
      for (const auto &e : r.history) {
        order.push_back(e.index);
      }
      runs.push_back(order);
    }
    EXPECT_EQ(runs[0], runs[1]) << GetParam() << " batch " << batch;
  }
  auto a = tunekit::make_strategy(GetParam());
  auto b = tunekit::make_strategy(GetParam());
  tunekit::search_options o1;
  o1.seed = 1;
  tunekit::search_options o2;
  o2.seed = 2;
  auto r1 = tunekit::run_search(s, *a, {.max_evaluations = 30}, bowl(s), o1);
  auto r2 = tunekit::run_search(s, *b, {.max_evaluations = 30}, bowl(s), o2);
  std::vector<std::size_t> h1;
  std::vector<std::size_t> h2;
  for (std::size_t k = 0; k < 30; ++k) {
    h1.push_back(r1.history[k].index);
    h2.push_back(r2.history[k].index);
  }
  EXPECT_NE(h1, h2) << GetParam() << ": different seeds should explore differently";
}

TEST_P(each_strategy, measures_every_config_of_a_tiny_space_once_then_stops) {
  std::vector<config> list = {{{"A", 1}}, {{"A", 2}}, {{"A", 3}}, {{"A", 5}}, {{"A", 8}}};
  auto s = search_space::from_configs(list);
  auto strat = tunekit::make_strategy(GetParam());
  auto r =
      tunekit::run_search(s, *strat, {.max_evaluations = 100}, [&](std::span<const std::size_t> b) {
        std::vector<double> out;
        for (auto i : b) {
          out.push_back(static_cast<double>(s.to_config(i).get_int("A")));
        }
        return out;
      });
  EXPECT_EQ(r.evaluations, 5U);
  EXPECT_EQ(r.stop, tunekit::search_stop::exhausted);
  EXPECT_EQ(s.to_config(*r.best_index), (config{{"A", 1}}));
}

TEST_P(each_strategy, starts_from_transferred_winners) {
  auto s = bowl_space();
  const std::size_t optimum = *s.index_of({{"X", 5}, {"Y", 6}, {"Z", 4}, {"W", true}});
  auto strat = tunekit::make_strategy(GetParam());
  tunekit::search_options o;
  o.start_points = tunekit::transfer_indices(s, std::vector<config>{s.to_config(optimum)});
  auto r = tunekit::run_search(s, *strat, {.max_evaluations = 3}, bowl(s), o);
  EXPECT_EQ(r.history.front().index, optimum);
  EXPECT_EQ(r.best_index, optimum);
}

TEST_P(each_strategy, survives_a_space_where_every_config_fails) {
  auto s = bowl_space();
  auto strat = tunekit::make_strategy(GetParam());
  auto r =
      tunekit::run_search(s, *strat, {.max_evaluations = 40}, [](std::span<const std::size_t> b) {
        return std::vector<double>(b.size(), std::numeric_limits<double>::infinity());
      });
  EXPECT_EQ(r.evaluations, 40U);
  EXPECT_FALSE(r.best_index.has_value());
}

INSTANTIATE_TEST_SUITE_P(strategies, each_strategy, ::testing::ValuesIn(tunekit::strategy_names()),
                         [](const auto &p) { return p.param; });

// Batches wider than one after a restart of the model (a plateau stalls it for good): every
// strategy keeps proposing distinct valid configs until the budget is spent, whatever the batch.
TEST_P(each_strategy, keeps_proposing_in_wide_batches_on_a_plateau) {
  std::vector<tunekit::value> eight = {0, 1, 2, 3, 4, 5, 6, 7};
  auto s = search_space::product({{"A", eight}, {"B", eight}, {"C", eight}, {"D", eight}}, {});
  for (const std::size_t batch : {4U, 16U, 64U}) {
    auto strat = tunekit::make_strategy(GetParam());
    tunekit::search_options o;
    o.batch_size = batch;
    std::set<std::size_t> proposed;
    auto r = tunekit::run_search(
        s, *strat, {.max_evaluations = 400},
        [&](std::span<const std::size_t> b) {
          proposed.insert(b.begin(), b.end());
          return std::vector<double>(b.size(), 2.0);
        },
        o);
    EXPECT_EQ(r.evaluations, 400U) << GetParam() << " batch " << batch;
    EXPECT_EQ(proposed.size(), 400U) << GetParam() << " batch " << batch;
  }
}

TEST(make_strategy, names_the_known_strategies_for_an_unknown_name) {
  try {
    (void)tunekit::make_strategy("annealing");
    FAIL();
  } catch (const tunekit::error &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'annealing'"), std::string::npos);
    EXPECT_NE(what.find("hybrid"), std::string::npos);
  }
  EXPECT_EQ(tunekit::strategy_names().front(), tunekit::default_strategy_name);
}

TEST(make_strategy, makes_every_listed_strategy_under_its_own_name) {
  const auto names = tunekit::strategy_names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const auto &name : names) {
    auto strat = tunekit::make_strategy(name);
    ASSERT_NE(strat, nullptr) << name;
    EXPECT_EQ(strat->name(), name);
  }
}

} // namespace
