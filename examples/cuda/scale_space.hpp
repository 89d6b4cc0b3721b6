#pragma once
// The tuned scale kernel: its config space, key, prune rule and launcher, shared by the example
// and the benchmarks.

#include "scale_kernel.hpp"

#include <tunekit/cuda/error.hpp>
#include <tunekit/tunekit.hpp>

#include <algorithm>
#include <cstdint>

namespace example {

/// BLOCK (elements per block) x threads per block, keeping the pairs the kernel is compiled for
/// (4 to 64 elements per thread). The first config is the stable default.
inline tunekit::config_space scale_space() {
  return tunekit::config_space::product(
      {{"BLOCK", {512, 1024, 2048, 4096, 8192}}, {"threads", {64, 128, 256, 512}}},
      {[](const tunekit::config &c) {
        return scale_config_supported(c.get_int("BLOCK"), c.get_int("threads"));
      }});
}

/// The key: the length is all that changes the winner (alpha does not, pointers must not).
inline tunekit::key scale_key(const float * /*x*/, float * /*y*/, float /*alpha*/, std::int64_t n,
                              cudaStream_t /*stream*/) {
  return tunekit::key{n};
}

/// A block larger than the input only adds idle threads; the smallest block is always kept.
inline bool scale_prune(const tunekit::config &c, const float * /*x*/, float * /*y*/,
                        float /*alpha*/, std::int64_t n, cudaStream_t /*stream*/) {
  return c.get_int("BLOCK") <= std::max<std::int64_t>(n, 512);
}

/// The tuned function: the config arrives as the last argument.
inline void scale(const float *x, float *y, float alpha, std::int64_t n, cudaStream_t stream,
                  const tunekit::config &c) {
  tunekit::cuda::check(launch_scale(x, y, alpha, n, static_cast<int>(c.get_int("BLOCK")),
                                    static_cast<int>(c.get_int("threads")), stream),
                       "scale");
}

} // namespace example
