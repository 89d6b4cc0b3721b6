// The runtime-compiled GEMM over CLBlast's Xgemm space at 4096^3: tuned exhaustively with a cold
// compile cache (every config compiled by NVRTC on all cores while the GPU measures), then with
// the warm cache (nothing compiled); wall time split into compile and measure; the compile
// speed-up of the pool over one thread; the winner against cuBLAS fp32. Every candidate is checked
// against cuBLAS.
//
//   ./tunekit_cuda_bench_gemm_rtc [--size 4096] [--space clblast|extended] [--limit N]
//       [--warmup 1] [--runs 3] [--threads 0] [--speedup-configs 64] [--warm compile|full]
//       [--cache-dir DIR] [--compile-workers 1] [--out gemm_rtc.json] [--only MWG=64,...]
//       [--define NAME=VALUE]... [--budget N [--batch B] [--lookahead W]] [--time-budget S]
//
//   --limit N            tune every (candidates / N)-th config only; 0 (default): all of them
//   --only P=V,...       only the candidates with these parameter values (e.g. one config)
//   --warm compile       the warm run prepares and loads every candidate from the compile cache
//                        (what a second process does before it measures); full: tunes again
//   --cache-dir DIR      compile cache root for the cold and warm runs (default: a fresh
//                        temporary directory, removed at the end)
//   --budget N           the cold run searches (default strategy) within N evaluations instead of
//                        measuring every candidate, and the warm run loads what it measured
//   --time-budget S      the cold run is a search that stops after S seconds of wall time,
//                        compiles included, or after --budget N evaluations if that comes first
//                        (alone: the strategy orders every candidate until the time is up)
//   --batch B, --lookahead W   the search's batch and the proposals made ahead of it (default:
//                        one and two per compile thread)
//   --define NAME=VALUE  one more definition for every config's compile (the kernel's own
//                        settings, e.g. TK_ASYNC_COPY=0); repeatable
//   --compile-workers 0  the compile threads call NVRTC in this process (default 1: each hands
//                        its configs to a `tunekit-cuda-worker --compile` process)

#include "cublas_reference.hpp"
#include "device_array.hpp"
#include "gemm_rtc_cublas.hpp"
#include "gemm_rtc_space.hpp"
#include "paired_timing.hpp"
#include "pool_compile.hpp"
#include "scale_kernel.hpp"
#include "time_runs.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

nlohmann::json summary_json(const tunekit::cuda::compile_summary &s) {
  return {{"configs", s.configs},
          {"compiled", s.compiled},
          {"cache_hits", s.cache_hits},
          {"failed", s.failed},
          {"compile_cpu_s", s.compile_ms / 1e3},
          {"wait_for_compile_s", s.wait_ms / 1e3}};
}

// The compile worker of `--compile-workers 1`; empty: NVRTC in this process.
std::vector<std::string> g_worker;

// Wall time of compiling `configs` (no cache) with `threads` compile threads (each with a compile
// worker when they are on, so one thread and many compile the same way).
double compile_wall_s(const tunekit::cuda::kernel_definition &def,
                      const std::vector<tunekit::config> &configs, unsigned threads) {
  return bench::compile_with_pool(def, {.threads = threads, .worker = g_worker}, configs).wall_s;
}

