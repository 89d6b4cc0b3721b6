// Key buckets and nearest-key serving (docs/shapes.md): the bucket rules, the distance between
// keys, a tuner whose calls of one bucket share one search and one entry, and a tuner that
// answers a key nothing is stored for with the winner of the nearest key it knows.

#include "tuner_fixture.hpp"

#include <tunekit/campaign.hpp>
#include <tunekit/shapes.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

using tunekit::config;
using tunekit::key;
using tunekit::key_bucket;
using tunekit::miss_policy;
using tunekit::source;
using namespace tunekit_test;

namespace {

TEST(key_bucket, rules) {
  const auto p = key_bucket::pow2(0);
  EXPECT_EQ(p.apply(100), 128);
  EXPECT_EQ(p.apply(128), 128);
  EXPECT_EQ(p.apply(129), 256);
  EXPECT_EQ(p.apply(2), 2);
  EXPECT_EQ(p.apply(1), 1);
  EXPECT_EQ(p.apply(0), 0);
  EXPECT_EQ(p.apply(-5), -5);
  EXPECT_EQ(p.apply((std::int64_t{1} << 62) + 1), (std::int64_t{1} << 62) + 1); // no overflow
  const auto e = key_bucket::at_edges(1, {1, 16, 64});
  EXPECT_EQ(e.apply(5), 16);
  EXPECT_EQ(e.apply(16), 16);
  EXPECT_EQ(e.apply(17), 64);
  EXPECT_EQ(e.apply(1000), 64); // above the last edge: the last bucket
  const auto m = key_bucket::round_up(2, 64);
  EXPECT_EQ(m.apply(65), 128);
  EXPECT_EQ(m.apply(64), 64);
  EXPECT_EQ(p.to_string(), "[0] pow2");
  EXPECT_EQ(e.to_string(), "[1] edges(1,16,64)");
  EXPECT_EQ(m.to_string(), "[2] multiple(64)");
  const std::vector<key_bucket> all{m, p, e};
  EXPECT_EQ(tunekit::describe_buckets(all), "[0] pow2, [1] edges(1,16,64), [2] multiple(64)");
  EXPECT_EQ(tunekit::bucket_key(key{100, 5, 65, "f32"}, all), (key{128, 16, 128, "f32"}));
}

TEST(key_bucket, bad_buckets_and_keys_are_clear_errors) {
  auto fails = [](std::vector<key_bucket> b, const std::string &part) {
    try {
      tunekit::check_buckets("t", b);
      ADD_FAILURE() << "no error for " << part;
    } catch (const tunekit::error &e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  fails({key_bucket::pow2(0), key_bucket::round_up(0, 8)}, "already has a bucket");
  fails({key_bucket::at_edges(0, {})}, "at least one edge");
  fails({key_bucket::at_edges(0, {4, 4})}, "strictly ascending");
  fails({key_bucket::round_up(0, 0)}, "at least 1");
  const std::vector<key_bucket> b{key_bucket::pow2(1)};
  EXPECT_THROW(
      {
        try {
          static_cast<void>(tunekit::bucket_key(key{4}, b));
        } catch (const tunekit::error &e) {
          EXPECT_NE(std::string(e.what()).find("has only 1 values"), std::string::npos);
          throw;
        }
      },
      tunekit::error);
  EXPECT_THROW(
      {
        try {
          static_cast<void>(tunekit::bucket_key(key{4, "f32"}, b));
        } catch (const tunekit::error &e) {
          EXPECT_NE(std::string(e.what()).find("not an int"), std::string::npos);
          throw;
        }
      },
      tunekit::error);
}

TEST(nearest_key, distance_ties_and_what_cannot_be_compared) {
  EXPECT_EQ(tunekit::key_distance(key{10, "f16"}, key{13, "f16"}), 3.0);
  EXPECT_EQ(tunekit::key_distance(key{10, 2.5}, key{12, 2}), 2.5);
  EXPECT_FALSE(tunekit::key_distance(key{10, "f16"}, key{10, "f32"}));
  EXPECT_FALSE(tunekit::key_distance(key{10}, key{10, 1}));
  EXPECT_FALSE(tunekit::key_distance(key{true}, key{false}));
  const std::vector<key> known{key{3000}, key{1000}, key{2000, "x"}, key{2000}};
  EXPECT_EQ(tunekit::nearest_key(key{2000}, known), 1U); // itself excluded; 1000 and 3000 tie
  EXPECT_EQ(tunekit::nearest_key(key{2900}, known), 0U);
  EXPECT_FALSE(tunekit::nearest_key(key{"a"}, known));
}

TEST(nearest_key, over_some_positions_the_others_must_be_equal) {
  // (M, E): by M only, the E of the call must be the E of the key (vLLM: one file per E).
  const std::vector<std::size_t> m{0};
  EXPECT_EQ(tunekit::key_distance(key{100, 8}, key{64, 8}, m), 36.0);
  EXPECT_FALSE(tunekit::key_distance(key{100, 8}, key{100, 16}, m));
  const std::vector<key> known{key{64, 16}, key{512, 8}};
  EXPECT_EQ(tunekit::nearest_key(key{60, 8}, known, m), 1U);
  EXPECT_EQ(tunekit::nearest_key(key{60, 8}, known), 0U); // over every value: (64, 16) is nearer
  EXPECT_FALSE(tunekit::nearest_key(key{60, 4}, known, m));
}

// A cost whose best BLOCK is the one nearest to n: winners differ per key.
double near_n(const config &c, const key &k) {
  const double n = static_cast<double>(k[0].as_int());
  const double block = static_cast<double>(c.get_int("BLOCK"));
  return 1.0 + std::abs(block - n) / 100.0 + (c.get_int("num_warps") == 8 ? 0.5 : 0.0);
}

class shapes_test : public tuner_test {
protected:
  auto make(tunekit::shape_options shapes,
            std::shared_ptr<const tunekit::prior_measurements> prior = nullptr) {
    auto o = opts();
    o.measurer = std::make_shared<tunekit::simulated_measurer>(near_n, 0.0, 1);
    o.shapes = std::move(shapes);
    o.prior = std::move(prior);
    return tunekit::autotune(
        "scale", block_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
        [this](int /*n*/, const config &c) { p->calls.push_back(c); }, std::move(o));
  }
};

TEST_F(shapes_test, calls_of_one_bucket_share_one_search_and_one_entry) {
  auto scale = make({.buckets = {key_bucket::pow2(0)}});
  scale(900);
  EXPECT_EQ(scale.tuner().last_source(), source::search);
  scale(1000);
  EXPECT_EQ(scale.tuner().last_source(), source::memory);
  EXPECT_EQ(scale.tuner().searches(), 1U);
  EXPECT_EQ(p->calls.back().get_int("BLOCK"), 1024);
  // The entry is the bucket's, and says so; the call's own key is remembered too.
  const auto e = scale.tuner().last_search();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->key, key{1024});
  EXPECT_EQ(e->key_buckets, "[0] pow2");
  EXPECT_NE(scale.tuner().find(key{1000}), nullptr);
  EXPECT_EQ(json_files(), 1U);
  // Another process with the same buckets: from the entry.
  auto again = make({.buckets = {key_bucket::pow2(0)}});
  again(1023);
  EXPECT_EQ(again.tuner().last_source(), source::cache);
  // Other buckets: the entry is not used, and the warning says why.
  auto other = make({.buckets = {key_bucket::round_up(0, 1024)}});
  other(1000);
  EXPECT_EQ(other.tuner().last_source(), source::search);
  EXPECT_EQ(log.count(tunekit::log_level::warning,
                      {"recorded with the key buckets [0] pow2", "not [0] multiple(1024)"}),
            1U);
}

TEST_F(shapes_test, a_bucket_over_a_value_that_is_not_an_int_names_the_tuner) {
  auto o = opts();
  o.shapes.buckets = {key_bucket::pow2(0)};
  auto t = tunekit::autotune(
      "named", block_space(), [](const std::string &s) { return key{s}; }, tunekit::keep_all{},
      [](const std::string &, const config &) {}, std::move(o));
  try {
    t(std::string("f16"));
    ADD_FAILURE() << "no error";
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("tuner 'named': key bucket [0] pow2"), std::string::npos)
        << e.what();
  }
}

TEST_F(shapes_test, nearest_serves_the_nearest_known_key_without_measuring) {
  auto scale = make({.on_miss = miss_policy::nearest});
  scale(1000); // searched: BLOCK 1024
  scale(300);  // 1000 is the only key known: served from it
  EXPECT_EQ(scale.tuner().last_source(), source::nearest);
  EXPECT_EQ(scale.tuner().searches(), 1U);
  EXPECT_EQ(p->calls.back().get_int("BLOCK"), 1024);
  scale(300); // remembered
  EXPECT_EQ(scale.tuner().last_source(), source::memory);
  // A key served by nearest is not itself a key nearest compares: 320 is still served from 1000.
  scale.with({.verbose = true})(320);
  EXPECT_EQ(log.count(tunekit::log_level::info, {"nearest key (1000)"}), 1U);
  // The default policy tunes.
  auto tune = make({});
  tune(1100);
  EXPECT_EQ(tune.tuner().last_source(), source::search);
}

TEST_F(shapes_test, nearest_over_one_position_serves_only_keys_equal_elsewhere) {
  auto o = opts();
  o.measurer = std::make_shared<tunekit::simulated_measurer>(near_n, 0.0, 1);
  o.shapes = {.on_miss = miss_policy::nearest, .nearest_over = {0}};
  auto mm = tunekit::autotune(
      "mm", block_space(),
      [](int m, int e) {
        return key{m, e};
      },
      tunekit::keep_all{}, [this](int, int, const config &c) { p->calls.push_back(c); },
      std::move(o));
  mm(256, 16);
  mm(2048, 8);
  mm(300, 8); // (256, 16) is nearer over both values; over M, only E = 8 compares
  EXPECT_EQ(mm.tuner().last_source(), source::nearest);
  EXPECT_EQ(p->calls.back().get_int("BLOCK"), 2048);
  mm(300, 4); // no key with E = 4: a search
  EXPECT_EQ(mm.tuner().last_source(), source::search);
}

TEST_F(shapes_test, nearest_reads_the_winner_cache_once_and_ties_go_to_the_smaller_key) {
  {
    auto seed = make({});
    seed(256);
    seed(2048);
  }
  auto scale = make({.on_miss = miss_policy::nearest});
  scale(1152); // 896 from 256, 896 from 2048: the smaller key
  EXPECT_EQ(scale.tuner().last_source(), source::nearest);
  EXPECT_EQ(p->calls.back().get_int("BLOCK"), 256);
  scale(1900);
  EXPECT_EQ(p->calls.back().get_int("BLOCK"), 2048);
  EXPECT_EQ(scale.tuner().searches(), 0U);
}

TEST_F(shapes_test, a_campaign_tunes_each_key_once_and_resumes_from_the_cache) {
  auto scale = make({});
  const std::vector<std::tuple<int>> calls{{256}, {1000}, {2048}};
  const auto r = tunekit::campaign(scale, calls);
  EXPECT_EQ(r.calls, 3U);
  EXPECT_EQ(r.tuned(), 3U);
  EXPECT_EQ(json_files(), 3U);
  auto again = make({});
  const auto resumed = tunekit::campaign(again, calls);
  EXPECT_EQ(resumed.tuned(), 0U);
  for (const auto &[i, s] : resumed.sources) {
    EXPECT_EQ(s, source::cache) << i;
  }
}

TEST_F(shapes_test, a_campaign_splits_its_calls_across_ranks) {
  auto scale = make({});
  two_rank_communicator rank1(1, {});
  const std::vector<std::tuple<int>> calls{{1}, {2}, {3}, {4}, {5}};
  const auto r = tunekit::campaign(scale, calls, {.comm = &rank1});
  ASSERT_EQ(r.sources.size(), 2U);
  EXPECT_EQ(r.sources[0].first, 1U);
  EXPECT_EQ(r.sources[1].first, 3U);
  EXPECT_EQ(rank1.max_calls + rank1.min_calls, 0); // each call tuned by this rank alone
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.size, 2);
}

