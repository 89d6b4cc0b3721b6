// The winner cache on disk: layout, entry contents, exact types, hits and misses across tuner
// objects (each a fresh process state), and every kind of bad entry being skipped and retuned.

#include "os.hpp"
#include "test_support.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>

using tunekit::cache_entry;
using tunekit::candidate_status;
using tunekit::config;
using tunekit::config_space;
using tunekit::function_identity;
using tunekit::key;
using tunekit::load_status;
using tunekit::source;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;
using json = nlohmann::ordered_json;

namespace {

bool has(const std::string &text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

config_space block_space() {
  return config_space::product({{"BLOCK", {256, 512, 1024, 2048}}, {"num_warps", {4, 8}}});
}

const config fastest{{"BLOCK", 512}, {"num_warps", 4}};

// What one tuner object (a fresh process state) did for one call.
struct outcome {
  source src = source::disabled;
  std::size_t measured = 0;
  std::size_t searches = 0;
  std::size_t calls = 0;
  config used; // the config of the call whose result was returned
  std::filesystem::path path;
};

class winner_cache_test : public ::testing::Test {
protected:
  // Builds a new tuner "gemm" over `space` and calls it once with `n` (keyed by n; configs with
  // BLOCK > limit are pruned, limit defaulting to n).
  outcome tune(int n, tunekit::tuner_options o, const config_space &space = block_space(),
               int limit = -1) {
    auto meas = std::make_shared<tunekit::simulated_measurer>(cost, 0.02, 7);
    o.measurer = meas;
    auto calls = std::make_shared<std::vector<config>>();
    auto f = tunekit::autotune(
        "gemm", space, [](int len, int) { return key{len}; },
        [](const config &c, int len, int lim) {
          return !c.contains("BLOCK") || c.get_int("BLOCK") <= (lim < 0 ? len : lim);
        },
        [calls](int, int, const config &c) {
          calls->push_back(c);
          return 0;
        },
        std::move(o));
    static_cast<void>(f(n, limit));
    outcome out;
    out.src = f.tuner().last_source();
    out.measured = meas->candidates_measured();
    out.searches = f.tuner().searches();
    out.calls = calls->size();
    out.used = calls->back();
    out.path = f.tuner().cache_path(key{n});
    return out;
  }

  [[nodiscard]] tunekit::tuner_options opts(std::string version = "v1") const {
    return tunekit_test::options(dir.path(), nullptr, log, std::move(version));
  }

  [[nodiscard]] std::filesystem::path entry_of(int n, std::string version = "v1") const {
    return dir.path() / "autotune" / "gemm" /
           (tunekit::cache_digest({"gemm", std::move(version)}, tunekit_test::test_hardware(),
                                  key{n}) +
            ".json");
  }

  [[nodiscard]] std::vector<std::filesystem::path> files() const {
    return tunekit_test::files_below(dir.path());
  }

  temp_dir dir;
  log_capture log;
  std::function<double(const config &, const key &)> cost = tunekit_test::block_cost;
};

// `YYYY-MM-DDTHH:MM:SSZ` (no <regex>: GCC 12 warns inside it under the sanitizers).
bool is_utc_timestamp(const std::string &s) {
  const std::string shape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != shape.size()) {
    return false;
  }
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool digit = s[i] >= '0' && s[i] <= '9';
    if (shape[i] == 'd' ? !digit : s[i] != shape[i]) {
      return false;
    }
  }
  return true;
}

json read_json(const std::filesystem::path &p) { return json::parse(tunekit_test::read_text(p)); }

void write_json(const std::filesystem::path &p, const json &j) {
  tunekit_test::write_text(p, j.dump(2));
}

} // namespace

TEST_F(winner_cache_test, entry_lives_at_autotune_function_digest_json_with_a_log_beside_it) {
  const auto first = tune(1024, opts());
  ASSERT_EQ(first.src, source::search);
  const std::string digest =
      tunekit::cache_digest({"gemm", "v1"}, tunekit_test::test_hardware(), key{1024});
  EXPECT_EQ(digest.size(), 64U);
  EXPECT_EQ(digest.find_first_not_of("0123456789abcdef"), std::string::npos);
  const auto entry = dir.path() / "autotune" / "gemm" / (digest + ".json");
  const auto log_file = dir.path() / "autotune" / "gemm" / (digest + ".log");
  EXPECT_EQ(first.path, entry);
  const auto all = files();
  EXPECT_EQ(std::set<std::filesystem::path>(all.begin(), all.end()),
            (std::set<std::filesystem::path>{entry, log_file}));

  const std::string text = tunekit_test::read_text(log_file);
  EXPECT_TRUE(has(text, "tuner 'gemm' version 'v1'")) << text;
  EXPECT_TRUE(has(text, "key (1024)")) << text;
  EXPECT_TRUE(has(text, "Test CPU 9000")) << text;
  EXPECT_TRUE(has(text, "5 warmup + 10 timed runs, mean")) << text;
  EXPECT_TRUE(has(text, "#0 [BLOCK=256, num_warps=4] ok")) << text;
  EXPECT_TRUE(has(text, "2 of 8 configs pruned (not listed)")) << text;
  EXPECT_TRUE(has(text, "winner #2 [BLOCK=512, num_warps=4]")) << text;

  const tunekit::winner_cache cache(dir.path());
  EXPECT_EQ(cache.entry_path({"gemm", "v1"}, tunekit_test::test_hardware(), key{1024}), entry);
  EXPECT_EQ(cache.list(), std::vector<std::filesystem::path>{entry});
  EXPECT_EQ(cache.list("gemm"), std::vector<std::filesystem::path>{entry});
  EXPECT_TRUE(cache.list("other").empty());
}

TEST_F(winner_cache_test, function_directory_names_are_file_safe) {
  const tunekit::winner_cache cache(dir.path());
  EXPECT_EQ(cache.root(), dir.path());
  EXPECT_EQ(cache.function_dir("gemm"), dir.path() / "autotune" / "gemm");
  EXPECT_EQ(cache.function_dir("a.b-c_D9"), dir.path() / "autotune" / "a.b-c_D9");
  EXPECT_EQ(cache.function_dir("ns::gemm/v2 x"), dir.path() / "autotune" / "ns__gemm_v2_x");
  EXPECT_EQ(cache.function_dir("../../etc"), dir.path() / "autotune" / ".._.._etc");
  EXPECT_EQ(cache.function_dir(".."), dir.path() / "autotune" / "_..");
  EXPECT_EQ(cache.function_dir(""), dir.path() / "autotune" / "_");
}

