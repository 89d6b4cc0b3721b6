// Kernel Tuner cache files to and from winner cache entries (formats/kernel_tuner.hpp): a
// hand-written file in the layout Kernel Tuner 1.5 writes, an excerpt of a published measured
// space (tests/core/data), and an entry written by a real tuner, each imported and exported and
// compared; bad files refused with errors that say what is wrong.

#include "test_support.hpp"

#include "formats/kernel_tuner_file.hpp"

#include <tunekit/formats/kernel_tuner.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <string>

namespace {

using json = nlohmann::ordered_json;
using tunekit::candidate_status;
using tunekit::config;
using tunekit::key;

// What Kernel Tuner 1.5 writes for a run over BLOCK x mode x scale x fast_math: records with their
// parameters, "times", compile and benchmark times and a UTC time stamp; one failed record in the
// 1.4+ form ("__error__", no time) and one in the 1.0-1.3 form ("time": the marker).
const char *kt_file = R"({
"device_name": "NVIDIA H200",
"kernel_name": "scale_kernel",
"problem_size": [
4096,
2
],
"tune_params_keys": ["BLOCK", "mode", "scale", "fast_math"],
"tune_params": {"BLOCK": [128, 256], "mode": ["fast", "safe"], "scale": [0.5, 1e-05],
                "fast_math": [true, false]},
"objective": "time",
"cache": {
"128,fast,0.5,True": {"BLOCK": 128, "mode": "fast", "scale": 0.5, "fast_math": true, "time": 2.0, "times": [1.9, 2.1, 2.0], "compile_time": 310.5, "verification_time": 0, "benchmark_time": 12.25, "timestamp": "2026-03-01 10:00:00.123456+00:00"},
"256,fast,0.5,True": {"BLOCK": 256, "mode": "fast", "scale": 0.5, "fast_math": true, "time": 1.25, "times": [1.0, 1.5, 1.25], "compile_time": 298.0, "verification_time": 0, "benchmark_time": 9.5, "timestamp": "2026-03-01 10:00:02.5+00:00"},
"256,safe,1e-05,False": {"BLOCK": 256, "mode": "safe", "scale": 1e-05, "fast_math": false, "__error__": "CompilationFailedConfig", "compile_time": 40.0, "verification_time": 0, "benchmark_time": 0, "timestamp": "2026-03-01 10:00:03+00:00"},
"128,safe,1e-05,False": {"BLOCK": 128, "mode": "safe", "scale": 1e-05, "fast_math": false, "time": "RuntimeFailedConfig", "compile_time": 0, "timestamp": "2026-03-01 10:00:01+00:00"}}
})";

const tunekit::kernel_tuner_import scale_import{{"scale", "v7"}, std::nullopt};

tunekit::cache_entry import_text(const std::string &text,
                                 const tunekit::kernel_tuner_import &what = scale_import) {
  return tunekit::from_kernel_tuner_cache(text, "test.json", what);
}

std::string import_error(const std::string &text,
                         const tunekit::kernel_tuner_import &what = scale_import) {
  return tunekit_test::error_of([&] { (void)import_text(text, what); });
}

// Config text -> (status, time, reason) of every candidate: what a round trip must keep.
std::map<std::string, std::tuple<candidate_status, double, std::string>>
outcomes(const tunekit::cache_entry &e) {
  std::map<std::string, std::tuple<candidate_status, double, std::string>> out;
  for (const auto &c : e.candidates) {
    out[c.config.to_string()] = {c.status, c.time_ms, c.reason};
  }
  return out;
}

