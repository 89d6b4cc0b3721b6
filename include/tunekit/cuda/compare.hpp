#pragma once
/// \file compare.hpp
/// Device-side helpers for correctness checks of tuned kernels: compare an output with a
/// reference without copying either to the host, and poison an output before a candidate writes
/// it so that elements it never writes show up as NaN.
///
/// \code
/// auto checked = tuned.with_check([&](const float*, const float*, float* c, int n, const auto&) {
///   const bool ok = tunekit::cuda::compare(c, c_ref, n * n, stream).within(1e-5);
///   tunekit::cuda::poison(c, n * n * sizeof(float), stream); // the next candidate starts from NaN
///   return ok;
/// });
/// \endcode

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tunekit::cuda {

/// The difference between an output and its reference.
struct comparison {
  /// ‖out − ref‖₂ / ‖ref‖₂ over the finite elements (‖out − ref‖₂ when ‖ref‖₂ is 0).
  double relative_error = 0;
  /// max |out − ref| over the finite elements.
  double max_abs_error = 0;
  /// Elements where `out` is NaN or infinite while `ref` is finite, or that differ from a
  /// non-finite `ref` (NaN matches NaN).
  std::uint64_t non_finite = 0;
  /// Elements compared.
  std::uint64_t count = 0;

  /// True when no element is non-finite and the relative error is at most `tolerance`.
  [[nodiscard]] bool within(double tolerance) const noexcept {
    return non_finite == 0 && relative_error <= tolerance;
  }
};

/// Compares `n` floats of `out` with `ref` (both device memory) on `stream`, accumulating in double
/// precision; waits for the result. Throws as `check` does on a CUDA error.
[[nodiscard]] comparison compare(const float *out, const float *ref, std::size_t n,
                                 cudaStream_t stream = nullptr);

/// Fills `bytes` of device memory with 0xFF bytes on `stream` (NaN for float and double), without
/// waiting. Throws as `check` does on a CUDA error.
void poison(void *ptr, std::size_t bytes, cudaStream_t stream = nullptr);

} // namespace tunekit::cuda