TEST_F(winner_cache_test, digest_covers_name_version_hardware_and_key) {
  const auto hw = tunekit_test::test_hardware();
  auto other_hw = hw;
  other_hw.units = 16;
  const std::set<std::string> digests{
      tunekit::cache_digest({"gemm", "v1"}, hw, key{1024}),
      tunekit::cache_digest({"gemm2", "v1"}, hw, key{1024}),
      tunekit::cache_digest({"gemm", "v2"}, hw, key{1024}),
      tunekit::cache_digest({"gemm", "v1"}, other_hw, key{1024}),
      tunekit::cache_digest({"gemm", "v1"}, hw, key{1025}),
      tunekit::cache_digest({"gemm", "v1"}, hw, key{1024.0}),
      tunekit::cache_digest({"gemm", "v1"}, hw, key{"1024"}),
      tunekit::cache_digest({"gemm", "v1"}, hw, key{1024, 1}),
  };
  EXPECT_EQ(digests.size(), 8U);
  EXPECT_EQ(tunekit::cache_digest({"gemm", "v1"}, hw, key{1024}),
            tunekit::cache_digest({"gemm", "v1"}, hw, key{1024}));
}

TEST_F(winner_cache_test, entry_records_key_hardware_dependencies_winner_candidates_policy) {
  auto o = opts();
  o.dependencies = {{"cuda_runtime", "12.4"}};
  o.policy = {.warmup = 2, .runs = 4, .stat = tunekit::statistic::median};
  cost = [](const config &c, const key &k) {
    if (c.get_int("BLOCK") == 1024 && c.get_int("num_warps") == 8) {
      throw std::runtime_error("too many resources requested");
    }
    return tunekit_test::block_cost(c, k);
  };
  ASSERT_EQ(tune(1024, o).used, fastest);

  const json j = read_json(entry_of(1024));
  EXPECT_EQ(j.at("schema"), "tunekit.winner_cache/2");
  EXPECT_EQ(j.at("function"), (json{{"name", "gemm"}, {"version", "v1"}}));
  ASSERT_TRUE(j.at("key").is_array());
  ASSERT_EQ(j.at("key").size(), 1U);
  EXPECT_TRUE(j.at("key")[0].is_number_integer());
  EXPECT_EQ(j.at("key")[0], 1024);

  const json &hw = j.at("hardware");
  EXPECT_EQ(hw.at("kind"), "host");
  EXPECT_EQ(hw.at("name"), "Test CPU 9000");
  EXPECT_EQ(hw.at("arch"), "x86_64");
  EXPECT_EQ(hw.at("units"), 8);
  EXPECT_EQ(hw.at("count"), 1);
  EXPECT_EQ(hw.at("digest"), tunekit_test::test_hardware().digest());

  const json &deps = j.at("dependencies");
  EXPECT_EQ(deps.at("tunekit"), tunekit::version());
  EXPECT_EQ(deps.at("compiler"), tunekit::core_dependencies().at("compiler"));
  EXPECT_EQ(deps.at("cuda_runtime"), "12.4");

  EXPECT_EQ(j.at("winner").at("config"), (json{{"BLOCK", 512}, {"num_warps", 4}}));
  EXPECT_EQ(j.at("winner").at("index"), 2);

  // The kept candidates are listed (BLOCK 2048 is pruned for 1024), the pruned ones counted.
  const json &cands = j.at("candidates");
  const auto space = block_space();
  ASSERT_EQ(cands.size(), space.size() - 2);
  EXPECT_EQ(j.at("space").at("size"), space.size());
  EXPECT_EQ(j.at("space").at("pruned"), 2);
  EXPECT_EQ(j.at("space").at("winner"), 2);
  EXPECT_EQ(j.at("space").at("digest").get<std::string>().size(), 64U);
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const json &c = cands[i];
    const config &expected = space[i];
    EXPECT_EQ(c.at("config"), (json{{"BLOCK", expected.get_int("BLOCK")},
                                    {"num_warps", expected.get_int("num_warps")}}))
        << i;
    const std::string status = c.at("status");
    if (expected.get_int("BLOCK") == 1024 && expected.get_int("num_warps") == 8) {
      EXPECT_EQ(status, "failed") << i;
      EXPECT_TRUE(c.at("time_ms").is_null()) << i;
      EXPECT_EQ(c.at("reason"), "too many resources requested") << i;
      EXPECT_FALSE(c.contains("stats")) << i;
    } else {
      EXPECT_EQ(status, "ok") << i;
      ASSERT_TRUE(c.at("time_ms").is_number_float()) << i;
      const json &stats = c.at("stats");
      for (const char *field : {"mean", "median", "min", "max", "stddev"}) {
        EXPECT_TRUE(stats.at(field).is_number()) << i << " " << field;
      }
      EXPECT_EQ(c.at("time_ms"), stats.at("median")) << "the policy's statistic, " << i;
      EXPECT_NEAR(c.at("time_ms").get<double>(), tunekit_test::block_cost(expected, key{1024}), 0.1)
          << i;
      EXPECT_FALSE(c.contains("reason")) << i;
    }
  }

  EXPECT_EQ(j.at("policy"), (json{{"warmup", 2}, {"runs", 4}, {"statistic", "median"}}));
  EXPECT_EQ(j.at("measurer"), "simulated");
  EXPECT_EQ(j.at("world_size"), 1);
  const std::string stamp = j.at("timestamp");
  EXPECT_TRUE(is_utc_timestamp(stamp)) << stamp;

  // The reader gives back what the tuner recorded.
  const cache_entry e = tunekit::cache_entry_from_json(tunekit_test::read_text(entry_of(1024)));
  EXPECT_EQ(e.function, (function_identity{"gemm", "v1"}));
  EXPECT_EQ(e.key, key{1024});
  EXPECT_EQ(e.hardware, tunekit_test::test_hardware());
  EXPECT_EQ(e.dependencies.at("cuda_runtime"), "12.4");
  EXPECT_EQ(e.winner, fastest);
  EXPECT_EQ(e.winner_index, 2U);
  ASSERT_EQ(e.candidates.size(), 6U);
  EXPECT_EQ(e.candidates[5].status, candidate_status::failed);
  ASSERT_TRUE(e.space.has_value());
  EXPECT_EQ(e.space->pruned, 2U);
  EXPECT_EQ(e.policy, o.policy);
  EXPECT_EQ(e.timestamp, stamp);
}