TEST(formats_kernel_tuner, imports_every_record_as_a_candidate_and_the_fastest_as_winner) {
  const auto e = import_text(kt_file);
  EXPECT_EQ(e.function.name, "scale");
  EXPECT_EQ(e.function.version, "v7");
  EXPECT_EQ(e.key, (key{4096, 2})); // problem_size
  EXPECT_EQ(e.hardware.name, "NVIDIA H200");
  EXPECT_EQ(e.hardware.kind, "kernel_tuner");
  EXPECT_EQ(e.hardware.arch, "unknown");
  EXPECT_EQ(e.hardware.units, 0);
  EXPECT_EQ(e.measurer, "kernel_tuner");
  EXPECT_EQ(e.timestamp, "2026-03-01T10:00:03Z"); // the newest record's
  ASSERT_EQ(e.candidates.size(), 4U);

  const auto &first = e.candidates[0];
  EXPECT_EQ(first.config,
            (config{{"BLOCK", 128}, {"mode", "fast"}, {"scale", 0.5}, {"fast_math", true}}));
  EXPECT_EQ(first.status, candidate_status::ok);
  EXPECT_EQ(first.time_ms, 2.0);
  EXPECT_DOUBLE_EQ(first.stats.min, 1.9);
  EXPECT_DOUBLE_EQ(first.stats.max, 2.1);
  EXPECT_EQ(first.prepare_ms, 310.5); // compile_time

  EXPECT_EQ(e.candidates[2].status, candidate_status::failed);
  EXPECT_EQ(e.candidates[2].reason, "CompilationFailedConfig");
  EXPECT_TRUE(std::isinf(e.candidates[2].time_ms));
  EXPECT_EQ(e.candidates[3].status, candidate_status::failed);
  EXPECT_EQ(e.candidates[3].reason, "RuntimeFailedConfig");
  EXPECT_FALSE(e.candidates[3].prepare_ms); // compile_time 0: none recorded

  EXPECT_EQ(e.winner_index, 1U);
  EXPECT_EQ(e.winner, e.candidates[1].config);
  EXPECT_EQ(e.policy.runs, 3); // the winner's "times"
  EXPECT_EQ(e.policy.warmup, 0);

  // A valid entry: it survives the cache's own writer and validating reader.
  const auto again = tunekit::cache_entry_from_json(tunekit::to_json(e));
  EXPECT_EQ(outcomes(again), outcomes(e));
}

TEST(formats_kernel_tuner, a_given_key_wins_over_problem_size) {
  const auto e = import_text(kt_file, {{"scale", ""}, key{"float32", 7}});
  EXPECT_EQ(e.key, (key{"float32", 7}));
  EXPECT_EQ(e.function.version, "");
}

TEST(formats_kernel_tuner, exports_the_layout_kernel_tuner_writes) {
  const std::string text = tunekit::to_kernel_tuner_cache(import_text(kt_file));
  // process_cache's header (json.dumps(indent="")), store_cache's records, close_cache's end:
  // Kernel Tuner's reader takes a file not ending in "}\n}" for one left open.
  EXPECT_TRUE(
      text.starts_with("{\n\"device_name\": \"NVIDIA H200\",\n\"kernel_name\": \"scale\",\n"))
      << text;
  EXPECT_TRUE(text.ends_with("}}\n}")) << text;
  EXPECT_NE(
      text.find("\"objective\": \"time\",\n\"cache\": {\n\"128,fast,0.5,True\": {\"BLOCK\": "
                "128, \"mode\": \"fast\", \"scale\": 0.5, \"fast_math\": true, \"time\": 2.0"),
      std::string::npos)
      << text;
  const auto doc = json::parse(text);
  EXPECT_EQ(doc["problem_size"], json::parse("[4096, 2]"));
  EXPECT_EQ(doc["tune_params_keys"], json::parse(R"(["BLOCK", "mode", "scale", "fast_math"])"));
  EXPECT_EQ(doc["tune_params"]["scale"], json::parse("[0.5, 1e-05]"));
  const auto &cache = doc["cache"];
  ASSERT_EQ(cache.size(), 4U);
  EXPECT_EQ(cache["256,fast,0.5,True"]["time"], 1.25);
  EXPECT_EQ(cache["256,fast,0.5,True"]["compile_time"], 298.0);
  EXPECT_EQ(cache["256,fast,0.5,True"]["timestamp"], "2026-03-01 10:00:03+00:00");
  EXPECT_EQ(cache["256,safe,1e-05,False"]["time"], "CompilationFailedConfig");
  EXPECT_EQ(cache["128,safe,1e-05,False"]["time"], "RuntimeFailedConfig");
  for (const auto &[k, rec] : cache.items()) {
    for (const char *member : {"compile_time", "verification_time", "benchmark_time",
                               "strategy_time", "framework_time", "timestamp"}) {
      EXPECT_TRUE(rec.contains(member)) << k << " lacks " << member;
    }
  }
}

TEST(formats_kernel_tuner, a_hand_written_file_round_trips) {
  const auto first = import_text(kt_file);
  const auto second = import_text(tunekit::to_kernel_tuner_cache(first));
  EXPECT_EQ(outcomes(second), outcomes(first));
  EXPECT_EQ(second.winner, first.winner);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.hardware, first.hardware);
  EXPECT_EQ(second.timestamp, first.timestamp);
  for (std::size_t i = 0; i < first.candidates.size(); ++i) {
    EXPECT_EQ(second.candidates[i].prepare_ms, first.candidates[i].prepare_ms) << i;
  }
  // And the file itself is a fixed point: exported again, byte for byte the same.
  EXPECT_EQ(tunekit::to_kernel_tuner_cache(second), tunekit::to_kernel_tuner_cache(first));
}