TEST_F(shapes_test, a_changed_space_measures_only_its_new_configs) {
  auto before = make({});
  before(1000);
  ASSERT_EQ(before.tuner().last_source(), source::search);
  p->calls.clear();
  // The same function with two more configs: another space, so the entry is not served; its
  // eight measurements are taken and only the two new configs run.
  auto o = opts();
  o.measurer = std::make_shared<tunekit::simulated_measurer>(near_n, 0.0, 1);
  auto bigger = tunekit::config_space::product(
      {{"BLOCK", {256, 512, 1024, 2048, 1000}}, {"num_warps", {4, 8}}});
  auto after = tunekit::autotune(
      "scale", bigger, [](int n) { return key{n}; }, tunekit::keep_all{},
      [this](int /*n*/, const config &c) { p->calls.push_back(c); }, std::move(o));
  after.with({.verbose = true})(1000);
  EXPECT_EQ(after.tuner().last_source(), source::search);
  for (const auto &c : p->calls) {
    EXPECT_EQ(c.get_int("BLOCK"), 1000) << c.to_string(); // the new configs (and the winner)
  }
  EXPECT_EQ(p->calls.back().get_int("BLOCK"), 1000);
  EXPECT_EQ(p->calls.back().get_int("num_warps"), 4);
  const auto e = after.tuner().last_search();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->candidates.size(), 10U); // all ten recorded, eight of them from the old entry
  EXPECT_EQ(log.count(tunekit::log_level::info, {"the space changed; 8 candidates measured"}), 1U);
}

