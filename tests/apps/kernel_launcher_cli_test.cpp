// `tunekit cache import kernel-launcher` and `tunekit cache export kernel-launcher`, run as a
// process: a wisdom file of kernel_launcher's writer into a temp winner cache, entries of real
// tuners out to a wisdom file and back, and the exit codes of bad files, options and caches.

#include "cli_support.hpp"

#include <tunekit/formats/kernel_launcher.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

using json = nlohmann::json;
using tunekit::config;
using tunekit::key;
using tunekit_test::temp_dir;

namespace {

std::string quote(const std::string &s) { return tunekit_test::shell_quote(s); }

const std::string wisdom = std::string(TUNEKIT_TEST_DATA_DIR) + "/vector_add_float.wisdom";

std::size_t count(const std::string &text, const std::string &part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

std::vector<json> records_of(const std::string &text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) {
      out.push_back(json::parse(l));
    }
  }
  return out;
}

class kernel_launcher_cli_test : public ::testing::Test {
protected:
  tunekit_test::cli_result run(const std::string &args, bool with_cache = true) const {
    return tunekit_test::run_cli(args, with_cache ? cache.path() : std::filesystem::path(),
                                 scratch.path() / "stderr.txt");
  }

  // Entries of "scale" for two keys (made by `key_of`); BLOCK=512 is fastest.
  template <class KeyOf> void fill_cache(KeyOf key_of) {
    auto meas = std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
    auto f = tunekit::autotune(
        "scale", tunekit::config_space::product({{"BLOCK", {256, 512, 1024}}}), key_of,
        tunekit::keep_all{}, [](int, const config &) {},
        tunekit_test::options(cache.path(), meas, log));
    f(1024);
    f(4096);
  }

  temp_dir cache;
  temp_dir scratch;
  tunekit_test::log_capture log;
};

TEST_F(kernel_launcher_cli_test, import_writes_one_entry_per_device_and_problem_size) {
  auto r = run("cache import kernel-launcher " + quote(wisdom) +
               " --function vector_add "
               "--version v2");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count(r.out, "wrote " + cache.path().string() + "/autotune/vector_add/"), 3U) << r.out;
  EXPECT_NE(r.out.find("5 configs of NVIDIA A100-PCIE-40GB, key (1048576), winner "
                       "[threads_per_block=256, elements_per_thread=2, use_ldg=true]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("3 entries of tuning key 'vector_add_float' imported from " + wisdom),
            std::string::npos)
      << r.out;
  const auto listed = json::parse(run("cache list --json").out);
  ASSERT_EQ(listed.size(), 3U);
  std::map<std::string, double> times; // "device key" -> the winner's time
  for (const auto &e : listed) {
    EXPECT_EQ(e["function"], "vector_add");
    EXPECT_EQ(e["version"], "v2");
    EXPECT_EQ(e["hardware"]["kind"], "kernel_launcher");
    times[e["hardware"]["name"].get<std::string>() + " " + e["key"].dump()] = e["time_ms"];
  }
  EXPECT_EQ(times, (std::map<std::string, double>{{"NVIDIA A100-PCIE-40GB [1048576]", 0.0148479},
                                                  {"NVIDIA A100-PCIE-40GB [16777216]", 0.1921024},
                                                  {"NVIDIA H100 PCIe [1048576]", 0.0099328}}));
  EXPECT_EQ(run("cache list").rc, 0); // valid, and named by their own digests

  // Again: the same entries, replaced; --cache-dir may also follow the command.
  r = run("cache import kernel-launcher " + quote(wisdom) +
              " --function vector_add --version v2 --cache-dir " + quote(cache.path().string()),
          false);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count(r.out, "replaced "), 3U) << r.out;
  EXPECT_EQ(json::parse(run("cache list --json").out).size(), 3U);
}