TEST_F(winner_cache_test, types_round_trip_exactly) {
  // 256 and 256.0 are distinct candidates; the double one is the fastest, and must come back as
  // a double from a fresh tuner's cache hit.
  const auto space = config_space::product(
      {{"tile", {256, 256.0}}, {"vec", {true, false}}, {"algo", {"1", "tiled"}}});
  cost = [](const config &c, const key &) {
    return (c.at("tile").is_double() ? 1.0 : 2.0) + (c.get_bool("vec") ? 1.0 : 0.0) +
           (c.get_string("algo") == "1" ? 0.0 : 1.0);
  };
  const config want{{"tile", 256.0}, {"vec", false}, {"algo", "1"}};
  const auto first = tune(8, opts(), space);
  ASSERT_EQ(first.used, want);

  const json w = read_json(first.path).at("winner").at("config");
  EXPECT_TRUE(w.at("tile").is_number_float());
  EXPECT_TRUE(w.at("vec").is_boolean());
  EXPECT_TRUE(w.at("algo").is_string());
  EXPECT_TRUE(has(tunekit_test::read_text(first.path), "\"tile\": 256.0"));

  const auto second = tune(8, opts(), space);
  EXPECT_EQ(second.src, source::cache);
  EXPECT_EQ(second.measured, 0U);
  EXPECT_EQ(second.used, want);
  EXPECT_TRUE(second.used.at("tile").is_double());
  EXPECT_TRUE(second.used.at("algo").is_string());
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(winner_cache_test, serialisation_round_trips_every_field) {
  cache_entry e;
  e.function = {"gemm", "abc123"};
  e.key = key{1024, 2.0, true, "f32", -7};
  e.hardware = tunekit::hardware_info{"cuda", "NVIDIA H200", "sm_90", 132, 8};
  e.dependencies = {{"cuda_runtime", "12.4"}, {"tunekit", "0.1.0"}};
  config a{{"BLOCK", 256}, {"alpha", 0.5}, {"split", false}, {"algo", "tiled"}};
  a.set_template_id("tiled_v2");
  config b{{"BLOCK", 256.0}, {"alpha", 0.5}, {"split", false}, {"algo", "tiled"}};
  e.candidates = {
      {a, candidate_status::ok, 1.25, {1.25, 1.0, 0.5, 3.0, 0.75}, ""},
      {b, candidate_status::failed, std::numeric_limits<double>::infinity(), {}, "boom"},
      {config{{"BLOCK", 1}},
       candidate_status::wrong_result,
       std::numeric_limits<double>::infinity(),
       {},
       "wrong result"},
      {config{{"BLOCK", 2}},
       candidate_status::pruned,
       std::numeric_limits<double>::infinity(),
       {},
       ""},
  };
  e.winner = a;
  e.winner_index = 0;
  e.policy = {.warmup = 3, .runs = 7, .stat = tunekit::statistic::min};
  e.measurer = "cuda";
  e.world_size = 4;
  e.timestamp = "2026-01-02T03:04:05Z";

  const cache_entry r = tunekit::cache_entry_from_json(tunekit::to_json(e));
  EXPECT_EQ(r.function, e.function);
  EXPECT_EQ(r.key, e.key);
  EXPECT_EQ(r.hardware, e.hardware);
  EXPECT_EQ(r.dependencies, e.dependencies);
  EXPECT_EQ(r.winner, e.winner);
  EXPECT_EQ(r.winner.template_id(), "tiled_v2");
  EXPECT_EQ(r.winner_index, 0U);
  ASSERT_EQ(r.candidates.size(), 4U);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.candidates[i].config, e.candidates[i].config) << i;
    EXPECT_EQ(r.candidates[i].status, e.candidates[i].status) << i;
    EXPECT_EQ(r.candidates[i].time_ms, e.candidates[i].time_ms) << i;
    EXPECT_EQ(r.candidates[i].reason, e.candidates[i].reason) << i;
  }
  EXPECT_EQ(r.candidates[0].stats.mean, 1.25);
  EXPECT_EQ(r.candidates[0].stats.median, 1.0);
  EXPECT_EQ(r.candidates[0].stats.min, 0.5);
  EXPECT_EQ(r.candidates[0].stats.max, 3.0);
  EXPECT_EQ(r.candidates[0].stats.stddev, 0.75);
  EXPECT_TRUE(r.candidates[1].config.at("BLOCK").is_double());
  EXPECT_EQ(r.policy, e.policy);
  EXPECT_EQ(r.measurer, "cuda");
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.timestamp, e.timestamp);
  // Writing it again gives the same text.
  EXPECT_EQ(tunekit::to_json(r), tunekit::to_json(e));
  EXPECT_EQ(tunekit::to_string(candidate_status::wrong_result), "wrong_result");
}

