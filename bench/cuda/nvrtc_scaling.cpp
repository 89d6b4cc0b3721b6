// Where the compile pool's speed-up stops: the same spread of Xgemm configs compiled by NVRTC
// (no compile cache) on one thread, on J threads of one process (tunekit's pool), and in J
// processes of one thread each, and on J threads handing their configs to compile worker
// processes (`compile_options::worker`). If J processes scale better than J threads, something
// inside one process serialises the compiles; if they scale alike, the limit is the machine
// (clock under all-core load, memory bandwidth). Needs no GPU: it compiles for the architecture
// given.
//
//   ./tunekit_cuda_bench_nvrtc_scaling [--configs 128] [--jobs 0] [--arch sm_90] [--out f.json]
//   ./tunekit_cuda_bench_nvrtc_scaling --curve 1,2,4,8,16 [--configs 128]   (compile workers only)
//
//   --jobs 0   the machine's hardware threads

#include "gemm_rtc_space.hpp"
#include "pool_compile.hpp"

#include <tunekit/cuda/rtc.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Compiles `configs` with `threads` compile threads of one kernel_program, this thread only
// waiting; returns its totals. With `workers`, each compile thread hands its configs to a compile
// worker process.
tunekit::cuda::compile_summary compile_all(const tunekit::cuda::kernel_definition &def,
                                           const std::string &arch,
                                           const std::vector<tunekit::config> &configs,
                                           unsigned threads, bool workers = false) {
  tunekit::cuda::compile_options o{.arch = arch, .threads = threads};
  if (workers) {
    o.worker = {TUNEKIT_CUDA_WORKER, "--compile"};
  }
  return bench::compile_with_pool(def, o, configs).summary;
}

// Wall time of `jobs` forked processes, process i compiling configs i, i + jobs, ... on one
// thread. Forked before this process starts any thread of its own.
double processes_wall_s(const tunekit::cuda::kernel_definition &def, const std::string &arch,
                        const std::vector<tunekit::config> &configs, unsigned jobs) {
  const auto t0 = clock_type::now();
  std::vector<pid_t> children;
  for (unsigned i = 0; i < jobs; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("fork");
      std::exit(1);
    }
    if (pid == 0) {
      std::vector<tunekit::config> mine;
      for (std::size_t j = i; j < configs.size(); j += jobs) {
        mine.push_back(configs[j]);
      }
      static_cast<void>(compile_all(def, arch, mine, 1));
      std::_Exit(0);
    }
    children.push_back(pid);
  }
  bool ok = true;
  for (const pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  if (!ok) {
    std::fputs("a compile process failed\n", stderr);
    std::exit(1);
  }
  return seconds_since(t0);
}

} // namespace

