// How closely a wall-time limit holds on a tuner's first call, without a GPU: a host function
// over a product space of 307,200 configs (ten parameters, the size of CLBlast's wider Xgemm
// space), each run sleeping 1.5-3 ms (that GEMM's kernels at 4096^3 take about 2.6 ms), searched
// in batches of 16 with 32 proposals ahead as the GEMM benchmark does. Prints, per repeat, the
// tuner's construction, the first call against the limit, and the search's evaluations and stop.
//
//   tunekit_bench_time_limit [limit seconds, default 3] [repeats, default 3] [run microseconds]

#include <tunekit/tunekit.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double seconds(clock_type::time_point from, clock_type::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::vector<tunekit::value> domain(std::initializer_list<int> values) {
  std::vector<tunekit::value> d;
  for (int v : values) {
    d.emplace_back(v);
  }
  return d;
}

} // namespace

int main(int argc, char **argv) {
  const double limit = argc > 1 ? std::atof(argv[1]) : 3.0;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  const int run_us = argc > 3 ? std::atoi(argv[3]) : 2600;
  const auto space = tunekit::config_space::product({{"MWG", domain({16, 32, 64, 128})},
                                                     {"NWG", domain({16, 32, 64, 128})},
                                                     {"KWG", domain({8, 16, 32, 64})},
                                                     {"MDIMC", domain({1, 2, 4, 8, 16})},
                                                     {"NDIMC", domain({1, 2, 4, 8, 16})},
                                                     {"VWM", domain({1, 2, 4, 8})},
                                                     {"VWN", domain({1, 2, 4, 8})},
                                                     {"SA", domain({0, 1})},
                                                     {"KWI", domain({1, 2, 8})},
                                                     {"SB", domain({0, 1})}});
  std::printf("| repeat | limit s | construct s | first call s | over the limit s | evaluations | "
              "stop |\n|---|---|---|---|---|---|---|\n");
  for (int r = 0; r < repeats; ++r) {
    const auto root =
        std::filesystem::temp_directory_path() /
        ("tunekit-time-limit-" + std::to_string(::getpid()) + "-" + std::to_string(r));
    tunekit::tuner_options o;
    o.version = "bench";
    tunekit::environment env;
    env.cache_dir = root;
    env.log_dir = root / "logs";
    o.process = tunekit::process_context{env, tunekit::launcher_info{}, nullptr};
    o.use_disk_cache = false;
    o.policy.warmup = 1;
    o.policy.runs = 3;
    o.search.budget.max_evaluations = 1000;
    o.search.budget.max_time = std::chrono::duration<double>(limit);
    o.search.batch_size = 16;
    o.search.lookahead = 32;
    o.search.seed = static_cast<std::uint64_t>(r);
    const auto t0 = clock_type::now();
    auto tuned = tunekit::autotune(
        "bench.time_limit", space, [](int n) { return tunekit::key{n}; },
        [](const tunekit::config &c, int n) { return n % c.get_int("KWG") == 0; },
        [run_us](int, const tunekit::config &c) {
          // Slower where the tiles are small, as a GEMM is.
          const auto us = run_us * 128 / (c.get_int("MWG") + 96);
          std::this_thread::sleep_for(std::chrono::microseconds(us));
        },
        o);
    const auto t1 = clock_type::now();
    tuned(4096);
    const auto t2 = clock_type::now();
    const auto e = tuned.tuner().last_search();
    std::printf("| %d | %.1f | %.3f | %.3f | %+.3f | %zu | %s |\n", r, limit, seconds(t0, t1),
                seconds(t1, t2), seconds(t1, t2) - limit, e->search ? e->search->evaluations : 0,
                e->search ? e->search->stop.c_str() : "none");
    std::filesystem::remove_all(root);
  }
  return 0;
}