// Rank 1 of two whose other rank holds no earlier measurement of the candidates `lacks` names
// (their positions in the space): the agreement on the measurements taken from before is the one
// reduction of one value per candidate.
class other_rank_lacks final : public tunekit::communicator {
public:
  other_rank_lacks(std::size_t candidates, std::vector<std::size_t> lacks)
      : m_n(candidates), m_lacks(std::move(lacks)) {}
  [[nodiscard]] int rank() const override { return 1; }
  [[nodiscard]] int size() const override { return 2; }
  void all_reduce_max(std::span<double> values) override {
    if (values.size() == m_n) {
      ++agreements;
      for (auto i : m_lacks) {
        values[i] = std::max(values[i], 1.0);
      }
    }
  }
  void all_reduce_min(std::span<double> /*values*/) override {}
  void broadcast(std::span<std::byte> /*bytes*/, int /*root*/) override {}
  void barrier() override {}
  int agreements = 0;

private:
  std::size_t m_n;
  std::vector<std::size_t> m_lacks;
};

TEST_F(shapes_test, with_several_ranks_only_what_every_rank_measured_before_is_taken) {
  auto before = make({});
  before(1000);
  ASSERT_EQ(before.tuner().last_source(), source::search);
  p->calls.clear();
  auto bigger = tunekit::config_space::product(
      {{"BLOCK", {256, 512, 1024, 2048, 1000}}, {"num_warps", {4, 8}}});
  // The other rank lacks the first config (BLOCK 256, 4 warps): it is measured again, on every
  // rank, with the two new ones; the seven others are taken.
  other_rank_lacks comm(bigger.size(), {0});
  auto o = opts();
  o.measurer = std::make_shared<tunekit::simulated_measurer>(near_n, 0.0, 1);
  o.comm = &comm;
  auto after = tunekit::autotune(
      "scale", bigger, [](int n) { return key{n}; }, tunekit::keep_all{},
      [this](int /*n*/, const config &c) { p->calls.push_back(c); }, std::move(o));
  after.with({.verbose = true})(1000);
  EXPECT_EQ(after.tuner().last_source(), source::search);
  EXPECT_EQ(comm.agreements, 1);
  std::size_t block_256 = 0;
  for (const auto &c : p->calls) {
    const auto b = c.get_int("BLOCK");
    EXPECT_TRUE(b == 1000 || (b == 256 && c.get_int("num_warps") == 4)) << c.to_string();
    block_256 += b == 256 ? 1 : 0;
  }
  EXPECT_GE(block_256, 1U);
  EXPECT_EQ(log.count(tunekit::log_level::info,
                      {"1 of the 8 candidates measured before are measured again"}),
            1U);
  ASSERT_TRUE(after.tuner().last_search());
  EXPECT_EQ(after.tuner().last_search()->candidates.size(), 10U);
}

