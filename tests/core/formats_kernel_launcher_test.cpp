// kernel_launcher wisdom files to and from winner cache entries (formats/kernel_launcher.hpp): a
// file written by kernel_launcher's own writer (tests/core/data/vector_add_float.wisdom), hand-made
// files for each rule of the reader, and entries of a real tuner, imported and exported and
// compared; bad files and entries a wisdom file cannot hold refused with errors that say why.

#include "test_support.hpp"

#include <tunekit/formats/kernel_launcher.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using json = nlohmann::ordered_json;
using tunekit::candidate_status;
using tunekit::config;
using tunekit::kernel_launcher_problem_size;
using tunekit::key;

const std::filesystem::path data_file =
    std::filesystem::path(TUNEKIT_TEST_DATA_DIR) / "vector_add_float.wisdom";

const tunekit::kernel_launcher_import vector_add{{"vector_add", "v2"}, std::nullopt, {}};

tunekit::kernel_launcher_wisdom
import_text(const std::string &text, const tunekit::kernel_launcher_import &what = vector_add) {
  return tunekit::from_kernel_launcher_wisdom(text, "test.wisdom", what);
}

std::string import_error(const std::string &text,
                         const tunekit::kernel_launcher_import &what = vector_add) {
  return tunekit_test::error_of([&] { (void)import_text(text, what); });
}

bool has(const std::string &message, const std::string &part) {
  return message.find(part) != std::string::npos;
}

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    out.push_back(l);
  }
  return out;
}