TEST_F(winner_cache_test, a_fresh_tuner_is_served_from_the_cache_without_measuring) {
  const auto first = tune(1024, opts());
  ASSERT_EQ(first.src, source::search);
  ASSERT_EQ(first.measured, 6U);
  const std::string before = tunekit_test::read_text(first.path);

  const auto second = tune(1024, opts());
  EXPECT_EQ(second.src, source::cache);
  EXPECT_EQ(second.measured, 0U);
  EXPECT_EQ(second.searches, 0U);
  EXPECT_EQ(second.calls, 1U); // only the call whose result is returned
  EXPECT_EQ(second.used, fastest);
  EXPECT_EQ(tunekit_test::read_text(first.path), before) << "a hit does not rewrite the entry";
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(winner_cache_test, a_changed_key_is_a_miss) {
  static_cast<void>(tune(1024, opts()));
  const auto other = tune(2048, opts());
  EXPECT_EQ(other.src, source::search);
  EXPECT_EQ(other.measured, 8U);
  EXPECT_TRUE(std::filesystem::exists(entry_of(2048)));
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(winner_cache_test, a_changed_version_is_a_miss) {
  static_cast<void>(tune(1024, opts("v1")));
  const auto other = tune(1024, opts("v2"));
  EXPECT_EQ(other.src, source::search);
  EXPECT_EQ(other.measured, 6U);
  EXPECT_TRUE(std::filesystem::exists(entry_of(1024, "v1")));
  EXPECT_TRUE(std::filesystem::exists(entry_of(1024, "v2")));
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(winner_cache_test, changed_hardware_is_a_miss) {
  static_cast<void>(tune(1024, opts()));
  auto o = opts();
  o.hardware->name = "Test CPU 9001";
  const auto other = tune(1024, o);
  EXPECT_EQ(other.src, source::search);
  EXPECT_EQ(other.measured, 6U);
  EXPECT_NE(other.path, entry_of(1024));
  EXPECT_TRUE(std::filesystem::exists(other.path));
  // And the original hardware still hits.
  EXPECT_EQ(tune(1024, opts()).src, source::cache);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

namespace {
// One way to spoil a valid entry: its name, and the text that replaces the entry's text.
struct spoiler {
  std::string name;
  std::function<std::string(const std::string &)> apply;
  std::string expected_problem; // a part of the warning
};

std::function<std::string(const std::string &)> edit(std::function<void(json &)> change) {
  return [change = std::move(change)](const std::string &text) {
    json j = json::parse(text);
    change(j);
    return j.dump(2);
  };
}

// Inserts `member` (text) as the first member of the winner's config.
std::function<std::string(const std::string &)> in_winner_config(std::string member) {
  return [member = std::move(member)](const std::string &text) {
    const auto winner = text.find("\"winner\"");
    const auto open = text.find('{', text.find("\"config\"", winner));
    return text.substr(0, open + 1) + member + "," + text.substr(open + 1);
  };
}

std::vector<spoiler> spoilers() {
  auto other_hw = tunekit_test::test_hardware();
  other_hw.name = "Other CPU";
  return {
      {"corrupt", [](const std::string &) { return std::string("{ this is not json"); },
       "not valid JSON"},
      {"truncated", [](const std::string &t) { return t.substr(0, t.size() / 2); },
       "not valid JSON"},
      {"empty", [](const std::string &) { return std::string(); }, "not valid JSON"},
      {"binary", [](const std::string &) { return std::string("\x00\xff\xfe", 3); },
       "not valid JSON"},
      // A config value nested 10^5 levels deep (600 kB): refused before it is built.
      {"nested_too_deep",
       in_winner_config("\"deep\": " + std::string(100000, '[') + std::string(100000, ']')),
       "nests arrays and objects more than 512 levels deep"},
      {"member_twice",
       [](const std::string &t) { return "{\"key\": [1], " + t.substr(t.find('{') + 1); },
       "the member \"key\" appears twice in one object"},
      {"not_an_object", [](const std::string &) { return std::string("[1, 2, 3]"); },
       "not a JSON object"},
      {"wrong_schema", edit([](json &j) { j["schema"] = "tunekit.winner_cache/999"; }), "schema"},
      {"missing_schema", edit([](json &j) { j.erase("schema"); }), "'schema' is missing"},
      {"missing_winner", edit([](json &j) { j.erase("winner"); }), "'winner' is missing"},
      {"missing_candidates", edit([](json &j) { j.erase("candidates"); }),
       "'candidates' is missing"},
      {"key_not_array", edit([](json &j) { j["key"] = 1024; }), "'key' must be an array"},
      {"key_value_null", edit([](json &j) { j["key"][0] = nullptr; }), "key[0]"},
      {"key_as_string", edit([](json &j) { j["key"][0] = "1024"; }), "holds key (\"1024\")"},
      {"key_as_double", edit([](json &j) { j["key"][0] = 1024.0; }), "holds key (1024.0)"},
      {"index_as_string", edit([](json &j) { j["winner"]["index"] = "2"; }),
       "'winner.index' must be an integer"},
      {"index_out_of_range", edit([](json &j) { j["winner"]["index"] = 99; }), "outside"},
      {"index_negative", edit([](json &j) { j["winner"]["index"] = -1; }), "outside"},
      {"winner_not_its_candidate", edit([](json &j) { j["winner"]["index"] = 0; }),
       "not the valid candidate"},
      {"winner_candidate_failed", edit([](json &j) {
         j["candidates"][2]["status"] = "failed";
         j["candidates"][2]["time_ms"] = nullptr;
       }),
       "not the valid candidate"},
      {"time_as_string", edit([](json &j) { j["candidates"][0]["time_ms"] = "3.0"; }),
       "candidates[0].time_ms"},
      {"time_negative", edit([](json &j) { j["candidates"][0]["time_ms"] = -1.0; }),
       "candidates[0].time_ms"},
      {"time_on_pruned", edit([](json &j) {
         j["candidates"].push_back({{"config", {{"BLOCK", 2048}, {"num_warps", 4}}},
                                    {"status", "pruned"},
                                    {"time_ms", 1.0}});
       }),
       "candidates[6].time_ms"},
      {"space_winner_outside", edit([](json &j) { j["space"]["winner"] = 8; }), "'space'"},
      {"space_negative", edit([](json &j) { j["space"]["pruned"] = -1; }),
       "'space.pruned' must not be negative"},
      {"unknown_status", edit([](json &j) { j["candidates"][1]["status"] = "great"; }),
       "not a candidate status"},
      {"config_value_array", edit([](json &j) { j["candidates"][1]["config"]["BLOCK"] = {1}; }),
       "candidates[1].config.BLOCK"},
      {"config_not_object", edit([](json &j) { j["winner"]["config"] = "BLOCK=512"; }),
       "winner.config"},
      {"stats_missing", edit([](json &j) { j["candidates"][0].erase("stats"); }),
       "candidates[0].stats"},
      {"units_as_string", edit([](json &j) { j["hardware"]["units"] = "8"; }), "hardware.units"},
      {"hardware_digest_tampered", edit([](json &j) { j["hardware"]["digest"] = "00"; }),
       "hardware.digest"},
      {"dependency_not_string", edit([](json &j) { j["dependencies"]["tunekit"] = 1; }),
       "dependencies.tunekit"},
      {"policy_statistic_unknown", edit([](json &j) { j["policy"]["statistic"] = "mode"; }),
       "policy.statistic"},
      {"world_size_missing", edit([](json &j) { j.erase("world_size"); }), "world_size"},
      // Well-formed, but a winner of another type than the current candidates'.
      {"winner_block_as_double", edit([](json &j) {
         j["winner"]["config"]["BLOCK"] = 512.0;
         j["candidates"][2]["config"]["BLOCK"] = 512.0;
       }),
       "not among the current candidates"},
      // Well-formed, but someone else's entry at this path.
      {"other_function", edit([](json &j) { j["function"]["name"] = "other"; }),
       "belongs to function 'other'"},
      {"other_version", edit([](json &j) { j["function"]["version"] = "v0"; }), "version 'v0'"},
      {"other_hardware", edit([other_hw](json &j) {
         j["hardware"]["name"] = other_hw.name;
         j["hardware"]["digest"] = other_hw.digest();
       }),
       "other hardware: Other CPU"},
      {"other_key", edit([](json &j) { j["key"][0] = 4096; }), "holds key (4096), not (1024)"},
  };
}

void PrintTo(const spoiler &s, std::ostream *os) { *os << s.name; }

class bad_entry : public winner_cache_test, public ::testing::WithParamInterface<spoiler> {};
} // namespace

TEST_P(bad_entry, is_skipped_with_a_warning_and_retuned) {
  const auto first = tune(1024, opts());
  ASSERT_EQ(first.src, source::search);
  const std::string good = tunekit_test::read_text(first.path);
  tunekit_test::write_text(first.path, GetParam().apply(good));

  const auto second = tune(1024, opts());
  EXPECT_EQ(second.src, source::search);
  EXPECT_EQ(second.measured, 6U);
  EXPECT_EQ(second.used, fastest);
  const auto warnings = log.warnings();
  ASSERT_EQ(warnings.size(), 1U) << log.dump();
  EXPECT_TRUE(has(warnings[0], first.path.string())) << warnings[0];
  EXPECT_TRUE(has(warnings[0], "retuning")) << warnings[0];
  EXPECT_TRUE(has(warnings[0], GetParam().expected_problem)) << warnings[0];

  // The retune rewrote a valid entry: the next tuner is served from it.
  log.clear();
  const auto third = tune(1024, opts());
  EXPECT_EQ(third.src, source::cache);
  EXPECT_EQ(third.measured, 0U);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

INSTANTIATE_TEST_SUITE_P(winner_cache, bad_entry, ::testing::ValuesIn(spoilers()),
                         [](const auto &p) { return p.param.name; });

TEST_F(winner_cache_test, a_directory_in_place_of_the_entry_does_not_crash) {
  std::filesystem::create_directories(entry_of(1024));
  const auto out = tune(1024, opts());
  EXPECT_EQ(out.src, source::search);
  EXPECT_EQ(out.used, fastest);
  // Reading it was refused, and so was writing over it; both were reported.
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"retuning"}), 1U) << log.dump();
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"could not store"}), 1U) << log.dump();
}

