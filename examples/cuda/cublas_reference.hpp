#pragma once
// cuBLAS as the reference for the tuned GEMM: the same row-major C = A * B in fp32.

#include <tunekit/error.hpp>

#include <cublas_v2.h>

#include <string>

namespace example {

/// Throws `tunekit::error` for a failed cuBLAS call.
inline void check_cublas(cublasStatus_t s, const char *what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw tunekit::error(std::string("cuBLAS: ") + what + ": " + cublasGetStatusString(s));
  }
}

/// A cuBLAS handle on `stream` with plain fp32 math (no TF32 tensor cores).
class cublas_handle {
public:
  explicit cublas_handle(cudaStream_t stream) {
    check_cublas(cublasCreate(&m_handle), "cublasCreate");
    check_cublas(cublasSetStream(m_handle, stream), "cublasSetStream");
    check_cublas(cublasSetMathMode(m_handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  cublas_handle(const cublas_handle &) = delete;
  cublas_handle &operator=(const cublas_handle &) = delete;
  ~cublas_handle() { static_cast<void>(cublasDestroy(m_handle)); }

  /// Row-major C = A * B: cuBLAS is column-major, so compute C^T = B^T * A^T.
  void sgemm(const float *a, const float *b, float *c, int m, int n, int k) const {
    const float one = 1.0f;
    const float zero = 0.0f;
    check_cublas(
        cublasSgemm(m_handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n),
        "cublasSgemm");
  }

  /// The handle, for calls with other layouts.
  [[nodiscard]] cublasHandle_t get() const noexcept { return m_handle; }

private:
  cublasHandle_t m_handle = nullptr;
};

} // namespace example
