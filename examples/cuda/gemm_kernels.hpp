#pragma once
// A tiled single-precision GEMM, C = A * B with row-major A (m x k), B (k x n), C (m x n). Each
// block computes a BM x BN tile of C, stepping through k in slices of BK staged in shared memory
// (double-buffered); each thread accumulates a TM x TN sub-tile in registers. The five sizes are
// template parameters, so the config space is the list of instantiations compiled in. No tunekit
// header here: this file is also compiled by nvcc.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace example {

/// One compiled instantiation of the GEMM kernel.
struct gemm_variant {
  int bm, bn, bk, tm, tn;
  int threads; ///< (bm / tm) * (bn / tn)
};

/// Number of instantiations compiled in.
[[nodiscard]] std::size_t gemm_variant_count() noexcept;
/// Instantiation `index` (< `gemm_variant_count()`); the first is the default.
[[nodiscard]] const gemm_variant &gemm_variant_at(std::size_t index) noexcept;

/// True when `v` can run m x n x k: every tile is full (no edge handling) and rows are 16-byte
/// aligned.
[[nodiscard]] bool gemm_fits(const gemm_variant &v, int m, int n, int k) noexcept;

/// Launches instantiation `index`. Returns the launch's error, or
/// cudaErrorInvalidValue when the index is out of range or the shape does not fit.
cudaError_t launch_gemm(std::size_t index, const float *a, const float *b, float *c, int m, int n,
                        int k, cudaStream_t stream);

} // namespace example