// What a round trip must keep of each entry: device, key, winner, and every candidate's time.
using outcome = std::tuple<std::string, std::string, std::string, std::map<std::string, double>>;
std::vector<outcome> outcomes(const std::vector<tunekit::cache_entry> &entries) {
  std::vector<outcome> out;
  for (const auto &e : entries) {
    std::map<std::string, double> times;
    for (const auto &c : e.candidates) {
      times[c.config.to_string()] = c.time_ms;
    }
    out.emplace_back(e.hardware.name, e.key.to_string(), e.winner.to_string(), times);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::string header =
    R"({"version": "1.0", "objective": "time", "tunable_parameters": ["a", "b"], "key": "k"})";

std::string record(const std::string &cfg, const std::string &size, const std::string &time,
                   const std::string &device = "GPU", const std::string &more_env = "") {
  return R"({"config": )" + cfg + R"(, "problem_size": )" + size + R"(, "time": )" + time +
         R"(, "environment": {"device_name": ")" + device + "\"" + more_env + "}}";
}

TEST(formats_kernel_launcher, imports_a_file_kernel_launcher_wrote_one_entry_per_device_and_size) {
  const std::string text = tunekit::read_kernel_launcher_file(data_file);
  const auto w = tunekit::from_kernel_launcher_wisdom(text, data_file.string(), vector_add);
  EXPECT_EQ(w.tuning_key, "vector_add_float");
  ASSERT_EQ(w.entries.size(), 3U);

  const auto &a = w.entries[0]; // the file's first device and problem size
  EXPECT_EQ(a.function, (tunekit::function_identity{"vector_add", "v2"}));
  EXPECT_EQ(a.key, key{1048576}); // [1048576, 1, 1]
  EXPECT_EQ(a.hardware,
            (tunekit::hardware_info{"kernel_launcher", "NVIDIA A100-PCIE-40GB", "sm_80", 0, 1}));
  ASSERT_EQ(a.candidates.size(), 5U); // write_wisdom kept the 5 fastest of 6 valid results
  EXPECT_EQ(a.candidates[0].config,
            (config{{"threads_per_block", 256}, {"elements_per_thread", 2}, {"use_ldg", true}}));
  EXPECT_EQ(a.candidates[0].time_ms, 0.0148479);
  EXPECT_EQ(a.candidates[0].stats.max, 0.0148479);
  EXPECT_EQ(a.candidates[4].time_ms, 0.0231424);
  for (const auto &c : a.candidates) {
    EXPECT_EQ(c.status, candidate_status::ok);
  }
  EXPECT_EQ(a.winner_index, 0U);
  EXPECT_EQ(a.winner, a.candidates[0].config);
  EXPECT_EQ(a.dependencies,
            (tunekit::dependencies{
                {"cuda_driver", "12.2"}, {"cuda_runtime", "12.2"}, {"kernel_tuner", "1.0"}}));
  EXPECT_EQ(a.measurer, "kernel_tuner");
  EXPECT_EQ(a.policy.warmup, 0);
  EXPECT_EQ(a.policy.runs, 5); // tune.py's --iterations
  // write_wisdom's date is the local time of an unknown zone: not taken for the entry's UTC time.
  EXPECT_FALSE(a.timestamp.starts_with("2024-05-14")) << a.timestamp;
  EXPECT_EQ(a.timestamp.size(), 20U);

  EXPECT_EQ(w.entries[1].key, key{16777216});
  EXPECT_EQ(w.entries[1].hardware.name, "NVIDIA A100-PCIE-40GB");
  EXPECT_EQ(w.entries[1].candidates.size(), 5U);
  EXPECT_EQ(w.entries[1].winner.get_int("threads_per_block"), 256);
  EXPECT_EQ(w.entries[1].winner.get_int("elements_per_thread"), 4);

  const auto &h = w.entries[2];
  EXPECT_EQ(h.key, key{1048576});
  EXPECT_EQ(h.hardware.name, "NVIDIA H100 PCIe");
  EXPECT_EQ(h.hardware.arch, "sm_90");
  ASSERT_EQ(h.candidates.size(), 4U);
  EXPECT_EQ(h.winner.get_int("threads_per_block"), 512);
  EXPECT_EQ(h.candidates[h.winner_index].time_ms, 0.0099328);

  // Valid entries: each survives the cache's own writer and validating reader.
  for (const auto &e : w.entries) {
    const auto again = tunekit::cache_entry_from_json(tunekit::to_json(e));
    EXPECT_EQ(outcomes({again}), outcomes({e}));
  }
}

TEST(formats_kernel_launcher, the_winner_is_the_record_kernel_launcher_picks) {
  // The least time, the first of equals, among the records of the device and the problem size;
  // the records of other devices and sizes are other entries.
  const auto w = import_text(
      header + "\n" + record("[1, 1]", "[64]", "3.0") + "\n" + record("[2, 1]", "[64]", "2.0") +
      "\n" + record("[3, 1]", "[64]", "0.5", "Other GPU") + "\n" + record("[4, 1]", "[64]", "2.0") +
      "\n" + record("[5, 1]", "[128]", "1.0") + "\n");
  ASSERT_EQ(w.entries.size(), 3U);
  EXPECT_EQ(w.entries[0].hardware.name, "GPU");
  EXPECT_EQ(w.entries[0].key, key{64});
  ASSERT_EQ(w.entries[0].candidates.size(), 3U);
  EXPECT_EQ(w.entries[0].winner_index, 1U);
  EXPECT_EQ(w.entries[0].winner, (config{{"a", 2}, {"b", 1}}));
  EXPECT_EQ(w.entries[1].hardware.name, "Other GPU");
  EXPECT_EQ(w.entries[1].hardware.arch, "unknown"); // no compute_capability
  EXPECT_EQ(w.entries[2].key, key{128});
  EXPECT_EQ(w.entries[2].winner, (config{{"a", 5}, {"b", 1}}));
}

TEST(formats_kernel_launcher, problem_sizes_are_kernel_launchers_three_extents) {
  // [100, 100] and [100, 100, 1] are one problem size; absent extents are 1.
  const auto w = import_text(
      header + "\n" + record("[1, 1]", "[100, 100]", "1.0") + "\n" +
      record("[2, 1]", "[100, 100, 1]", "2.0") + "\n" + record("[1, 1]", "[]", "1.0") + "\n" +
      record("[1, 1]", "[5, 1, 1]", "1.0") + "\n" + record("[1, 1]", "[1, 1, 7]", "1.0") + "\n");
  ASSERT_EQ(w.entries.size(), 4U);
  EXPECT_EQ(w.entries[0].key, (key{100, 100}));
  EXPECT_EQ(w.entries[0].candidates.size(), 2U);
  EXPECT_EQ(w.entries[1].key, key{1});
  EXPECT_EQ(w.entries[2].key, key{5});
  EXPECT_EQ(w.entries[3].key, (key{1, 1, 7}));

  EXPECT_EQ((kernel_launcher_problem_size{4096, 1, 1}.to_key()), key{4096});
  EXPECT_EQ((kernel_launcher_problem_size{4096, 1, 1}.to_string()), "(4096)");
  EXPECT_EQ(kernel_launcher_problem_size::from_key(key{4096, 2}),
            (kernel_launcher_problem_size{4096, 2, 1}));
  EXPECT_EQ(kernel_launcher_problem_size::from_key(key{4294967295LL}),
            (kernel_launcher_problem_size{4294967295U, 1, 1}));
  EXPECT_FALSE(kernel_launcher_problem_size::from_key(key{4294967296LL}));
  EXPECT_FALSE(kernel_launcher_problem_size::from_key(key{-1}));
  EXPECT_FALSE(kernel_launcher_problem_size::from_key(key{1, 2, 3, 4}));
  EXPECT_FALSE(kernel_launcher_problem_size::from_key(key{}));
  EXPECT_FALSE(kernel_launcher_problem_size::from_key(key{4096, "float32"}));
  EXPECT_FALSE(kernel_launcher_problem_size::from_key(key{4096.0}));
}

TEST(formats_kernel_launcher, blank_lines_comments_and_crlf_are_skipped) {
  // write_wisdom writes a blank line after the header each time it adds to a file; kernel_launcher
  // skips blank lines and lines starting with '#' (its Python reader also '//').
  const auto w = import_text(header + "\r\n\r\n# tuned on node 7\r\n  // by hand\r\n" +
                             record("[1, 2]", "[8]", "1.5") + "\r\n   \r\n" +
                             record("[1, 3]", "[8]", "0.5") + "\r\n");
  ASSERT_EQ(w.entries.size(), 1U);
  EXPECT_EQ(w.entries[0].candidates.size(), 2U);
  EXPECT_EQ(w.entries[0].winner, (config{{"a", 1}, {"b", 3}}));
}

TEST(formats_kernel_launcher, values_keep_their_types) {
  const auto w = import_text(
      R"({"version": "1.0", "objective": "time", "tunable_parameters": ["i", "f", "b", "s"], "key": "k"})"
      "\n" +
      record(R"([-3, 0.25, false, "row,major"])", "[1]", "1") + "\n" +
      record(R"([18446744073709551, 2.0, true, ""])", "[1]", "2") + "\n");
  const auto &c = w.entries[0].candidates;
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c[0].config, (config{{"i", -3}, {"f", 0.25}, {"b", false}, {"s", "row,major"}}));
  EXPECT_EQ(c[0].time_ms, 1.0);
  EXPECT_TRUE(c[1].config.at("f").is_double());
  EXPECT_EQ(c[1].config.get_int("i"), 18446744073709551LL);
}

