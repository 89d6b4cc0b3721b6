#pragma once
// The tuned GEMM: its config space (the instantiations compiled in), key, prune rule and launcher,
// shared by the example and the benchmarks.

#include "gemm_kernels.hpp"

#include <tunekit/cuda/error.hpp>
#include <tunekit/tunekit.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace example {

/// The tile sizes of instantiation `i` as a config; its template id names the instantiation.
inline tunekit::config gemm_config(const gemm_variant &v) {
  tunekit::config c{{"BM", v.bm}, {"BN", v.bn}, {"BK", v.bk}, {"TM", v.tm}, {"TN", v.tn}};
  c.set_template_id("sgemm_" + std::to_string(v.bm) + "x" + std::to_string(v.bn) + "x" +
                    std::to_string(v.bk) + "_" + std::to_string(v.tm) + "x" + std::to_string(v.tn));
  return c;
}

/// One config per instantiation compiled in, in the order they were compiled (the first is the
/// default).
inline tunekit::config_space gemm_space() {
  std::vector<tunekit::config> configs;
  for (std::size_t i = 0; i < gemm_variant_count(); ++i) {
    configs.push_back(gemm_config(gemm_variant_at(i)));
  }
  return tunekit::config_space(std::move(configs));
}

/// The instantiation a config names, or gemm_variant_count() when none does.
inline std::size_t gemm_index(const tunekit::config &c) {
  const auto bm = c.get_int("BM");
  const auto bn = c.get_int("BN");
  const auto bk = c.get_int("BK");
  const auto tm = c.get_int("TM");
  const auto tn = c.get_int("TN");
  for (std::size_t i = 0; i < gemm_variant_count(); ++i) {
    const gemm_variant &v = gemm_variant_at(i);
    if (v.bm == bm && v.bn == bn && v.bk == bk && v.tm == tm && v.tn == tn) {
      return i;
    }
  }
  return gemm_variant_count();
}

/// The key: the shape (pointers must not be part of it).
inline tunekit::key gemm_key(const float * /*a*/, const float * /*b*/, float * /*c*/, int m, int n,
                             int k, cudaStream_t /*stream*/) {
  return tunekit::key{m, n, k};
}

/// Only instantiations whose tiles divide the shape can run it.
inline bool gemm_prune(const tunekit::config &c, const float * /*a*/, const float * /*b*/,
                       float * /*c*/, int m, int n, int k, cudaStream_t /*stream*/) {
  const std::size_t i = gemm_index(c);
  return i < gemm_variant_count() && gemm_fits(gemm_variant_at(i), m, n, k);
}

/// The tuned function: C = A * B with the config's instantiation.
inline void gemm(const float *a, const float *b, float *c, int m, int n, int k, cudaStream_t stream,
                 const tunekit::config &cfg) {
  tunekit::cuda::check(launch_gemm(gemm_index(cfg), a, b, c, m, n, k, stream), "gemm");
}

} // namespace example
