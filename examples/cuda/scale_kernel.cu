#include "scale_kernel.hpp"

#include <cuda_runtime.h>

namespace example {

namespace {

// Each thread loads all of its VEC float4 before storing any, so that VEC loads are in flight at
// once; consecutive threads touch consecutive float4 (coalesced 16-byte accesses).
template <int VEC>
__global__ void scale_vec4(const float4 *__restrict__ x, float4 *__restrict__ y, float alpha,
                           std::int64_t n4, const float *__restrict__ x_tail,
                           float *__restrict__ y_tail, int tail) {
  const std::int64_t base =
      static_cast<std::int64_t>(blockIdx.x) * (VEC * static_cast<std::int64_t>(blockDim.x)) +
      threadIdx.x;
  float4 v[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) {
    const std::int64_t i = base + static_cast<std::int64_t>(k) * blockDim.x;
    if (i < n4) {
      v[k] = x[i];
    }
  }
#pragma unroll
  for (int k = 0; k < VEC; ++k) {
    const std::int64_t i = base + static_cast<std::int64_t>(k) * blockDim.x;
    if (i < n4) {
      y[i] = make_float4(alpha * v[k].x, alpha * v[k].y, alpha * v[k].z, alpha * v[k].w);
    }
  }
  // The last n % 4 elements.
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < tail) {
    y_tail[threadIdx.x] = alpha * x_tail[threadIdx.x];
  }
}

// The same blocking for pointers that are not 16-byte aligned: ITEMS scalars per thread.
template <int ITEMS>
__global__ void scale_scalar(const float *__restrict__ x, float *__restrict__ y, float alpha,
                             std::int64_t n) {
  const std::int64_t base =
      static_cast<std::int64_t>(blockIdx.x) * (ITEMS * static_cast<std::int64_t>(blockDim.x)) +
      threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const std::int64_t i = base + static_cast<std::int64_t>(k) * blockDim.x;
    if (i < n) {
      y[i] = alpha * x[i];
    }
  }
}

__global__ void fill_uniform_kernel(float *p, std::int64_t n, std::uint32_t seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    // A 32-bit integer hash of (index, seed).
    auto h = static_cast<std::uint32_t>(i) ^ (static_cast<std::uint32_t>(i >> 32) * 0x9e3779b9u);
    h ^= seed * 0x85ebca6bu;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    p[i] = static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

int vec_of(std::int64_t block, std::int64_t threads) noexcept {
  if (threads <= 0 || threads > 1024 || block % (4 * threads) != 0) {
    return 0;
  }
  const std::int64_t vec = block / (4 * threads);
  return vec == 1 || vec == 2 || vec == 4 || vec == 8 || vec == 16 ? static_cast<int>(vec) : 0;
}

template <int VEC>
void launch_vec(const float *x, float *y, float alpha, std::int64_t n, int block, int threads,
                cudaStream_t stream) {
  const std::int64_t n4 = n / 4;
  const std::int64_t blocks = n4 > 0 ? (4 * n4 + block - 1) / block : 1;
  const auto tail = static_cast<int>(n - 4 * n4);
  scale_vec4<VEC><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      reinterpret_cast<const float4 *>(x), reinterpret_cast<float4 *>(y), alpha, n4, x + 4 * n4,
      y + 4 * n4, tail);
}

template <int VEC>
void launch_scalar(const float *x, float *y, float alpha, std::int64_t n, int block, int threads,
                   cudaStream_t stream) {
  const std::int64_t blocks = (n + block - 1) / block;
  scale_scalar<4 * VEC><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x, y, alpha, n);
}

} // namespace

bool scale_config_supported(std::int64_t block, std::int64_t threads) noexcept {
  return vec_of(block, threads) != 0;
}

cudaError_t launch_scale(const float *x, float *y, float alpha, std::int64_t n, int block,
                         int threads, cudaStream_t stream) {
  const int vec = vec_of(block, threads);
  if (vec == 0 || n < 0) {
    return cudaErrorInvalidValue;
  }
  if (n == 0) {
    return cudaSuccess;
  }
  const bool aligned =
      ((reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) %
       alignof(float4)) == 0;
  auto *launch = aligned ? &launch_vec<1> : &launch_scalar<1>;
  switch (vec) {
  case 2:
    launch = aligned ? &launch_vec<2> : &launch_scalar<2>;
    break;
  case 4:
    launch = aligned ? &launch_vec<4> : &launch_scalar<4>;
    break;
  case 8:
    launch = aligned ? &launch_vec<8> : &launch_scalar<8>;
    break;
  case 16:
    launch = aligned ? &launch_vec<16> : &launch_scalar<16>;
    break;
  default:
    break;
  }
  launch(x, y, alpha, n, block, threads, stream);
  return cudaGetLastError();
}

cudaError_t fill_uniform(float *p, std::int64_t n, std::uint32_t seed, cudaStream_t stream) {
  if (n <= 0) {
    return cudaSuccess;
  }
  const std::int64_t blocks = (n + 255) / 256;
  fill_uniform_kernel<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(
      p, n, seed);
  return cudaGetLastError();
}

} // namespace example