TEST(formats_kernel_launcher, dates_that_say_their_zone_give_the_entry_its_utc_time) {
  auto stamp = [&](const std::vector<std::string> &dates) {
    std::string text = header + "\n";
    int b = 1;
    for (const auto &d : dates) {
      text += record("[1, " + std::to_string(b++) + "]", "[8]", "1.0", "GPU",
                     R"(, "date": ")" + d + "\"") +
              "\n";
    }
    return import_text(text).entries.at(0).timestamp;
  };
  EXPECT_EQ(stamp({"2026-03-01T10:00:00.123456+00:00"}), "2026-03-01T10:00:00Z");
  EXPECT_EQ(stamp({"2026-03-01T10:00:00Z"}), "2026-03-01T10:00:00Z");
  EXPECT_EQ(stamp({"2026-03-01T10:00:00+01:00"}), "2026-03-01T09:00:00Z");
  EXPECT_EQ(stamp({"2026-03-01T02:00:00+05:30"}), "2026-02-28T20:30:00Z");
  EXPECT_EQ(stamp({"2025-12-31T23:30:00-0100"}), "2026-01-01T00:30:00Z");
  // The newest of the records; a naive or malformed date is not used.
  EXPECT_EQ(stamp({"2026-03-01T10:00:00Z", "2026-03-02T10:00:00", "2026-03-01T12:00:00Z",
                   "2026-02-30T10:00:00Z", "yesterday"}),
            "2026-03-01T12:00:00Z");
  EXPECT_NE(stamp({"2026-03-02T10:00:00"}).substr(0, 10), "2026-03-02");
}

TEST(formats_kernel_launcher, keys_can_be_given_per_problem_size) {
  const std::string text = header + "\n" + record("[1, 1]", "[64, 64]", "1.0") + "\n" +
                           record("[2, 1]", "[128, 128, 1]", "1.0") + "\n" +
                           record("[3, 1]", "[128, 128]", "1.0", "Other GPU") + "\n";
  auto what = vector_add;
  what.keys = {{kernel_launcher_problem_size{128, 128, 1}, key{128, "float32"}}};
  auto w = import_text(text, what);
  ASSERT_EQ(w.entries.size(), 3U);
  EXPECT_EQ(w.entries[0].key, (key{64, 64})); // not listed: its own
  EXPECT_EQ(w.entries[1].key, (key{128, "float32"}));
  EXPECT_EQ(w.entries[2].key, (key{128, "float32"})); // every device's records of that size

  // One key for the one problem size that is not listed.
  what.key = key{"small"};
  w = import_text(text, what);
  EXPECT_EQ(w.entries[0].key, key{"small"});
  EXPECT_EQ(w.entries[1].key, (key{128, "float32"}));

  // Refused: one key for two problem sizes, a size the file lacks, a size given twice, two sizes
  // of one device under one key.
  auto only_key = vector_add;
  only_key.key = key{7};
  EXPECT_TRUE(has(import_error(text, only_key),
                  "test.wisdom: holds 2 problem sizes ((64, 64), (128, 128)) that one key was "
                  "given for: give the key of each (--key SIZE=KEY)"));
  auto absent = vector_add;
  absent.keys = {{kernel_launcher_problem_size{99, 1, 1}, key{1}}};
  EXPECT_TRUE(
      has(import_error(text, absent), "holds no record of problem size (99), whose key was given"));
  auto twice = vector_add;
  twice.keys = {{kernel_launcher_problem_size{64, 64, 1}, key{1}},
                {kernel_launcher_problem_size{64, 64, 1}, key{2}}};
  EXPECT_TRUE(has(import_error(text, twice), "the key of problem size (64, 64) is given twice"));
  auto clash = vector_add;
  clash.keys = {{kernel_launcher_problem_size{64, 64, 1}, key{128, 128}}};
  EXPECT_TRUE(has(import_error(text, clash), "problem sizes (64, 64) and (128, 128) of device "
                                             "'GPU' would both be stored under key (128, 128)"));
}

