#include <tunekit/error.hpp>
#include <tunekit/strategy/run_search.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <thread>
#include <utility>

namespace {

using tunekit::config;
using tunekit::search_space;

// 8 x 8 = 64 points, all valid; time = distance to (5, 2) plus one.
search_space grid() {
  return search_space::product({{"X", {0, 1, 2, 3, 4, 5, 6, 7}}, {"Y", {0, 1, 2, 3, 4, 5, 6, 7}}});
}

double bowl(const search_space &s, std::size_t i) {
  const auto c = s.to_config(i);
  const double dx = static_cast<double>(c.get_int("X") - 5);
  const double dy = static_cast<double>(c.get_int("Y") - 2);
  return 1.0 + dx * dx + dy * dy;
}

tunekit::batch_evaluator counting(const search_space &s, std::vector<std::size_t> &measured,
                                  std::vector<std::size_t> *batch_sizes = nullptr) {
  return [&s, &measured, batch_sizes](std::span<const std::size_t> batch) {
    if (batch_sizes != nullptr) {
      batch_sizes->push_back(batch.size());
    }
    std::vector<double> out;
    for (auto i : batch) {
      measured.push_back(i);
      out.push_back(bowl(s, i));
    }
    return out;
  };
}

// Proposes the given indices in order, then nothing.
class scripted final : public tunekit::strategy {
public:
  explicit scripted(std::vector<std::size_t> plan) : m_plan(std::move(plan)) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "scripted"; }
  void start(const search_space &, std::uint64_t, std::span<const std::size_t> starts) override {
    m_starts.assign(starts.begin(), starts.end());
    m_next = 0;
  }
  [[nodiscard]] std::vector<std::size_t> ask(std::size_t n) override {
    std::vector<std::size_t> out;
    while (out.size() < n && m_next < m_plan.size()) {
      out.push_back(m_plan[m_next++]);
    }
    return out;
  }
  void tell(std::size_t index, double time_ms) override { told.emplace_back(index, time_ms); }
  void expect_transfer() override { transfer_expected_after = told.size(); }

  std::vector<std::pair<std::size_t, double>> told;
  std::vector<std::size_t> m_starts;
  std::optional<std::size_t> transfer_expected_after; // results told before `expect_transfer`

private:
  std::vector<std::size_t> m_plan;
  std::size_t m_next = 0;
};

TEST(run_search, stops_at_the_evaluation_budget) {
  auto s = grid();
  auto strat = tunekit::make_strategy("random");
  std::vector<std::size_t> measured;
  auto r = tunekit::run_search(s, *strat, {.max_evaluations = 10}, counting(s, measured));
  EXPECT_EQ(r.evaluations, 10U);
  EXPECT_EQ(measured.size(), 10U);
  EXPECT_EQ(r.stop, tunekit::search_stop::evaluations);
  ASSERT_EQ(r.trace.size(), 10U);
  EXPECT_TRUE(std::is_sorted(r.trace.rbegin(), r.trace.rend())); // best so far never rises
  EXPECT_EQ(r.best_time_ms, r.trace.back());
  EXPECT_EQ(bowl(s, *r.best_index), r.best_time_ms);
}

TEST(run_search, repeats_are_free_and_told_again) {
  auto s = grid();
  scripted strat({3, 3, 4, 3, 4, 5});
  std::vector<std::size_t> measured;
  auto r = tunekit::run_search(s, strat, {.max_evaluations = 100}, counting(s, measured));
  EXPECT_EQ(measured, (std::vector<std::size_t>{3, 4, 5}));
  EXPECT_EQ(r.evaluations, 3U);
  EXPECT_EQ(r.stop, tunekit::search_stop::exhausted);
  EXPECT_EQ(strat.told.size(), 6U); // every proposal answered, repeats from memory
  EXPECT_EQ(r.proposals, 6U);
}