TEST_F(winner_cache_test, a_fifo_in_place_of_the_entry_is_refused_without_waiting_for_a_writer) {
  const auto path = entry_of(1024);
  std::filesystem::create_directories(path.parent_path());
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0) << std::strerror(errno);
  const auto out = tune(1024, opts());
  EXPECT_EQ(out.src, source::search);
  EXPECT_EQ(out.used, fastest);
  EXPECT_EQ(
      log.count(tunekit::log_level::warning, {path.string(), "is a FIFO, not a regular file"}), 1U)
      << log.dump();
  // The store replaced the FIFO with the entry, which serves the next tuner.
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  EXPECT_EQ(tune(1024, opts()).src, source::cache);
}

TEST_F(winner_cache_test, an_entry_over_the_file_size_limit_is_refused_and_the_limit_is_a_setting) {
  static_cast<void>(tune(1024, opts()));
  {
    const tunekit_test::scoped_env env({}, {{"TUNEKIT_MAX_FILE_SIZE", "1K"}});
    const auto out = tune(1024, opts());
    EXPECT_EQ(out.src, source::search);
    EXPECT_EQ(log.count(tunekit::log_level::warning,
                        {"bytes, larger than the limit of 1024 bytes (TUNEKIT_MAX_FILE_SIZE)"}),
              1U)
        << log.dump();
  }
  log.clear();
  {
    const tunekit_test::scoped_env env({}, {{"TUNEKIT_MAX_FILE_SIZE", "lots"}});
    EXPECT_EQ(tune(1024, opts()).src, source::search);
    EXPECT_EQ(
        log.count(tunekit::log_level::warning, {"TUNEKIT_MAX_FILE_SIZE='lots' is not a size"}), 1U)
        << log.dump();
  }
  log.clear();
  const tunekit_test::scoped_env env({}, {{"TUNEKIT_MAX_FILE_SIZE", "0"}}); // no limit
  EXPECT_EQ(tune(1024, opts()).src, source::cache);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(winner_cache_test, an_entry_with_a_large_extra_object_is_served) {
  static_cast<void>(tune(1024, opts()));
  std::string text = tunekit_test::read_text(entry_of(1024));
  std::string extra = "\"extra\": {";
  for (int i = 0; i < 100000; ++i) {
    extra += (i > 0 ? ",\"m" : "\"m") + std::to_string(i) + "\": 1";
  }
  extra += "},";
  tunekit_test::write_text(entry_of(1024), "{" + extra + text.substr(text.find('{') + 1));
  const auto out = tune(1024, opts());
  EXPECT_EQ(out.src, source::cache);
  EXPECT_EQ(out.measured, 0U);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(winner_cache_test, a_winner_no_longer_among_the_candidates_is_retuned) {
  static_cast<void>(tune(1024, opts()));
  // The space changed: the stored winner is gone from it (and the space's digest changed).
  const auto space = config_space::product({{"BLOCK", {256, 1024}}, {"num_warps", {4, 8}}});
  const auto out = tune(1024, opts(), space);
  EXPECT_EQ(out.src, source::search);
  EXPECT_EQ(out.used, (config{{"BLOCK", 1024}, {"num_warps", 4}}));
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"recorded for another config space"}), 1U)
      << log.dump();
  // An entry of an older version records no space: its winner is looked for among the
  // candidates.
  const auto path = out.path;
  auto j = json::parse(tunekit_test::read_text(path));
  j.erase("space");
  tunekit_test::write_text(path, j.dump());
  log.clear();
  const auto older =
      tune(1024, opts(), config_space::product({{"BLOCK", {256, 512}}, {"num_warps", {4, 8}}}));
  EXPECT_EQ(older.src, source::search);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"not among the current candidates"}), 1U)
      << log.dump();
}

TEST_F(winner_cache_test, a_winner_pruned_now_is_retuned) {
  static_cast<void>(tune(1024, opts(), block_space(), 4096));
  // The prune now removes the stored winner (BLOCK=512) for the same key.
  const auto out = tune(1024, opts(), block_space(), 256);
  EXPECT_EQ(out.src, source::search);
  EXPECT_EQ(out.used, (config{{"BLOCK", 256}, {"num_warps", 4}}));
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"not among the current candidates"}), 1U)
      << log.dump();
}

