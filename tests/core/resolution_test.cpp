// The resolution chain in one place: memory > cache > artifact > table > default > search, with
// the provenance of every source, forced tuning, and a search among a lookup table's choices.
// Each row sets up some sources, each holding a different config, and checks which one answers.

#include "test_support.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using tunekit::config;
using tunekit::config_space;
using tunekit::key;
using tunekit::source;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

namespace {

config_space space() { return config_space::product({{"BLOCK", {64, 128, 256, 512, 1024, 2048}}}); }

// 512 is fastest; each step away in powers of two costs one more (a tie: both neighbours).
double cost(const config &c, const key & /*k*/) {
  return 1.0 + std::abs(std::log2(static_cast<double>(c.get_int("BLOCK"))) - 9.0);
}
// A cost under which 2048 wins: what the stored cache entry recorded.
double cost_2048(const config &c, const key & /*k*/) {
  return c.get_int("BLOCK") == 2048 ? 0.5 : 9.0;
}

// What each source holds: within a row, every one a different BLOCK.
constexpr std::int64_t in_memory = 128;
constexpr std::int64_t in_cache = 2048;
constexpr std::int64_t in_artifact = 1024;
constexpr std::int64_t in_table = 256; // one choice
constexpr std::int64_t in_default = 64;
constexpr std::int64_t searched = 512;
constexpr std::int64_t table_pick = 128; // the faster of the table's two choices {64, 128}

struct row {
  const char *name;
  bool memory, cache, artifact, table_one, table_two, with_default, always_tune;
  std::int64_t expect;
  source from;
  std::size_t searches;
};

// clang-format off
const row rows[] = {
  //  name                       mem    cache  art    tab1   tab2   dflt   force  expect       from                    searches
  {"memory_beats_all",           true,  true,  true,  true,  false, true,  false, in_memory,   source::memory,         0},
  {"cache_beats_artifact",       false, true,  true,  true,  false, true,  false, in_cache,    source::cache,          0},
  {"cache_beats_table_choices",  false, true,  false, false, true,  false, false, in_cache,    source::cache,          0},
  {"artifact_beats_table",       false, false, true,  true,  false, true,  false, in_artifact, source::artifact,       0},
  {"table_beats_default",        false, false, false, true,  false, true,  false, in_table,    source::table,          0},
  {"table_choices_beat_default", false, false, false, false, true,  true,  false, table_pick,  source::table_search,   1},
  {"default_beats_search",       false, false, false, false, false, true,  false, in_default,  source::default_config, 0},
  {"search_when_nothing_answers",false, false, false, false, false, false, false, searched,    source::search,         1},
  {"forced_tuning_skips_stored", false, true,  true,  true,  false, true,  true,  searched,    source::search,         1},
};
// clang-format on

class resolution : public ::testing::TestWithParam<row> {
protected:
  [[nodiscard]] tunekit::tuner_options options(const row &r,
                                               tunekit::simulated_measurer::cost_function c) {
    auto o =
        tunekit_test::options(cache.path(), std::make_shared<tunekit::simulated_measurer>(c), log);
    o.process->env.always_tune = r.always_tune;
    o.process->env.artifact_dir = artifacts.path();
    o.artifact.name = "scale";
    auto table = std::make_shared<tunekit::lookup_table>();
    const std::string tk =
        tunekit::table_key(tunekit_test::test_hardware().name, key{4096}, "", "scale");
    if (r.table_one) {
      table->add(tk, {config{{"BLOCK", in_table}}, ""});
    }
    if (r.table_two) {
      table->add(tk, {config{{"BLOCK", 64}}, ""});
      table->add(tk, {config{{"BLOCK", 128}}, ""});
    }
    o.table.lookup_table = table;
    return o;
  }
  static auto make(tunekit::tuner_options o) {
    return tunekit::autotune(
        "scale", space(), [](int n) { return key{n}; }, tunekit::keep_all{},
        [](int /*n*/, const config &c) { return c.get_int("BLOCK"); }, std::move(o));
  }