int main(int argc, char **argv) {
  // Cold compiles only: where a driver is present NVRTC goes through its compute cache, and a
  // config compiled before (by an earlier run of this benchmark) compiles six times as fast.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  std::size_t count = 128;
  unsigned jobs = 0;
  std::string arch = "sm_90";
  std::string out_path;
  std::vector<unsigned> curve; // --curve 1,2,4,...: compile workers only, at each count
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string opt = argv[i];
    const char *v = argv[i + 1];
    if (opt == "--configs") {
      count = static_cast<std::size_t>(std::atol(v));
    } else if (opt == "--jobs") {
      jobs = static_cast<unsigned>(std::atoi(v));
    } else if (opt == "--arch") {
      arch = v;
    } else if (opt == "--curve") {
      for (const char *p = v; *p != '\0';) {
        char *end = nullptr;
        curve.push_back(static_cast<unsigned>(std::strtoul(p, &end, 10)));
        p = *end == ',' ? end + 1 : end;
      }
    } else if (opt == "--out") {
      out_path = v;
    }
  }
  if (jobs == 0) {
    jobs = std::max(1U, std::thread::hardware_concurrency());
  }
  try {
    const auto def = example::xgemm_definition(TUNEKIT_GEMM_RTC_SOURCE);
    const auto configs =
        example::spread(example::xgemm_candidates(example::xgemm_space(), 4096, 4096, 4096), count);
    std::printf("%zu Xgemm configs for %s, %u jobs, NVRTC %s\n", configs.size(), arch.c_str(), jobs,
                tunekit::cuda::nvrtc_version().c_str());
    if (!curve.empty()) {
      // Compile workers at each count, against one worker: where the machine stops scaling.
      nlohmann::json points = nlohmann::json::array();
      static_cast<void>(compile_all(def, arch, {configs.front()}, 1, true)); // warm the files
      double base = 0;
      std::printf("| compile workers | wall s | speed-up over one | x workers |\n"
                  "| --- | --- | --- | --- |\n");
      for (const unsigned j : curve) {
        const auto t0 = clock_type::now();
        static_cast<void>(compile_all(def, arch, configs, j, true));
        const double wall = seconds_since(t0);
        if (base == 0) {
          base = wall * j; // the first count is the reference (1 in `--curve 1,...`)
        }
        std::printf("| %u | %.2f | %.2f | %.2f |\n", j, wall, base / wall, base / wall / j);
        points.push_back({{"workers", j}, {"wall_s", wall}, {"speedup", base / wall}});
      }
      if (!out_path.empty()) {
        std::ofstream(out_path)
            << nlohmann::json{{"configs", configs.size()}, {"curve", points}}.dump(2) << "\n";
      }
      return 0;
    }
    // Every mode reads the same files first (NVRTC's libraries, the kernel source).
    static_cast<void>(processes_wall_s(def, arch, {configs.front()}, 1));
    const double procs = processes_wall_s(def, arch, configs, jobs);
    const double one_proc = processes_wall_s(def, arch, configs, 1);
    auto t0 = clock_type::now();
    const auto one_summary = compile_all(def, arch, configs, 1);
    const double one = seconds_since(t0);
    t0 = clock_type::now();
    const auto pool_summary = compile_all(def, arch, configs, jobs);
    const double pool = seconds_since(t0);
    t0 = clock_type::now();
    const auto workers_summary = compile_all(def, arch, configs, jobs, true);
    const double workers = seconds_since(t0);
    const std::size_t failed = one_summary.failed;
    const double one_ms = one_summary.compile_ms / static_cast<double>(configs.size());
    const double pool_ms = pool_summary.compile_ms / static_cast<double>(configs.size());
    std::printf("| mode | wall s | speed-up | x jobs |\n| --- | --- | --- | --- |\n");
    std::printf("| 1 thread | %.2f | 1.00 | - |\n", one);
    std::printf("| 1 process (forked) | %.2f | %.2f | - |\n", one_proc, one / one_proc);
    std::printf("| %u threads, one process | %.2f | %.2f | %.2f |\n", jobs, pool, one / pool,
                one / pool / jobs);
    std::printf("| %u processes, 1 thread each | %.2f | %.2f | %.2f |\n", jobs, procs, one / procs,
                one / procs / jobs);
    std::printf("| %u threads with a compile worker each | %.2f | %.2f | %.2f |\n", jobs, workers,
                one / workers, one / workers / jobs);
    std::printf("failed compiles: %zu of %zu; compiled %zu, %zu and %zu\n", failed, configs.size(),
                one_summary.compiled, pool_summary.compiled, workers_summary.compiled);
    std::printf("mean compile time of one config: %.1f ms on 1 thread, %.1f ms with %u threads\n",
                one_ms, pool_ms, jobs);
    if (!out_path.empty()) {
      const nlohmann::json j = {{"configs", configs.size()},
                                {"jobs", jobs},
                                {"arch", arch},
                                {"failed", failed},
                                {"one_thread_s", one},
                                {"one_process_s", one_proc},
                                {"threads_s", pool},
                                {"processes_s", procs},
                                {"threads_speedup", one / pool},
                                {"processes_speedup", one / procs},
                                {"config_ms_one_thread", one_ms},
                                {"config_ms_threads", pool_ms},
                                {"workers_s", workers},
                                {"workers_speedup", one / workers},
                                {"workers_compiled", workers_summary.compiled},
                                {"nvrtc", tunekit::cuda::nvrtc_version()}};
      std::ofstream(out_path) << j.dump(2) << "\n";
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nvrtc_scaling: %s\n", e.what());
    return 1;
  }
  return 0;
}
