// The effort switch: `TUNEKIT_AUTOTUNE=off|cached|quick|full` (the environment a tuner is built
// with) and `call_options::effort` (one call). off runs the default function's config or the
// space's first and touches nothing; cached serves what is stored and never measures; quick
// searches within a small budget; full is the configured search.

#include "tuner_fixture.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

using tunekit::config;
using tunekit::config_space;
using tunekit::effort;
using tunekit::key;
using tunekit::source;
using namespace tunekit_test;

namespace {

const config first_config{{"BLOCK", 256}, {"num_warps", 4}}; // block_space()[0]

class effort_test : public tuner_test {
protected:
  // The fixture's options with `TUNEKIT_AUTOTUNE` as given.
  [[nodiscard]] tunekit::tuner_options with_env(const std::string &autotune) const {
    auto o = opts();
    o.process->env.autotune = autotune;
    return o;
  }
  // A search by a tuner at full effort over the same cache directory: the winner cache then holds
  // `fastest` for key (1024).
  void store_winner() const {
    auto seed_meas = std::make_shared<tunekit::simulated_measurer>(block_cost, 0.02, 1);
    auto seed = make_scale(std::make_shared<probe>(), options(dir.path(), seed_meas, log));
    static_cast<void>(seed(1024));
    ASSERT_EQ(seed.tuner().last_source(), source::search);
    ASSERT_EQ(json_files(), 1U);
  }
};

// 100 configs, x = 0..99; x = 42 is fastest.
config_space hundred() {
  std::vector<tunekit::value> xs;
  for (std::int64_t x = 0; x < 100; ++x) {
    xs.emplace_back(x);
  }
  return config_space::product({{"x", xs}});
}
double hundred_cost(const config &c, const key & /*k*/) {
  const auto x = static_cast<double>(c.get_int("x"));
  return 1.0 + (x > 42 ? x - 42 : 42 - x);
}

// A job of two ranks seen from rank 0, whose other rank holds another stored proposal (`other`:
// a candidate index, or -1 for none) than this one: the vote on the proposal fails.
class disagreeing_communicator final : public tunekit::communicator {
public:
  explicit disagreeing_communicator(double other) : m_other(other) {}
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 2; }
  void all_reduce_min(std::span<double> values) override {
    ++calls;
    if (values.size() == 4) { // the vote: [digest, digest, proposal, failing rank]
      values[2] = std::min(values[2], m_other);
    }
  }
  void all_reduce_max(std::span<double> values) override {
    ++calls;
    if (values.size() == 4) {
      values[2] = std::max(values[2], m_other);
    }
  }
  void broadcast(std::span<std::byte> /*bytes*/, int /*root*/) override {}
  void barrier() override { ++calls; }
  int calls = 0;

private:
  double m_other;
};

} // namespace

TEST(effort, parse_effort_accepts_the_four_names_in_any_case) {
  EXPECT_EQ(tunekit::parse_effort("off"), effort::off);
  EXPECT_EQ(tunekit::parse_effort("CACHED"), effort::cached);
  EXPECT_EQ(tunekit::parse_effort("Quick"), effort::quick);
  EXPECT_EQ(tunekit::parse_effort("full"), effort::full);
  for (const char *bad : {"", "of", "offf", "fast", "full ", "1", "none"}) {
    EXPECT_EQ(tunekit::parse_effort(bad), std::nullopt) << bad;
  }
  for (const effort e : {effort::off, effort::cached, effort::quick, effort::full}) {
    EXPECT_EQ(tunekit::parse_effort(tunekit::to_string(e)), e);
  }
  EXPECT_EQ(tunekit::call_options{}.effort, std::nullopt);
}

TEST(effort, the_environment_keeps_tunekit_autotune_as_written) {
  {
    const scoped_env env({"TUNEKIT_AUTOTUNE"});
    EXPECT_EQ(tunekit::environment::from_env().autotune, "");
  }
  const scoped_env env({}, {{"TUNEKIT_AUTOTUNE", "Quick"}});
  EXPECT_EQ(tunekit::environment::from_env().autotune, "Quick");
}

