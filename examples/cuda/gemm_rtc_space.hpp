#pragma once
// The runtime-compiled GEMM of gemm_rtc_kernel.cuh: its CLBlast Xgemm search space, key, prune
// rule and launcher, shared by the example, the benchmarks and the tests.

#include <tunekit/cuda/rtc.hpp>
#include <tunekit/tunekit.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace example {

/// Which Xgemm space to tune over.
enum class xgemm_space_kind {
  /// The `tune_params` of the measured CLBlast spaces (shared/data/search-spaces/GEMM_*.json.gz):
  /// KWG = 32, KWI = 2, STRM = STRN = 0; 17,956 configs pass the constraints.
  clblast,
  /// CLBlast's wider tuner space: also KWG 16, KWI 8 and strided STRM / STRN.
  extended,
};

/// The parameters in the measured spaces' order (`tune_params_keys`).
inline std::vector<tunekit::parameter> xgemm_parameters(xgemm_space_kind kind) {
  const bool wide = kind == xgemm_space_kind::extended;
  using values = std::vector<tunekit::value>;
  return {
      {"MWG", values{16, 32, 64, 128}},
      {"NWG", values{16, 32, 64, 128}},
      {"KWG", wide ? values{16, 32} : values{32}},
      {"MDIMC", values{8, 16, 32}},
      {"NDIMC", values{8, 16, 32}},
      {"MDIMA", values{8, 16, 32}},
      {"NDIMB", values{8, 16, 32}},
      {"KWI", wide ? values{2, 8} : values{2}},
      {"VWM", values{1, 2, 4, 8}},
      {"VWN", values{1, 2, 4, 8}},
      {"STRM", wide ? values{0, 1} : values{0}},
      {"STRN", wide ? values{0, 1} : values{0}},
      {"SA", values{0, 1}},
      {"SB", values{0, 1}},
      {"PRECISION", values{32}},
  };
}

/// CLBlast's constraints on the Xgemm parameters (the kernel refuses others at compile time).
inline bool xgemm_valid(const tunekit::config &c) {
  const auto mwg = c.get_int("MWG");
  const auto nwg = c.get_int("NWG");
  const auto kwg = c.get_int("KWG");
  const auto mdimc = c.get_int("MDIMC");
  const auto ndimc = c.get_int("NDIMC");
  const auto mdima = c.get_int("MDIMA");
  const auto ndimb = c.get_int("NDIMB");
  const auto vwm = c.get_int("VWM");
  const auto vwn = c.get_int("VWN");
  return kwg % c.get_int("KWI") == 0 && mwg % (mdimc * vwm) == 0 && nwg % (ndimc * vwn) == 0 &&
         mwg % (mdima * vwm) == 0 && nwg % (ndimb * vwn) == 0 &&
         kwg % ((mdimc * ndimc) / mdima) == 0 && kwg % ((mdimc * ndimc) / ndimb) == 0;
}

inline tunekit::config_space xgemm_space(xgemm_space_kind kind = xgemm_space_kind::clblast) {
  return tunekit::config_space::product(xgemm_parameters(kind), {xgemm_valid});
}

/// What a launch needs from a config, read once per config.
struct xgemm_tiles {
  unsigned mwg = 0;
  unsigned nwg = 0;
  unsigned mdimc = 0;
  unsigned ndimc = 0;
  unsigned shared_bytes = 0; // the staged tiles' dynamic shared memory
};

/// The dynamic shared memory of the kernel's staged tiles (as gemm_rtc_kernel.cuh lays them out):
/// two buffers of the SA / SB tiles where they fit 64 KiB, else one.
inline unsigned xgemm_shared_bytes(const tunekit::config &c) {
  const auto kwg = c.get_int("KWG");
  const auto stage =
      (c.get_int("SA") * kwg * c.get_int("MWG") + c.get_int("SB") * kwg * c.get_int("NWG")) * 4;
  return static_cast<unsigned>(2 * stage <= 65536 ? 2 * stage : stage);
}

inline xgemm_tiles xgemm_tiles_of(const tunekit::config &c) {
  return xgemm_tiles{static_cast<unsigned>(c.get_int("MWG")),
                     static_cast<unsigned>(c.get_int("NWG")),
                     static_cast<unsigned>(c.get_int("MDIMC")),
                     static_cast<unsigned>(c.get_int("NDIMC")), xgemm_shared_bytes(c)};
}

/// Grid (M / MWG, N / NWG), block (MDIMC, NDIMC), the staged tiles' shared memory.
inline tunekit::cuda::launch_dims xgemm_dims(const xgemm_tiles &t, const float * /*a*/,
                                             const float * /*b*/, float * /*c*/, int m, int n,
                                             int /*k*/, cudaStream_t /*stream*/) {
  return tunekit::cuda::launch_dims{
      .grid = dim3(static_cast<unsigned>(m) / t.mwg, static_cast<unsigned>(n) / t.nwg),
      .block = dim3(t.mdimc, t.ndimc),
      .shared_bytes = t.shared_bytes};
}

/// The kernel's source file and entry point; every config field becomes a `-D` definition.
inline tunekit::cuda::kernel_definition xgemm_definition(const std::filesystem::path &source) {
  tunekit::cuda::kernel_definition d;
  d.source = tunekit::cuda::kernel_source::from_file(source);
  d.entry = "xgemm";
  return d;
}

/// The launcher `(a, b, c, m, n, k, stream, config)` tuned by the example and the benchmark.
using xgemm_kernel = tunekit::cuda::runtime_kernel<xgemm_tiles, const float *, const float *,
                                                   float *, int, int, int, cudaStream_t>;

inline xgemm_kernel make_xgemm(std::shared_ptr<tunekit::cuda::kernel_program> program) {
  return xgemm_kernel(std::move(program), xgemm_tiles_of, xgemm_dims);
}

/// The key: the shape.
inline tunekit::key xgemm_key(const float * /*a*/, const float * /*b*/, float * /*c*/, int m, int n,
                              int k, cudaStream_t /*stream*/) {
  return tunekit::key{m, n, k};
}

/// Only tiles that divide the shape.
inline bool xgemm_fits(const tunekit::config &c, int m, int n, int k) {
  return m % c.get_int("MWG") == 0 && n % c.get_int("NWG") == 0 && k % c.get_int("KWG") == 0;
}

inline bool xgemm_prune(const tunekit::config &c, const float * /*a*/, const float * /*b*/,
                        float * /*c*/, int m, int n, int k, cudaStream_t /*stream*/) {
  return xgemm_fits(c, m, n, k);
}

/// The candidates `prune` keeps for a shape, in the space's order: what the tuner will measure,
/// so what to hand `prepare`.
inline std::vector<tunekit::config> xgemm_candidates(const tunekit::config_space &space, int m,
                                                     int n, int k) {
  std::vector<tunekit::config> out;
  for (const auto &c : space) {
    if (xgemm_fits(c, m, n, k)) {
      out.push_back(c);
    }
  }
  return out;
}

/// Every (size / limit)-th config, so that a limited run still spans the whole space; all of
/// them when `limit` is 0 or not smaller than the list.
inline std::vector<tunekit::config> spread(const std::vector<tunekit::config> &configs,
                                           std::size_t limit) {
  if (limit == 0 || configs.size() <= limit) {
    return configs;
  }
  std::vector<tunekit::config> out;
  const double stride = static_cast<double>(configs.size()) / static_cast<double>(limit);
  for (std::size_t i = 0; i < limit; ++i) {
    out.push_back(configs[static_cast<std::size_t>(static_cast<double>(i) * stride)]);
  }
  return out;
}

} // namespace example