// The configs whose parameters have the values of `only` ("MWG=64,NWG=128,...").
std::vector<tunekit::config> matching(const std::vector<tunekit::config> &configs,
                                      const std::string &only) {
  std::vector<tunekit::config> out;
  for (const auto &c : configs) {
    bool match = true;
    for (std::size_t pos = 0; match && pos < only.size();) {
      const std::size_t end = std::min(only.find(',', pos), only.size());
      const std::string item = only.substr(pos, end - pos);
      const std::size_t eq = item.find('=');
      match = eq != std::string::npos &&
              c.get_int(item.substr(0, eq)) == std::atol(item.substr(eq + 1).c_str());
      pos = end + 1;
    }
    if (match) {
      out.push_back(c);
    }
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  // Cold compiles only: where a driver is present NVRTC goes through its compute cache, and a
  // config compiled before (by an earlier run of this benchmark) compiles six times as fast.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  int size = 4096;
  auto kind = example::xgemm_space_kind::clblast;
  std::size_t limit = 0;
  int warmup = 1;
  int runs = 3;
  unsigned threads = 0;
  std::size_t speedup_configs = 64;
  bool warm_full = false;
  std::string cache_arg;
  std::string out_path;
  std::string only;
  std::vector<std::string> defines;
  std::size_t search_budget = 0;
  double time_budget_s = 0; // 0: none
  long batch = -1;          // -1: the defaults below (one and two per compile thread)
  long lookahead = -1;
  g_worker = {TUNEKIT_CUDA_WORKER, "--compile"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string opt = argv[i];
    const char *v = argv[i + 1];
    if (opt == "--size") {
      size = std::atoi(v);
    } else if (opt == "--space") {
      kind = std::strcmp(v, "extended") == 0 ? example::xgemm_space_kind::extended
                                             : example::xgemm_space_kind::clblast;
    } else if (opt == "--limit") {
      limit = static_cast<std::size_t>(std::atol(v));
    } else if (opt == "--warmup") {
      warmup = std::atoi(v);
    } else if (opt == "--runs") {
      runs = std::atoi(v);
    } else if (opt == "--threads") {
      threads = static_cast<unsigned>(std::atoi(v));
    } else if (opt == "--speedup-configs") {
      speedup_configs = static_cast<std::size_t>(std::atol(v));
    } else if (opt == "--warm") {
      warm_full = std::strcmp(v, "full") == 0;
    } else if (opt == "--cache-dir") {
      cache_arg = v;
    } else if (opt == "--compile-workers") {
      if (std::strcmp(v, "0") == 0) {
        g_worker.clear();
      }
    } else if (opt == "--out") {
      out_path = v;
    } else if (opt == "--only") {
      only = v;
    } else if (opt == "--budget") {
      search_budget = static_cast<std::size_t>(std::atol(v));
    } else if (opt == "--time-budget") {
      time_budget_s = std::atof(v);
      if (!(time_budget_s > 0)) {
        std::fprintf(stderr, "gemm_rtc: --time-budget %s: want seconds above 0\n", v);
        return 2;
      }
    } else if (opt == "--batch" || opt == "--lookahead") {
      const long n = std::atol(v);
      if (n < (opt == "--batch" ? 1 : 0)) {
        std::fprintf(stderr, "gemm_rtc: %s %s: want %s\n", opt.c_str(), v,
                     opt == "--batch" ? "1 or more" : "0 or more");
        return 2;
      }
      (opt == "--batch" ? batch : lookahead) = n;
    } else if (opt == "--define") {
      defines.push_back(std::string("-D") + v);
    }
  }
  if (!tunekit::cuda::device_available()) {
    std::puts("no CUDA device visible");
    return 0;
  }
  const unsigned cores = threads > 0 ? threads : std::max(1U, std::thread::hardware_concurrency());
  std::filesystem::path cache_dir = cache_arg;
  const bool own_cache = cache_arg.empty();
  if (own_cache) {
    cache_dir =
        std::filesystem::temp_directory_path() / ("tunekit-gemm-rtc-" + std::to_string(::getpid()));
  }
  std::error_code ec;
  std::filesystem::remove_all(cache_dir / "kernels", ec); // cold

  try {
    const int m = size;
    const int n = size;
    const int k = size;
    const auto elems = static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
    const double flops = 2.0 * m * static_cast<double>(n) * k;
    auto tflops = [&](double ms) { return flops / (ms * 1e-3) / 1e12; };
    const example::stream owned_stream;
    cudaStream_t stream = owned_stream.get();
    const example::device_array<float> a(elems);
    const example::device_array<float> b(elems);
    const example::device_array<float> c(elems);
    const example::device_array<float> c_ref(elems);
    TUNEKIT_CUDA_CHECK(example::fill_uniform(a.get(), static_cast<std::int64_t>(elems), 5, stream));
    TUNEKIT_CUDA_CHECK(example::fill_uniform(b.get(), static_cast<std::int64_t>(elems), 6, stream));
    const example::cublas_handle cublas(stream);
    example::xgemm_reference(cublas, a.get(), b.get(), c_ref.get(), m, n, k);
    tunekit::cuda::poison(c.get(), c.bytes(), stream);
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));

    auto def = example::xgemm_definition(TUNEKIT_GEMM_RTC_SOURCE);
    def.options.insert(def.options.end(), defines.begin(), defines.end());
    const tunekit::config_space full = example::xgemm_space(kind);
    auto candidates = example::spread(example::xgemm_candidates(full, m, n, k), limit);
    if (!only.empty()) {
      candidates = matching(candidates, only);
      if (candidates.empty()) {
        throw tunekit::error("--only " + only + ": no candidate has these values");
      }
    }

    nlohmann::json j;
    j["size"] = size;
    j["hardware"] = tunekit::cuda::device_hardware().to_string();
    j["dependencies"] = tunekit::cuda::dependencies();
    j["nvrtc"] = tunekit::cuda::nvrtc_version();
    j["space"] = kind == example::xgemm_space_kind::clblast ? "clblast" : "extended";
    j["space_size"] = full.size();
    j["defines"] = defines;
    j["candidates"] = candidates.size();
    j["policy"] = {{"warmup", warmup}, {"runs", runs}};
    j["compile_threads"] = cores;
    j["compile_workers"] = !g_worker.empty();
    std::printf("space %s: %zu configs, %zu candidates at %d^3, %u compile threads\n",
                j["space"].get<std::string>().c_str(), full.size(), candidates.size(), size, cores);

    // (1) The pool against one thread, on a spread of the candidates, without the cache.
    const auto sample = example::spread(candidates, speedup_configs);
    const double one = compile_wall_s(def, sample, 1);
    const double pool = compile_wall_s(def, sample, cores);
    j["pool"] = {{"configs", sample.size()},
                 {"one_thread_s", one},
                 {"pool_s", pool},
                 {"speedup", one / pool},
                 {"speedup_per_core", one / pool / cores},
                 {"goal_speedup_per_core", 0.7}};
    std::printf("compile %zu configs: 1 thread %.1f s, %u threads %.1f s: %.1fx (%.2f x cores)\n",
                sample.size(), one, cores, pool, one / pool, one / pool / cores);

    // (2) Tuning with a cold compile cache, then (3) a warm one.
    // budget and budget_s 0: every candidate (exhaustive); else a strategy within that many
    // evaluations (0: every candidate) and seconds (0: no limit).
    // measure false: load `to_load` from the compile cache instead.
    std::vector<tunekit::config> to_load = candidates;
    auto tune = [&](const char *label, bool measure, std::size_t budget = 0, double budget_s = 0) {
      const auto cache = std::make_shared<const tunekit::cuda::kernel_cache>(cache_dir);
      auto program = std::make_shared<tunekit::cuda::kernel_program>(
          def,
          tunekit::cuda::compile_options{.cache = cache, .threads = cores, .worker = g_worker});
      static_cast<void>(program->target());
      auto xgemm = example::make_xgemm(program);
      nlohmann::json r;
      const auto t0 = clock_type::now();
      if (!measure) {
        xgemm.prepare(to_load);
        // What a second process does before measuring: every candidate ready to launch.
        std::size_t failed = 0;
        for (const auto &cand : to_load) {
          try {
            static_cast<void>(program->load(cand));
          } catch (const tunekit::error &) {
            ++failed;
          }
        }
        r["wall_s"] = seconds_since(t0);
        r["compile"] = summary_json(program->summary());
        std::printf("%s: %zu candidates loaded in %.1f s (%zu compiled, %zu from the cache)\n",
                    label, to_load.size(), r["wall_s"].get<double>(), program->summary().compiled,
                    program->summary().cache_hits);
        return r;
      }
      auto options = tunekit::cuda::make_tuner_options({.stream = stream});
      options.use_disk_cache = false;
      options.process = tunekit::process_context{};
      options.policy.warmup = warmup;
      options.policy.runs = runs;
      options.version = program->digest();
      options.preparer = tunekit::cuda::preparer(program); // the tuner hands it its candidates
      options.search.budget.max_evaluations = budget == 0 ? candidates.size() : budget;
      options.search.budget.max_time = std::chrono::duration<double>(budget_s);
      // A search (a budget of either kind): a batch per compile thread, and two batches proposed
      // ahead, which compile while the GPU measures this one.
      const bool searched = budget != 0 || budget_s > 0;
      options.search.batch_size =
          !searched ? 1 : static_cast<std::size_t>(batch >= 0 ? batch : cores);
      options.search.lookahead =
          !searched ? 0 : static_cast<std::size_t>(lookahead >= 0 ? lookahead : 2 * cores);
      auto tuned = tunekit::autotune(std::string("bench.gemm_rtc.") + label,
                                     tunekit::config_space(candidates), example::xgemm_key,
                                     example::xgemm_prune, xgemm, options)
                       .with_check([&](const float *, const float *, float *out, int, int, int,
                                       cudaStream_t s, const tunekit::config &) {
                         const bool ok =
                             tunekit::cuda::compare(out, c_ref.get(), elems, s).within(1e-4);
                         tunekit::cuda::poison(out, elems * sizeof(float), s);
                         return ok;
                       });
      const auto call_t0 = clock_type::now();
      tuned(a.get(), b.get(), c.get(), m, n, k, stream);
      TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
      const double wall = seconds_since(t0);
      const double call = seconds_since(call_t0); // the first call alone, not the tuner's set-up
      const auto s = program->summary();
      const auto e = tuned.tuner().last_search();
      std::size_t ok = 0;
      std::size_t failed = 0;
      std::size_t wrong = 0;
      // The GPU time of the candidates' own runs, warmup included (each one's mean x its runs; no
      // early stop here): the share of the measuring time that ran kernels.
      double kernel_ms = 0;
      for (const auto &cand : e->candidates) {
        kernel_ms += cand.stats.mean * static_cast<double>(runs + warmup);
        ok += cand.status == tunekit::candidate_status::ok ? 1 : 0;
        failed += cand.status == tunekit::candidate_status::failed ? 1 : 0;
        wrong += cand.status == tunekit::candidate_status::wrong_result ? 1 : 0;
      }
      const auto &w = e->candidates[e->winner_index];
      to_load.clear();
      for (const auto &cand : e->candidates) {
        to_load.push_back(cand.config);
      }
      r["measured"] = e->candidates.size();
      if (e->search) {
        r["strategy"] = {
            {"name", e->search->strategy},           {"budget", e->search->max_evaluations},
            {"evaluations", e->search->evaluations}, {"space", e->search->space_size},
            {"batch", e->search->batch_size},        {"lookahead", e->search->lookahead},
            {"max_time_s", e->search->max_time_s},   {"stop", e->search->stop}};
        std::printf("%s: %s search of %zu evaluations (budget %zu, %.1f s), stopped by %s\n", label,
                    e->search->strategy.c_str(), e->search->evaluations, e->search->max_evaluations,
                    e->search->max_time_s, e->search->stop.c_str());
      }
      r["wall_s"] = wall;
      r["call_s"] = call;
      r["wait_for_compile_s"] = s.wait_ms / 1e3;
      r["measure_s"] = wall - s.wait_ms / 1e3;
      r["kernel_s"] = kernel_ms / 1e3;
      r["compile"] = summary_json(s);
      r["valid"] = ok;
      r["failed"] = failed;
      r["wrong"] = wrong;
      r["winner"] = w.config.to_string();
      r["winner_ms"] = w.time_ms;
      std::printf("%s: %.1f s = %.1f s waiting for compiles + %.1f s measuring (%.1f s of it in "
                  "the candidates' runs); compiled %zu, cache hits %zu, compile failures %zu; %zu "
                  "valid, %zu failed, %zu wrong; the first call %.1f s (the rest is the tuner's "
                  "set-up)\n",
                  label, wall, s.wait_ms / 1e3, wall - s.wait_ms / 1e3, kernel_ms / 1e3, s.compiled,
                  s.cache_hits, s.failed, ok, failed, wrong, call);
      std::printf("  winner [%s]: %.3f ms (%.1f TFLOP/s)\n", w.config.to_string().c_str(),
                  w.time_ms, tflops(w.time_ms));
      // The winner against cuBLAS, with the same timer, paired: seven rounds of 10 warmup and 50
      // timed runs of each, the order alternating; the median of the rounds' ratios (a clock
      // that drifts between two long runs would move a single ratio).
      auto run_winner = [&] { xgemm(a.get(), b.get(), c.get(), m, n, k, stream, w.config); };
      auto run_cublas = [&] {
        example::xgemm_reference(cublas, a.get(), b.get(), c.get(), m, n, k);
      };
      std::vector<double> winner_ms;
      std::vector<double> cublas_ms;
      std::vector<double> ratios;
      for (int round = 0; round < 7; ++round) {
        double wm = 0;
        double cm = 0;
        for (int turn = 0; turn < 2; ++turn) {
          if ((turn == 0) == (round % 2 == 0)) {
            wm = bench::time_runs(stream, run_winner, 10, 50).mean;
          } else {
            cm = bench::time_runs(stream, run_cublas, 10, 50).mean;
          }
        }
        winner_ms.push_back(wm);
        cublas_ms.push_back(cm);
        ratios.push_back(cm / wm);
      }
      const double ratio = bench::median(ratios);
      r["winner_tflops"] = tflops(bench::median(winner_ms));
      r["cublas_tflops"] = tflops(bench::median(cublas_ms));
      r["winner_vs_cublas"] = ratio;
      r["winner_vs_cublas_rounds"] = ratios;
      std::printf("  winner %.1f TFLOP/s, cuBLAS fp32 %.1f TFLOP/s: %.1f%% (median of 7 paired "
                  "rounds, %.1f-%.1f%%; goal >= 95%%)\n",
                  tflops(bench::median(winner_ms)), tflops(bench::median(cublas_ms)), 100.0 * ratio,
                  100.0 * *std::min_element(ratios.begin(), ratios.end()),
                  100.0 * *std::max_element(ratios.begin(), ratios.end()));
      return r;
    };
    j["cold"] = tune("cold", true, search_budget, time_budget_s);
    j["warm"] = tune("warm", warm_full, search_budget, time_budget_s);
    j["warm"]["mode"] = warm_full ? "full" : "compile";
    // (4) The default strategy within 400 evaluations (compile cache warm): how close it gets to
    // the exhaustive winner, and in how much time.
    if (search_budget == 0 && time_budget_s == 0 && candidates.size() > 400) {
      j["strategy"] = tune("strategy", true, 400);
      j["strategy"]["fraction_of_exhaustive"] =
          j["cold"]["winner_ms"].get<double>() / j["strategy"]["winner_ms"].get<double>();
      std::printf("strategy: winner at %.3f of the exhaustive winner's speed after %zu "
                  "evaluations\n",
                  j["strategy"]["fraction_of_exhaustive"].get<double>(),
                  j["strategy"]["measured"].get<std::size_t>());
    }
    j["goals"] = {{"winner_vs_cublas", 0.95}, {"warm_compiled", 0}};
    if (own_cache) {
      std::filesystem::remove_all(cache_dir, ec);
    }
    std::printf("%s\n", j.dump(2).c_str());
    if (!out_path.empty()) {
      std::ofstream(out_path) << j.dump(2) << "\n";
    }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tunekit_cuda_bench_gemm_rtc: %s\n", e.what());
    if (own_cache) {
      std::filesystem::remove_all(cache_dir, ec);
    }
    return 1;
  }
}
