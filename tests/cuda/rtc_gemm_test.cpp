// The runtime-compiled GEMM of examples/cuda without a GPU: its space is CLBlast's measured one,
// a spread of its configs compiles for sm_90 and for sm_75 (no cp.async), and a config that breaks
// a constraint fails to compile with the constraint in its reason.

#include "../core/test_support.hpp"
#include "gemm_rtc_space.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace tc = tunekit::cuda;

tc::compile_options sm90_uncached(unsigned threads = 2) {
  return tc::compile_options{.arch = "sm_90", .use_cache = false, .threads = threads};
}

// Every (size / parts)-th config of the extended space, its last one (one shared buffer) and the
// best H200 config (two buffers at the 48 KiB limit) compile for `arch`.
void expect_a_spread_compiles(const char *arch, std::size_t parts) {
  auto program = std::make_shared<tc::kernel_program>(
      example::xgemm_definition(TUNEKIT_GEMM_RTC_SOURCE),
      tc::compile_options{.arch = arch, .use_cache = false, .threads = 2});
  const auto space = example::xgemm_space(example::xgemm_space_kind::extended);
  std::vector<tunekit::config> sample;
  for (std::size_t i = 0; i < space.size(); i += space.size() / parts) {
    sample.push_back(space[i]);
  }
  sample.push_back(space[space.size() - 1]);
  tunekit::config best = example::xgemm_space()[0];
  for (const auto &[name, value] : {std::pair{"MWG", 64},
                                    {"NWG", 128},
                                    {"MDIMC", 16},
                                    {"NDIMC", 8},
                                    {"MDIMA", 32},
                                    {"NDIMB", 32},
                                    {"VWM", 2},
                                    {"VWN", 4},
                                    {"SA", 1},
                                    {"SB", 1}}) {
    best.set(name, value);
  }
  ASSERT_TRUE(example::xgemm_valid(best));
  sample.push_back(best);
  program->prepare(sample);
  for (const auto &c : sample) {
    const auto r = program->compile(c);
    EXPECT_EQ(r.status, tc::compile_status::compiled)
        << arch << " " << c.to_string() << ": " << r.reason;
    EXPECT_GT(r.binary_bytes, 0U);
  }
  const auto s = program->summary();
  std::printf("compiled %zu Xgemm configs for %s, %.0f ms each on average\n", s.compiled, arch,
              s.compile_ms / static_cast<double>(s.compiled));
}

} // namespace

TEST(rtc_gemm, the_clblast_space_has_the_measured_size_and_order) {
  const auto space = example::xgemm_space();
  // shared/data/search-spaces/GEMM_*.json.gz: 17,956 configs pass CLBlast's constraints.
  EXPECT_EQ(space.size(), 17956U);
  std::vector<std::string> names;
  for (const auto &f : space[0]) {
    names.push_back(f.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"MWG", "NWG", "KWG", "MDIMC", "NDIMC", "MDIMA",
                                             "NDIMB", "KWI", "VWM", "VWN", "STRM", "STRN", "SA",
                                             "SB", "PRECISION"}));
  EXPECT_GT(example::xgemm_space(example::xgemm_space_kind::extended).size(), space.size());
  // Every config fits 4096^3; a 48-wide shape keeps only the 16-wide tiles.
  EXPECT_EQ(example::xgemm_candidates(space, 4096, 4096, 4096).size(), space.size());
  for (const auto &c : example::xgemm_candidates(space, 48, 48, 64)) {
    EXPECT_EQ(c.get_int("MWG"), 16);
    EXPECT_EQ(c.get_int("NWG"), 16);
  }
}

TEST(rtc_gemm, a_spread_of_the_space_compiles_for_sm_90) { expect_a_spread_compiles("sm_90", 12); }

// Before sm_80 (no cp.async) the double-buffered tiles go through registers.
TEST(rtc_gemm, a_spread_of_the_space_compiles_for_sm_75_without_async_copies) {
  expect_a_spread_compiles("sm_75", 4);
}

TEST(rtc_gemm, a_config_that_breaks_a_constraint_fails_naming_it) {
  tc::kernel_program program(example::xgemm_definition(TUNEKIT_GEMM_RTC_SOURCE), sm90_uncached());
  tunekit::config c = example::xgemm_space()[0];
  c.set("VWM", 8); // MWG=16, MDIMC=8: MWG % (MDIMC * VWM) != 0
  try {
    static_cast<void>(program.compile(c));
    FAIL() << "compiled " << c.to_string();
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("MWG % (MDIMC * VWM) == 0"), std::string::npos)
        << e.what();
  }
}