TEST_F(kernel_launcher_cli_test, keys_are_given_per_problem_size) {
  auto r = run("cache import kernel-launcher " + quote(wisdom) +
               " --function vector_add --key '[1048576]=[1048576, \"float32\"]' "
               "--key '[16777216, 1, 1]=[\"big\"]'");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::multiset<std::string> keys;
  for (const auto &e : json::parse(run("cache list --json").out)) {
    keys.insert(e["key"].dump());
  }
  EXPECT_EQ(keys, (std::multiset<std::string>{"[1048576,\"float32\"]", "[1048576,\"float32\"]",
                                              "[\"big\"]"}));

  // One key for a file of two problem sizes: the file does not fit, exit 1.
  r = run("cache import kernel-launcher " + quote(wisdom) + " --function f --key '[7]'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find(wisdom + ": holds 2 problem sizes ((1048576), (16777216)) that one key "
                                "was given for"),
            std::string::npos)
      << r.err;
  r = run("cache import kernel-launcher " + quote(wisdom) + " --function f --key '[99]=[1]'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("holds no record of problem size (99), whose key was given"),
            std::string::npos)
      << r.err;
  // Options that are not keys: exit 2.
  for (const char *bad :
       {"'[1.5]=[1]'", "'[1, 2, 3, 4]=[1]'", "'{\"n\": 1}'", "'4096'", "'big'", "'[1]=big'"}) {
    r = run("cache import kernel-launcher " + quote(wisdom) + " --function f --key " + bad);
    EXPECT_EQ(r.rc, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--key"), std::string::npos) << r.err;
  }
  EXPECT_EQ(json::parse(run("cache list --json").out).size(), 3U); // only the first import's
}

TEST_F(kernel_launcher_cli_test, bad_files_exit_1_and_missing_ones_2) {
  const auto bad = scratch.path() / "bad.wisdom";
  const std::string header = R"({"version": "1.0", "objective": "time", )"
                             R"("tunable_parameters": ["a", "b"], "key": "k"})";
  tunekit_test::write_text(bad, header + "\n" +
                                    R"({"config": [1], "problem_size": [8], "time": 1.0, )"
                                    R"("environment": {"device_name": "GPU"}})" +
                                    "\n");
  auto r = run("cache import kernel-launcher " + quote(bad.string()) + " --function f");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("kernel_launcher wisdom file " + bad.string() +
                       ": line 2: 'config' holds 1 value for the 2 tunable_parameters"),
            std::string::npos)
      << r.err;
  tunekit_test::write_text(bad, R"({"version": "0.9", "key": "k"})"
                                "\n");
  r = run("cache import kernel-launcher " + quote(bad.string()) + " --function f");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("its header has version \"0.9\""), std::string::npos) << r.err;
  tunekit_test::write_text(bad, header + "\n");
  r = run("cache import kernel-launcher " + quote(bad.string()) + " --function f");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("holds no records"), std::string::npos) << r.err;
  // A Kernel Tuner cache file is not a wisdom file.
  r = run("cache import kernel-launcher " +
          quote(std::string(TUNEKIT_TEST_DATA_DIR) + "/convolution_A100_excerpt.json") +
          " --function f");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("convolution_A100_excerpt.json: its header has no 'version'"),
            std::string::npos)
      << r.err;

  r = run("cache import kernel-launcher " + quote((scratch.path() / "absent.wisdom").string()) +
          " --function f");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no such file"), std::string::npos) << r.err;
  EXPECT_NE(run("cache import kernel-launcher " + quote(wisdom)).rc, 0); // --function is required
  EXPECT_TRUE(tunekit_test::files_below(cache.path()).empty());
}

