// `tunekit cache import kernel-tuner` and `tunekit cache export kernel-tuner`, run as a process:
// a Kernel Tuner file into a temp winner cache, entries of real tuners out to Kernel Tuner files,
// and the exit codes of bad files, keys and caches.

#include "cli_support.hpp"

#include <tunekit/formats/kernel_tuner.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

using json = nlohmann::json;
using tunekit::config;
using tunekit::key;
using tunekit_test::temp_dir;

namespace {

std::string quote(const std::string &s) { return tunekit_test::shell_quote(s); }

const std::string excerpt =
    std::string(TUNEKIT_TEST_DATA_DIR) + "/convolution_A100_excerpt.json"; // no problem_size

class kernel_tuner_cli_test : public ::testing::Test {
protected:
  tunekit_test::cli_result run(const std::string &args, bool with_cache = true) const {
    return tunekit_test::run_cli(args, with_cache ? cache.path() : std::filesystem::path(),
                                 scratch.path() / "stderr.txt");
  }

  // Entries of "scale" for two keys; BLOCK=512 is fastest.
  void fill_cache() {
    auto meas = std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
    auto f = tunekit::autotune(
        "scale", tunekit::config_space::product({{"BLOCK", {256, 512, 1024}}}),
        [](int n) { return key{n}; }, tunekit::keep_all{}, [](int, const config &) {},
        tunekit_test::options(cache.path(), meas, log));
    f(1024);
    f(4096);
  }

  temp_dir cache;
  temp_dir scratch;
  tunekit_test::log_capture log;
};

TEST_F(kernel_tuner_cli_test, import_writes_one_entry_that_the_cache_lists) {
  auto r = run("cache import kernel-tuner " + quote(excerpt) +
               " --function conv --version paper --key '[4096, 4096]'");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + cache.path().string() + "/autotune/conv/"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("146 configs (0 failed) of A100-PCIE-40GB"), std::string::npos) << r.out;
  const auto listed = json::parse(run("cache list --json").out);
  ASSERT_EQ(listed.size(), 1U);
  EXPECT_EQ(listed[0]["function"], "conv");
  EXPECT_EQ(listed[0]["version"], "paper");
  EXPECT_EQ(listed[0]["key"], json::parse("[4096, 4096]"));
  EXPECT_EQ(listed[0]["hardware"]["name"], "A100-PCIE-40GB");
  EXPECT_EQ(listed[0]["time_ms"], 0.7987200021743774);
  EXPECT_EQ(run("cache list").rc, 0); // valid, and named by its own digest

  // Again: the same entry, replaced; --cache-dir may also follow the command.
  r = run("cache import kernel-tuner " + quote(excerpt) +
              " --function conv --version paper --key '[4096, 4096]' --cache-dir " +
              quote(cache.path().string()),
          false);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.rfind("replaced ", 0), 0U) << r.out;
  EXPECT_EQ(json::parse(run("cache list --json").out).size(), 1U);
}

TEST_F(kernel_tuner_cli_test, bad_files_exit_1_and_missing_ones_2) {
  // No problem_size and no --key.
  auto r = run("cache import kernel-tuner " + quote(excerpt) + " --function conv");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find(excerpt + ": has no 'problem_size'"), std::string::npos) << r.err;
  const auto bad = scratch.path() / "bad.json";
  tunekit_test::write_text(bad, R"({"device_name": "GPU", "tune_params": {"a": [1]},
                                    "cache": {"2": {"time": 1.0}}})");
  r = run("cache import kernel-tuner " + quote(bad.string()) + " --function f --key '[1]'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Kernel Tuner cache file " + bad.string() +
                       ": cache key \"2\": '2' is not a value of parameter 'a'"),
            std::string::npos)
      << r.err;
  tunekit_test::write_text(bad, "\x1f\x8b\x08\x00 not really gzip");
  r = run("cache import kernel-tuner " + quote(bad.string()) + " --function f --key '[1]'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find(bad.string()), std::string::npos) << r.err;

  r = run("cache import kernel-tuner " + quote((scratch.path() / "absent.json").string()) +
          " --function f");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no such file"), std::string::npos) << r.err;
  r = run("cache import kernel-tuner " + quote(excerpt) + " --function f --key 4096");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--key must be a JSON array"), std::string::npos) << r.err;
  EXPECT_NE(run("cache import kernel-tuner " + quote(excerpt)).rc, 0); // --function is required
  EXPECT_TRUE(tunekit_test::files_below(cache.path()).empty());
}

TEST_F(kernel_tuner_cli_test, export_writes_one_file_per_entry_or_the_entry_of_a_key) {
  fill_cache();
  const auto dir = scratch.path() / "kt";
  auto r = run("cache export kernel-tuner --function scale --out " + quote(dir.string()));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("2 files written to " + dir.string()), std::string::npos) << r.out;
  const auto files = tunekit_test::files_below(dir);
  ASSERT_EQ(files.size(), 2U);
  for (const auto &f : files) {
    EXPECT_EQ(f.filename().string().rfind("scale-", 0), 0U) << f;
    const auto doc = json::parse(tunekit_test::read_text(f));
    EXPECT_EQ(doc["kernel_name"], "scale");
    EXPECT_EQ(doc["tune_params"]["BLOCK"], json::parse("[256, 512, 1024]"));
    EXPECT_EQ(doc["cache"]["512"]["time"], 1.0);
  }

  const auto one = scratch.path() / "scale-1024.json";
  r = run("cache export kernel-tuner --function scale --key '[1024]' --out " + quote(one.string()));
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto text = tunekit_test::read_text(one);
  EXPECT_EQ(json::parse(text)["problem_size"], json::parse("[1024]"));
  // What was exported imports back to the same winner.
  const auto back = tunekit::from_kernel_tuner_cache(text, one.string(), {{"scale", "v1"}, {}});
  EXPECT_EQ(back.winner, (config{{"BLOCK", 512}}));
  EXPECT_EQ(back.key, key{1024});
}

TEST_F(kernel_tuner_cli_test, export_without_an_entry_exits_2) {
  fill_cache();
  const auto out = (scratch.path() / "x.json").string();
  auto r = run("cache export kernel-tuner --function scale --key '[7]' --out " + quote(out));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no valid winner-cache entries of function 'scale' for key (7)"),
            std::string::npos)
      << r.err;
  r = run("cache export kernel-tuner --function other --out " + quote(out));
  EXPECT_EQ(r.rc, 2);
  r = run("cache export kernel-tuner --function scale --key '{' --out " + quote(out));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--key is not valid JSON"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

} // namespace
