#pragma once
// The seed's `scale` kernel, y = alpha * x, as a plain launcher: each block handles `block`
// elements with `threads` threads, each thread block / threads elements (as float4 when x and y
// are 16-byte aligned). No tunekit header here: this file is also compiled by nvcc.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace example {

/// Elements per thread the kernel is compiled for: block / threads must be 4 times a power of two
/// from 1 to 16.
[[nodiscard]] bool scale_config_supported(std::int64_t block, std::int64_t threads) noexcept;

/// Launches y = alpha * x over `n` elements on `stream`. Returns the launch's error, or
/// cudaErrorInvalidValue for a (block, threads) pair the kernel is not compiled for.
cudaError_t launch_scale(const float *x, float *y, float alpha, std::int64_t n, int block,
                         int threads, cudaStream_t stream);

/// Fills `n` floats with a hash of their index and `seed`, uniform in [-1, 1).
cudaError_t fill_uniform(float *p, std::int64_t n, std::uint32_t seed, cudaStream_t stream);

} // namespace example
