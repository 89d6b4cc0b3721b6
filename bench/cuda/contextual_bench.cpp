// Contextual tuning on the GPU: the tiled GEMM tuned while a memory-bound kernel runs on another
// stream, against the same GEMM tuned in isolation. Reports both winners, every instantiation's
// GEMM time alone and in the real context, and the whole step's time with each winner.
//
//   ./tunekit_cuda_bench_contextual [--m M --n N --k K] [--mem-elems E] [--mem-blocks B]
//                                   [--out contextual.json]
//
// The memory-bound kernel is the scale kernel over its whole grid (--mem-blocks 0, the default),
// or a grid-stride copy on B blocks of 1024 threads that holds that share of the SMs throughout.

#include "device_array.hpp"
#include "gemm_space.hpp"
#include "scale_kernel.hpp"
#include "stream_kernel.hpp"

#include <tunekit/contextual.hpp>
#include <tunekit/cuda/cuda.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct timings {
  double gemm_ms = 0; ///< median GEMM time (events on its stream)
  double step_ms = 0; ///< median wall time of the whole step
};

} // namespace

int main(int argc, char **argv) {
  int m = 4096;
  int n = 4096;
  int k = 1024;
  std::int64_t mem_elems = std::int64_t{1} << 28;
  int mem_blocks = 0;
  std::string out_path;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--m") == 0) {
      m = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--n") == 0) {
      n = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--k") == 0) {
      k = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--mem-elems") == 0) {
      mem_elems = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--mem-blocks") == 0) {
      mem_blocks = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--out") == 0) {
      out_path = argv[++i];
    }
  }
  if (!tunekit::cuda::device_available()) {
    std::puts("no CUDA device visible");
    return 0;
  }
  try {
    using example::device_array;
    device_array<float> a(static_cast<std::size_t>(m) * k);
    device_array<float> b(static_cast<std::size_t>(k) * n);
    device_array<float> c(static_cast<std::size_t>(m) * n);
    device_array<float> x(static_cast<std::size_t>(mem_elems));
    device_array<float> y(static_cast<std::size_t>(mem_elems));
    example::stream gemm_stream;
    example::stream mem_stream;
    const cudaStream_t s1 = gemm_stream.get();
    const cudaStream_t s2 = mem_stream.get();
    TUNEKIT_CUDA_CHECK(example::fill_uniform(a.get(), static_cast<std::int64_t>(a.size()), 1, s1));
    TUNEKIT_CUDA_CHECK(example::fill_uniform(b.get(), static_cast<std::int64_t>(b.size()), 2, s1));
    TUNEKIT_CUDA_CHECK(example::fill_uniform(x.get(), mem_elems, 3, s1));
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(s1));

    // The instantiations that can run this shape (the tunable kernel has no prune function).
    std::vector<tunekit::config> fitting;
    for (const auto &cfg : example::gemm_space()) {
      const std::size_t i = example::gemm_index(cfg);
      if (example::gemm_fits(example::gemm_variant_at(i), m, n, k)) {
        fitting.push_back(cfg);
      }
    }
    const tunekit::config_space space(fitting);

    tunekit::tuner_options opts = tunekit::cuda::make_tuner_options({.stream = s1});
    opts.use_disk_cache = false;
    opts.process = tunekit::process_context::from_env();

    auto memory_bound = [&] {
      if (mem_blocks > 0) {
        TUNEKIT_CUDA_CHECK(
            bench::launch_stream_copy(x.get(), y.get(), mem_elems, mem_blocks, 1024, s2));
      } else {
        TUNEKIT_CUDA_CHECK(example::launch_scale(x.get(), y.get(), 1.5f, mem_elems, 4096, 256, s2));
      }
    };

    // 1. In isolation: the ordinary function-level tuner, nothing else on the device.
    auto isolated = tunekit::autotune("contextual_bench.gemm_isolated", space, example::gemm_key,
                                      tunekit::keep_all{}, example::gemm, opts);
    isolated(a.get(), b.get(), c.get(), m, n, k, s1);
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(s1));
    const tunekit::config winner_isolated = *isolated.tuner().find(tunekit::key{m, n, k});

    // 2. In context: the same kernel as a tunable kernel inside the real step, where the
    // memory-bound kernel runs concurrently on the other stream.
    auto gemm = tunekit::make_tunable_kernel("contextual_bench.gemm", space, example::gemm_key,
                                             example::gemm, opts);
    auto step = tunekit::contextual_autotune(
        [&] {
          memory_bound();
          gemm(a.get(), b.get(), c.get(), m, n, k, s1);
          TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(s1));
          TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(s2));
        },
        tunekit::contextual_options{.n_repeat = 10, .n_warmup = 3, .process = opts.process});
    const auto t0 = std::chrono::steady_clock::now();
    step();
    const double contextual_tuning_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const tunekit::config winner_context = *gemm.tuner().find(tunekit::key{m, n, k});

    // 3. Every instantiation re-timed alone and in the real context (medians of 30 runs).
    cudaEvent_t e0 = nullptr;
    cudaEvent_t e1 = nullptr;
    TUNEKIT_CUDA_CHECK(cudaEventCreate(&e0));
    TUNEKIT_CUDA_CHECK(cudaEventCreate(&e1));
    auto time = [&](const tunekit::config &cfg, bool with_context) {
      std::vector<double> g;
      std::vector<double> w;
      for (int r = 0; r < 35; ++r) {
        const auto h0 = std::chrono::steady_clock::now();
        if (with_context) {
          memory_bound();
        }
        TUNEKIT_CUDA_CHECK(cudaEventRecord(e0, s1));
        example::gemm(a.get(), b.get(), c.get(), m, n, k, s1, cfg);
        TUNEKIT_CUDA_CHECK(cudaEventRecord(e1, s1));
        TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(s1));
        TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(s2));
        const auto h1 = std::chrono::steady_clock::now();
        float ms = 0;
        TUNEKIT_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 5) {
          g.push_back(ms);
          w.push_back(std::chrono::duration<double, std::milli>(h1 - h0).count());
        }
      }
      return timings{tunekit::summarize(g).median, tunekit::summarize(w).median};
    };
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    timings iso_winner_ctx{};
    timings ctx_winner_ctx{};
    timings iso_winner_alone{};
    timings ctx_winner_alone{};
    for (const auto &cfg : space) {
      const timings alone = time(cfg, false);
      const timings ctx = time(cfg, true);
      rows.push_back({{"config", cfg.template_id()},
                      {"gemm_ms_alone", alone.gemm_ms},
                      {"gemm_ms_in_context", ctx.gemm_ms},
                      {"step_ms_in_context", ctx.step_ms}});
      if (cfg == winner_isolated) {
        iso_winner_ctx = ctx;
        iso_winner_alone = alone;
      }
      if (cfg == winner_context) {
        ctx_winner_ctx = ctx;
        ctx_winner_alone = alone;
      }
    }
    static_cast<void>(cudaEventDestroy(e0));
    static_cast<void>(cudaEventDestroy(e1));

    nlohmann::ordered_json out;
    out["shape"] = {m, n, k};
    out["memory_bound_elements"] = mem_elems;
    out["memory_bound_blocks"] = mem_blocks;
    out["winner_isolated"] = winner_isolated.template_id();
    out["winner_in_context"] = winner_context.template_id();
    out["contextual_tuning_s"] = contextual_tuning_s;
    out["isolated_winner"] = {{"gemm_ms_alone", iso_winner_alone.gemm_ms},
                              {"gemm_ms_in_context", iso_winner_ctx.gemm_ms},
                              {"step_ms_in_context", iso_winner_ctx.step_ms}};
    out["contextual_winner"] = {{"gemm_ms_alone", ctx_winner_alone.gemm_ms},
                                {"gemm_ms_in_context", ctx_winner_ctx.gemm_ms},
                                {"step_ms_in_context", ctx_winner_ctx.step_ms}};
    out["candidates"] = rows;
    if (!out_path.empty()) {
      std::ofstream(out_path) << out.dump(2) << "\n";
    }
    std::printf("contextual GEMM %dx%dx%d beside a %lld-element memory-bound kernel (%s)\n", m, n,
                k, static_cast<long long>(mem_elems),
                mem_blocks > 0 ? (std::to_string(mem_blocks) + " blocks").c_str() : "full grid");
    std::printf("  %-22s %-26s %12s %14s %14s\n", "", "winner", "GEMM alone", "GEMM in ctx",
                "step in ctx");
    std::printf("  %-22s %-26s %9.3f ms %11.3f ms %11.3f ms\n", "tuned in isolation",
                winner_isolated.template_id().c_str(), iso_winner_alone.gemm_ms,
                iso_winner_ctx.gemm_ms, iso_winner_ctx.step_ms);
    std::printf("  %-22s %-26s %9.3f ms %11.3f ms %11.3f ms\n", "tuned in context",
                winner_context.template_id().c_str(), ctx_winner_alone.gemm_ms,
                ctx_winner_ctx.gemm_ms, ctx_winner_ctx.step_ms);
    std::printf("  contextual tuning took %.2f s\n", contextual_tuning_s);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "contextual bench failed: %s\n", e.what());
    return 1;
  }
}