TEST(run_search, invalid_proposals_fail_without_being_measured_or_counted) {
  auto s = search_space::product({{"A", {1, 2, 3}}},
                                 {[](const config &c) { return c.get_int("A") != 2; }});
  scripted strat({1, 7, 0});
  std::vector<std::size_t> measured;
  auto r =
      tunekit::run_search(s, strat, {.max_evaluations = 10}, [&](std::span<const std::size_t> b) {
        measured.insert(measured.end(), b.begin(), b.end());
        return std::vector<double>(b.size(), 1.0);
      });
  EXPECT_EQ(measured, (std::vector<std::size_t>{0}));
  EXPECT_EQ(r.evaluations, 1U);
  ASSERT_EQ(strat.told.size(), 3U);
  EXPECT_TRUE(std::isinf(strat.told[0].second));
  EXPECT_TRUE(std::isinf(strat.told[1].second));
}

TEST(run_search, patience_stops_after_evaluations_without_improvement) {
  auto s = grid();
  // The optimum (5, 2) first, then six worse configs.
  const std::size_t best = *s.index_of({{"X", 5}, {"Y", 2}});
  scripted strat({best, 0, 1, 2, 3, 4, 5, 6});
  std::vector<std::size_t> measured;
  auto r =
      tunekit::run_search(s, strat, {.max_evaluations = 100, .patience = 4}, counting(s, measured));
  EXPECT_EQ(r.evaluations, 5U);
  EXPECT_EQ(r.stop, tunekit::search_stop::patience);
  EXPECT_EQ(r.best_index, best);
}

TEST(run_search, wall_time_stops_and_asks_for_agreement) {
  auto s = grid();
  auto strat = tunekit::make_strategy("random");
  std::size_t agreements = 0;
  tunekit::search_options o;
  o.agree_stop = [&](bool late) {
    ++agreements;
    return late;
  };
  auto r = tunekit::run_search(
      s, *strat, {.max_evaluations = 64, .max_time = std::chrono::milliseconds(30)},
      [](std::span<const std::size_t> b) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return std::vector<double>(b.size(), 1.0);
      },
      o);
  EXPECT_EQ(r.stop, tunekit::search_stop::time);
  EXPECT_GE(r.evaluations, 2U);
  EXPECT_LT(r.evaluations, 20U);
  EXPECT_EQ(agreements, r.evaluations + 1); // before the first batch and after each
}

// A search of `grid()`, one config per batch, under a wall-time limit of 95 ms on a clock that
// each batch advances by `batch_ms(n)` (n: the batch's number, from 1); `setup` passes on that
// clock before the search, counted when `started` is given. Returns the search and when it ended.
std::pair<tunekit::search_outcome, std::chrono::milliseconds>
timed_search(const std::function<int(std::size_t)> &batch_ms,
             std::chrono::milliseconds setup = std::chrono::milliseconds(0)) {
  auto s = grid();
  auto strat = tunekit::make_strategy("random");
  std::chrono::steady_clock::time_point at{};
  at += setup;
  tunekit::search_options o;
  o.clock = [&] { return at; };
  if (setup.count() > 0) {
    o.started = std::chrono::steady_clock::time_point{};
  }
  std::size_t n = 0;
  auto r = tunekit::run_search(
      s, *strat, {.max_evaluations = 64, .max_time = std::chrono::milliseconds(95)},
      [&](std::span<const std::size_t> b) {
        at += std::chrono::milliseconds(batch_ms(++n));
        return std::vector<double>(b.size(), 1.0);
      },
      o);
  return {std::move(r), std::chrono::duration_cast<std::chrono::milliseconds>(
                            at - std::chrono::steady_clock::time_point{})};
}

// A batch is started only where the recent batches say it ends within the limit: batches of 10 ms
// under a limit of 95 ms stop after nine (90 ms), not after the tenth would have ended at 100 ms.
TEST(run_search, wall_time_starts_no_batch_that_would_end_past_the_limit) {
  const auto [r, ended] = timed_search([](std::size_t) { return 10; });
  EXPECT_EQ(r.stop, tunekit::search_stop::time);
  EXPECT_EQ(r.evaluations, 9U);
  EXPECT_EQ(ended, std::chrono::milliseconds(90));
}

// The budget counts from `started` when given: 50 ms of set-up leave four batches of 10 ms in 95.
TEST(run_search, wall_time_counts_from_the_given_start) {
  const auto [r, ended] =
      timed_search([](std::size_t) { return 10; }, std::chrono::milliseconds(50));
  EXPECT_EQ(r.stop, tunekit::search_stop::time);
  EXPECT_EQ(r.evaluations, 4U);
  EXPECT_EQ(ended, std::chrono::milliseconds(90));
}