TEST_F(winner_cache_test, always_tune_retunes_and_rewrites) {
  ASSERT_EQ(tune(1024, opts()).used, fastest);
  // The machine changed its mind: now BLOCK=1024 is fastest.
  cost = [](const config &c, const key &) {
    return c.get_int("BLOCK") == 1024 && c.get_int("num_warps") == 4 ? 0.5 : 2.0;
  };
  auto forced = opts();
  forced.process->env.always_tune = true;
  const auto out = tune(1024, forced);
  EXPECT_EQ(out.src, source::search);
  EXPECT_EQ(out.measured, 6U);
  const config now{{"BLOCK", 1024}, {"num_warps", 4}};
  EXPECT_EQ(out.used, now);
  EXPECT_EQ(read_json(entry_of(1024)).at("winner").at("config"),
            (json{{"BLOCK", 1024}, {"num_warps", 4}}));
  // A normal tuner is now served the rewritten winner.
  cost = tunekit_test::block_cost;
  const auto after = tune(1024, opts());
  EXPECT_EQ(after.src, source::cache);
  EXPECT_EQ(after.used, now);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(winner_cache_test, always_tune_without_an_entry_searches_and_writes_one) {
  auto forced = opts();
  forced.process->env.always_tune = true;
  EXPECT_EQ(tune(1024, forced).src, source::search);
  EXPECT_TRUE(std::filesystem::exists(entry_of(1024)));
}

TEST_F(winner_cache_test, differing_dependencies_warn_and_the_entry_is_used) {
  auto o = opts();
  o.dependencies = {{"driver", "550.54"}};
  static_cast<void>(tune(1024, o));
  // Simulate an entry recorded by other software.
  json j = read_json(entry_of(1024));
  j["dependencies"]["tunekit"] = "0.0.1";
  j["dependencies"]["nccl"] = "2.18";
  write_json(entry_of(1024), j);

  const auto out = tune(1024, o);
  EXPECT_EQ(out.src, source::cache);
  EXPECT_EQ(out.measured, 0U);
  EXPECT_EQ(out.used, fastest);
  const auto warnings = log.warnings();
  ASSERT_EQ(warnings.size(), 1U) << log.dump();
  EXPECT_TRUE(has(warnings[0], "tunekit 0.0.1 -> " + std::string(tunekit::version())))
      << warnings[0];
  EXPECT_TRUE(has(warnings[0], "nccl 2.18 -> none")) << warnings[0];
  EXPECT_TRUE(has(warnings[0], "TUNEKIT_VERSION_CHECK")) << warnings[0];
  EXPECT_FALSE(has(warnings[0], "driver")) << "driver did not change: " << warnings[0];
}

TEST_F(winner_cache_test, a_new_dependency_version_from_the_options_warns) {
  auto o = opts();
  o.dependencies = {{"driver", "550.54"}};
  static_cast<void>(tune(1024, o));
  o.dependencies = {{"driver", "560.10"}};
  const auto out = tune(1024, o);
  EXPECT_EQ(out.src, source::cache);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"driver 550.54 -> 560.10"}), 1U) << log.dump();
}

TEST_F(winner_cache_test, differing_dependencies_with_version_check_retune_and_rewrite) {
  static_cast<void>(tune(1024, opts()));
  json j = read_json(entry_of(1024));
  j["dependencies"]["tunekit"] = "0.0.1";
  write_json(entry_of(1024), j);

  auto checked = opts();
  checked.process->env.version_check = true;
  const auto out = tune(1024, checked);
  EXPECT_EQ(out.src, source::search);
  EXPECT_EQ(out.measured, 6U);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"tunekit 0.0.1 ->", "retuning"}), 1U)
      << log.dump();
  // The rewritten entry records the running dependencies, so the next check passes silently.
  EXPECT_EQ(read_json(entry_of(1024)).at("dependencies").at("tunekit"), tunekit::version());
  log.clear();
  EXPECT_EQ(tune(1024, checked).src, source::cache);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(winner_cache_test, equal_dependencies_with_version_check_hit) {
  static_cast<void>(tune(1024, opts()));
  auto checked = opts();
  checked.process->env.version_check = true;
  EXPECT_EQ(tune(1024, checked).src, source::cache);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST_F(winner_cache_test, writes_leave_no_temp_files_behind) {
  static_cast<void>(tune(1024, opts()));
  static_cast<void>(tune(2048, opts()));
  auto forced = opts();
  forced.process->env.always_tune = true;
  static_cast<void>(tune(1024, forced)); // rewrites over existing files
  const auto all = files();
  EXPECT_EQ(all.size(), 4U);
  for (const auto &f : all) {
    const std::string name = f.filename().string();
    EXPECT_TRUE(f.extension() == ".json" || f.extension() == ".log") << name;
    EXPECT_NE(name.front(), '.') << name;
    EXPECT_FALSE(has(name, ".tmp")) << name;
  }
}

TEST_F(winner_cache_test, write_file_atomically_replaces_the_whole_file) {
  const auto path = dir.path() / "a" / "b" / "file.json";
  tunekit::detail::write_file_atomically(path, "a long first version of the text\n");
  EXPECT_EQ(tunekit_test::read_text(path), "a long first version of the text\n");
  tunekit::detail::write_file_atomically(path, "short\n");
  EXPECT_EQ(tunekit_test::read_text(path), "short\n");
  tunekit::detail::write_file_atomically(path, "");
  EXPECT_EQ(tunekit_test::read_text(path), "");
  EXPECT_EQ(files().size(), 1U);
}

TEST_F(winner_cache_test, write_file_atomically_failure_names_the_path_and_leaves_nothing) {
  const auto blocker = dir.path() / "blocker";
  tunekit_test::write_text(blocker, "a file where a directory should be");
  try {
    tunekit::detail::write_file_atomically(blocker / "sub" / "entry.json", "{}");
    FAIL() << "no error";
  } catch (const tunekit::error &e) {
    EXPECT_TRUE(has(e.what(), blocker.string())) << e.what();
  }
  // A directory in place of the target: the rename fails and the temp file is removed.
  const auto target = dir.path() / "target.json";
  std::filesystem::create_directories(target / "inside");
  try {
    tunekit::detail::write_file_atomically(target, "{}");
    FAIL() << "no error";
  } catch (const tunekit::error &e) {
    EXPECT_TRUE(has(e.what(), target.string())) << e.what();
  }
  EXPECT_EQ(files(), std::vector<std::filesystem::path>{blocker});
}

TEST_F(winner_cache_test, an_unwritable_cache_warns_and_the_call_still_succeeds) {
  const auto blocker = dir.path() / "not-a-directory";
  tunekit_test::write_text(blocker, "x");
  auto o = opts();
  o.process->env.cache_dir = blocker;
  const auto out = tune(1024, o);
  EXPECT_EQ(out.src, source::search);
  EXPECT_EQ(out.used, fastest);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"could not store the winner"}), 1U)
      << log.dump();
}