TEST_F(effort_test, full_and_an_empty_value_search_with_the_configured_budget) {
  for (const std::string level : {"", "full", "FULL"}) {
    const temp_dir cache;
    auto m = std::make_shared<tunekit::simulated_measurer>(block_cost, 0.02, 1);
    auto o = options(cache.path(), m, log);
    o.process->env.autotune = level;
    auto scale = make_scale(std::make_shared<probe>(), o);
    static_cast<void>(scale(1024));
    EXPECT_EQ(scale.tuner().last_source(), source::search) << level;
    EXPECT_EQ(m->candidates_measured(), 6U) << level;
    EXPECT_EQ(m->runs(), 6U * 15U) << level; // 5 warmup + 10 timed runs each
    EXPECT_EQ(*scale.tuner().find(key{1024}), fastest) << level;
  }
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(effort_test, off_runs_the_first_config_and_stores_measures_and_agrees_nothing) {
  two_rank_communicator comm(0, {});
  auto o = with_env("off");
  o.comm = &comm;
  auto scale = make_scale(p, o);
  static_cast<void>(scale(1024));
  static_cast<void>(scale.with({.verbose = true})(1024));
  static_cast<void>(scale(1024)); // never served from memory: nothing was remembered
  ASSERT_EQ(p->calls.size(), 3U);
  for (const auto &c : p->calls) {
    EXPECT_EQ(c, first_config);
  }
  const auto &t = scale.tuner();
  EXPECT_EQ(t.last_source(), source::disabled);
  EXPECT_EQ(meas->candidates_measured(), 0U);
  EXPECT_EQ(t.searches(), 0U);
  EXPECT_EQ(t.find(key{1024}), nullptr);
  EXPECT_EQ(json_files(), 0U);
  EXPECT_EQ(comm.min_calls + comm.max_calls, 0);
  EXPECT_EQ(p->prune_calls, 0);
  EXPECT_EQ(log.count(tunekit::log_level::info, {"effort off: first config"}), 1U) << log.dump();
}

TEST_F(effort_test, off_ignores_a_stored_winner) {
  store_winner();
  auto scale = make_scale(p, with_env("OFF"));
  static_cast<void>(scale(1024));
  ASSERT_EQ(p->calls.size(), 1U);
  EXPECT_EQ(p->calls[0], first_config);
  EXPECT_EQ(scale.tuner().last_source(), source::disabled);
}

TEST_F(effort_test, off_serves_the_default_function_without_storing_it) {
  const config dflt{{"BLOCK", 1024}, {"num_warps", 8}};
  auto scale = make_scale(p, with_env("off")).with_default([&](int) { return dflt; });
  static_cast<void>(scale(1024));
  static_cast<void>(scale(1024));
  ASSERT_EQ(p->calls.size(), 2U);
  EXPECT_EQ(p->calls[0], dflt);
  EXPECT_EQ(p->calls[1], dflt);
  EXPECT_EQ(scale.tuner().last_source(), source::default_config);
  EXPECT_EQ(scale.tuner().find(key{1024}), nullptr);
  EXPECT_EQ(meas->candidates_measured(), 0U);
  EXPECT_EQ(json_files(), 0U);
}

TEST_F(effort_test, off_applies_pinned_values_as_autotune_false_does) {
  auto scale = make_scale(p, with_env("off"));
  const tunekit::call_options pin{.pinned = config{{"alpha", 2}}};
  static_cast<void>(scale.with(pin)(1024));
  static_cast<void>(scale.with(pin)(1024));
  static_cast<void>(scale.with({.autotune = false, .pinned = config{{"alpha", 2}}})(1024));
  ASSERT_EQ(p->calls.size(), 3U);
  const config expected{{"BLOCK", 256}, {"num_warps", 4}, {"alpha", 2}};
  for (const auto &c : p->calls) {
    EXPECT_EQ(c, expected);
  }
  // A pinned config field is refused as with autotune=false.
  EXPECT_NE(error_of([&] {
              static_cast<void>(scale.with({.pinned = config{{"BLOCK", 8}}})(1));
            }),
            "");
  EXPECT_EQ(meas->candidates_measured(), 0U);
}

TEST_F(effort_test, off_makes_no_collective_when_key_fn_throws) {
  two_rank_communicator comm(0, {});
  auto o = with_env("off");
  o.comm = &comm;
  auto f = tunekit::autotune(
      "scale", block_space(), [](int) -> key { throw std::runtime_error("no key"); },
      tunekit::keep_all{}, [](int, const config &) { return 0; }, o);
  EXPECT_NE(error_of([&] { static_cast<void>(f(1)); }).find("key_fn threw: no key"),
            std::string::npos);
  EXPECT_EQ(comm.min_calls + comm.max_calls, 0);
}

TEST_F(effort_test, a_per_call_effort_overrides_the_environment) {
  auto scale = make_scale(p, with_env("off"));
  static_cast<void>(scale.with({.effort = effort::full})(1024));
  EXPECT_EQ(scale.tuner().last_source(), source::search);
  EXPECT_EQ(p->calls.back(), fastest);
  // Plain calls keep the environment's off, though memory now holds a winner.
  static_cast<void>(scale(1024));
  EXPECT_EQ(p->calls.back(), first_config);
  EXPECT_EQ(scale.tuner().last_source(), source::disabled);
  static_cast<void>(scale.with({.effort = effort::cached})(1024));
  EXPECT_EQ(p->calls.back(), fastest);
  EXPECT_EQ(scale.tuner().last_source(), source::memory);

  // And the other way: a per-call off under the default full, after the key was tuned.
  auto other = make_scale(p, opts("v2"));
  static_cast<void>(other(512));
  EXPECT_EQ(other.tuner().last_source(), source::search);
  static_cast<void>(other(512));
  EXPECT_EQ(other.tuner().last_source(), source::memory);
  static_cast<void>(other.with({.effort = effort::off})(512));
  EXPECT_EQ(p->calls.back(), first_config);
  EXPECT_EQ(other.tuner().last_source(), source::disabled);
  EXPECT_EQ(other.tuner().searches(), 1U);
  // autotune=false is stronger than any effort.
  static_cast<void>(other.with({.autotune = false, .effort = effort::full})(256));
  EXPECT_EQ(p->calls.back(), first_config);
  EXPECT_EQ(other.tuner().searches(), 1U);
}

TEST_F(effort_test, cached_serves_a_cache_entry_and_measures_nothing) {
  store_winner();
  auto scale = make_scale(p, with_env("cached"));
  static_cast<void>(scale(1024));
  EXPECT_EQ(p->calls.back(), fastest);
  EXPECT_EQ(scale.tuner().last_source(), source::cache);
  static_cast<void>(scale(1024));
  EXPECT_EQ(scale.tuner().last_source(), source::memory);
  EXPECT_EQ(meas->candidates_measured(), 0U);
  EXPECT_EQ(scale.tuner().searches(), 0U);
  EXPECT_EQ(p->calls.size(), 2U);
}

TEST_F(effort_test, cached_without_a_stored_answer_runs_the_first_config_unremembered) {
  auto scale = make_scale(p, with_env("cached"));
  static_cast<void>(scale(1024));
  static_cast<void>(scale(1024));
  ASSERT_EQ(p->calls.size(), 2U);
  EXPECT_EQ(p->calls[0], first_config);
  EXPECT_EQ(p->calls[1], first_config);
  EXPECT_EQ(scale.tuner().last_source(), source::disabled);
  EXPECT_EQ(meas->candidates_measured(), 0U);
  EXPECT_EQ(scale.tuner().find(key{1024}), nullptr);
  EXPECT_EQ(json_files(), 0U);
  // A later call with more effort still tunes.
  static_cast<void>(scale.with({.effort = effort::full})(1024));
  EXPECT_EQ(scale.tuner().last_source(), source::search);
  EXPECT_EQ(scale.tuner().searches(), 1U);
  EXPECT_EQ(p->calls.back(), fastest);
  // Its winner then serves the cached calls.
  static_cast<void>(scale(1024));
  EXPECT_EQ(p->calls.back(), fastest);
}

TEST_F(effort_test, cached_with_pinned_values_runs_the_pinned_first_config) {
  auto scale = make_scale(p, with_env("cached"));
  static_cast<void>(scale.with({.pinned = config{{"alpha", 3}}})(1024));
  ASSERT_EQ(p->calls.size(), 1U);
  EXPECT_EQ(p->calls[0], (config{{"BLOCK", 256}, {"num_warps", 4}, {"alpha", 3}}));
  EXPECT_EQ(meas->candidates_measured(), 0U);
}

TEST_F(effort_test, cached_serves_an_artifact_the_lookup_table_and_the_default) {
  const temp_dir artifacts;
  tunekit::artifact a;
  a.name = "scale";
  a.key = key{1024};
  a.device = tunekit::device_identity::of(test_hardware());
  a.config = config{{"BLOCK", 1024}, {"num_warps", 8}};
  static_cast<void>(tunekit::store_artifact(artifacts.path(), a));

  auto o = with_env("cached");
  o.process->env.artifact_dir = artifacts.path();
  o.artifact.name = "scale";
  auto table = std::make_shared<tunekit::lookup_table>();
  table->add(tunekit::table_key(test_hardware().name, key{512}, "", "scale"),
             {config{{"BLOCK", 256}, {"num_warps", 8}}, ""});
  o.table.lookup_table = table;
  const config dflt{{"BLOCK", 512}, {"num_warps", 8}};
  auto scale = make_scale(p, o).with_default([&](int) { return dflt; });

  static_cast<void>(scale(1024));
  EXPECT_EQ(scale.tuner().last_source(), source::artifact);
  EXPECT_EQ(p->calls.back(), a.config);
  static_cast<void>(scale(512));
  EXPECT_EQ(scale.tuner().last_source(), source::table);
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 256}, {"num_warps", 8}}));
  static_cast<void>(scale(2048));
  EXPECT_EQ(scale.tuner().last_source(), source::default_config);
  EXPECT_EQ(p->calls.back(), dflt);
  EXPECT_EQ(meas->candidates_measured(), 0U);
  EXPECT_EQ(json_files(), 0U);
}