// One slow batch among fast ones does not end the search early: the next batch is expected to
// take the median of the last three. The third batch takes 40 ms, the others 10: 90 ms after six,
// and a seventh would end at 100. Expecting the last batch's time would stop after three
// (60 + 40), the mean's after five.
TEST(run_search, one_slow_batch_does_not_end_a_timed_search_early) {
  const auto [r, ended] = timed_search([](std::size_t n) { return n == 3 ? 40 : 10; });
  EXPECT_EQ(r.stop, tunekit::search_stop::time);
  EXPECT_EQ(r.evaluations, 6U);
  EXPECT_EQ(ended, std::chrono::milliseconds(90));
}

TEST(run_search, start_points_come_first_and_invalid_or_repeated_ones_are_skipped) {
  auto s = search_space::product({{"A", {1, 2, 3, 4}}},
                                 {[](const config &c) { return c.get_int("A") != 2; }});
  scripted strat({0, 3});
  tunekit::search_options o;
  o.start_points = {2, 1, 2, 99}; // 1 is invalid (A = 2), 99 is outside the product
  std::vector<std::size_t> measured;
  auto r = tunekit::run_search(
      s, strat, {.max_evaluations = 10},
      [&](std::span<const std::size_t> b) {
        measured.insert(measured.end(), b.begin(), b.end());
        return std::vector<double>(b.size(), 1.0);
      },
      o);
  EXPECT_EQ(strat.m_starts, (std::vector<std::size_t>{2}));
  EXPECT_EQ(measured, (std::vector<std::size_t>{2, 0, 3}));
  EXPECT_EQ(r.evaluations, 3U);
  EXPECT_EQ(r.best_index, 0U); // equal times: the smaller index
}

// `best_index` is the search's own view: a tie goes to the smaller search-space index. In a space
// whose structure was inferred the domains are sorted, so that is not the config listed first
// (which a tuner's winner rule, ties to the lowest candidate index, would pick).
TEST(run_search, a_tie_goes_to_the_smaller_search_space_index_not_the_first_listed) {
  const std::vector<config> listed = {{{"A", 3}}, {{"A", 1}}, {{"A", 2}}};
  const auto s = search_space::from_configs(listed);
  auto strat = tunekit::make_strategy("random");
  auto r =
      tunekit::run_search(s, *strat, {.max_evaluations = 10}, [](std::span<const std::size_t> b) {
        return std::vector<double>(b.size(), 1.0);
      });
  EXPECT_EQ(r.evaluations, 3U);
  ASSERT_TRUE(r.best_index.has_value());
  EXPECT_EQ(*r.best_index, *s.index_of({{"A", 1}}));
  EXPECT_EQ(s.position_of(*r.best_index), 1U); // not position 0, the first listed
}

TEST(run_search, batches_never_exceed_the_batch_size_or_the_budget) {
  auto s = grid();
  auto strat = tunekit::make_strategy("hybrid");
  std::vector<std::size_t> measured;
  std::vector<std::size_t> sizes;
  tunekit::search_options o;
  o.batch_size = 4;
  auto r =
      tunekit::run_search(s, *strat, {.max_evaluations = 18}, counting(s, measured, &sizes), o);
  EXPECT_EQ(r.evaluations, 18U);
  for (auto n : sizes) {
    EXPECT_LE(n, 4U);
  }
  EXPECT_EQ(std::set<std::size_t>(measured.begin(), measured.end()).size(), 18U);
}

TEST(run_search, bad_evaluators_and_settings_are_errors) {
  auto s = grid();
  auto strat = tunekit::make_strategy("random");
  EXPECT_THROW(
      (void)tunekit::run_search(s, *strat, {},
                                [](std::span<const std::size_t>) { return std::vector<double>{}; }),
      tunekit::error);
  tunekit::search_options o;
  o.batch_size = 0;
  std::vector<std::size_t> measured;
  EXPECT_THROW((void)tunekit::run_search(s, *strat, {}, counting(s, measured), o), tunekit::error);
}