TEST_F(winner_cache_test, load_and_store_directly) {
  const tunekit::winner_cache cache(dir.path());
  const function_identity fn{"gemm", "v1"};
  const auto hw = tunekit_test::test_hardware();
  const auto miss = cache.load(fn, hw, key{1});
  EXPECT_EQ(miss.status, load_status::missing);
  EXPECT_FALSE(miss.value.has_value());
  EXPECT_TRUE(miss.detail.empty());
  EXPECT_EQ(miss.path, cache.entry_path(fn, hw, key{1}));
  EXPECT_TRUE(cache.list().empty());

  cache_entry e;
  e.function = fn;
  e.key = key{1};
  e.hardware = hw;
  e.winner = config{{"BLOCK", 64}};
  e.candidates = {{e.winner, candidate_status::ok, 0.5, {0.5, 0.5, 0.5, 0.5, 0.0}, ""}};
  e.timestamp = "2026-01-01T00:00:00Z";
  const auto path = cache.store(e, "");
  EXPECT_EQ(path, miss.path);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(path).replace_extension(".log")))
      << "no log text, no log file";
  const auto hit = cache.load(fn, hw, key{1});
  ASSERT_TRUE(hit.found()) << hit.detail;
  EXPECT_EQ(hit.value->winner, e.winner);
  EXPECT_TRUE(hit.detail.empty());
  // Another function identity at the same root is another entry.
  EXPECT_EQ(cache.load({"gemm", "v2"}, hw, key{1}).status, load_status::missing);
  EXPECT_EQ(cache.list("gemm").size(), 1U);
}

namespace {

// A valid entry of `fn` for key `k` on the test hardware, BLOCK=64 winning.
cache_entry entry_for(const function_identity &fn, const key &k) {
  cache_entry e;
  e.function = fn;
  e.key = k;
  e.hardware = tunekit_test::test_hardware();
  e.winner = config{{"BLOCK", 64}};
  e.candidates = {{e.winner, candidate_status::ok, 0.5, {0.5, 0.5, 0.5, 0.5, 0.0}, ""}};
  e.timestamp = "2026-01-01T00:00:00Z";
  return e;
}

// Runs in `dir` as the working directory, then goes back.
class working_directory {
public:
  explicit working_directory(const std::filesystem::path &dir)
      : m_old(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~working_directory() { std::filesystem::current_path(m_old); }
  working_directory(const working_directory &) = delete;
  working_directory &operator=(const working_directory &) = delete;

private:
  std::filesystem::path m_old;
};

} // namespace

TEST_F(winner_cache_test, write_file_atomically_accepts_a_bare_file_name) {
  {
    const working_directory here(dir.path());
    tunekit::detail::write_file_atomically("t.json", "{}\n");
  }
  EXPECT_EQ(tunekit_test::read_text(dir.path() / "t.json"), "{}\n");
  EXPECT_EQ(files().size(), 1U);
}

TEST_F(winner_cache_test, read_validates_an_entry_by_its_path) {
  const tunekit::winner_cache cache(dir.path());
  const auto path = cache.store(entry_for({"gemm", "v1"}, key{1}), "log\n");

  const auto hit = tunekit::winner_cache::read(path);
  ASSERT_TRUE(hit.found()) << hit.detail;
  EXPECT_EQ(hit.value->winner, (config{{"BLOCK", 64}}));
  EXPECT_EQ(hit.path, path);

  EXPECT_EQ(tunekit::winner_cache::read(dir.path() / "absent.json").status, load_status::missing);

  // Copied under another name: valid JSON, but not the file its identity names.
  const auto renamed = path.parent_path() / "renamed.json";
  std::filesystem::copy_file(path, renamed);
  const auto misnamed = tunekit::winner_cache::read(renamed);
  EXPECT_EQ(misnamed.status, load_status::identity_mismatch);
  EXPECT_TRUE(has(misnamed.detail, "is named renamed.json")) << misnamed.detail;
  EXPECT_FALSE(misnamed.value.has_value());

  tunekit_test::write_text(path, "{ truncated");
  const auto bad = tunekit::winner_cache::read(path);
  EXPECT_EQ(bad.status, load_status::invalid);
  EXPECT_TRUE(bad.rejected());
  EXPECT_TRUE(has(bad.detail, "not valid JSON")) << bad.detail;

  const auto a_dir = dir.path() / "dir.json";
  std::filesystem::create_directories(a_dir);
  EXPECT_EQ(tunekit::winner_cache::read(a_dir).status, load_status::unreadable);
}

TEST_F(winner_cache_test, remove_deletes_the_entries_of_one_function_and_their_logs) {
  const tunekit::winner_cache cache(dir.path());
  const auto g1 = cache.store(entry_for({"gemm", "v1"}, key{1}), "log\n");
  const auto g2 = cache.store(entry_for({"gemm", "v1"}, key{2}), "log\n");
  const auto other = cache.store(entry_for({"other", "v1"}, key{1}), "log\n");
  ASSERT_EQ(files().size(), 6U);

  using path_set = std::set<std::filesystem::path>;
  const auto removed = cache.remove("gemm");
  EXPECT_EQ(path_set(removed.begin(), removed.end()), (path_set{g1, g2}));
  auto other_log = other;
  other_log.replace_extension(".log");
  const auto left = files();
  EXPECT_EQ(path_set(left.begin(), left.end()), (path_set{other, other_log}));
  EXPECT_TRUE(cache.remove("gemm").empty());

  EXPECT_EQ(cache.remove(), std::vector<std::filesystem::path>{other});
  EXPECT_TRUE(files().empty());
}

TEST_F(winner_cache_test, a_stored_key_splits_into_input_and_pinned_values) {
  const config pinned{{"num_warps", 8}, {"algo", "tiled"}};
  const key stored = tunekit::stored_key(key{1024, "f32"}, pinned);
  EXPECT_EQ(stored, (key{1024, "f32", "pinned num_warps", 8, "pinned algo", "tiled"}));

  const auto parts = tunekit::split_stored_key(stored);
  EXPECT_EQ(parts.input, (key{1024, "f32"}));
  EXPECT_EQ(parts.pinned, pinned);
  EXPECT_EQ(parts.pinned.begin()->name, "num_warps"); // in the order they were pinned

  const auto plain = tunekit::split_stored_key(key{1024, "pinned"});
  EXPECT_EQ(plain.input, (key{1024, "pinned"}));
  EXPECT_TRUE(plain.pinned.empty());
}

TEST_F(winner_cache_test, a_tuner_stores_pinned_values_as_split_stored_key_reads_them) {
  auto o = opts();
  auto f = tunekit::autotune(
      "gemm", block_space(), [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &) { return 0; }, std::move(o));
  static_cast<void>(f.with({.allow_arg_overwrite = true, .pinned = config{{"num_warps", 8}}})(512));
  const auto entries = tunekit::winner_cache(dir.path()).list("gemm");
  ASSERT_EQ(entries.size(), 1U);
  const auto e = tunekit::winner_cache::read(entries[0]);
  ASSERT_TRUE(e.found()) << e.detail;
  const auto parts = tunekit::split_stored_key(e.value->key);
  EXPECT_EQ(parts.input, key{512});
  EXPECT_EQ(parts.pinned, (config{{"num_warps", 8}}));
}

namespace {

// Links below the cache root are refused both ways: a linked function folder would send writes
// outside the cache, and a linked entry would serve a file from anywhere. The root itself may be
// a link.
TEST_F(winner_cache_test, symbolic_links_below_the_root_are_refused_with_a_warning) {
  temp_dir outside;
  const auto first = tune(1024, opts());
  ASSERT_EQ(first.src, source::search);
  const auto entry = first.path;

  // An entry file that links to a valid entry elsewhere is not served.
  const auto elsewhere = outside.path() / "entry.json";
  std::filesystem::rename(entry, elsewhere);
  std::filesystem::create_symlink(elsewhere, entry);
  const auto linked = tune(1024, opts());
  EXPECT_EQ(linked.src, source::search);
  EXPECT_EQ(log.count(tunekit::log_level::warning,
                      {"skipping winner cache entry", "is a symbolic link", entry.string()}),
            1U)
      << log.dump();
  EXPECT_TRUE(std::filesystem::is_symlink(entry)); // left as it is: the store is refused too
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"could not store the winner"}), 1U)
      << log.dump();

  // A linked function folder: nothing is read through it, nothing written outside the cache.
  std::filesystem::remove(entry);
  const auto fn_dir = dir.path() / "autotune" / "gemm";
  std::filesystem::remove_all(fn_dir);
  std::filesystem::create_directories(outside.path() / "gemm");
  std::filesystem::create_directory_symlink(outside.path() / "gemm", fn_dir);
  const auto through = tune(2048, opts());
  EXPECT_EQ(through.src, source::search);
  EXPECT_TRUE(std::filesystem::is_empty(outside.path() / "gemm"));
  EXPECT_EQ(log.count(tunekit::log_level::warning,
                      {"could not store the winner", fn_dir.string() + " is a symbolic link"}),
            1U)
      << log.dump();

  // A cache root that is itself a link works as usual.
  temp_dir real;
  const auto root_link = outside.path() / "root";
  std::filesystem::create_directory_symlink(real.path(), root_link);
  auto o = opts();
  o.process->env.cache_dir = root_link;
  EXPECT_EQ(tune(512, o).src, source::search);
  EXPECT_EQ(tune(512, o).src, source::cache);
}