TEST_F(effort_test, cached_with_ranks_that_disagree_runs_the_first_config_everywhere) {
  // This rank holds a cache entry, the other none; then this rank none, the other one.
  store_winner();
  for (const double other : {-1.0, 3.0}) {
    disagreeing_communicator comm(other);
    auto o = with_env("cached");
    o.comm = &comm;
    o.use_disk_cache = other < 0;
    auto pr = std::make_shared<probe>();
    auto scale = make_scale(pr, o);
    static_cast<void>(scale(1024));
    ASSERT_EQ(pr->calls.size(), 1U);
    EXPECT_EQ(pr->calls[0], first_config) << other;
    EXPECT_EQ(scale.tuner().last_source(), source::disabled);
    EXPECT_EQ(scale.tuner().searches(), 0U);
    EXPECT_EQ(comm.calls, 2) << "one vote (MIN, MAX), nothing else";
  }
  EXPECT_EQ(meas->candidates_measured(), 0U);
}

TEST_F(effort_test, quick_measures_at_most_32_of_100_candidates_with_1_warmup_and_3_runs) {
  auto m = std::make_shared<tunekit::simulated_measurer>(hundred_cost, 0.0, 1);
  auto o = options(dir.path(), m, log);
  o.process->env.autotune = "quick";
  auto f = tunekit::autotune(
      "hundred", hundred(), [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &c) { return c.get_int("x"); }, o);
  static_cast<void>(f(1));
  EXPECT_EQ(f.tuner().last_source(), source::search);
  EXPECT_GT(m->candidates_measured(), 0U);
  EXPECT_LE(m->candidates_measured(), tunekit::quick_max_evaluations);
  EXPECT_EQ(tunekit::quick_max_evaluations, 32U);
  EXPECT_EQ(m->runs(), m->candidates_measured() * 4U); // 1 warmup + 3 timed runs each
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_LE(e->candidates.size(), 32U);
  EXPECT_EQ(e->policy.warmup, 1);
  EXPECT_EQ(e->policy.runs, 3);
  // A quick winner is a stored winner: a full tuner serves it from the cache.
  EXPECT_EQ(json_files(), 1U);
  auto m2 = std::make_shared<tunekit::simulated_measurer>(hundred_cost, 0.0, 1);
  auto g = tunekit::autotune(
      "hundred", hundred(), [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &c) { return c.get_int("x"); }, options(dir.path(), m2, log));
  EXPECT_EQ(g(1), e->winner.get_int("x"));
  EXPECT_EQ(g.tuner().last_source(), source::cache);
  EXPECT_EQ(m2->candidates_measured(), 0U);
}