TEST(formats_kernel_tuner, a_published_space_round_trips_with_its_exact_times) {
  const auto path = std::filesystem::path(TUNEKIT_TEST_DATA_DIR) / "convolution_A100_excerpt.json";
  const std::string original = tunekit::read_kernel_tuner_file(path);
  // The file has no problem_size: the key is given.
  const tunekit::kernel_tuner_import what{{"convolution", "paper"}, key{4096, 4096, 15}};
  const auto entry = tunekit::from_kernel_tuner_cache(original, path.string(), what);
  ASSERT_EQ(entry.candidates.size(), 146U);
  EXPECT_EQ(entry.hardware.name, "A100-PCIE-40GB");
  EXPECT_EQ(entry.winner.get_int("block_size_x"), 8);
  EXPECT_EQ(entry.candidates[entry.winner_index].time_ms, 0.7987200021743774);

  const std::string exported = tunekit::to_kernel_tuner_cache(entry);
  const auto src = json::parse(original)["cache"];
  const auto out = json::parse(exported);
  EXPECT_EQ(out["kernel_name"], "convolution");
  EXPECT_EQ(out["problem_size"], json::parse("[4096, 4096, 15]"));
  EXPECT_EQ(out["tune_params_keys"], json::parse(original)["tune_params_keys"]);
  ASSERT_EQ(out["cache"].size(), src.size());
  for (const auto &[k, rec] : src.items()) {
    ASSERT_TRUE(out["cache"].contains(k)) << k; // the same cache keys
    EXPECT_EQ(out["cache"][k]["time"].get<double>(), rec["time"].get<double>()) << k;
  }
  const auto back = tunekit::from_kernel_tuner_cache(exported, "exported", what);
  EXPECT_EQ(outcomes(back), outcomes(entry));
  EXPECT_EQ(back.winner, entry.winner);
}

TEST(formats_kernel_tuner, an_entry_of_a_real_tuner_round_trips) {
  tunekit_test::temp_dir cache;
  tunekit_test::log_capture log;
  // BLOCK 2048 fails (its cost function throws), 512 is fastest.
  auto meas =
      std::make_shared<tunekit::simulated_measurer>([](const config &c, const key &k) -> double {
        if (c.get_int("BLOCK") == 2048) {
          throw std::runtime_error("too many resources requested for launch");
        }
        return tunekit_test::block_cost(c, k);
      });
  auto space =
      tunekit::config_space::product({{"BLOCK", {256, 512, 1024, 2048}}, {"num_warps", {4, 8}}});
  auto f = tunekit::autotune(
      "scale", space, [](int n) { return key{n}; }, tunekit::keep_all{}, [](int, const config &) {},
      tunekit_test::options(cache.path(), meas, log));
  f(1 << 20);
  const tunekit::winner_cache wc(cache.path());
  const auto paths = wc.list("scale");
  ASSERT_EQ(paths.size(), 1U);
  const auto entry = tunekit::winner_cache::read(paths[0]);
  ASSERT_TRUE(entry.found()) << entry.detail;

  const std::string text = tunekit::to_kernel_tuner_cache(*entry.value);
  const auto doc = json::parse(text);
  EXPECT_EQ(doc["device_name"], tunekit_test::test_hardware().name);
  EXPECT_EQ(doc["problem_size"], json::parse("[1048576]"));
  EXPECT_EQ(doc["tune_params"], json::parse(R"({"BLOCK": [256, 512, 1024, 2048],
                                                "num_warps": [4, 8]})"));
  EXPECT_EQ(doc["cache"]["2048,4"]["time"], "RuntimeFailedConfig");
  EXPECT_EQ(doc["cache"]["512,4"]["time"], 1.0);

  const auto back = import_text(text, {entry.value->function, std::nullopt});
  EXPECT_EQ(back.key, entry.value->key);
  EXPECT_EQ(back.winner, entry.value->winner);
  ASSERT_EQ(back.candidates.size(), entry.value->candidates.size());
  for (std::size_t i = 0; i < back.candidates.size(); ++i) {
    const auto &a = entry.value->candidates[i];
    const auto &b = back.candidates[i];
    EXPECT_EQ(b.config, a.config) << i;
    EXPECT_EQ(b.status, a.status) << i;
    EXPECT_EQ(b.time_ms, a.time_ms) << i;
  }
  // The imported entry is stored by the cache's own writer and read back as valid.
  const auto stored = wc.store(back, tunekit::kernel_tuner_import_log(back, "exported.json"));
  const auto reread = tunekit::winner_cache::read(stored);
  ASSERT_TRUE(reread.found()) << reread.detail;
  EXPECT_NE(tunekit_test::read_text(std::filesystem::path(stored).replace_extension(".log"))
                .find("imported from Kernel Tuner cache file exported.json"),
            std::string::npos);
}

