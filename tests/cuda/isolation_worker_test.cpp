// tunekit-cuda-worker behind an isolated_measurer, without a GPU: a malformed request fails only
// its candidate, with the parser's message, and the worker keeps running (it touches CUDA only for
// a request it can run).

#include <tunekit/error.hpp>
#include <tunekit/isolation.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <sys/wait.h>

namespace {

std::string failure(tunekit::isolated_measurer &m, const tunekit::config &c) {
  const tunekit::key k{1};
  auto nothing = [] {};
  try {
    static_cast<void>(m.measure(tunekit::candidate_info{"t", k, c, 0, 1}, nothing, {}));
  } catch (const tunekit::error &e) {
    return e.what();
  }
  return {};
}

} // namespace

TEST(cuda_worker, a_malformed_request_fails_only_its_candidate) {
  tunekit::isolated_options o;
  o.command = {TUNEKIT_CUDA_WORKER};
  o.deadline = std::chrono::seconds(20);
  o.request = [](const tunekit::candidate_info &info) {
    const std::string program = R"("program": {"source": "__global__ void k() {}", "entry": "k"})";
    return info.config.get_int("BLOCK") == 1 ? "{" + program + R"(, "block": [1]})"
                                             : "{" + program + R"(, "grid": [1], "block": [1],
                                                   "args": [{"i16": 3}]})";
  };
  tunekit::isolated_measurer m(o);
  EXPECT_EQ(failure(m, tunekit::config{{"BLOCK", 1}}), "request field request.grid is missing");
  EXPECT_EQ(failure(m, tunekit::config{{"BLOCK", 2}}),
            "request field request.args[0] has an unknown type \"i16\" (buffer, i32, u32, i64, "
            "u64, f32, f64)");
  EXPECT_EQ(m.worker_starts(), 1U);
  EXPECT_GT(m.worker_pid(), 0);
  m.stop_worker();
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1); // nothing left to reap
}