TEST_F(effort_test, quick_never_raises_a_smaller_configured_budget_or_policy) {
  auto o = with_env("quick");
  o.search.budget.max_evaluations = 4;
  o.policy.warmup = 0;
  o.policy.runs = 2;
  auto m = std::make_shared<tunekit::simulated_measurer>(hundred_cost, 0.0, 1);
  o.measurer = m;
  auto f = tunekit::autotune(
      "hundred", hundred(), [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &c) { return c.get_int("x"); }, o);
  static_cast<void>(f(1));
  EXPECT_GT(m->candidates_measured(), 0U);
  EXPECT_LE(m->candidates_measured(), 4U);
  EXPECT_EQ(m->runs(), m->candidates_measured() * 2U);
}

TEST_F(effort_test, quick_per_call_measures_a_small_space_whole) {
  auto scale = make_scale(p, opts());
  static_cast<void>(scale.with({.effort = effort::quick})(1024));
  EXPECT_EQ(meas->candidates_measured(), 6U); // 6 kept candidates fit in 32
  EXPECT_EQ(meas->runs(), 6U * 4U);
  EXPECT_EQ(p->calls.back(), fastest);
}

TEST_F(effort_test, an_unknown_value_warns_once_and_means_full) {
  auto scale = make_scale(p, with_env("fast"));
  static_cast<void>(scale(1024));
  static_cast<void>(scale(512));
  EXPECT_EQ(scale.tuner().last_source(), source::search);
  EXPECT_EQ(scale.tuner().searches(), 2U);
  EXPECT_EQ(log.count(tunekit::log_level::warning,
                      {"TUNEKIT_AUTOTUNE", "'fast'", "off, cached, quick, full", "using full"}),
            1U)
      << log.dump();
  EXPECT_EQ(log.warnings().size(), 1U) << log.dump();
}
