// `tunekit kernels list | clear` run as a process on a compile cache that NVRTC filled for sm_90
// (no GPU needed), with files corrupted, renamed and aged by the test.

#include "cli_support.hpp"

#include <tunekit/cuda/rtc.hpp>
#include <tunekit/cuda/rtc_cache.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

using json = nlohmann::json;
namespace tc = tunekit::cuda;

namespace {

const char *fill_source = R"(
extern "C" __global__ void fill(float *y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = VALUE;
  }
}
)";

class kernels_cli_test : public ::testing::Test {
protected:
  [[nodiscard]] tunekit_test::cli_result run(const std::string &args) const {
    return tunekit_test::run_cli(args, cache.path(), scratch.path() / "stderr.txt");
  }

  // Compiles fill for VALUE = each of `values` into the temp cache; returns their cache keys.
  std::vector<std::string> compile(std::initializer_list<int> values) {
    tc::compile_options o;
    o.arch = "sm_90";
    o.cache = std::make_shared<const tc::kernel_cache>(cache.path(), log.sink());
    o.threads = 1;
    o.log = log.sink();
    tc::kernel_program program(
        tc::kernel_definition{.source = tc::kernel_source{"fill.cu", fill_source}, .entry = "fill"},
        o);
    std::vector<std::string> keys;
    for (int v : values) {
      keys.push_back(program.compile(tunekit::config{{"VALUE", v}}).key);
    }
    return keys;
  }

  [[nodiscard]] std::filesystem::path dir() const { return cache.path() / "kernels"; }

  tunekit_test::temp_dir cache;
  tunekit_test::temp_dir scratch;
  tunekit_test::log_capture log;
};

TEST_F(kernels_cli_test, list_prints_each_compiled_kernel) {
  auto r = run("kernels list");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("0 compiled kernels in " + dir().string()), std::string::npos) << r.out;

  const auto keys = compile({1, 2});
  r = run("kernels list");
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const auto &k : keys) {
    EXPECT_NE(r.out.find("ok   " + k + "  sm_90  "), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("fill [VALUE=2]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 compiled kernels in "), std::string::npos) << r.out;

  r = run("kernels list --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = json::parse(r.out);
  ASSERT_EQ(j.size(), 2U);
  for (const auto &e : j) {
    EXPECT_EQ(e["target"], "sm_90");
    EXPECT_GT(e["bytes"].get<std::size_t>(), 0U);
    EXPECT_FALSE(e.contains("problem"));
    EXPECT_EQ(e["nvrtc"], tc::nvrtc_version());
    EXPECT_EQ(std::filesystem::path(e["path"].get<std::string>()).filename(),
              e["key"].get<std::string>() + ".cubin");
  }
}

TEST_F(kernels_cli_test, list_reports_bad_files_with_the_reason_and_exits_1) {
  const auto keys = compile({1, 2, 3});
  // A flipped payload byte, a file renamed to another key, a file that is no binary at all.
  const auto corrupt = dir() / (keys[0] + ".cubin");
  std::string bytes = tunekit_test::read_text(corrupt);
  bytes.back() = static_cast<char>(bytes.back() ^ 0x5a);
  tunekit_test::write_text(corrupt, bytes);
  const auto renamed = dir() / (std::string(64, 'a') + ".cubin");
  std::filesystem::rename(dir() / (keys[1] + ".cubin"), renamed);
  const auto junk = dir() / "junk.ptx";
  tunekit_test::write_text(junk, "not a kernel");

  auto r = run("kernels list");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.out.find("BAD  " + corrupt.string() + ": checksum mismatch"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("BAD  " + renamed.string() + ": made for key " + keys[1]), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("BAD  " + junk.string() + ": no header line"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok   " + keys[2]), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 compiled kernels (3 bad)"), std::string::npos) << r.out;

  r = run("kernels list --json");
  EXPECT_EQ(r.rc, 1);
  std::size_t problems = 0;
  for (const auto &e : json::parse(r.out)) {
    problems += e.contains("problem") ? 1 : 0;
  }
  EXPECT_EQ(problems, 3U);
}

TEST_F(kernels_cli_test, clear_removes_all_or_those_older_than_a_number_of_days) {
  const auto keys = compile({1, 2, 3});
  const auto old = dir() / (keys[0] + ".cubin");
  std::filesystem::last_write_time(old, std::filesystem::file_time_type::clock::now() -
                                            std::chrono::hours(24 * 10));
  auto r = run("kernels clear --older-than 7");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("removed 1 compiled kernel from " + dir().string()), std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(old));
  EXPECT_EQ(json::parse(run("kernels list --json").out).size(), 2U);

  r = run("kernels clear --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["removed"], 2);
  EXPECT_NE(run("kernels list").out.find("0 compiled kernels"), std::string::npos);
  // A second process compiles again what was cleared.
  static_cast<void>(compile({1}));
  EXPECT_EQ(json::parse(run("kernels list --json").out).size(), 1U);
}

TEST_F(kernels_cli_test, usage_errors_exit_non_zero) {
  EXPECT_NE(run("kernels").rc, 0);
  EXPECT_NE(run("kernels clear --older-than -1").rc, 0);
  EXPECT_NE(run("kernels clear --older-than soon").rc, 0);
}

} // namespace
