// The end of an offline campaign in one process (docs/shapes.md, "Offline campaigns"): the
// artifacts and the lookup table of exactly the campaign's keys, bucketed as stored and each key
// once, the keys no entry answers named, the table's options, and the outputs that cannot be
// written refused before anything is tuned.

#include "tuner_fixture.hpp"

#include <tunekit/campaign.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

using tunekit::config;
using tunekit::key;
using tunekit::key_bucket;
using tunekit::source;
using namespace tunekit_test;

namespace {

// The best BLOCK is the one nearest to n: winners differ per key.
double near_n(const config &c, const key &k) {
  return 1.0 + std::abs(static_cast<double>(c.get_int("BLOCK") - k[0].as_int())) / 100.0 +
         (c.get_int("num_warps") == 8 ? 0.5 : 0.0);
}

class campaign_test : public tuner_test {
protected:
  auto make(std::vector<key_bucket> buckets = {key_bucket::pow2(0)}, bool disk = true) {
    auto o = opts();
    o.measurer = std::make_shared<tunekit::simulated_measurer>(near_n, 0.0, 1);
    o.shapes.buckets = std::move(buckets);
    o.artifact.name = "scale";
    o.artifact.key_names = {"n"};
    o.use_disk_cache = disk;
    return tunekit::autotune(
        "scale", block_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
        [](int /*n*/, const config & /*c*/) {}, std::move(o));
  }
  [[nodiscard]] std::filesystem::path out(const std::string &name) const {
    return dir.path() / "out" / name;
  }
};

TEST_F(campaign_test, writes_an_artifact_per_key_and_a_table_of_exactly_its_keys) {
  {
    auto other = make();
    other(4000); // an entry of a key outside the campaign
  }
  auto scale = make();
  scale.tuner().seed(key{3}, config{{"BLOCK", 256}, {"num_warps", 4}}); // shipped: not searched
  const std::vector<std::tuple<int>> calls{{300}, {1000}, {900}, {3}};  // 1000 and 900: 1024
  const auto r = tunekit::campaign(
      scale, calls,
      {.verbose = true, .artifacts = {.dir = out("a")}, .table = {.path = out("t.json")}});
  EXPECT_EQ(r.tuned(), 2U);
  ASSERT_EQ(r.artifacts.size(), 2U);
  const auto dev = tunekit::device_identity::of(scale.tuner().hardware());
  EXPECT_EQ(r.artifacts[0], tunekit::artifact_path(out("a"), "scale", key{512}, dev));
  EXPECT_EQ(r.artifacts[1], tunekit::artifact_path(out("a"), "scale", key{1024}, dev));
  const auto a = tunekit::load_artifact(out("a"), "scale", key{1024}, dev);
  ASSERT_TRUE(a.found()) << a.detail;
  EXPECT_EQ(a.value->config.get_int("BLOCK"), 1024);
  EXPECT_EQ(a.value->key_names, std::vector<std::string>{"n"});
  EXPECT_EQ(r.table, out("t.json"));
  const auto t = tunekit::lookup_table::load(r.table);
  EXPECT_EQ(t.size(), 2U); // not the key 4096 of the other call
  EXPECT_NE(t.find(tunekit::table_key(dev.name, key{512}, "", "scale")), nullptr);
  ASSERT_EQ(r.missing.size(), 1U);
  EXPECT_EQ(r.missing[0].key, key{4});
  EXPECT_EQ(r.missing[0].why, "no winner cache entry");
  EXPECT_EQ(log.count(tunekit::log_level::warning,
                      {"campaign of tuner 'scale': 1 of its 3 keys has no usable winner cache "
                       "entry",
                       "(4) (no winner cache entry)"}),
            1U);
  EXPECT_EQ(log.count(tunekit::log_level::info, {"wrote 2 artifacts to"}), 1U);
  EXPECT_EQ(log.count(tunekit::log_level::info, {"wrote the lookup table", "(2 keys)"}), 1U);
}

TEST_F(campaign_test, an_entry_recorded_with_other_buckets_is_in_no_output) {
  {
    auto unbucketed = make({});
    unbucketed(1024);
  }
  // The same key in pow2 buckets: that entry is not served, the call searches again, and its
  // new entry (recorded with the buckets) is the one written.
  auto scale = make();
  const std::vector<std::tuple<int>> calls{{1024}};
  const auto r = tunekit::campaign(scale, calls, {.table = {.path = out("t.json")}});
  EXPECT_EQ(r.tuned(), 1U);
  EXPECT_TRUE(r.missing.empty());
  // Written alone for tuners with other buckets: another bucket's key has no entry, and the
  // entry of the same key recorded with other buckets is not used, saying why.
  auto other = make({key_bucket::round_up(0, 1000)});
  const auto w =
      tunekit::write_campaign_outputs(other.tuner(), {key{1024}}, {}, {.path = out("u.json")});
  ASSERT_EQ(w.missing.size(), 1U);
  EXPECT_EQ(w.missing[0].key, key{2000});
  EXPECT_EQ(w.missing[0].why, "no winner cache entry");
  const auto v =
      tunekit::write_campaign_outputs(make({}).tuner(), {key{1024}}, {}, {.path = out("v.json")});
  ASSERT_EQ(v.missing.size(), 1U);
  EXPECT_NE(v.missing[0].why.find("was recorded with the key buckets [0] pow2"), std::string::npos)
      << v.missing[0].why;
}

TEST_F(campaign_test, the_table_takes_the_options_of_table_export) {
  auto scale = make();
  const std::vector<std::tuple<int>> calls{{512}};
  const auto r = tunekit::campaign(scale, calls,
                                   {.artifacts = {.dir = out("a"), .name = "scale_f32"},
                                    .table = {.path = out("t.json"),
                                              .op = "gemm",
                                              .top_k = 3,
                                              .params = config{{"alpha", 1}},
                                              .key_format = tunekit::table_key_format::inductor}});
  EXPECT_EQ(r.artifacts.at(0).filename().string().rfind("scale_f32-", 0), 0U);
  const auto t = tunekit::lookup_table::load(r.table);
  const auto dev = tunekit::device_identity::of(scale.tuner().hardware());
  const auto *e = t.find(tunekit::table_key(
      dev.name, key{512},
      tunekit::table_params(config{{"alpha", 1}}, tunekit::table_key_format::inductor), "gemm",
      tunekit::table_key_format::inductor));
  ASSERT_NE(e, nullptr) << t.to_json();
  EXPECT_EQ(e->size(), 3U);
  EXPECT_EQ(e->front().choice.get_int("BLOCK"), 512);
  const std::string what = error_of([&] {
    static_cast<void>(tunekit::campaign(
        scale, calls,
        {.table = {.path = out("x.json"),
                   .template_hashes = std::map<std::string, std::string>{{"tiled", "0717af58"}}}}));
  });
  EXPECT_NE(what.find("names a template that no choice has"), std::string::npos) << what;
  EXPECT_FALSE(std::filesystem::exists(out("x.json")));
}

TEST_F(campaign_test, outputs_that_cannot_be_written_are_refused_before_tuning) {
  const std::vector<std::tuple<int>> calls{{512}};
  auto fails = [&](auto &tuned, const tunekit::campaign_options &o, const std::string &part) {
    const std::string what =
        error_of([&] { static_cast<void>(tunekit::campaign(tuned, calls, o)); });
    EXPECT_NE(what.find(part), std::string::npos) << what;
    EXPECT_EQ(tuned.tuner().searches(), 0U) << part;
  };
  auto no_disk = make({}, false);
  fails(no_disk, {.table = {.path = out("t.json")}}, "use_disk_cache is false");
  auto scale = make();
  fails(scale, {.artifacts = {.dir = out("a"), .name = "a b"}}, "invalid artifact name 'a b'");
  fails(scale, {.table = {.path = out("t.json"), .top_k = 0}}, "top_k of at least 1");
  auto o = opts();
  o.hardware = tunekit::hardware_info{"host", "", "", 0, 1};
  auto unnamed = tunekit::autotune(
      "plain", block_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &) {}, o);
  fails(unnamed, {.artifacts = {.dir = out("a")}}, "artifacts need a name");
  fails(unnamed, {.artifacts = {.dir = out("a"), .name = "plain"}},
        "the device identity is incomplete");
}

} // namespace
