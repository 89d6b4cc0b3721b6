// Contextual tuning across ranks (is_dist): each candidate's in-context mean is MAX-reduced over
// the ranks, aligned by candidate index, so every rank keeps the same winner.

#include "mpi_test_support.hpp"

#include <tunekit/contextual.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

using namespace tunekit_mpi_test;

std::string read_text(const std::filesystem::path &p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

tunekit::contextual_options dist_options(const temp_dir &dir) {
  tunekit::contextual_options o;
  tunekit::environment env;
  env.log_dir = dir.path() / "logs";
  o.process = tunekit::process_context{.env = env, .launcher = tunekit::launcher_info::from_env()};
  o.is_dist = true;
  o.comm = &world();
  o.n_warmup = 1;
  o.n_repeat = 2;
  return o;
}

TEST(MultiRankContextual, EveryRankKeepsTheCandidateWhoseWorstRankIsFastest) {
  temp_dir dir;
  const int rank = world_rank();
  // Alone, each rank would pick "its own" block: rank r is fastest at index r. Index 5 is 1.5 on
  // every rank, the best worst case (every other index is 3.0 on some rank).
  auto cost = [rank](const tunekit::config &c, const tunekit::key &) {
    const int i = block_index(c);
    return i == 5 ? 1.5 : (i == rank ? 0.5 : 3.0);
  };
  auto opts = options(dir.path(), std::make_shared<tunekit::simulated_measurer>(cost),
                      log_capture{}, nullptr);
  opts.use_disk_cache = false;
  auto kernel = tunekit::make_tunable_kernel(
      "dist_kernel", six_blocks(), [](int n) { return tunekit::key{n}; },
      [](int /*n*/, const tunekit::config &c) { return c.get_int("BLOCK"); }, opts);
  auto step = tunekit::contextual_autotune([&](int n) { return kernel(n); }, dist_options(dir));

  const auto block = step(1 << 20);
  EXPECT_EQ(block, 2048);
  EXPECT_EQ(same_everywhere({block}), std::vector<bool>{true});
  const std::string log =
      read_text(dir.path() / "logs" / ("rank-" + std::to_string(rank) + ".log"));
  EXPECT_NE(log.find("best config #5 [BLOCK=2048]"), std::string::npos) << log;
}

TEST(MultiRankContextual, RanksThatRegisterDifferentKernelsGetTheSameError) {
  temp_dir dir;
  const int rank = world_rank();
  auto opts = options(dir.path(),
                      std::make_shared<tunekit::simulated_measurer>(
                          [](const tunekit::config &, const tunekit::key &) { return 1.0; }),
                      log_capture{}, nullptr);
  opts.use_disk_cache = false;
  auto kernel = tunekit::make_tunable_kernel(
      "mismatch_kernel", six_blocks(), [](int n) { return tunekit::key{n}; },
      [](int /*n*/, const tunekit::config &c) { return c.get_int("BLOCK"); }, opts);
  // Rank 0 launches the kernel with another key than the others.
  auto step = tunekit::contextual_autotune([&](int n) { return kernel(rank == 0 ? n + 1 : n); },
                                           dist_options(dir));
  std::string what = "no exception";
  try {
    (void)step(7);
  } catch (const tunekit::error &e) {
    what = e.what();
  }
  EXPECT_NE(what.find("registered different kernels or keys"), std::string::npos) << what;
  EXPECT_TRUE(same_text_everywhere(what));
  EXPECT_EQ(tunekit::contextual_tuner::active(), nullptr);
}

} // namespace