TEST(formats_kernel_tuner, keys_are_written_as_python_prints_values) {
  using tunekit::detail::kernel_tuner::python_str;
  EXPECT_EQ(python_str(true), "True");
  EXPECT_EQ(python_str(256), "256");
  EXPECT_EQ(python_str(-3), "-3");
  EXPECT_EQ(python_str("fast"), "fast");
  EXPECT_EQ(python_str(0.5), "0.5");
  EXPECT_EQ(python_str(2.0), "2.0");
  EXPECT_EQ(python_str(0.1), "0.1");
  EXPECT_EQ(python_str(1e-05), "1e-05");
  EXPECT_EQ(python_str(0.0001), "0.0001");
  EXPECT_EQ(python_str(100000.0), "100000.0");
  EXPECT_EQ(python_str(1e15), "1000000000000000.0");
  EXPECT_EQ(python_str(1e16), "1e+16");
  EXPECT_EQ(python_str(1.5e300), "1.5e+300");
  EXPECT_EQ(python_str(-0.0), "-0.0");
  EXPECT_EQ(python_str(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(python_str(123.456), "123.456");
}

TEST(formats_kernel_tuner, bad_files_are_clear_errors) {
  auto has = [](const std::string &message, const std::string &part) {
    return message.find(part) != std::string::npos;
  };
  const std::string head = R"({"device_name": "GPU", "problem_size": [8], )";
  const std::string params = R"("tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}, )";
  EXPECT_TRUE(has(import_error("{"), "Kernel Tuner cache file test.json: is not JSON"));
  EXPECT_TRUE(has(import_error("[1]"), "is not a JSON object"));
  EXPECT_TRUE(has(import_error(R"({"device_name": "GPU", "cache": {}})"), "no 'tune_params'"));
  EXPECT_TRUE(has(import_error(head + params + R"("cache": []})"), "'cache' is not an object"));
  EXPECT_TRUE(has(import_error(head + params + R"("cache": {}})"), "has an empty 'cache'"));
  EXPECT_TRUE(
      has(import_error(R"({"problem_size": [8], )" + params + R"("cache": {"1": {"time": 1.0}}})"),
          "has no 'device_name'"));
  EXPECT_TRUE(has(import_error(R"({"device_name": 3, "problem_size": [8], )" + params +
                               R"("cache": {"1": {"time": 1.0}}})"),
                  "'device_name' is 3, not a string"));
  // Wrong types.
  EXPECT_TRUE(has(import_error(head + R"("tune_params": {"a": 1}, "cache": {"1": {"time": 1}}})"),
                  "tune_params['a'] is not a non-empty array"));
  EXPECT_TRUE(has(import_error(head + R"("tune_params": {"a": [null]}, "cache": {}})"),
                  "tune_params['a'] holds null"));
  EXPECT_TRUE(has(import_error(head + params + R"("cache": {"1": {"time": true}}})"),
                  "cache entry \"1\" has time true"));
  EXPECT_TRUE(has(import_error(head + params + R"("cache": {"1": {"time": -2}}})"),
                  "finite, non-negative"));
  EXPECT_TRUE(has(import_error(head + params + R"("cache": {"1": {"a": 1}}})"),
                  "cache entry \"1\" has no 'time'"));
  EXPECT_TRUE(has(import_error(head + params + R"("cache": {"1": 3.5}})"),
                  "cache entry \"1\" is not an object"));
  EXPECT_TRUE(has(import_error(head + params + R"("cache": {"1": {"time": 1, "times": "x"}}})"),
                  "cache entry \"1\": 'times' is \"x\", not a list"));
  EXPECT_TRUE(
      has(import_error(head + params + R"("cache": {"1": {"time": 1, "compile_time": "slow"}}})"),
          "'compile_time' is \"slow\""));
  // Keys whose values do not match.
  EXPECT_TRUE(has(import_error(head + params + R"("cache": {"7": {"time": 1}}})"),
                  "cache key \"7\": '7' is not a value of parameter 'a'"));
  EXPECT_TRUE(has(import_error(head + params + R"("cache": {"1,2": {"time": 1}}})"),
                  "cache key \"1,2\" does not hold 1 comma-separated values"));
  EXPECT_TRUE(has(import_error(head + params + R"("cache": {"1": {"a": 2, "time": 1}}})"),
                  "its field a = 2 does not match the key's value 1"));
  EXPECT_TRUE(has(import_error(head + R"("tune_params": {"a": [1.0]}, )" +
                               R"("cache": {"1.0": {"time": 1}, "1": {"time": 2}}})"),
                  "name the same config"));
  EXPECT_TRUE(has(import_error(head + R"("tune_params_keys": ["b"], "tune_params": {"a": [1]}, )" +
                               R"("cache": {}})"),
                  "'tune_params_keys' names 'b', absent from 'tune_params'"));
  // Nothing to import, or no key to store it under.
  EXPECT_TRUE(has(import_error(head + params + R"("cache": {"1": {"time": "InvalidConfig"}}})"),
                  "has no config with a time: all 1 of its configs failed"));
  EXPECT_TRUE(
      has(import_error(R"({"device_name": "GPU", )" + params + R"("cache": {"1": {"time": 1.0}}})"),
          "has no 'problem_size' to key the entry by: pass the key (--key)"));
  EXPECT_TRUE(has(import_error(R"({"device_name": "GPU", "problem_size": "callable", )" + params +
                               R"("cache": {"1": {"time": 1.0}}})"),
                  "'problem_size' is \"callable\""));
  // The same file with a key given imports.
  EXPECT_NO_THROW(
      (void)import_text(R"({"device_name": "GPU", )" + params + R"("cache": {"1": {"time": 1.0}}})",
                        {{"f", ""}, key{8}}));
}

