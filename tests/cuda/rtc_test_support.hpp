#pragma once
// Kernel sources and programs shared by the runtime-compilation tests and their helper process.

#include <tunekit/cuda/rtc.hpp>

#include <memory>
#include <string>
#include <utility>

namespace tunekit::cuda::test {

/// y[i] = alpha * x[i], ELEMS elements per thread; a compile-time check refuses ELEMS above 16, so
/// that a config can fail to compile on purpose.
inline const char *scale_source = R"(
#include "scale_limits.h"
static_assert(ELEMS <= MAX_ELEMS, "ELEMS is too large for this kernel");
extern "C" __global__ void scale(const float *x, float *y, float alpha, int n) {
  const int first = (blockIdx.x * blockDim.x + threadIdx.x) * ELEMS;
#pragma unroll
  for (int e = 0; e < ELEMS; ++e) {
    const int i = first + e;
    if (i < n) {
      y[i] = alpha * x[i];
    }
  }
}
)";

/// A template entry point: the config's TILE becomes its template argument.
inline const char *fill_source = R"(
template <int TILE> __global__ void fill(float *out, int n) {
  const int i = blockIdx.x * TILE + threadIdx.x;
  if (threadIdx.x < TILE && i < n) {
    out[i] = static_cast<float>(TILE);
  }
}
)";

inline kernel_definition scale_definition(std::string limits = "#define MAX_ELEMS 16\n") {
  kernel_definition d;
  d.source = kernel_source{"scale.cu", scale_source};
  d.entry = "scale";
  d.headers = {named_header{"scale_limits.h", std::move(limits)}};
  return d;
}

inline kernel_definition fill_definition() {
  kernel_definition d;
  d.source = kernel_source{"fill.cu", fill_source};
  d.entry = "fill";
  d.template_args = [](const config &c) {
    return std::vector<std::string>{std::to_string(c.get_int("TILE"))};
  };
  // TILE is a template argument, not a macro.
  d.definitions = [](const config &) { return std::vector<definition>{}; };
  return d;
}

} // namespace tunekit::cuda::test
