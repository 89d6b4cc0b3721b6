#pragma once
// Kernels with known behaviour for the CUDA backend's tests: a spin of a known duration, launches
// that fail in known ways, and faults that poison the context. Each returns the launch's error.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tunekit::cuda::test {

/// One block that spins for `ns` nanoseconds of the device's global timer.
cudaError_t launch_spin(std::uint64_t ns, cudaStream_t stream);

/// `out[i] = value` for `n` elements with `threads` threads per block (2048 is an invalid
/// configuration).
cudaError_t launch_fill(float *out, std::size_t n, float value, int threads, cudaStream_t stream);

/// `launch_fill` without reading the launch's error afterwards, as code that does not check its
/// launches would; the error stays pending for the next `cudaGetLastError`.
void launch_fill_unchecked(float *out, std::size_t n, float value, int threads,
                           cudaStream_t stream);

/// A kernel that asks for `bytes` of dynamic shared memory.
cudaError_t launch_shared(std::size_t bytes, cudaStream_t stream);

/// A kernel declared for at most 128 threads per block, launched with `threads`.
cudaError_t launch_bounded(int threads, cudaStream_t stream);

/// Threads launched by `launch_read`, so the size of its `partial` output.
inline constexpr std::size_t read_threads = 132 * 128;

/// Sums `n` floats of `in` (grid-stride) into one value per thread of `partial` (`read_threads`
/// floats): few threads, so each waits on its loads and the time follows where `in` is cached.
cudaError_t launch_read(const float *in, std::size_t n, float *partial, cudaStream_t stream);

/// Writes through an address no allocation covers: cudaErrorIllegalAddress.
cudaError_t launch_illegal_write(cudaStream_t stream);

/// Reads a float4 at `base + 1` float: cudaErrorMisalignedAddress.
cudaError_t launch_misaligned_read(const float *base, float *out, cudaStream_t stream);

} // namespace tunekit::cuda::test
