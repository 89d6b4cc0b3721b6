#pragma once
// cuBLAS fp32 as the reference of the runtime-compiled GEMM, in its layout: A is K x M and B is
// K x N with M and N contiguous, C is M x N column major.

#include "cublas_reference.hpp"

namespace example {

/// C[m][n] = sum_k A[k][m] B[k][n]: column-major C (ldc M) = A (M x K, lda M) * B^T (B is N x K
/// column major, ldb N), on the handle's stream with plain fp32 math.
inline void xgemm_reference(const cublas_handle &h, const float *a, const float *b, float *c, int m,
                            int n, int k) {
  const float one = 1.0f;
  const float zero = 0.0f;
  check_cublas(
      cublasSgemm(h.get(), CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &one, a, m, b, n, &zero, c, m),
      "cublasSgemm");
}

} // namespace example