TEST_F(kernel_launcher_cli_test, export_writes_one_file_that_imports_back) {
  fill_cache([](int n) { return key{n}; });
  const auto dir = scratch.path() / "wisdom";
  std::filesystem::create_directories(dir);
  auto r = run("cache export kernel-launcher --function scale --tuning-key 'scale<float>' --out " +
               quote(dir.string()));
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto file = dir / "scale_float_.wisdom"; // where kernel_launcher looks for it
  EXPECT_NE(r.out.find("wrote " + file.string() + ": 2 entries, 6 records"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(1024)  problem size [1024, 1, 1]  Test CPU 9000  [BLOCK=512]  3 records"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err, "");
  const std::string text = tunekit_test::read_text(file);
  const auto lines = records_of(text);
  ASSERT_EQ(lines.size(), 7U) << text;
  EXPECT_EQ(lines[0]["key"], "scale<float>");
  EXPECT_EQ(lines[0]["tunable_parameters"], json::parse(R"(["BLOCK"])"));
  EXPECT_EQ(lines[1]["config"], json::parse("[512]"));
  EXPECT_EQ(lines[1]["problem_size"], json::parse("[1024, 1, 1]"));
  EXPECT_EQ(lines[1]["time"], 1.0);
  EXPECT_EQ(lines[4]["problem_size"], json::parse("[4096, 1, 1]"));

  // What was exported imports back to the same winners and keys.
  const auto back = tunekit::from_kernel_launcher_wisdom(text, file.string(), {{"scale", "v1"}});
  ASSERT_EQ(back.entries.size(), 2U);
  EXPECT_EQ(back.tuning_key, "scale<float>");
  EXPECT_EQ(back.entries[0].key, key{1024});
  EXPECT_EQ(back.entries[1].key, key{4096});
  for (const auto &e : back.entries) {
    EXPECT_EQ(e.winner, (config{{"BLOCK", 512}}));
    EXPECT_EQ(e.candidates.size(), 3U);
  }

  // To a file of another name: written there, with a note of the name kernel_launcher reads.
  const auto other = scratch.path() / "scale.txt";
  r = run("cache export kernel-launcher --function scale --out " + quote(other.string()));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("kernel_launcher looks for the wisdom of tuning key 'scale' in "
                       "scale.wisdom"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(records_of(tunekit_test::read_text(other))[0]["key"], "scale");
}

TEST_F(kernel_launcher_cli_test, keys_that_are_no_problem_size_need_one) {
  fill_cache([](int n) { return key{n, "float32"}; });
  const auto out = (scratch.path() / "scale.wisdom").string();
  auto r = run("cache export kernel-launcher --function scale --out " + quote(out));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("its key is not a problem size"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = run(
      "cache export kernel-launcher --function scale --problem-size '[1024, \"float32\"]=[1024]' "
      "--out " +
      quote(out));
  EXPECT_EQ(r.rc, 2); // the other entry still has none
  r = run(
      "cache export kernel-launcher --function scale --problem-size '[1024, \"float32\"]=[1024]' "
      "--problem-size '[4096, \"float32\"]=[64, 64]' --out " +
      quote(out));
  ASSERT_EQ(r.rc, 0) << r.err;
  std::set<std::string> sizes;
  for (const auto &l : records_of(tunekit_test::read_text(out))) {
    if (l.contains("problem_size")) {
      sizes.insert(l["problem_size"].dump());
    }
  }
  EXPECT_EQ(sizes, (std::set<std::string>{"[1024,1,1]", "[64,64,1]"}));
}

TEST_F(kernel_launcher_cli_test, export_errors_exit_2) {
  const auto out = (scratch.path() / "x.wisdom").string();
  auto r = run("cache export kernel-launcher --function scale --out " + quote(out));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no valid winner-cache entries of function 'scale'"), std::string::npos)
      << r.err;
  fill_cache([](int n) { return key{n}; });
  r = run("cache export kernel-launcher --function scale --version v9 --out " + quote(out));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("of function 'scale' version 'v9'"), std::string::npos) << r.err;
  for (const char *bad : {"'[1024]'", "'[1024]=[1.5]'", "'{=[1]'", "'[7]=[1]'"}) {
    r = run("cache export kernel-launcher --function scale --problem-size " + std::string(bad) +
            " --out " + quote(out));
    EXPECT_EQ(r.rc, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(std::string(bad) == "'[7]=[1]'" ? "which no entry of 'scale' has"
                                                         : "--problem-size"),
              std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

} // namespace