TEST(run_search, nan_and_negative_times_count_as_failures) {
  auto s = grid();
  scripted strat({0, 1});
  auto r =
      tunekit::run_search(s, strat, {.max_evaluations = 10}, [](std::span<const std::size_t> b) {
        return std::vector<double>(b.size(), std::nan(""));
      });
  EXPECT_FALSE(r.best_index.has_value());
  EXPECT_TRUE(std::isinf(r.best_time_ms));
  EXPECT_EQ(r.evaluations, 2U);
}

} // namespace

namespace {

TEST(run_search, lookahead_proposes_and_announces_candidates_before_their_batch) {
  auto s = grid();
  // 9 is proposed twice (the second time while it waits in the queue), 64 is invalid.
  scripted strat({1, 2, 3, 9, 4, 9, 64, 5, 6, 7, 8});
  std::vector<std::size_t> proposed;
  std::vector<std::size_t> measured;
  std::vector<std::size_t> sizes;
  std::vector<std::size_t> announced; // proposals announced when each batch was measured
  tunekit::search_options o;
  o.batch_size = 2;
  o.lookahead = 3;
  std::vector<std::size_t> queued_at; // proposals waiting ahead of each announcement's first
  o.on_propose = [&](std::span<const std::size_t> idx, std::size_t queued) {
    queued_at.push_back(queued);
    // Those ahead of them: proposed, not measured yet.
    EXPECT_EQ(queued, proposed.size() - measured.size());
    // Announced before measured: nothing in them has been evaluated yet.
    for (auto i : idx) {
      EXPECT_EQ(std::count(measured.begin(), measured.end(), i), 0) << i;
    }
    proposed.insert(proposed.end(), idx.begin(), idx.end());
  };
  tunekit::batch_evaluator eval = [&](std::span<const std::size_t> batch) {
    sizes.push_back(batch.size());
    announced.push_back(proposed.size());
    std::vector<double> out;
    for (auto i : batch) {
      measured.push_back(i);
      out.push_back(bowl(s, i));
    }
    return out;
  };
  const auto r = tunekit::run_search(s, strat, {.max_evaluations = 7}, eval, o);
  // In the order proposed, each once; the budget caps the proposals too (nothing proposed that
  // the budget cannot measure).
  EXPECT_EQ(measured, (std::vector<std::size_t>{1, 2, 3, 9, 4, 5, 6}));
  EXPECT_EQ(proposed, measured);
  // The first batch (two) is measured with three more already proposed; the budget caps them.
  ASSERT_FALSE(announced.empty());
  EXPECT_EQ(announced.front(), 5U);
  EXPECT_EQ(announced.back(), 7U);
  for (auto n : sizes) {
    EXPECT_LE(n, 2U);
  }
  EXPECT_EQ(r.evaluations, 7U);
  EXPECT_EQ(r.stop, tunekit::search_stop::evaluations);
  // The invalid proposal was told +infinity; the strategy learned every measured time.
  EXPECT_EQ(std::count_if(strat.told.begin(), strat.told.end(),
                          [](const auto &t) { return t.first == 64 && std::isinf(t.second); }),
            1);
}

TEST(run_search, lookahead_measures_what_is_queued_after_the_strategy_runs_dry) {
  auto s = grid();
  scripted strat({10, 11, 12});
  std::vector<std::size_t> measured;
  tunekit::search_options o;
  o.batch_size = 1;
  o.lookahead = 8;
  const auto r = tunekit::run_search(s, strat, {.max_evaluations = 50}, counting(s, measured), o);
  EXPECT_EQ(measured, (std::vector<std::size_t>{10, 11, 12}));
  EXPECT_EQ(r.stop, tunekit::search_stop::exhausted);
}

TEST(run_search, lookahead_is_deterministic_and_zero_is_the_plain_batch) {
  auto s = search_space::product({{"A", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
                                  {"B", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
                                  {"C", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}});
  auto time = [&](std::size_t i) {
    const auto c = s.to_config(i);
    return 1.0 + std::abs(static_cast<double>(c.get_int("A") - 7)) +
           0.5 * std::abs(static_cast<double>(c.get_int("B") - 3)) +
           0.25 * static_cast<double>(c.get_int("C"));
  };
  auto run = [&](std::size_t lookahead) {
    auto strat = tunekit::make_strategy("hybrid");
    tunekit::search_options o;
    o.seed = 3;
    o.batch_size = 4;
    o.lookahead = lookahead;
    return tunekit::run_search(
        s, *strat, {.max_evaluations = 120},
        [&](std::span<const std::size_t> batch) {
          std::vector<double> out;
          for (auto i : batch) {
            out.push_back(time(i));
          }
          return out;
        },
        o);
  };
  auto order = [](const tunekit::search_outcome &r) {
    std::vector<std::size_t> v;
    for (const auto &e : r.history) {
      v.push_back(e.index);
    }
    return v;
  };
  EXPECT_EQ(order(run(6)), order(run(6)));
  EXPECT_NE(order(run(6)), order(run(0))); // the strategy learns later
  EXPECT_EQ(run(6).evaluations, 120U);
}

} // namespace

// A source that measured every config of the grid with `time`.
tunekit::transfer_source source_of(const search_space &s, std::vector<std::size_t> points,
                                   const std::function<double(std::size_t)> &time) {
  tunekit::transfer_source src{.points = std::move(points), .measured = {}};
  for (std::size_t i = 0; i < s.product_size(); ++i) {
    src.measured.push_back({i, time(i)});
  }
  return src;
}

TEST(transfer_agrees, by_the_rank_correlation_over_the_configs_both_measured) {
  auto s = grid();
  const auto same = source_of(s, {0}, [&](std::size_t i) { return 2 * bowl(s, i); });
  const auto reversed = source_of(s, {0}, [&](std::size_t i) { return 100 - bowl(s, i); });
  std::vector<tunekit::search_evaluation> here;
  for (std::size_t i = 1; i < 64; i += 4) { // 16 configs: enough to judge by the correlation
    here.push_back({i, bowl(s, i)});
  }
  EXPECT_TRUE(tunekit::transfer_agrees(same, here));
  EXPECT_FALSE(tunekit::transfer_agrees(reversed, here));
  // With 15 the correlation says too little: its point (not measured here) decides, so no.
  EXPECT_FALSE(tunekit::transfer_agrees(same, std::span(here).first(15)));
  // The threshold is the caller's: a perfect agreement passes 1, nothing passes above it.
  EXPECT_TRUE(tunekit::transfer_agrees(same, here, 1.0));
  EXPECT_FALSE(tunekit::transfer_agrees(same, here, 1.01));
  // Failures here or there are not compared.
  here.push_back({5, std::numeric_limits<double>::infinity()});
  EXPECT_TRUE(tunekit::transfer_agrees(same, here));
}

TEST(transfer_agrees, without_enough_configs_in_common_by_where_its_best_point_ranks_here) {
  auto s = grid();
  const std::size_t good = *s.index_of(config{{"X", 5}, {"Y", 3}}); // time 2
  const std::size_t poor = *s.index_of(config{{"X", 0}, {"Y", 7}}); // time 51
  tunekit::transfer_source src{.points = {good}, .measured = {}};
  std::vector<tunekit::search_evaluation> here;
  for (std::size_t i : std::vector<std::size_t>{good, 9, 20, 33, 47, 58}) {
    here.push_back({i, bowl(s, i)});
  }
  EXPECT_TRUE(tunekit::transfer_agrees(src, here)); // its point is the best here
  src.points = {poor};
  here.push_back({poor, bowl(s, poor)});
  EXPECT_FALSE(tunekit::transfer_agrees(src, here)); // among the worst here
  // Too little measured here to say anything: no agreement.
  src.points = {good};
  EXPECT_FALSE(tunekit::transfer_agrees(src, std::span(here).first(3)));
  // A point not measured here says nothing either.
  src.points = {*s.index_of(config{{"X", 5}, {"Y", 2}})};
  EXPECT_FALSE(tunekit::transfer_agrees(src, here));
}

TEST(transfer_agrees, not_where_its_best_point_is_slower_here_than_what_the_search_found_alone) {
  auto s = grid();
  const std::size_t far = *s.index_of(config{{"X", 1}, {"Y", 7}}); // time 42 here
  const std::size_t optimum = *s.index_of(config{{"X", 5}, {"Y", 2}});
  // It ranks every config as they rank here, but its winner is far from this device's.
  const auto src = source_of(s, {far}, [&](std::size_t i) { return 2 * bowl(s, i); });
  std::vector<tunekit::search_evaluation> here;
  for (std::size_t i = 1; i < 64; i += 4) {
    here.push_back({i, bowl(s, i)});
  }
  EXPECT_TRUE(tunekit::transfer_agrees(src, here)); // its point not measured: the correlation
  here.push_back({far, bowl(s, far)});
  const std::vector<std::size_t> started{far};
  EXPECT_FALSE(tunekit::transfer_agrees(src, here, 0.5, started));
  EXPECT_FALSE(tunekit::transfer_agrees(src, here)); // counted as the search's own, the same
  // Its point within 10% of the best the search found alone: the correlation decides again.
  const auto near = source_of(s, {optimum}, [&](std::size_t i) { return 2 * bowl(s, i); });
  here.push_back({optimum, bowl(s, optimum)});
  EXPECT_TRUE(tunekit::transfer_agrees(near, here, 0.5, std::vector<std::size_t>{optimum}));
}

TEST(transfer_agrees, with_few_configs_in_common_only_against_six_results_of_the_search_its_own) {
  auto s = grid();
  const std::size_t good = *s.index_of(config{{"X", 5}, {"Y", 3}}); // time 2
  const tunekit::transfer_source src{.points = {good}, .measured = {}};
  std::vector<tunekit::search_evaluation> here{{good, bowl(s, good)}};
  for (std::size_t i : std::vector<std::size_t>{9, 20, 33, 47, 58}) {
    here.push_back({i, bowl(s, i)});
  }
  const std::vector<std::size_t> started{good};
  // Its point is the best of six results, but five are the search's own: too few to judge.
  EXPECT_FALSE(tunekit::transfer_agrees(src, here, 0.5, started));
  here.push_back({63, bowl(s, 63)});
  EXPECT_TRUE(tunekit::transfer_agrees(src, here, 0.5, started));
  // A result of the search's own more than 10% faster than its point: no longer.
  const std::size_t optimum = *s.index_of(config{{"X", 5}, {"Y", 2}}); // time 1
  here.push_back({optimum, bowl(s, optimum)});
  EXPECT_FALSE(tunekit::transfer_agrees(src, here, 0.5, started));
}

std::vector<std::size_t> indices_of(const std::vector<tunekit::search_evaluation> &history) {
  std::vector<std::size_t> out;
  for (const auto &e : history) {
    out.push_back(e.index);
  }
  return out;
}

TEST(run_search, a_transfer_source_that_disagrees_costs_its_first_point_and_changes_nothing_else) {
  auto s = grid();
  std::vector<std::size_t> measured;
  // Alone: a search that expects transfer (a source with nothing in it), as the default strategy
  // then picks by expected improvement only.
  auto cold = tunekit::make_strategy("hybrid");
  const auto alone = tunekit::run_search(s, *cold, {.max_evaluations = 30}, counting(s, measured),
                                         {.seed = 4, .transfer = {tunekit::transfer_source{}}});
  EXPECT_EQ(alone.started, 0U);
  // Another device where the order is reversed: its best configs are the worst here.
  const std::size_t far = *s.index_of(config{{"X", 1}, {"Y", 7}});
  const std::size_t far2 = *s.index_of(config{{"X", 0}, {"Y", 6}});
  auto src = source_of(s, {far, far2}, [&](std::size_t i) { return 100 - bowl(s, i); });
  auto warm = tunekit::make_strategy("hybrid");
  const auto with = tunekit::run_search(s, *warm, {.max_evaluations = 31}, counting(s, measured),
                                        {.seed = 4, .transfer = {src}});
  auto order = indices_of(with.history);
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.front(), far);                              // its first point is measured first
  EXPECT_EQ(std::count(order.begin(), order.end(), far2), 0); // its next one never
  EXPECT_EQ(with.agreed_sources, 0U);
  EXPECT_EQ(with.started, 1U);
  // Its result is never told: the strategy proposes what it proposes without its results.
  order.erase(order.begin());
  EXPECT_EQ(order, indices_of(alone.history));
}

TEST(run_search, a_transfer_source_that_agrees_has_its_points_measured_and_told) {
  auto s = grid();
  std::vector<std::size_t> measured;
  const std::size_t a = *s.index_of(config{{"X", 5}, {"Y", 3}});
  const std::size_t b = *s.index_of(config{{"X", 4}, {"Y", 1}});
  const std::size_t c = *s.index_of(config{{"X", 6}, {"Y", 1}});
  auto src = source_of(s, {a, b, c}, [&](std::size_t i) { return 3 * bowl(s, i); });
  scripted plan({0, 9, 18, 27, 36, 45, 54, 63});
  const auto r = tunekit::run_search(s, plan, {.max_evaluations = 11}, counting(s, measured),
                                     {.transfer = {src}});
  const auto order = indices_of(r.history);
  ASSERT_EQ(order.size(), 11U);
  EXPECT_EQ(order.front(), a);
  // Judged once there are results enough: then its points come before the strategy's.
  EXPECT_NE(std::find(order.begin(), order.end(), b), order.end());
  EXPECT_NE(std::find(order.begin(), order.end(), c), order.end());
  EXPECT_EQ(r.agreed_sources, 1U);
  EXPECT_EQ(r.started, 3U);
  // The strategy knew of the source from the start; a search without sources says nothing.
  EXPECT_EQ(plan.transfer_expected_after, std::optional<std::size_t>{0});
  scripted alone({0, 9});
  (void)tunekit::run_search(s, alone, {.max_evaluations = 2}, counting(s, measured));
  EXPECT_FALSE(alone.transfer_expected_after.has_value());
  // Everything measured was told, the first point too.
  std::set<std::size_t> told;
  for (const auto &[i, t] : plan.told) {
    told.insert(i);
  }
  EXPECT_EQ(told, std::set<std::size_t>(order.begin(), order.end()));
}

// A scripted search of 15 evaluations with five sources: the first agrees here (its first point
// is the optimum, its times this device's) if `first_agrees`, the other four are another device's
// (the order reversed), each with its own first point far from the optimum.
struct five_sources_run {
  std::vector<tunekit::transfer_source> sources;
  tunekit::search_outcome outcome;
  std::vector<std::size_t> order; // measured
  std::vector<std::size_t> told;  // told to the strategy
};

five_sources_run run_with_five_sources(const search_space &s, bool first_agrees) {
  const auto reversed = [&](std::size_t i) { return 100 - bowl(s, i); };
  five_sources_run out;
  out.sources.push_back(first_agrees
                            ? source_of(s,
                                        {*s.index_of(config{{"X", 5}, {"Y", 2}}),
                                         *s.index_of(config{{"X", 4}, {"Y", 1}})},
                                        [&](std::size_t i) { return 3 * bowl(s, i); })
                            : source_of(s, {*s.index_of(config{{"X", 2}, {"Y", 7}})}, reversed));
  for (const auto &[x, y] : std::vector<std::pair<int, int>>{{0, 7}, {1, 7}, {0, 6}, {1, 6}}) {
    out.sources.push_back(source_of(s, {*s.index_of(config{{"X", x}, {"Y", y}})}, reversed));
  }
  std::vector<std::size_t> measured;
  scripted plan({0, 9, 18, 27, 36, 45, 54, 63, 12, 21, 30, 39});
  out.outcome = tunekit::run_search(s, plan, {.max_evaluations = 15}, counting(s, measured),
                                    {.transfer = out.sources});
  out.order = indices_of(out.outcome.history);
  for (const auto &[i, t] : plan.told) {
    out.told.push_back(i);
  }
  return out;
}

TEST(run_search, only_three_sources_first_points_are_measured_before_one_agrees) {
  auto s = grid();
  const auto r = run_with_five_sources(s, false);
  ASSERT_EQ(r.order.size(), 15U);
  // The first three sources' first points, then the strategy's; the last two never.
  EXPECT_EQ(std::vector<std::size_t>(r.order.begin(), r.order.begin() + 3),
            (std::vector<std::size_t>{r.sources[0].points[0], r.sources[1].points[0],
                                      r.sources[2].points[0]}));
  for (std::size_t k = 3; k < 5; ++k) {
    EXPECT_EQ(std::count(r.order.begin(), r.order.end(), r.sources[k].points[0]), 0) << k;
  }
  EXPECT_EQ(r.outcome.started, 3U);
  EXPECT_EQ(r.outcome.agreed_sources, 0U);
}

TEST(run_search, the_other_sources_first_points_are_measured_once_one_agrees) {
  auto s = grid();
  const auto r = run_with_five_sources(s, true);
  ASSERT_EQ(r.order.size(), 15U);
  EXPECT_EQ(r.outcome.agreed_sources, 1U);
  // The agreeing source agrees once the search has six results of its own (after the first three
  // sources' first points): then its next point and the waiting sources' first points come.
  for (std::size_t k = 3; k < 5; ++k) {
    const auto at = std::find(r.order.begin(), r.order.end(), r.sources[k].points[0]);
    ASSERT_NE(at, r.order.end()) << k;
    EXPECT_GE(at - r.order.begin(), 9) << k;
  }
  EXPECT_EQ(r.outcome.started, 6U); // five first points and the agreeing source's second
  // The waiting sources' results are withheld like the other disagreeing sources'.
  for (std::size_t k = 1; k < 5; ++k) {
    EXPECT_EQ(std::count(r.told.begin(), r.told.end(), r.sources[k].points[0]), 0) << k;
  }
}

TEST(run_search, transfer_sources_give_the_same_search_for_the_same_seed) {
  auto s = grid();
  std::vector<std::size_t> measured;
  const std::size_t a = *s.index_of(config{{"X", 5}, {"Y", 2}}); // the optimum here
  const std::size_t b = *s.index_of(config{{"X", 1}, {"Y", 1}});
  std::vector<tunekit::transfer_source> sources = {
      source_of(s, {a, b}, [&](std::size_t i) { return bowl(s, i) + 1; }),
      source_of(s, {b, a}, [&](std::size_t i) { return 100 - bowl(s, i); })};
  auto first = tunekit::make_strategy("hybrid");
  auto second = tunekit::make_strategy("hybrid");
  const tunekit::search_options o{.seed = 9, .batch_size = 3, .transfer = sources};
  const auto x = tunekit::run_search(s, *first, {.max_evaluations = 25}, counting(s, measured), o);
  const auto y = tunekit::run_search(s, *second, {.max_evaluations = 25}, counting(s, measured), o);
  EXPECT_EQ(indices_of(x.history), indices_of(y.history));
  EXPECT_EQ(x.agreed_sources, 1U);
  // With sources whose first points wait for an agreement, in batches of three.
  const tunekit::search_options five{
      .seed = 9, .batch_size = 3, .transfer = run_with_five_sources(s, true).sources};
  auto third = tunekit::make_strategy("hybrid");
  auto fourth = tunekit::make_strategy("hybrid");
  const auto u =
      tunekit::run_search(s, *third, {.max_evaluations = 25}, counting(s, measured), five);
  const auto v =
      tunekit::run_search(s, *fourth, {.max_evaluations = 25}, counting(s, measured), five);
  EXPECT_EQ(indices_of(u.history), indices_of(v.history));
  EXPECT_EQ(u.agreed_sources, 1U);
  EXPECT_EQ(u.started, v.started);
}

TEST(run_search, the_strategy_is_told_what_it_proposed_even_a_waiting_sources_point) {
  auto s = grid();
  std::vector<std::size_t> measured;
  const std::size_t far = *s.index_of(config{{"X", 0}, {"Y", 7}});
  const std::size_t far2 = *s.index_of(config{{"X", 0}, {"Y", 6}});
  auto src = source_of(s, {far, far2}, [&](std::size_t i) { return 100 - bowl(s, i); });
  scripted plan({far2, 9, 18});
  const auto r = tunekit::run_search(s, plan, {.max_evaluations = 4}, counting(s, measured),
                                     {.transfer = {src}});
  EXPECT_EQ(indices_of(r.history), (std::vector<std::size_t>{far, far2, 9, 18}));
  std::vector<std::size_t> told;
  for (const auto &[i, t] : plan.told) {
    told.push_back(i);
  }
  // The source's first point stays withheld (it never agrees); the point the strategy proposed is
  // told, though it is the source's too.
  EXPECT_EQ(told, (std::vector<std::size_t>{far2, 9, 18}));
  EXPECT_EQ(r.started, 1U);
}
