// A register-tiled fp32 GEMM tuned over CLBlast's Xgemm search space, one runtime compile per
// config (NVRTC on all cores while the GPU measures), with every candidate checked against cuBLAS
// on every shape it is tuned for. Binaries land in the compile cache (<cache_dir>/kernels), so a
// second run compiles nothing; winners land in the winner cache, so it measures nothing either.
//
//   ./cuda_gemm_rtc [--sizes 1024,4096] [--space clblast|extended] [--limit N] [--threads N]
//                   [--budget N] [--workers 1]
//
//   --sizes    square shapes to tune (each M = N = K); default 1024,2048
//   --space    clblast: the measured CLBlast space (17,956 configs); extended: CLBlast's wider one
//   --limit    tune every (candidates / N)-th candidate only (0: all)
//   --threads  compile threads (default: every core)
//   --budget   evaluations: a space within it is measured whole, a larger one searched by the
//              default strategy (default 1000)
//   --workers  1 (default): each compile thread uses a compile worker process
//              (tunekit-cuda-worker --compile; NVRTC serialises the compiles of one process);
//              0: NVRTC in this process

#include "device_array.hpp"
#include "gemm_rtc_cublas.hpp"
#include "gemm_rtc_space.hpp"
#include "scale_kernel.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/tunekit.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::vector<int> parse_sizes(const char *text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    out.push_back(std::atoi(item.c_str()));
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> sizes{1024, 2048};
  auto kind = example::xgemm_space_kind::clblast;
  std::size_t limit = 0;
  unsigned threads = 0;
  std::size_t budget = 1000;
  bool workers = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--sizes") == 0) {
      sizes = parse_sizes(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--space") == 0) {
      kind = std::strcmp(argv[i + 1], "extended") == 0 ? example::xgemm_space_kind::extended
                                                       : example::xgemm_space_kind::clblast;
    } else if (std::strcmp(argv[i], "--limit") == 0) {
      limit = static_cast<std::size_t>(std::atol(argv[i + 1]));
    } else if (std::strcmp(argv[i], "--threads") == 0) {
      threads = static_cast<unsigned>(std::atoi(argv[i + 1]));
    } else if (std::strcmp(argv[i], "--budget") == 0) {
      budget = static_cast<std::size_t>(std::atol(argv[i + 1]));
    } else if (std::strcmp(argv[i], "--workers") == 0) {
      workers = std::strcmp(argv[i + 1], "0") != 0;
    }
  }
  if (!tunekit::cuda::device_available()) {
    std::puts("cuda_gemm_rtc: no CUDA device visible; nothing to tune");
    return 0;
  }
  try {
    const example::stream owned_stream;
    cudaStream_t stream = owned_stream.get();
    const example::cublas_handle cublas(stream);

    auto program = std::make_shared<tunekit::cuda::kernel_program>(
        example::xgemm_definition(TUNEKIT_GEMM_RTC_SOURCE),
        tunekit::cuda::compile_options{
            .threads = threads,
            .worker = workers ? std::vector<std::string>{TUNEKIT_CUDA_WORKER, "--compile"}
                              : std::vector<std::string>{}});
    auto xgemm = example::make_xgemm(program);
    const tunekit::config_space full = example::xgemm_space(kind);
    std::printf("cuda_gemm_rtc: %zu configs in the %s space, compiling for %s\n", full.size(),
                kind == example::xgemm_space_kind::clblast ? "clblast" : "extended",
                program->target().c_str());

    int status = 0;
    for (const int size : sizes) {
      const int m = size;
      const int n = size;
      const int k = size;
      const auto elems = static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
      const example::device_array<float> a(elems);
      const example::device_array<float> b(elems);
      const example::device_array<float> c(elems);
      const example::device_array<float> c_ref(elems);
      TUNEKIT_CUDA_CHECK(
          example::fill_uniform(a.get(), static_cast<std::int64_t>(elems), 11, stream));
      TUNEKIT_CUDA_CHECK(
          example::fill_uniform(b.get(), static_cast<std::int64_t>(elems), 12, stream));
      example::xgemm_reference(cublas, a.get(), b.get(), c_ref.get(), m, n, k);
      tunekit::cuda::poison(c.get(), c.bytes(), stream);

      // The candidates of this shape: the space the tuner measures, and what it compiles ahead.
      const auto candidates = example::spread(example::xgemm_candidates(full, m, n, k), limit);
      // The program's digest is the version (an edit of the kernel retunes), and its preparer
      // compiles ahead of each measurement.
      auto options = tunekit::cuda::make_tuner_options(program, {.stream = stream});
      // Beyond the budget the default strategy searches; it measures a batch of candidates at a
      // time, one per core, and proposes the next two batches ahead, so that they compile while
      // the GPU measures this one.
      options.search.budget.max_evaluations = budget;
      options.search.batch_size = std::max(1U, std::thread::hardware_concurrency());
      options.search.lookahead = 2 * options.search.batch_size;
      // A limited space is another tuner: its winners must not answer for the whole space.
      const std::string name =
          "example.cuda_gemm_rtc" + (limit > 0 ? ".limit" + std::to_string(limit) : std::string());
      auto tuned = tunekit::autotune(name, tunekit::config_space(candidates), example::xgemm_key,
                                     example::xgemm_prune, xgemm, options)
                       .with_check([&](const float *, const float *, float *out, int, int, int,
                                       cudaStream_t s, const tunekit::config &) {
                         const bool ok =
                             tunekit::cuda::compare(out, c_ref.get(), elems, s).within(1e-4);
                         tunekit::cuda::poison(out, elems * sizeof(float), s);
                         return ok;
                       });

      const auto before = program->summary();
      const auto t0 = std::chrono::steady_clock::now();
      tuned(a.get(), b.get(), c.get(), m, n, k, stream);
      TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
      const double wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const auto after = program->summary();

      const auto &t = tuned.tuner();
      std::printf("%d^3: %zu candidates, source: %s, %.1f s\n", size, candidates.size(),
                  std::string(tunekit::to_string(t.last_source())).c_str(), wall_s);
      std::printf("  compiled %zu, from the compile cache %zu, failed %zu; waited %.1f s for "
                  "compiles\n",
                  after.compiled - before.compiled, after.cache_hits - before.cache_hits,
                  after.failed - before.failed, (after.wait_ms - before.wait_ms) / 1e3);
      if (const auto e = t.last_search()) {
        const auto &w = e->candidates[e->winner_index];
        std::size_t wrong = 0;
        std::size_t failed = 0;
        for (const auto &r : e->candidates) {
          wrong += r.status == tunekit::candidate_status::wrong_result ? 1 : 0;
          failed += r.status == tunekit::candidate_status::failed ? 1 : 0;
        }
        const double flops = 2.0 * m * static_cast<double>(n) * k;
        std::printf("  winner [%s]: %.3f ms, %.1f TFLOP/s (%zu failed, %zu wrong)\n",
                    w.config.to_string().c_str(), w.time_ms, flops / (w.time_ms * 1e-3) / 1e12,
                    failed, wrong);
      }
      // The call's own output, from the winner, against cuBLAS.
      tuned(a.get(), b.get(), c.get(), m, n, k, stream);
      const auto cmp = tunekit::cuda::compare(c.get(), c_ref.get(), elems, stream);
      std::printf("  output vs cuBLAS: relative error %.2e, max abs error %.2e\n",
                  cmp.relative_error, cmp.max_abs_error);
      status |= cmp.within(1e-4) ? 0 : 1;
    }
    return status;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "cuda_gemm_rtc: %s\n", e.what());
    return 1;
  }
}
