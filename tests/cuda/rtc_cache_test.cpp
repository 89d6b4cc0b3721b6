// The compile cache's typed load result: why a stored binary was or was not used, with its path
// and detail, beside the warning the cache logs. No GPU needed (NVRTC compiles for sm_90).

#include "../core/test_support.hpp"
#include "rtc_test_support.hpp"

#include <tunekit/cuda/rtc.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace tc = tunekit::cuda;
using tunekit::load_status;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

void write_all(const std::filesystem::path &p, const std::string &bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::string read_all(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(rtc_cache_load, says_why_a_stored_binary_is_not_used) {
  temp_dir dir;
  log_capture compile_log;
  std::string k2;
  std::string k3;
  {
    tc::compile_options o;
    o.arch = "sm_90";
    o.cache = std::make_shared<const tc::kernel_cache>(dir.path(), compile_log.sink());
    o.log = compile_log.sink();
    tc::kernel_program p(tc::test::scale_definition(), o);
    k2 = p.compile(tunekit::config{{"ELEMS", 2}}).key;
    k3 = p.compile(tunekit::config{{"ELEMS", 3}}).key;
  }
  log_capture log;
  const tc::kernel_cache cache(dir.path(), log.sink());
  const auto path = cache.path_of(k3, "sm_90");
  const std::string good = read_all(path);
  ASSERT_GT(good.size(), 200U);

  // No file: missing, said to nobody.
  const auto none = cache.load(std::string(64, '0'), "sm_90");
  EXPECT_EQ(none.status, load_status::missing);
  EXPECT_FALSE(none.value.has_value());
  EXPECT_FALSE(none.rejected());
  EXPECT_TRUE(none.detail.empty());
  EXPECT_EQ(none.path, cache.path_of(std::string(64, '0'), "sm_90"));
  EXPECT_TRUE(log.warnings().empty()) << log.dump();

  struct damage {
    std::string name;
    std::string bytes;
    load_status status;
    std::string detail;
  };
  const std::string other = read_all(cache.path_of(k2, "sm_90"));
  const std::vector<damage> cases = {
      {"another key's binary", other, load_status::identity_mismatch, "made for key " + k2},
      {"truncated", good.substr(0, good.size() - 100), load_status::invalid,
       "truncated: " + std::to_string(good.size() - good.find('\n') - 101) + " of " +
           std::to_string(good.size() - good.find('\n') - 1) + " bytes"},
      {"empty", "", load_status::invalid, "no header line (truncated file?)"},
      {"no JSON header", "not json\n", load_status::invalid, "the header is not JSON: "},
      {"a header that is not an object", "[1, 2]\n", load_status::invalid,
       "the header is not a JSON object"},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.name);
    write_all(path, c.bytes);
    log.clear();
    const auto r = cache.load(k3, "sm_90");
    EXPECT_EQ(r.status, c.status) << tunekit::to_string(r.status);
    EXPECT_TRUE(r.rejected());
    EXPECT_FALSE(r.value.has_value());
    // A detail that ends in ": " is followed by the parser's own words.
    const bool prefix = c.detail.ends_with(": ");
    if (prefix) {
      EXPECT_EQ(r.detail.rfind(c.detail, 0), 0U) << r.detail;
      EXPECT_GT(r.detail.size(), c.detail.size()) << r.detail;
    } else {
      EXPECT_EQ(r.detail, c.detail);
    }
    EXPECT_EQ(r.path, path);
    // The warning the cache logs is the detail in its sentence.
    ASSERT_EQ(log.warnings().size(), 1U) << log.dump();
    EXPECT_EQ(log.warnings()[0], "compile cache: skipping " + path.string() + ": " + r.detail +
                                     "; compiling it again");
  }

  write_all(path, good);
  log.clear();
  const auto hit = cache.load(k3, "sm_90");
  EXPECT_EQ(hit.status, load_status::found);
  ASSERT_TRUE(hit.value.has_value());
  EXPECT_EQ(hit.value->key, k3);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST(rtc_cache_load, a_binary_of_another_target_is_an_identity_mismatch) {
  temp_dir dir;
  log_capture log;
  tc::compile_options o;
  o.arch = "sm_90";
  o.cache = std::make_shared<const tc::kernel_cache>(dir.path(), log.sink());
  o.log = log.sink();
  tc::kernel_program p(tc::test::scale_definition(), o);
  const auto key = p.compile(tunekit::config{{"ELEMS", 4}}).key;
  const tc::kernel_cache cache(dir.path(), log.sink());
  // The sm_90 cubin where the PTX of the same key would be.
  std::filesystem::copy_file(cache.path_of(key, "sm_90"), cache.path_of(key, "compute_90"));
  const auto r = cache.load(key, "compute_90");
  EXPECT_EQ(r.status, load_status::identity_mismatch);
  EXPECT_EQ(r.detail, "made for sm_90");
}

} // namespace
