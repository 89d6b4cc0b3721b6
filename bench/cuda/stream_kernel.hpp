#pragma once
// A memory-bound copy kernel with a chosen grid, for the contextual benchmark.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace bench {

/// y = x over n floats (n a multiple of 4, 16-byte aligned pointers), `blocks` x `threads`,
/// grid-stride.
cudaError_t launch_stream_copy(const float *x, float *y, std::int64_t n, int blocks, int threads,
                               cudaStream_t stream);

} // namespace bench