TEST(formats_kernel_launcher, bad_files_are_clear_errors) {
  const std::string ok = record("[1, 2]", "[8]", "1.0");
  auto header_with = [](const std::string &members) { return "{" + members + "}\n"; };
  const std::string v = R"("version": "1.0", )";
  const std::string o = R"("objective": "time", )";
  const std::string p = R"("tunable_parameters": ["a", "b"], )";
  const std::string k = R"("key": "k")";
  EXPECT_TRUE(has(import_error(""), "kernel_launcher wisdom file test.wisdom: is empty"));
  EXPECT_TRUE(has(import_error("\n" + ok), "line 1 is empty"));
  EXPECT_TRUE(has(import_error("{\n\"version\": \"1.0\"}\n"),
                  "line 1 is not the JSON header that kernel_launcher reads first"));
  EXPECT_TRUE(has(import_error("[1]\n" + ok), "line 1, the header, is [1], not a JSON object"));
  // The header.
  EXPECT_TRUE(has(import_error(header_with(o + p + k) + ok), "its header has no 'version'"));
  EXPECT_TRUE(has(import_error(header_with(R"("version": "2.0", )" + o + p + k) + ok),
                  "its header has version \"2.0\"; kernel_launcher reads wisdom files of version "
                  "\"1.0\""));
  EXPECT_TRUE(has(import_error(header_with(R"("version": 1.0, )" + o + p + k) + ok),
                  "its header has version 1.0;"));
  EXPECT_TRUE(has(import_error(header_with(v + p + k) + ok), "its header has no 'objective'"));
  EXPECT_TRUE(has(import_error(header_with(v + R"("objective": 3, )" + p + k) + ok),
                  "its header's 'objective' is 3, not a string"));
  EXPECT_TRUE(has(import_error(header_with(v + R"("objective": "GFLOP/s", )" + p + k) + ok),
                  "its header's objective is \"GFLOP/s\", not \"time\""));
  EXPECT_TRUE(
      has(import_error(header_with(v + o + p + R"("name": "k")") + ok), "its header has no 'key'"));
  EXPECT_TRUE(has(import_error(header_with(v + o + p + R"("key": ["k"])") + ok),
                  "its header's 'key' is [\"k\"], not a string"));
  EXPECT_TRUE(
      has(import_error(header_with(v + o + k) + ok), "its header has no 'tunable_parameters'"));
  EXPECT_TRUE(has(import_error(header_with(v + o + R"("tunable_parameters": "a", )" + k) + ok),
                  "its header's 'tunable_parameters' is \"a\", not a list of names"));
  EXPECT_TRUE(has(import_error(header_with(v + o + R"("tunable_parameters": ["a", 2], )" + k) + ok),
                  "its header's 'tunable_parameters' holds 2, not a name"));
  EXPECT_TRUE(
      has(import_error(header_with(v + o + R"("tunable_parameters": ["a", "a"], )" + k) + ok),
          "its header's 'tunable_parameters' names 'a' twice"));
  EXPECT_TRUE(has(import_error(header_with(v + o + R"("tunable_parameters": [], )" + k) + ok),
                  "its header's 'tunable_parameters' is empty"));
  // The records.
  const std::string h = header + "\n";
  EXPECT_TRUE(has(import_error(h), "test.wisdom: holds no records: no config to import"));
  EXPECT_TRUE(has(import_error(h + "\n# only a comment\n"), "holds no records"));
  EXPECT_TRUE(has(import_error(h + ok + "\n{\"config\": [1, 2],\n"), "line 3 is not JSON"));
  EXPECT_TRUE(has(import_error(h + "[1, 2]\n"), "line 2 is [1,2], not a record (a JSON object)"));
  EXPECT_TRUE(has(import_error(h + R"({"problem_size": [8], "time": 1, "environment": {}})"),
                  "line 2 has no 'config'"));
  EXPECT_TRUE(has(import_error(h + record("{\"a\": 1}", "[8]", "1")),
                  "line 2: 'config' is {\"a\":1}, not a list of values"));
  EXPECT_TRUE(has(import_error(h + record("[1]", "[8]", "1")),
                  "line 2: 'config' holds 1 value for the 2 tunable_parameters of the header"));
  EXPECT_TRUE(has(import_error(h + record("[1, 2, 3]", "[8]", "1")),
                  "'config' holds 3 values for the 2 tunable_parameters"));
  EXPECT_TRUE(has(import_error(h + record("[1, null]", "[8]", "1")),
                  "line 2: 'config' gives b = null, not an int (in the int64 range), a bool, a "
                  "float or a string"));
  EXPECT_TRUE(has(import_error(h + record("[1, [2]]", "[8]", "1")), "'config' gives b = [2]"));
  EXPECT_TRUE(has(import_error(h + record("[1, 9223372036854775808]", "[8]", "1")),
                  "'config' gives b = 9223372036854775808"));
  EXPECT_TRUE(has(import_error(h + R"({"config": [1, 2], "time": 1, "environment": {}})"),
                  "line 2 has no 'problem_size'"));
  EXPECT_TRUE(has(import_error(h + record("[1, 2]", "8", "1")),
                  "line 2: 'problem_size' is 8, not a list of at most 3 extents"));
  EXPECT_TRUE(has(import_error(h + record("[1, 2]", "[8, 1, 1, 1]", "1")),
                  "'problem_size' is [8,1,1,1], not a list of at most 3 extents"));
  for (const char *extent : {"-1", "4294967296", "8.0", "\"8\"", "true"}) {
    EXPECT_TRUE(has(import_error(h + record("[1, 2]", std::string("[4, ") + extent + "]", "1")),
                    std::string("line 2: 'problem_size' holds ") + extent +
                        ", not an extent (an int from 0 to 4294967295)"))
        << extent;
  }
  EXPECT_TRUE(has(import_error(h + R"({"config": [1, 2], "problem_size": [8], "environment": {}})"),
                  "line 2 has no 'time'"));
  for (const char *time : {"\"fast\"", "-0.5", "null", "true"}) {
    EXPECT_TRUE(has(import_error(h + record("[1, 2]", "[8]", time)),
                    std::string("line 2: 'time' is ") + time +
                        ", not a finite, non-negative number of milliseconds"))
        << time;
  }
  // Python's json.dumps writes NaN and Infinity, which are not JSON.
  EXPECT_TRUE(has(import_error(h + record("[1, 2]", "[8]", "NaN")), "line 2 is not JSON"));
  EXPECT_TRUE(has(import_error(h + record("[1, 2]", "[8]", "Infinity")), "line 2 is not JSON"));
  EXPECT_TRUE(has(import_error(h + record("[1, 2]", "[8]", "1e999")), "line 2 is not JSON"));
  EXPECT_TRUE(has(import_error(h + R"({"config": [1, 2], "problem_size": [8], "time": 1})"),
                  "line 2 has no 'environment' (which names the device)"));
  EXPECT_TRUE(has(import_error(h + R"({"config": [1, 2], "problem_size": [8], "time": 1, )"
                                   R"("environment": "GPU"})"),
                  "line 2: 'environment' is \"GPU\", not an object"));
  EXPECT_TRUE(has(import_error(h + R"({"config": [1, 2], "problem_size": [8], "time": 1, )"
                                   R"("environment": {"host_name": "n1"}})"),
                  "line 2: 'environment' has no 'device_name'"));
  EXPECT_TRUE(has(import_error(h + R"({"config": [1, 2], "problem_size": [8], "time": 1, )"
                                   R"("environment": {"device_name": 7}})"),
                  "line 2: 'environment.device_name' is 7, not a string"));
  EXPECT_TRUE(
      has(import_error(h + record("[1, 2]", "[8]", "1", "GPU", R"(, "compute_capability": "80")")),
          "line 2: 'environment.compute_capability' is \"80\", not a non-negative integer"));
  EXPECT_TRUE(has(import_error(h + record("[1, 2]", "[8]", "1", "GPU", R"(, "cuda_version": -1)")),
                  "'environment.cuda_version' is -1, not a non-negative integer"));
  EXPECT_TRUE(has(import_error(h + record("[1, 2]", "[8]", "1", "GPU", R"(, "date": 20260301)")),
                  "'environment.date' is 20260301, not a string"));
  EXPECT_TRUE(
      has(import_error(h + record("[1, 2]", "[8]", "1", "GPU", R"(, "kernel_tuner_version": 1.0)")),
          "'environment.kernel_tuner_version' is 1.0, not a string"));
  // One config twice for one device and problem size (1 and 1.0 are one value to
  // kernel_launcher); for another device it is another entry's.
  EXPECT_TRUE(has(import_error(h + ok + "\n" + record("[1, 2]", "[8]", "2.0") + "\n"),
                  "lines 2 and 3 hold the same config [a=1, b=2] for device 'GPU' and problem "
                  "size (8)"));
  EXPECT_TRUE(has(import_error(h + ok + "\n\n" + record("[1.0, 2]", "[8, 1]", "2.0") + "\n"),
                  "lines 2 and 4 hold the same config"));
  EXPECT_NO_THROW(
      (void)import_text(h + ok + "\n" + record("[1, 2]", "[8]", "2.0", "Other") + "\n"));
  // A record kernel_launcher would skip with a warning is refused here, naming its line.
  EXPECT_TRUE(has(import_error(h + ok + "\n" + ok.substr(0, 20) + "\n"), "line 3 is not JSON"));
}