  temp_dir cache;
  temp_dir artifacts;
  log_capture log;
};

TEST_P(resolution, the_first_source_that_answers_wins_and_is_named) {
  const row &r = GetParam();
  if (r.cache) { // a stored winner of 2048 for this function, hardware and key
    auto seed = make(options(row{}, cost_2048));
    ASSERT_EQ(seed(4096), in_cache);
  }
  if (r.artifact) {
    tunekit::artifact a;
    a.name = "scale";
    a.key = key{4096};
    a.device = tunekit::device_identity::of(tunekit_test::test_hardware());
    a.config = config{{"BLOCK", in_artifact}};
    static_cast<void>(tunekit::store_artifact(artifacts.path(), a));
  }
  auto f = make(options(r, cost));
  if (r.memory) {
    tunekit::detail::tuner_access::remember(f.tuner(), key{4096}, config{{"BLOCK", in_memory}});
  }
  if (r.with_default) {
    auto g = f.with_default([](int) { return config{{"BLOCK", in_default}}; });
    EXPECT_EQ(g(4096), r.expect);
  } else {
    EXPECT_EQ(f(4096), r.expect);
  }
  EXPECT_EQ(f.tuner().last_source(), r.from) << tunekit::to_string(f.tuner().last_source());
  EXPECT_EQ(f.tuner().searches(), r.searches);
  // The answer is remembered: the next call is served from memory with the same config.
  EXPECT_EQ(f(4096), r.expect);
  EXPECT_EQ(f.tuner().last_source(), source::memory);
}

INSTANTIATE_TEST_SUITE_P(chain, resolution, ::testing::ValuesIn(rows),
                         [](const auto &p) { return std::string(p.param.name); });

TEST(resolution_provenance, a_search_among_table_choices_measures_only_them) {
  temp_dir cache;
  log_capture log;
  auto meas = std::make_shared<tunekit::simulated_measurer>(cost);
  auto o = tunekit_test::options(cache.path(), meas, log);
  auto table = std::make_shared<tunekit::lookup_table>();
  const std::string tk = tunekit::table_key("", key{4096}, "", "scale");
  table->add(tk, {config{{"BLOCK", 64}}, ""});
  table->add(tk, {config{{"BLOCK", 2048}}, ""});
  o.table.lookup_table = table;
  auto f = tunekit::autotune(
      "scale", space(), [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int /*n*/, const config &c) { return c.get_int("BLOCK"); }, o);
  EXPECT_EQ(f(4096), 2048); // cost 3 against 64's cost 4
  EXPECT_EQ(f.tuner().last_source(), source::table_search);
  EXPECT_EQ(meas->candidates_measured(), 2U);
  const auto entry = f.tuner().last_search();
  ASSERT_TRUE(entry.has_value());
  // The entry lists the two measured choices and counts the rest as not searched.
  EXPECT_EQ(entry->candidates.size(), 2U);
  ASSERT_TRUE(entry->space.has_value());
  EXPECT_EQ(entry->space->pruned, space().size() - 2);
  EXPECT_EQ(tunekit::to_string(source::table_search), "table_search");
}

TEST(resolution_provenance, a_cache_hit_says_nothing_about_the_table) {
  temp_dir cache;
  log_capture log;
  auto o =
      tunekit_test::options(cache.path(), std::make_shared<tunekit::simulated_measurer>(cost), log);
  auto table = std::make_shared<tunekit::lookup_table>();
  const std::string tk = tunekit::table_key("", key{4096}, "", "scale");
  table->add(tk, {config{{"BLOCK", 4}}, ""}); // not a config of the space: dropped with a warning
  table->add(tk, {config{{"BLOCK", 64}}, ""});
  o.table.lookup_table = table;
  auto make = [&] {
    return tunekit::autotune(
        "scale", space(), [](int n) { return key{n}; }, tunekit::keep_all{},
        [](int /*n*/, const config &c) { return c.get_int("BLOCK"); }, o);
  };
  {
    auto f = make();
    o.table.lookup_table = nullptr;
    auto plain = make();
    EXPECT_EQ(plain(4096), searched); // stores the winner
  }
  o.table.lookup_table = table;
  log.clear();
  auto f = make();
  EXPECT_EQ(f.with({.verbose = true})(4096), searched);
  EXPECT_EQ(f.tuner().last_source(), source::cache);
  EXPECT_EQ(log.dump().find("lookup table"), std::string::npos) << log.dump();
}

// The cache step asks prune_fn about the entry's winner alone: a hit costs one prune call.
TEST(resolution_cache, a_hit_asks_prune_fn_about_its_winner_only) {
  temp_dir cache;
  log_capture log;
  const auto o =
      tunekit_test::options(cache.path(), std::make_shared<tunekit::simulated_measurer>(cost), log);
  std::size_t asked = 0;
  auto make = [&] {
    return tunekit::autotune(
        "scale", space(), [](int n) { return key{n}; },
        [&](const config &, int) {
          ++asked;
          return true;
        },
        [](int /*n*/, const config &c) { return c.get_int("BLOCK"); }, o);
  };
  EXPECT_EQ(make()(4096), searched);
  asked = 0;
  auto f = make();
  EXPECT_EQ(f(4096), searched);
  EXPECT_EQ(f.tuner().last_source(), source::cache);
  EXPECT_EQ(asked, 1U);
}

// A stored winner that prune_fn now rejects is reported and the kept candidates are searched.
TEST(resolution_cache, a_hit_whose_winner_is_pruned_searches_the_kept_ones) {
  temp_dir cache;
  log_capture log;
  const auto o =
      tunekit_test::options(cache.path(), std::make_shared<tunekit::simulated_measurer>(cost), log);
  EXPECT_EQ(tunekit::autotune(
                "scale", space(), [](int n) { return key{n}; }, tunekit::keep_all{},
                [](int /*n*/, const config &c) { return c.get_int("BLOCK"); }, o)(4096),
            searched);
  log.clear();
  auto f = tunekit::autotune(
      "scale", space(), [](int n) { return key{n}; },
      [](const config &c, int) { return c.get_int("BLOCK") != searched; },
      [](int /*n*/, const config &c) { return c.get_int("BLOCK"); }, o);
  // 256 and 1024 tie at cost 2: the earlier candidate wins.
  EXPECT_EQ(f(4096), 256);
  EXPECT_EQ(f.tuner().last_source(), source::search);
  EXPECT_NE(log.dump().find("is not among the current candidates; retuning"), std::string::npos)
      << log.dump();
}

// An entry of schema /1 records no position for its winner and names the measuring rank of the
// parallel split in its reasons: it is still served, found by value, and its ranks are read.
TEST(resolution_cache, an_entry_of_schema_1_is_still_served) {
  temp_dir cache;
  log_capture log;
  const auto o =
      tunekit_test::options(cache.path(), std::make_shared<tunekit::simulated_measurer>(cost), log);
  auto make = [&] {
    return tunekit::autotune(
        "scale", space(), [](int n) { return key{n}; }, tunekit::keep_all{},
        [](int /*n*/, const config &c) { return c.get_int("BLOCK"); }, o);
  };
  auto first = make();
  EXPECT_EQ(first(4096), searched);
  const auto path = first.tuner().cache_path(key{4096});
  auto j = nlohmann::json::parse(tunekit_test::read_text(path));
  ASSERT_EQ(j.at("schema"), "tunekit.winner_cache/2");
  j["schema"] = "tunekit.winner_cache/1";
  j.erase("space");
  j["candidates"][1]["reason"] = "measured on rank 1";
  tunekit_test::write_text(path, j.dump(2));

  const auto read = tunekit::winner_cache::read(path);
  ASSERT_TRUE(read.found()) << read.detail;
  EXPECT_FALSE(read.value->space.has_value());
  EXPECT_EQ(read.value->candidates[1].measured_on, 1);
  EXPECT_FALSE(read.value->candidates[0].measured_on.has_value());

  auto f = make();
  EXPECT_EQ(f(4096), searched);
  EXPECT_EQ(f.tuner().last_source(), source::cache);
  EXPECT_EQ(f.tuner().searches(), 0U);
}

} // namespace