// Measurements made elsewhere (another tuner's file), for key 1000 only.
class held_elsewhere final : public tunekit::prior_measurements {
public:
  [[nodiscard]] std::string name() const override { return "a file of another tuner"; }
  [[nodiscard]] std::vector<tunekit::candidate_record> find(const key &k) const override {
    ++asked;
    if (fail) {
      throw tunekit::error("unreadable");
    }
    if (k != key{1000}) {
      return {};
    }
    std::vector<tunekit::candidate_record> out;
    auto ok = [&](std::int64_t block, std::int64_t warps, double ms) {
      tunekit::candidate_record r;
      r.config = config{{"BLOCK", block}, {"num_warps", warps}};
      r.time_ms = ms;
      out.push_back(r);
    };
    ok(256, 8, 0.001); // faster than anything measured here: the winner
    ok(512, 4, 3.0);
    ok(512, 8, -1.0);    // not a time: measured here
    ok(4096, 4, 0.0001); // not a config of the space: ignored
    tunekit::candidate_record failed;
    failed.config = config{{"BLOCK", 2048}, {"num_warps", 8}};
    failed.status = tunekit::candidate_status::failed;
    failed.reason = "out of resources";
    out.push_back(failed);
    return out;
  }
  mutable int asked = 0;
  bool fail = false;
};