TEST(formats_kernel_launcher, exports_the_layout_write_wisdom_writes) {
  auto w = tunekit::from_kernel_launcher_wisdom(tunekit::read_kernel_launcher_file(data_file),
                                                "data", vector_add);
  for (auto &e : w.entries) {
    e.timestamp = "2026-03-01T10:00:00Z";
  }
  const std::string text = tunekit::to_kernel_launcher_wisdom(w.entries, {"vector_add_float", {}});
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 1U + 5 + 5 + 4) << text;
  EXPECT_EQ(lines[0], R"({"version": "1.0", "objective": "time", "tunable_parameters": )"
                      R"(["threads_per_block", "elements_per_thread", "use_ldg"], )"
                      R"("key": "vector_add_float"})");
  EXPECT_EQ(lines[1], R"({"config": [256, 2, true], "problem_size": [1048576, 1, 1], )"
                      R"("time": 0.0148479, "environment": {"date": "2026-03-01T10:00:00+00:00", )"
                      R"("device_name": "NVIDIA A100-PCIE-40GB", "compute_capability": 80, )"
                      R"("kernel_tuner_version": "1.0", "cuda_driver_version": 12020, )"
                      R"("cuda_version": 12020}})");
  EXPECT_TRUE(text.ends_with("}}\n"));
  // Ordered by device name, then problem size; each entry's records fastest first.
  std::vector<std::tuple<std::string, json, double>> order;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto r = json::parse(lines[i]);
    order.emplace_back(r["environment"]["device_name"], r["problem_size"], r["time"]);
  }
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << text;
  EXPECT_EQ(std::get<1>(order[5]), json::parse("[16777216, 1, 1]"));
  EXPECT_EQ(std::get<0>(order[10]), "NVIDIA H100 PCIe");
  EXPECT_EQ(json::parse(lines[11])["config"], json::parse("[512, 4, true]"));
  EXPECT_EQ(json::parse(lines[11])["environment"]["compute_capability"], 90);
  // The tuning key defaults to the function's name.
  EXPECT_TRUE(lines_of(tunekit::to_kernel_launcher_wisdom(w.entries))[0].ends_with(
      R"("key": "vector_add"})"));
}

