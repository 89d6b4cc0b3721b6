#include "gemm_kernels.hpp"

#include <cuda_runtime.h>

#include <array>

namespace example {

namespace {

// Thread (tx, ty) owns rows {r * BM/RM + ty * 4 + i} and columns {s * BN/RN + tx * 4 + j} of the
// block's tile (RM = TM/4 row groups of 4, RN = TN/4 column groups): neighbouring threads read
// neighbouring float4 of shared memory, so the fragment loads are free of bank conflicts.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    sgemm_tiled(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c,
                int n, int k) {
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "fragments are read as float4");
  static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles must cover the block tile");
  constexpr int threads = (BM / TM) * (BN / TN);
  constexpr int tx_count = BN / TN;
  constexpr int rm = TM / 4;
  constexpr int rn = TN / 4;
  constexpr int a_vectors = BM * BK / 4;
  constexpr int b_vectors = BK * BN / 4;
  constexpr int a_loads = (a_vectors + threads - 1) / threads;
  constexpr int b_loads = (b_vectors + threads - 1) / threads;

  __shared__ __align__(16) float as[2][BK][BM]; // A transposed: as[kk][row]
  __shared__ __align__(16) float bs[2][BK][BN];

  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % tx_count;
  const int ty = tid / tx_count;
  const float *a_tile = a + static_cast<std::size_t>(blockIdx.y) * BM * k;
  const float *b_tile = b + static_cast<std::size_t>(blockIdx.x) * BN;

  float4 a_next[a_loads];
  float4 b_next[b_loads];
  auto load = [&](int k0) {
#pragma unroll
    for (int l = 0; l < a_loads; ++l) {
      const int v = tid + l * threads;
      if (a_vectors % threads == 0 || v < a_vectors) {
        const int row = v / (BK / 4);
        const int col = (v % (BK / 4)) * 4;
        a_next[l] = *reinterpret_cast<const float4 *>(a_tile + static_cast<std::size_t>(row) * k +
                                                      k0 + col);
      }
    }
#pragma unroll
    for (int l = 0; l < b_loads; ++l) {
      const int v = tid + l * threads;
      if (b_vectors % threads == 0 || v < b_vectors) {
        const int row = v / (BN / 4);
        const int col = (v % (BN / 4)) * 4;
        b_next[l] = *reinterpret_cast<const float4 *>(b_tile +
                                                      static_cast<std::size_t>(k0 + row) * n + col);
      }
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int l = 0; l < a_loads; ++l) {
      const int v = tid + l * threads;
      if (a_vectors % threads == 0 || v < a_vectors) {
        const int row = v / (BK / 4);
        const int col = (v % (BK / 4)) * 4;
        as[buf][col + 0][row] = a_next[l].x;
        as[buf][col + 1][row] = a_next[l].y;
        as[buf][col + 2][row] = a_next[l].z;
        as[buf][col + 3][row] = a_next[l].w;
      }
    }
#pragma unroll
    for (int l = 0; l < b_loads; ++l) {
      const int v = tid + l * threads;
      if (b_vectors % threads == 0 || v < b_vectors) {
        const int row = v / (BN / 4);
        const int col = (v % (BN / 4)) * 4;
        *reinterpret_cast<float4 *>(&bs[buf][row][col]) = b_next[l];
      }
    }
  };

  float acc[TM][TN] = {};
  load(0);
  store(0);
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < k; k0 += BK) {
    const bool more = k0 + BK < k;
    if (more) {
      load(k0 + BK); // global loads in flight while this slice is multiplied
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float af[TM];
      float bf[TN];
#pragma unroll
      for (int r = 0; r < rm; ++r) {
        const float4 v = *reinterpret_cast<const float4 *>(&as[buf][kk][r * (BM / rm) + ty * 4]);
        af[r * 4 + 0] = v.x;
        af[r * 4 + 1] = v.y;
        af[r * 4 + 2] = v.z;
        af[r * 4 + 3] = v.w;
      }
#pragma unroll
      for (int s = 0; s < rn; ++s) {
        const float4 v = *reinterpret_cast<const float4 *>(&bs[buf][kk][s * (BN / rn) + tx * 4]);
        bf[s * 4 + 0] = v.x;
        bf[s * 4 + 1] = v.y;
        bf[s * 4 + 2] = v.z;
        bf[s * 4 + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
        }
      }
    }
    if (more) {
      // The other buffer was last read before the previous barrier.
      store(buf ^ 1);
      __syncthreads();
      buf ^= 1;
    }
  }

  float *c_tile =
      c + static_cast<std::size_t>(blockIdx.y) * BM * n + static_cast<std::size_t>(blockIdx.x) * BN;
#pragma unroll
  for (int r = 0; r < rm; ++r) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = r * (BM / rm) + ty * 4 + i;
#pragma unroll
      for (int s = 0; s < rn; ++s) {
        const int col = s * (BN / rn) + tx * 4;
        const float *v = &acc[r * 4 + i][s * 4];
        *reinterpret_cast<float4 *>(c_tile + static_cast<std::size_t>(row) * n + col) =
            make_float4(v[0], v[1], v[2], v[3]);
      }
    }
  }
}

using launcher = void (*)(const float *, const float *, float *, int, int, int, cudaStream_t);

template <int BM, int BN, int BK, int TM, int TN>
void launch(const float *a, const float *b, float *c, int m, int n, int k, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(n / BN), static_cast<unsigned>(m / BM));
  sgemm_tiled<BM, BN, BK, TM, TN><<<grid, (BM / TM) * (BN / TN), 0, stream>>>(a, b, c, n, k);
}

struct entry {
  gemm_variant variant;
  launcher fn;
};

template <int BM, int BN, int BK, int TM, int TN> constexpr entry make_entry() {
  return {{BM, BN, BK, TM, TN, (BM / TM) * (BN / TN)}, &launch<BM, BN, BK, TM, TN>};
}

// The instantiations compiled in; the first is the default config.
constexpr std::array entries{
    make_entry<64, 64, 8, 4, 4>(),    make_entry<128, 64, 8, 8, 8>(),
    make_entry<64, 128, 8, 8, 8>(),   make_entry<128, 128, 8, 8, 8>(),
    make_entry<128, 128, 16, 8, 8>(), make_entry<128, 128, 8, 4, 8>(),
    make_entry<128, 256, 8, 8, 16>(), make_entry<256, 128, 8, 16, 8>(),
};

constexpr std::array<gemm_variant, entries.size()> variants = [] {
  std::array<gemm_variant, entries.size()> out{};
  for (std::size_t i = 0; i < entries.size(); ++i) {
    out[i] = entries[i].variant;
  }
  return out;
}();

} // namespace

std::size_t gemm_variant_count() noexcept { return variants.size(); }

const gemm_variant &gemm_variant_at(std::size_t index) noexcept { return variants[index]; }

bool gemm_fits(const gemm_variant &v, int m, int n, int k) noexcept {
  return m > 0 && n > 0 && k > 0 && m % v.bm == 0 && n % v.bn == 0 && k % v.bk == 0 && n % 4 == 0 &&
         k % 4 == 0;
}

cudaError_t launch_gemm(std::size_t index, const float *a, const float *b, float *c, int m, int n,
                        int k, cudaStream_t stream) {
  if (index >= entries.size() || !gemm_fits(entries[index].variant, m, n, k)) {
    return cudaErrorInvalidValue;
  }
  entries[index].fn(a, b, c, m, n, k, stream);
  return cudaGetLastError();
}

} // namespace example