TEST_F(shapes_test, measurements_made_before_elsewhere_are_taken_and_only_the_rest_measured) {
  auto prior = std::make_shared<held_elsewhere>();
  auto scale = make({}, prior);
  scale.with({.verbose = true})(1000);
  EXPECT_EQ(scale.tuner().last_source(), source::search);
  EXPECT_EQ(prior->asked, 1);
  // 256/8, 512/4 and 2048/8 were taken; the other five (512/8 among them) were measured.
  std::vector<std::string> ran;
  for (const auto &c : p->calls) {
    ran.push_back(c.to_string());
  }
  const auto ran_once = [&](std::int64_t block, std::int64_t warps) {
    return std::count(ran.begin(), ran.end(),
                      config{{"BLOCK", block}, {"num_warps", warps}}.to_string());
  };
  EXPECT_EQ(ran_once(512, 4), 0);
  EXPECT_EQ(ran_once(2048, 8), 0);
  EXPECT_GT(ran_once(512, 8), 0);
  EXPECT_GT(ran_once(1024, 4), 0);
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 256}, {"num_warps", 8}})); // the prior's winner
  const auto e = scale.tuner().last_search();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->candidates.size(), 8U);
  EXPECT_EQ(e->winner, (config{{"BLOCK", 256}, {"num_warps", 8}}));
  bool saw_failed = false;
  for (const auto &c : e->candidates) {
    if (c.config == config{{"BLOCK", 2048}, {"num_warps", 8}}) {
      saw_failed = true;
      EXPECT_EQ(c.status, tunekit::candidate_status::failed);
      EXPECT_EQ(c.reason, "measured before: a file of another tuner: out of resources");
    }
    if (c.config == config{{"BLOCK", 512}, {"num_warps", 4}}) {
      EXPECT_DOUBLE_EQ(c.time_ms, 3.0);
      EXPECT_DOUBLE_EQ(c.stats.median, 3.0);
    }
  }
  EXPECT_TRUE(saw_failed);
  EXPECT_EQ(log.count(tunekit::log_level::info,
                      {"3 measurements made before are taken from a file of another tuner"}),
            1U);
  // Another key: nothing held, everything measured.
  p->calls.clear();
  scale(300);
  const auto space = block_space();
  for (const auto &c : space.configs()) {
    EXPECT_NE(std::find(p->calls.begin(), p->calls.end(), c), p->calls.end()) << c.to_string();
  }
}

TEST_F(shapes_test, prior_measurements_that_cannot_be_read_are_a_warning_and_a_full_search) {
  auto prior = std::make_shared<held_elsewhere>();
  prior->fail = true;
  auto scale = make({}, prior);
  scale(1000);
  const auto e = scale.tuner().last_search();
  ASSERT_TRUE(e);
  for (const auto &c : e->candidates) {
    EXPECT_EQ(c.reason.find("measured before"), std::string::npos) << c.reason;
  }
  EXPECT_EQ(log.count(tunekit::log_level::warning,
                      {"a file of another tuner could not be read", "unreadable"}),
            1U);
}

} // namespace
