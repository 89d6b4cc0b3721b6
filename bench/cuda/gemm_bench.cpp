// The tiled fp32 GEMM at 4096^3 on the GPU: tuned TFLOP/s against cuBLAS fp32, the speedup over
// the space's default instantiation, tuning cost, and a reference time for every instantiation.
// Every candidate is checked against cuBLAS during tuning.
//
//   ./tunekit_cuda_bench_gemm [--size S] [--out gemm.json]
//   ./tunekit_cuda_bench_gemm --tune-only [--out run.json]   one search, for stability runs
//   --no-rerank                                               without the re-rank of the leaders

#include "cublas_reference.hpp"
#include "device_array.hpp"
#include "gemm_space.hpp"
#include "scale_kernel.hpp"
#include "time_runs.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

int main(int argc, char **argv) {
  int size = 4096;
  std::string out_path;
  bool tune_only = false;
  bool rerank = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
      size = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_path = argv[++i];
    } else if (std::strcmp(argv[i], "--tune-only") == 0) {
      tune_only = true;
    } else if (std::strcmp(argv[i], "--no-rerank") == 0) {
      rerank = false;
    }
  }
  if (!tunekit::cuda::device_available()) {
    std::puts("no CUDA device visible");
    return 0;
  }
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
    TUNEKIT_CUDA_CHECK(example::fill_uniform(a.get(), static_cast<std::int64_t>(elems), 3, stream));
    TUNEKIT_CUDA_CHECK(example::fill_uniform(b.get(), static_cast<std::int64_t>(elems), 4, stream));
    const example::cublas_handle cublas(stream);
    cublas.sgemm(a.get(), b.get(), c_ref.get(), m, n, k);
    tunekit::cuda::poison(c.get(), c.bytes(), stream);
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));

    nlohmann::json j;
    j["size"] = size;
    j["hardware"] = tunekit::cuda::device_hardware().to_string();
    j["dependencies"] = tunekit::cuda::dependencies();

    auto options = tunekit::cuda::make_tuner_options({.stream = stream});
    if (!rerank) {
      options.search.rerank.band = 0;
    }
    options.use_disk_cache = false;
    options.process = tunekit::process_context{};
    auto tuned = tunekit::autotune("bench.cuda_gemm", example::gemm_space(), example::gemm_key,
                                   example::gemm_prune, example::gemm, options)
                     .with_check([&](const float *, const float *, float *out, int, int, int,
                                     cudaStream_t s, const tunekit::config &) {
                       const bool ok =
                           tunekit::cuda::compare(out, c_ref.get(), elems, s).within(1e-4);
                       tunekit::cuda::poison(out, elems * sizeof(float), s);
                       return ok;
                     });
    const auto t0 = std::chrono::steady_clock::now();
    tuned(a.get(), b.get(), c.get(), m, n, k, stream);
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto t1 = std::chrono::steady_clock::now();
    const auto entry = *tuned.tuner().last_search();
    const auto check = tunekit::cuda::compare(c.get(), c_ref.get(), elems, stream);
    nlohmann::json candidates = nlohmann::json::array();
    std::size_t measured = 0;
    for (const auto &r : entry.candidates) {
      measured += r.status != tunekit::candidate_status::pruned ? 1 : 0;
      candidates.push_back(
          {{"config", r.config.to_string()},
           {"template_id", r.config.template_id()},
           {"status", std::string(tunekit::to_string(r.status))},
           {"time_ms", r.status == tunekit::candidate_status::ok ? nlohmann::json(r.time_ms)
                                                                 : nlohmann::json(nullptr)},
           {"reason", r.reason}});
    }
    const double wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    j["tuning"] = {{"wall_ms", wall_ms},
                   {"candidates_measured", measured},
                   {"per_candidate_ms", wall_ms / static_cast<double>(measured)},
                   {"winner", entry.winner.to_string()},
                   {"winner_template_id", entry.winner.template_id()},
                   {"rerank", entry.rerank
                                  ? nlohmann::json{{"leaders", entry.rerank->leaders.size()},
                                                   {"changed", entry.rerank->winner_before !=
                                                                   entry.winner_index}}
                                  : nlohmann::json(nullptr)},
                   {"candidates", candidates}};
    j["winner_output"] = {{"relative_error", check.relative_error},
                          {"max_abs_error", check.max_abs_error},
                          {"correct", check.within(1e-4)}};
    if (!tune_only) {
      auto run_cublas = [&] { cublas.sgemm(a.get(), b.get(), c.get(), m, n, k); };
      const auto cublas_stats = bench::time_runs(stream, run_cublas, 5, 30);
      j["cublas"] = {{"median_ms", cublas_stats.median}, {"tflops", tflops(cublas_stats.median)}};

      nlohmann::json reference = nlohmann::json::array();
      const auto space = example::gemm_space();
      double default_ms = 0;
      double winner_ms = 0;
      double best_ms = 1e300;
      std::string best;
      for (std::size_t i = 0; i < space.size(); ++i) {
        const tunekit::config &cfg = space[i];
        auto run = [&] { example::gemm(a.get(), b.get(), c.get(), m, n, k, stream, cfg); };
        const auto s = bench::time_runs(stream, run, 3, 30);
        reference.push_back({{"config", cfg.to_string()},
                             {"template_id", cfg.template_id()},
                             {"median_ms", s.median},
                             {"stddev_ms", s.stddev},
                             {"tflops", tflops(s.median)}});
        default_ms = i == 0 ? s.median : default_ms;
        winner_ms = cfg == entry.winner ? s.median : winner_ms;
        if (s.median < best_ms) {
          best_ms = s.median;
          best = cfg.to_string();
        }
      }
      j["reference"] = reference;
      j["best"] = {{"config", best}, {"median_ms", best_ms}};
      j["default"] = {{"config", space[0].to_string()},
                      {"median_ms", default_ms},
                      {"tflops", tflops(default_ms)}};
      j["winner"] = {{"config", entry.winner.to_string()},
                     {"median_ms", winner_ms},
                     {"tflops", tflops(winner_ms)},
                     {"fraction_of_cublas", cublas_stats.median / winner_ms},
                     {"regret", winner_ms / best_ms - 1.0},
                     {"speedup_over_default", default_ms / winner_ms}};
    }
    std::printf("%s\n", j.dump(2).c_str());
    if (!out_path.empty()) {
      std::ofstream(out_path) << j.dump(2) << "\n";
    }
    return check.within(1e-4) ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tunekit_cuda_bench_gemm: %s\n", e.what());
    return 1;
  }
}