// On a nearly full disk the small log may fit and the entry not: no log is left without its
// entry. (The file size limit stands in for the full disk.)
TEST_F(winner_cache_test, a_failed_entry_write_leaves_no_log_behind) {
  const tunekit::winner_cache cache(dir.path());
  cache_entry e;
  e.function = {"gemm", "v1"};
  e.key = key{7};
  e.hardware = tunekit_test::test_hardware();
  e.winner = fastest;
  tunekit::candidate_record r;
  r.config = fastest;
  r.time_ms = 1.0;
  e.candidates.push_back(r);
  const std::string log_text = "a short log";
  ASSERT_LT(log_text.size(), 64U);
  ASSERT_GT(tunekit::to_json(e).size(), 64U);

  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 64;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string msg;
  try {
    static_cast<void>(cache.store(e, log_text));
  } catch (const tunekit::error &err) {
    msg = err.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_TRUE(has(msg, "cannot write")) << msg;
  EXPECT_TRUE(files().empty()) << files().size() << " files left";
  // With room again, both are written.
  const auto path = cache.store(e, log_text);
  auto log_path = path;
  log_path.replace_extension(".log");
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(tunekit_test::read_text(log_path), log_text);
}

} // namespace

namespace {

// A large space whose prune_fn keeps one config: the entry lists the kept candidate and counts
// the rest, and a later process serves the key by asking prune_fn about the cached winner only.
TEST_F(winner_cache_test, a_cache_hit_costs_the_same_whatever_the_size_of_the_space) {
  std::vector<tunekit::value> a;
  std::vector<tunekit::value> b;
  for (int i = 0; i < 100; ++i) {
    a.emplace_back(i);
  }
  for (int i = 0; i < 1000; ++i) {
    b.emplace_back(i);
  }
  const auto space = config_space::product({{"a", a}, {"b", b}});
  ASSERT_EQ(space.size(), 100000U);
  auto make = [&](std::shared_ptr<std::size_t> prunes) {
    auto o = opts();
    o.measurer = std::make_shared<tunekit::simulated_measurer>(
        [](const config &, const key &) { return 1.0; });
    return tunekit::autotune(
        "huge", space, [](int n) { return key{n}; },
        [prunes](const config &c, int) {
          ++*prunes;
          return c.get_int("a") == 42 && c.get_int("b") == 7;
        },
        [](int, const config &c) { return c.get_int("a") * 1000 + c.get_int("b"); }, o);
  };
  auto first_prunes = std::make_shared<std::size_t>(0);
  auto first = make(first_prunes);
  EXPECT_EQ(first(3), 42007);
  EXPECT_EQ(*first_prunes, 100000U);
  const auto path = first.tuner().cache_path(key{3});
  EXPECT_LT(std::filesystem::file_size(path), 4096U);
  auto log_path = path;
  log_path.replace_extension(".log");
  EXPECT_LT(std::filesystem::file_size(log_path), 4096U);
  const std::string log_text = tunekit_test::read_text(log_path);
  EXPECT_TRUE(has(log_text, "99999 of 100000 configs pruned (not listed)")) << log_text;

  const auto entry = tunekit::winner_cache(dir.path()).read(path);
  ASSERT_TRUE(entry.found()) << entry.detail;
  ASSERT_EQ(entry.value->candidates.size(), 1U);
  ASSERT_TRUE(entry.value->space.has_value());
  EXPECT_EQ(entry.value->space->size, 100000U);
  EXPECT_EQ(entry.value->space->pruned, 99999U);
  EXPECT_EQ(entry.value->space->winner, 42007U);

  // A fresh tuner (a new process): a cache hit that prunes only the cached winner.
  auto second_prunes = std::make_shared<std::size_t>(0);
  auto second = make(second_prunes);
  EXPECT_EQ(second(3), 42007);
  EXPECT_EQ(second.tuner().last_source(), source::cache);
  EXPECT_EQ(*second_prunes, 1U);
}

// An entry recorded for another space (same version) is skipped with a warning.
TEST_F(winner_cache_test, an_entry_of_another_space_is_retuned) {
  ASSERT_EQ(tune(1024, opts()).src, source::search);
  const auto other =
      config_space::product({{"BLOCK", {256, 512, 1024, 2048, 4096}}, {"num_warps", {4, 8}}});
  const auto again = tune(1024, opts(), other);
  EXPECT_EQ(again.src, source::search);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"recorded for another config space"}), 1U)
      << log.dump();
}

} // namespace
