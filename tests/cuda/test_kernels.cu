#include "test_kernels.hpp"

#include <cuda_runtime.h>

namespace tunekit::cuda::test {

namespace {

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(std::uint64_t ns) {
  const std::uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < ns) {
  }
}

__global__ void fill_kernel(float *out, std::size_t n, float value) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = value;
  }
}

__global__ void shared_kernel(int *sink) {
  extern __shared__ int scratch[];
  scratch[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncthreads();
  if (sink != nullptr) {
    *sink = scratch[0];
  }
}

__global__ void __launch_bounds__(128) bounded_kernel(int *sink) {
  if (sink != nullptr) {
    *sink = static_cast<int>(threadIdx.x);
  }
}

__global__ void read_kernel(const float *__restrict__ in, std::size_t n, float *partial) {
  float sum = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    sum += in[i];
  }
  partial[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

__global__ void illegal_write_kernel(float *p) { p[threadIdx.x] = 1.0f; }

__global__ void misaligned_read_kernel(const float *base, float *out) {
  const float4 v = *reinterpret_cast<const float4 *>(base + 1);
  out[threadIdx.x] = v.x + v.y + v.z + v.w;
}

} // namespace

cudaError_t launch_spin(std::uint64_t ns, cudaStream_t stream) {
  spin_kernel<<<1, 32, 0, stream>>>(ns);
  return cudaGetLastError();
}

cudaError_t launch_fill(float *out, std::size_t n, float value, int threads, cudaStream_t stream) {
  const auto per_block = static_cast<std::size_t>(threads > 0 ? threads : 1);
  const auto blocks = static_cast<unsigned>((n + per_block - 1) / per_block);
  fill_kernel<<<blocks == 0 ? 1 : blocks, threads, 0, stream>>>(out, n, value);
  return cudaGetLastError();
}

void launch_fill_unchecked(float *out, std::size_t n, float value, int threads,
                           cudaStream_t stream) {
  const auto per_block = static_cast<std::size_t>(threads > 0 ? threads : 1);
  const auto blocks = static_cast<unsigned>((n + per_block - 1) / per_block);
  fill_kernel<<<blocks == 0 ? 1 : blocks, threads, 0, stream>>>(out, n, value);
}

cudaError_t launch_shared(std::size_t bytes, cudaStream_t stream) {
  shared_kernel<<<1, 32, bytes, stream>>>(nullptr);
  return cudaGetLastError();
}

cudaError_t launch_bounded(int threads, cudaStream_t stream) {
  bounded_kernel<<<1, threads, 0, stream>>>(nullptr);
  return cudaGetLastError();
}

cudaError_t launch_read(const float *in, std::size_t n, float *partial, cudaStream_t stream) {
  read_kernel<<<132, 128, 0, stream>>>(in, n, partial);
  return cudaGetLastError();
}

cudaError_t launch_illegal_write(cudaStream_t stream) {
  // Far above any allocation this process makes, and aligned for float.
  auto *p = reinterpret_cast<float *>(std::uintptr_t{1} << 46);
  illegal_write_kernel<<<1, 32, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_misaligned_read(const float *base, float *out, cudaStream_t stream) {
  misaligned_read_kernel<<<1, 1, 0, stream>>>(base, out);
  return cudaGetLastError();
}

} // namespace tunekit::cuda::test
