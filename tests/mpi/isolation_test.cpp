// Isolated measurement on several ranks: the worker of one rank dies on the best candidate. That
// rank scores it +inf with the signal, still takes part in every collective, and every rank agrees
// on the next best; no rank leaves a worker behind.

#include "mpi_test_support.hpp"

#include <tunekit/isolation.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <sys/wait.h>

namespace {

using namespace tunekit_mpi_test;

bool contains(const std::string &text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(MultiRankIsolation, ARankWhoseWorkerDiedStillAgrees) {
  const int crash_rank = world_size() > 2 ? 2 : world_size() - 1;
  temp_dir dir;
  log_capture log;
  tunekit::isolated_options io;
  io.command = {TUNEKIT_ISOLATION_WORKER};
  io.deadline = std::chrono::seconds(20);
  io.request = [crash_rank](const tunekit::candidate_info &info) {
    const bool crash = world_rank() == crash_rank && info.config.get_int("BLOCK") == 512;
    return std::string(crash ? R"({"crash": true})" : "{}");
  };
  auto iso = std::make_shared<tunekit::isolated_measurer>(io);
  {
    auto f = block_tuner("isolated", options(dir.path(), iso, log, &world()));
    const int winner = f(11);
    // BLOCK=512 (index 3) is the fastest everywhere, but it crashed one rank's worker.
    EXPECT_EQ(winner, 4);
    EXPECT_TRUE(same_everywhere({winner})[0]);
    const auto e = f.tuner().last_search();
    ASSERT_TRUE(e.has_value());
    const auto &r = e->candidates[3];
    EXPECT_EQ(r.status, tunekit::candidate_status::failed);
    if (world_rank() == crash_rank) {
      EXPECT_TRUE(contains(r.reason, "worker died: signal SIGSEGV")) << r.reason;
      EXPECT_EQ(iso->worker_starts(), 2U);
    } else {
      EXPECT_TRUE(contains(r.reason, "failed on another rank")) << r.reason;
      EXPECT_EQ(iso->worker_starts(), 1U);
    }
  }
  iso.reset();
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

} // namespace