TEST(formats_kernel_tuner, a_comma_inside_a_string_value_is_read_from_the_record) {
  // Kernel Tuner joins values with commas without quoting them; its records name each value.
  const auto e = import_text(R"({"device_name": "GPU", "problem_size": 8,
    "tune_params_keys": ["layout", "b"], "tune_params": {"layout": ["a,b", "c"], "b": [1]},
    "cache": {"a,b,1": {"layout": "a,b", "b": 1, "time": 1.5}, "c,1": {"time": 2.5}}})");
  ASSERT_EQ(e.candidates.size(), 2U);
  EXPECT_EQ(e.candidates[0].config, (config{{"layout", "a,b"}, {"b", 1}}));
  EXPECT_EQ(e.key, key{8});
  const auto back = import_text(tunekit::to_kernel_tuner_cache(e));
  EXPECT_EQ(outcomes(back), outcomes(e));
}

TEST(formats_kernel_tuner, entries_kernel_tuner_cannot_hold_are_refused) {
  auto entry_of = [](std::vector<config> configs) {
    tunekit::cache_entry e;
    e.function = {"f", "v"};
    e.key = key{1};
    e.hardware = tunekit_test::test_hardware();
    for (auto &c : configs) {
      tunekit::candidate_record r;
      r.config = std::move(c);
      r.time_ms = 1.0;
      e.candidates.push_back(std::move(r));
    }
    e.winner = e.candidates[0].config;
    return e;
  };
  auto export_error = [](const tunekit::cache_entry &e) {
    return tunekit_test::error_of([&] { (void)tunekit::to_kernel_tuner_cache(e); });
  };
  config templated{{"a", 1}};
  templated.set_template_id("tiled");
  EXPECT_NE(export_error(entry_of({templated})).find("belongs to template 'tiled'"),
            std::string::npos);
  EXPECT_NE(export_error(entry_of({config{{"time", 1}}})).find("parameter 'time'"),
            std::string::npos);
  EXPECT_NE(export_error(entry_of({config{{"a", 1}, {"b", 2}}, config{{"a", 2}}}))
                .find("has no 'b', which other candidates have"),
            std::string::npos);
  EXPECT_NE(
      export_error(entry_of({config{{"a", "x,y"}, {"b", "z"}}, config{{"a", "x"}, {"b", "y,z"}}}))
          .find("two candidates have the Kernel Tuner cache key \"x,y,z\""),
      std::string::npos);
  EXPECT_NE(export_error(entry_of({config{{"a", std::string("caf\xe9")}}})).find("not UTF-8"),
            std::string::npos);
  // A key that is not all ints has no problem_size.
  auto e = entry_of({config{{"a", 1}}});
  e.key = key{4096, "float32"};
  EXPECT_FALSE(json::parse(tunekit::to_kernel_tuner_cache(e)).contains("problem_size"));
}

} // namespace