TEST(formats_kernel_launcher, a_file_of_kernel_launcher_round_trips) {
  const std::string original = tunekit::read_kernel_launcher_file(data_file);
  const auto first = tunekit::from_kernel_launcher_wisdom(original, "data", vector_add);
  const std::string exported =
      tunekit::to_kernel_launcher_wisdom(first.entries, {"vector_add_float", {}});
  const auto second = import_text(exported);
  EXPECT_EQ(second.tuning_key, "vector_add_float");
  ASSERT_EQ(second.entries.size(), first.entries.size());
  EXPECT_EQ(outcomes(second.entries), outcomes(first.entries));
  for (std::size_t i = 0; i < first.entries.size(); ++i) {
    const auto &a = first.entries[i];
    const auto &b = second.entries[i];
    EXPECT_EQ(b.hardware, a.hardware) << i;
    EXPECT_EQ(b.key, a.key) << i;
    EXPECT_EQ(b.dependencies, a.dependencies) << i;
    EXPECT_EQ(b.timestamp, a.timestamp) << i; // the import's time, written as the records' date
    ASSERT_EQ(b.candidates.size(), a.candidates.size());
    for (std::size_t c = 0; c < a.candidates.size(); ++c) {
      EXPECT_EQ(b.candidates[c].config, a.candidates[c].config) << i << " " << c;
      EXPECT_EQ(b.candidates[c].time_ms, a.candidates[c].time_ms) << i << " " << c;
    }
    EXPECT_EQ(b.winner_index, a.winner_index);
  }
  // Every record of the original is in the export, with the same config, size, time and device.
  auto records = [](const std::string &text) {
    std::vector<std::tuple<json, json, double, json>> out;
    for (const auto &l : lines_of(text)) {
      if (l.empty() || l.starts_with("{\"version\"")) {
        continue;
      }
      const auto r = json::parse(l);
      out.emplace_back(r["config"], r["problem_size"], r["time"].get<double>(),
                       r["environment"]["device_name"]);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(records(exported), records(original));
  // And exported again, the same bytes.
  EXPECT_EQ(tunekit::to_kernel_launcher_wisdom(second.entries, {"vector_add_float", {}}), exported);
}

TEST(formats_kernel_launcher, entries_of_a_real_tuner_export_and_import_back) {
  tunekit_test::temp_dir cache;
  tunekit_test::log_capture log;
  // BLOCK 2048 fails (its cost function throws), 512 is fastest.
  auto meas =
      std::make_shared<tunekit::simulated_measurer>([](const config &c, const key &k) -> double {
        if (c.get_int("BLOCK") == 2048) {
          throw std::runtime_error("too many resources requested for launch");
        }
        return tunekit_test::block_cost(c, k) * (k[0].as_int() == 4096 ? 1.0 : 2.0);
      });
  auto space =
      tunekit::config_space::product({{"BLOCK", {256, 512, 1024, 2048}}, {"num_warps", {4, 8}}});
  auto f = tunekit::autotune(
      "scale", space, [](int n) { return key{n}; }, tunekit::keep_all{}, [](int, const config &) {},
      tunekit_test::options(cache.path(), meas, log));
  f(4096);
  f(1 << 20);
  const tunekit::winner_cache wc(cache.path());
  std::vector<tunekit::cache_entry> entries;
  for (const auto &p : wc.list("scale")) {
    auto r = tunekit::winner_cache::read(p);
    ASSERT_TRUE(r.found()) << r.detail;
    entries.push_back(*r.value);
  }
  ASSERT_EQ(entries.size(), 2U);

  const std::string text = tunekit::to_kernel_launcher_wisdom(entries);
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 1U + 6 + 6) << text; // the two failed configs are not written
  EXPECT_EQ(json::parse(lines[0])["tunable_parameters"], json::parse(R"(["BLOCK", "num_warps"])"));
  const auto first = json::parse(lines[1]);
  EXPECT_EQ(first["config"], json::parse("[512, 4]"));
  EXPECT_EQ(first["problem_size"], json::parse("[4096, 1, 1]"));
  EXPECT_EQ(first["time"], 1.0);
  EXPECT_EQ(first["environment"]["device_name"], "Test CPU 9000");
  EXPECT_FALSE(first["environment"].contains("compute_capability")); // arch x86_64
  EXPECT_EQ(json::parse(lines[7])["problem_size"], json::parse("[1048576, 1, 1]"));
  EXPECT_EQ(text.find("2048"), std::string::npos);

  const auto back = import_text(text, {{"scale", "v1"}, std::nullopt, {}});
  ASSERT_EQ(back.entries.size(), 2U);
  for (const auto &b : back.entries) {
    const auto &a = entries[0].key == b.key ? entries[0] : entries[1];
    EXPECT_EQ(b.key, a.key);
    EXPECT_EQ(b.winner, a.winner);
    EXPECT_EQ(b.candidates[b.winner_index].time_ms, a.candidates[a.winner_index].time_ms);
    std::size_t ok = 0;
    for (const auto &c : a.candidates) {
      if (c.status != candidate_status::ok) {
        continue;
      }
      ++ok;
      const auto it = std::find_if(b.candidates.begin(), b.candidates.end(),
                                   [&](const auto &d) { return d.config == c.config; });
      ASSERT_NE(it, b.candidates.end()) << c.config.to_string();
      EXPECT_EQ(it->time_ms, c.time_ms);
    }
    EXPECT_EQ(b.candidates.size(), ok);
    // The imported entry is stored by the cache's own writer and read back as valid.
    const auto stored = wc.store(b, tunekit::kernel_launcher_import_log(b, "scale.wisdom"));
    const auto reread = tunekit::winner_cache::read(stored);
    ASSERT_TRUE(reread.found()) << reread.detail;
    EXPECT_NE(tunekit_test::read_text(std::filesystem::path(stored).replace_extension(".log"))
                  .find("imported from kernel_launcher wisdom file scale.wisdom"),
              std::string::npos);
  }
}

TEST(formats_kernel_launcher, versions_and_the_device_map_to_the_environment) {
  tunekit::cache_entry e;
  e.function = {"k", ""};
  e.key = key{32, 32};
  e.hardware = tunekit::hardware_info{"cuda", "NVIDIA H200", "sm_90", 132, 1};
  e.dependencies = {{"cuda_driver", "12.4"},
                    {"cuda_runtime", "12.6.1"},
                    {"kernel_tuner", "1.1"},
                    {"tunekit", "0.1.0"}};
  e.timestamp = "2026-11-29T22:28:28Z";
  tunekit::candidate_record c;
  c.config = config{{"a", 1}, {"b", 2.5}};
  c.time_ms = 0.125;
  e.candidates.push_back(c);
  e.winner = c.config;
  const auto lines = lines_of(tunekit::to_kernel_launcher_wisdom({e}));
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[1], R"({"config": [1, 2.5], "problem_size": [32, 32, 1], "time": 0.125, )"
                      R"("environment": {"date": "2026-11-29T22:28:28+00:00", "device_name": )"
                      R"("NVIDIA H200", "compute_capability": 90, "kernel_tuner_version": "1.1", )"
                      R"("cuda_driver_version": 12040, "cuda_version": 12061}})");
  const auto back = import_text(lines[0] + "\n" + lines[1]).entries.at(0);
  EXPECT_EQ(back.hardware.arch, "sm_90");
  EXPECT_EQ(back.hardware.units, 0); // not in the file
  EXPECT_EQ(back.timestamp, e.timestamp);
  EXPECT_EQ(back.dependencies,
            (tunekit::dependencies{
                {"cuda_driver", "12.4"}, {"cuda_runtime", "12.6.1"}, {"kernel_tuner", "1.1"}}));
  // What does not fit a member is left out: an arch that is not sm_<digits>, a version that is
  // not CUDA's "major.minor[.patch]", a timestamp in another form is written as it is.
  e.hardware.arch = "sm_90a";
  e.dependencies = {{"cuda_driver", "none"}};
  e.timestamp = "yesterday";
  const auto env = json::parse(lines_of(tunekit::to_kernel_launcher_wisdom({e}))[1])["environment"];
  EXPECT_EQ(env, json::parse(R"({"date": "yesterday", "device_name": "NVIDIA H200"})"));
}

