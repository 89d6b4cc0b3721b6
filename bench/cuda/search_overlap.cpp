// How long a budgeted search of runtime-compiled configs waits for compiles, with and without
// proposals made ahead of the batch being measured (`search_settings::lookahead`). The compiles
// are real (NVRTC on Xgemm configs of CLBlast's space, through compile workers); the device is
// simulated, so no GPU is needed: measuring a candidate waits for its compile, as a launch does,
// then sleeps as long as a measurement would take.
//
//   ./tunekit_cuda_bench_search_overlap [--threads 0] [--budget 64] [--measure-ms 100]
//       [--arch sm_90] [--out f.json]
//
//   --threads 0      compile threads and the batch size (default: the machine's hardware threads)
//   --measure-ms M   the simulated measurement of one candidate (a warmup and a timed run, M/2
//                    each); choose it near the compile time of one config divided by the threads,
//                    where the two can overlap

#include "gemm_rtc_space.hpp"

#include <tunekit/cuda/rtc.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace {

using clock_type = std::chrono::steady_clock;

struct settings {
  unsigned threads = 0;
  std::size_t budget = 64;
  double measure_ms = 100;
  std::string arch = "sm_90";
};

// One cold search within the budget: `lookahead` proposals ahead of each batch of `threads`.
nlohmann::json search(const settings &s, std::size_t lookahead) {
  const auto def = example::xgemm_definition(TUNEKIT_GEMM_RTC_SOURCE);
  auto program = std::make_shared<tunekit::cuda::kernel_program>(
      def, tunekit::cuda::compile_options{.arch = s.arch,
                                          .use_cache = false,
                                          .threads = s.threads,
                                          .worker = {TUNEKIT_CUDA_WORKER, "--compile"}});
  const auto half = std::chrono::duration<double, std::milli>(s.measure_ms / 2);
  // The simulated device: the launch waits for the config's compile, then "runs".
  auto launch = [&](int /*n*/, const tunekit::config &c) {
    static_cast<void>(program->compile(c));
    std::this_thread::sleep_for(half);
  };
  tunekit::tuner_options o;
  o.use_disk_cache = false;
  o.process = tunekit::process_context{};
  o.policy.warmup = 1;
  o.policy.runs = 1;
  o.preparer = tunekit::cuda::preparer(program);
  o.search.budget.max_evaluations = s.budget;
  o.search.batch_size = s.threads;
  o.search.lookahead = lookahead;
  auto tuned = tunekit::autotune(
      "bench.search_overlap", example::xgemm_space(), [](int n) { return tunekit::key{n}; },
      tunekit::keep_all{}, launch, o);
  const auto t0 = clock_type::now();
  tuned(4096);
  const double wall = std::chrono::duration<double>(clock_type::now() - t0).count();
  const auto sum = program->summary();
  const double measure_s = static_cast<double>(s.budget) * s.measure_ms / 1e3;
  const double compile_s = sum.compile_ms / 1e3 / s.threads; // the compile threads all busy
  nlohmann::json j = {{"lookahead", lookahead},
                      {"batch", s.threads},
                      {"wall_s", wall},
                      {"wait_for_compile_s", sum.wait_ms / 1e3},
                      {"compile_cpu_s", sum.compile_ms / 1e3},
                      {"compiled", sum.compiled},
                      {"simulated_measure_s", measure_s},
                      {"bound_s", std::max(measure_s, compile_s)}};
  std::printf("lookahead %3zu, batch %u: %.1f s (%.1f s waiting for compiles); simulated "
              "measuring %.1f s, compiling %.1f CPU-s = %.1f s on %u threads\n",
              lookahead, s.threads, wall, sum.wait_ms / 1e3, measure_s, sum.compile_ms / 1e3,
              compile_s, s.threads);
  return j;
}

} // namespace

int main(int argc, char **argv) {
  settings s;
  std::string out_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string opt = argv[i];
    const char *v = argv[i + 1];
    if (opt == "--threads") {
      s.threads = static_cast<unsigned>(std::atoi(v));
    } else if (opt == "--budget") {
      s.budget = static_cast<std::size_t>(std::atol(v));
    } else if (opt == "--measure-ms") {
      s.measure_ms = std::atof(v);
    } else if (opt == "--arch") {
      s.arch = v;
    } else if (opt == "--out") {
      out_path = v;
    }
  }
  if (s.threads == 0) {
    s.threads = std::max(1U, std::thread::hardware_concurrency());
  }
  try {
    nlohmann::json j = {{"threads", s.threads},
                        {"budget", s.budget},
                        {"measure_ms", s.measure_ms},
                        {"arch", s.arch},
                        {"nvrtc", tunekit::cuda::nvrtc_version()}};
    j["runs"] = {search(s, 0), search(s, s.threads), search(s, 0), search(s, s.threads)};
    if (!out_path.empty()) {
      std::ofstream(out_path) << j.dump(2) << "\n";
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tunekit_cuda_bench_search_overlap: %s\n", e.what());
    return 1;
  }
  return 0;
}
