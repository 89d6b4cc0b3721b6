// Isolated measurement of runtime-compiled kernels on a GPU: in a space with a kernel that writes
// to an illegal address and one that spins forever, both fail alone with their reasons
// (tunekit-cuda-worker dies with the CUDA error; the deadline kills the spinning one), the rest is
// tuned, and no worker is left behind.

#include "gpu_test.hpp"

#include <tunekit/isolation.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace {

const std::string source = R"(
__global__ void add_one(float *y, int n) {
#if MODE == 1
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *(volatile float *)(y - (1ll << 36)) = 1.0f;
  }
#elif MODE == 2
  // clock64() has side effects, so the compiler keeps the loop (one on a local volatile it drops).
  const long long start = clock64();
  while (clock64() >= start) {
  }
#endif
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) {
    y[i] += 1.0f;
  }
}
)";

constexpr int n = 1 << 20;

tunekit::config candidate(long block, long mode) { return {{"BLOCK", block}, {"MODE", mode}}; }

} // namespace

using isolation_gpu = tunekit::cuda::test::gpu_test;

TEST_F(isolation_gpu, a_faulting_and_a_spinning_kernel_fail_alone) {
  const auto cache = std::filesystem::temp_directory_path() /
                     ("tunekit-isolation-gpu-" + std::to_string(::getpid()));
  ::setenv("TUNEKIT_CACHE_DIR", cache.c_str(), 1); // the worker inherits it
  tunekit::isolated_options o;
  o.command = {TUNEKIT_CUDA_WORKER};
  o.deadline = std::chrono::seconds(8);
  o.request = [](const tunekit::candidate_info &info) {
    const long block = info.config.get_int("BLOCK");
    return nlohmann::json{{"program", {{"source", source}, {"entry", "add_one"}}},
                          {"grid", {(n + block - 1) / block}},
                          {"block", {block}},
                          {"args", {{{"buffer", n * sizeof(float)}, {"fill", 0}}, {{"i32", n}}}}}
        .dump();
  };
  auto m = std::make_shared<tunekit::isolated_measurer>(o);
  tunekit::tuner_options options;
  options.measurer = m;
  options.use_disk_cache = false;
  options.process = tunekit::process_context{};
  auto tuned = tunekit::autotune(
      "isolation_gpu",
      tunekit::config_space({candidate(128, 0), candidate(256, 1), candidate(256, 0),
                             candidate(512, 2), candidate(1024, 0)}),
      [](int len) { return tunekit::key{len}; }, tunekit::keep_all{},
      [](int, const tunekit::config &c) { return c.get_int("BLOCK"); }, options);
  static_cast<void>(tuned(n));
  const auto e = tuned.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  for (const auto &r : e->candidates) {
    const long mode = r.config.get_int("MODE");
    if (mode == 1) {
      EXPECT_TRUE(std::isinf(r.time_ms));
      EXPECT_NE(r.reason.find("illegal memory access"), std::string::npos) << r.reason;
    } else if (mode == 2) {
      EXPECT_TRUE(std::isinf(r.time_ms));
      EXPECT_EQ(r.reason, "exceeded the deadline of 8000 ms");
    } else {
      EXPECT_EQ(r.status, tunekit::candidate_status::ok)
          << r.config.to_string() << ": " << r.reason;
      EXPECT_GT(r.time_ms, 0);
    }
  }
  EXPECT_EQ(e->winner.get_int("MODE"), 0);
  EXPECT_EQ(m->worker_starts(), 3U);
  m->stop_worker();
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1);
  std::filesystem::remove_all(cache);
}
