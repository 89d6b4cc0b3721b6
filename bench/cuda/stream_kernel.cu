#include "stream_kernel.hpp"

#include <cuda_runtime.h>

namespace bench {

namespace {
// y = x, grid-stride, float4 accesses: with a small grid it holds a fixed share of the SMs for
// its whole run, the way a communication or copy kernel beside a GEMM does.
__global__ void stream_copy(const float4 *__restrict__ x, float4 *__restrict__ y, std::int64_t n4) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride) {
    y[i] = x[i];
  }
}
} // namespace

cudaError_t launch_stream_copy(const float *x, float *y, std::int64_t n, int blocks, int threads,
                               cudaStream_t stream) {
  if (n % 4 != 0 || blocks < 1 || threads < 32) {
    return cudaErrorInvalidValue;
  }
  stream_copy<<<blocks, threads, 0, stream>>>(reinterpret_cast<const float4 *>(x),
                                              reinterpret_cast<float4 *>(y), n / 4);
  return cudaGetLastError();
}

} // namespace bench
