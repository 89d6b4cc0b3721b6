// A tiled fp32 GEMM whose tile sizes and per-thread work are template parameters, tuned over the
// instantiations compiled in. Every candidate's output is checked against cuBLAS through the
// tuner's check hook: a variant with a wrong result can never win.
//
//   ./cuda_gemm [size]     C = A * B for size x size matrices (default 4096)

#include "cublas_reference.hpp"
#include "device_array.hpp"
#include "gemm_space.hpp"
#include "scale_kernel.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/tunekit.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char **argv) {
  const int size = argc > 1 ? std::atoi(argv[1]) : 4096;
  if (!tunekit::cuda::device_available()) {
    std::puts("cuda_gemm: no CUDA device visible; nothing to tune");
    return 0;
  }
  try {
    const int m = size;
    const int n = size;
    const int k = size;
    const example::stream owned_stream;
    cudaStream_t stream = owned_stream.get();
    const auto elems = [](int rows, int cols) {
      return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    };
    const example::device_array<float> a_buf(elems(m, k));
    const example::device_array<float> b_buf(elems(k, n));
    const example::device_array<float> c_buf(elems(m, n));
    const example::device_array<float> ref_buf(elems(m, n));
    const float *a = a_buf.get();
    const float *b = b_buf.get();
    float *c = c_buf.get();
    float *c_ref = ref_buf.get();
    TUNEKIT_CUDA_CHECK(
        example::fill_uniform(a_buf.get(), static_cast<std::int64_t>(elems(m, k)), 1, stream));
    TUNEKIT_CUDA_CHECK(
        example::fill_uniform(b_buf.get(), static_cast<std::int64_t>(elems(k, n)), 2, stream));
    const example::cublas_handle cublas(stream);
    cublas.sgemm(a, b, c_ref, m, n, k);
    tunekit::cuda::poison(c, elems(m, n) * sizeof(float), stream);

    auto options = tunekit::cuda::make_tuner_options({.stream = stream});
    options.version = GEMM_KERNEL_HASH;
    auto gemm = tunekit::autotune("example.cuda_gemm", example::gemm_space(), example::gemm_key,
                                  example::gemm_prune, example::gemm, options)
                    .with_check([&](const float *, const float *, float *out, int rows, int cols,
                                    int, cudaStream_t s, const tunekit::config &) {
                      const auto count = elems(rows, cols);
                      const auto cmp = tunekit::cuda::compare(out, c_ref, count, s);
                      tunekit::cuda::poison(out, count * sizeof(float), s);
                      return cmp.within(1e-4);
                    });

    gemm.with({.verbose = true})(a, b, c, m, n, k, stream);
    const auto &t = gemm.tuner();
    std::printf("cuda_gemm: %d^3 on %s, source: %s\n", size,
                t.options().hardware->to_string().c_str(),
                std::string(tunekit::to_string(t.last_source())).c_str());
    if (const auto e = t.last_search()) {
      const auto &w = e->candidates[e->winner_index];
      const double flops = 2.0 * m * static_cast<double>(n) * k;
      std::printf("  winner [%s] (%s): %.3f ms, %.1f TFLOP/s\n", w.config.to_string().c_str(),
                  w.config.template_id().c_str(), w.time_ms, flops / (w.time_ms * 1e-3) / 1e12);
    }
    const auto cmp = tunekit::cuda::compare(c, c_ref, elems(m, n), stream);
    std::printf("  output vs cuBLAS: relative error %.2e, max abs error %.2e\n", cmp.relative_error,
                cmp.max_abs_error);
    return cmp.within(1e-4) ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "cuda_gemm: %s\n", e.what());
    return 1;
  }
}
