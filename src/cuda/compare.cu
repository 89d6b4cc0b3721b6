// Device-side comparison and poisoning (compare.hpp). Compiled by nvcc; includes no core header.
#include <tunekit/cuda/compare.hpp>
#include <tunekit/cuda/error.hpp>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>

namespace tunekit::cuda {

namespace {

struct accumulator {
  double diff2;
  double ref2;
  unsigned long long max_abs_bits; // a non-negative double's bits order like the double
  unsigned long long non_finite;
};

constexpr int compare_threads = 256;
constexpr int compare_max_blocks = 2048;

__device__ double warp_sum(double v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

__device__ unsigned long long warp_max(unsigned long long v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const unsigned long long o = __shfl_down_sync(0xffffffffu, v, offset);
    v = o > v ? o : v;
  }
  return v;
}

__device__ unsigned long long warp_count(unsigned long long v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

__global__ void __launch_bounds__(compare_threads)
    compare_kernel(const float *__restrict__ out, const float *__restrict__ ref, std::size_t n,
                   accumulator *acc) {
  double diff2 = 0;
  double ref2 = 0;
  double max_abs = 0;
  unsigned long long non_finite = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float o = out[i];
    const float r = ref[i];
    if (!isfinite(r)) {
      const bool same = isnan(r) ? isnan(o) : o == r;
      non_finite += same ? 0 : 1;
      continue;
    }
    if (!isfinite(o)) {
      ++non_finite;
      continue;
    }
    const double d = static_cast<double>(o) - static_cast<double>(r);
    diff2 += d * d;
    ref2 += static_cast<double>(r) * static_cast<double>(r);
    max_abs = fmax(max_abs, fabs(d));
  }

  __shared__ double s_diff2[compare_threads / 32];
  __shared__ double s_ref2[compare_threads / 32];
  __shared__ unsigned long long s_max[compare_threads / 32];
  __shared__ unsigned long long s_count[compare_threads / 32];
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  diff2 = warp_sum(diff2);
  ref2 = warp_sum(ref2);
  unsigned long long max_bits =
      warp_max(static_cast<unsigned long long>(__double_as_longlong(max_abs)));
  non_finite = warp_count(non_finite);
  if (lane == 0) {
    s_diff2[warp] = diff2;
    s_ref2[warp] = ref2;
    s_max[warp] = max_bits;
    s_count[warp] = non_finite;
  }
  __syncthreads();
  if (warp == 0) {
    constexpr int warps = compare_threads / 32;
    diff2 = lane < warps ? s_diff2[lane] : 0.0;
    ref2 = lane < warps ? s_ref2[lane] : 0.0;
    max_bits = lane < warps ? s_max[lane] : 0ull;
    non_finite = lane < warps ? s_count[lane] : 0ull;
    diff2 = warp_sum(diff2);
    ref2 = warp_sum(ref2);
    max_bits = warp_max(max_bits);
    non_finite = warp_count(non_finite);
    if (lane == 0) {
      atomicAdd(&acc->diff2, diff2);
      atomicAdd(&acc->ref2, ref2);
      atomicMax(&acc->max_abs_bits, max_bits);
      atomicAdd(&acc->non_finite, non_finite);
    }
  }
}

} // namespace

comparison compare(const float *out, const float *ref, std::size_t n, cudaStream_t stream) {
  comparison result;
  result.count = n;
  if (n == 0) {
    return result;
  }
  accumulator *acc = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void **>(&acc), sizeof(accumulator), stream),
        "compare: allocating the accumulator");
  accumulator host{};
  cudaError_t status = cudaMemsetAsync(acc, 0, sizeof(accumulator), stream);
  if (status == cudaSuccess) {
    const std::size_t wanted = (n + compare_threads - 1) / compare_threads;
    const int blocks =
        static_cast<int>(wanted < compare_max_blocks ? wanted : std::size_t{compare_max_blocks});
    compare_kernel<<<blocks, compare_threads, 0, stream>>>(out, ref, n, acc);
    status = cudaGetLastError();
  }
  if (status == cudaSuccess) {
    status = cudaMemcpyAsync(&host, acc, sizeof(accumulator), cudaMemcpyDeviceToHost, stream);
  }
  if (status == cudaSuccess) {
    status = cudaStreamSynchronize(stream);
  }
  static_cast<void>(cudaFreeAsync(acc, stream));
  check(status, "compare: comparing an output with its reference");

  double max_abs = 0;
  std::memcpy(&max_abs, &host.max_abs_bits, sizeof max_abs);
  result.relative_error =
      host.ref2 > 0 ? std::sqrt(host.diff2) / std::sqrt(host.ref2) : std::sqrt(host.diff2);
  result.max_abs_error = max_abs;
  result.non_finite = host.non_finite;
  return result;
}

void poison(void *ptr, std::size_t bytes, cudaStream_t stream) {
  check(cudaMemsetAsync(ptr, 0xff, bytes, stream), "poison: filling an output with NaN");
}

} // namespace tunekit::cuda