TEST(formats_kernel_launcher, entries_a_wisdom_file_cannot_hold_are_refused) {
  auto entry_of = [](std::vector<config> configs, key k = key{1}) {
    tunekit::cache_entry e;
    e.function = {"f", "v"};
    e.key = std::move(k);
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
  auto export_error = [](const std::vector<tunekit::cache_entry> &entries,
                         const tunekit::kernel_launcher_export &how = {}) {
    return tunekit_test::error_of([&] { (void)tunekit::to_kernel_launcher_wisdom(entries, how); });
  };
  EXPECT_TRUE(has(export_error({}), "no entries to write as a kernel_launcher wisdom file"));
  auto other = entry_of({config{{"a", 1}}}, key{2});
  other.function.name = "g";
  EXPECT_TRUE(
      has(export_error({entry_of({config{{"a", 1}}}), other}), "entries of functions 'f' and 'g'"));
  config templated{{"a", 1}};
  templated.set_template_id("tiled");
  EXPECT_TRUE(has(export_error({entry_of({templated})}),
                  "entry of 'f' for key (1) on Test CPU 9000: candidate [tiled:a=1] belongs to "
                  "template 'tiled'; a wisdom file has no templates"));
  EXPECT_TRUE(has(export_error({entry_of({config{{"a", 1}, {"b", 2}}, config{{"a", 2}}})}),
                  "candidate [a=2] has no 'b', which other candidates have"));
  EXPECT_TRUE(has(export_error({entry_of({config{}})}), "have no fields"));
  EXPECT_TRUE(has(export_error({entry_of({config{{"a", std::string("caf\xe9")}}})}),
                  "parameter 'a' has a value that is not UTF-8 text"));
  EXPECT_TRUE(
      has(export_error({entry_of({config{{"a", 1}, {"b", 2}}, config{{"b", 2}, {"a", 1.0}}})}),
          "two candidates have the config [b=2, a=1"));
  auto failed = entry_of({config{{"a", 1}}});
  failed.candidates[0].status = candidate_status::failed;
  failed.candidates[0].time_ms = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(has(export_error({failed}), "it has no valid candidate"));
  const auto typed = entry_of({config{{"a", 1}}}, key{4096, "float32"});
  EXPECT_TRUE(has(export_error({typed}),
                  "entry of 'f' for key (4096, \"float32\") on Test CPU 9000: "
                  "its key is not a problem size"));
  EXPECT_TRUE(has(export_error({entry_of({config{{"a", 1}}}, key{1, 2, 3, 4})}),
                  "its key is not a problem size"));
  // Given a problem size, it is written with that one.
  const tunekit::kernel_launcher_export sized{
      "", {{key{4096, "float32"}, kernel_launcher_problem_size{4096, 1, 1}}}};
  const auto text = tunekit::to_kernel_launcher_wisdom({typed}, sized);
  EXPECT_EQ(json::parse(lines_of(text)[1])["problem_size"], json::parse("[4096, 1, 1]"));
  EXPECT_TRUE(
      has(export_error({entry_of({config{{"a", 1}}})}, sized),
          "a problem size is given for key (4096, \"float32\"), which no entry of 'f' has"));
  EXPECT_TRUE(has(export_error({typed}, {"", {sized.problem_sizes[0], sized.problem_sizes[0]}}),
                  "the problem size of key (4096, \"float32\") is given twice"));
  // kernel_launcher tells records apart by device name and problem size only.
  EXPECT_TRUE(has(export_error({typed, entry_of({config{{"a", 2}}}, key{4096})}, sized),
                  "both have problem size (4096)"));
  auto same_name = entry_of({config{{"a", 2}}}, key{4096, 1});
  same_name.hardware.units = 64; // other hardware, the same name
  EXPECT_TRUE(has(export_error({entry_of({config{{"a", 1}}}, key{4096}), same_name}),
                  "entries of 'f' for keys (4096) and (4096, 1) on Test CPU 9000 both have "
                  "problem size (4096)"));
  EXPECT_TRUE(
      has(export_error({entry_of({config{{"a", 1}}})}, {"caf\xe9", {}}), "is not UTF-8 text"));
}

TEST(formats_kernel_launcher, file_names_are_the_sanitised_tuning_key) {
  EXPECT_EQ(tunekit::kernel_launcher_file_name("vector_add_float"), "vector_add_float.wisdom");
  EXPECT_EQ(tunekit::kernel_launcher_file_name("matmul<float, 16>"), "matmul_float__16_.wisdom");
  EXPECT_EQ(tunekit::kernel_launcher_file_name("example.scale-v2"), "example.scale-v2.wisdom");
}

} // namespace
