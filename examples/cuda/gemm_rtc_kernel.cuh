// A register-tiled fp32 GEMM compiled at run time (NVRTC), one program per config. Its parameters
// are those of CLBlast's Xgemm kernel, with the same meanings and constraints, so that its H200
// search space can be set beside the A100, V100 and TITAN RTX spaces measured for CLBlast:
//
//   MWG, NWG, KWG   tile of C (MWG x NWG) computed by one block, and the K slice per iteration
//   MDIMC, NDIMC    threads of a block along M and N (the block is MDIMC x NDIMC)
//   MDIMA, NDIMB    the same threads re-shaped to load the A (MDIMA x KDIMA) and B tiles
//   KWI             unroll factor of the loop over the K slice
//   VWM, VWN        vector width of loads and stores along M (A, C) and along N (B)
//   STRM, STRN      0: a thread's elements along M (N) are contiguous; 1: strided by the threads
//   SA, SB          1: stage the A (B) tile in shared memory; 0: read it from global memory
//   PRECISION       32 (fp32)
//
// Layout, as CLBlast's kernel sees its operands (M and N contiguous):
//   a[k * M + m]  (A is K x M),  b[k * N + n]  (B is K x N),  c[n * M + m]  (C is M x N, column
//   major), and C[m][n] = sum_k A[k][m] * B[k][n].
// The tile must divide the problem: M % MWG == 0, N % NWG == 0, K % KWG == 0.
//
// The launch: grid (M / MWG, N / NWG), block (MDIMC, NDIMC), and the staged tiles in dynamic
// shared memory: buffers * (SA * KWG * MWG + SB * KWG * NWG) * 4 bytes (xgemm_shared_bytes in
// gemm_rtc_space.hpp says the same), more than 48 KiB for 128 x 128 tiles.
//
// With SA or SB the next K slice is copied from global to shared memory while the current one is
// multiplied out of shared memory. Where two copies of the staged tiles fit TK_SHARED_LIMIT bytes
// (64 KiB unless defined, what a block may opt in to from sm_75 on; every config of the space
// fits), the shared tiles are double-buffered, one barrier per slice: with TK_ASYNC_COPY (the
// default from sm_80 on) the next slice goes straight into the other buffer (cp.async, no registers
// held across the multiply); without it, through registers, stored into the other buffer after the
// current slice is multiplied. Otherwise one buffer, two barriers per slice, the next slice held in
// registers. Each thread copies the same elements on every path, as MDIMA / NDIMB and VWM / VWN
// say.

#ifndef TK_HOST_EMULATION
#define TK_DEVICE __device__ __forceinline__
// An array of `floats` floats in the block's dynamic shared memory.
#define TK_DYNAMIC_SHARED(name, floats) extern __shared__ __align__(16) float name[]
#endif

#if !defined(MWG) || !defined(NWG) || !defined(KWG) || !defined(MDIMC) || !defined(NDIMC) ||       \
    !defined(MDIMA) || !defined(NDIMB) || !defined(KWI) || !defined(VWM) || !defined(VWN) ||       \
    !defined(STRM) || !defined(STRN) || !defined(SA) || !defined(SB)
#error "every Xgemm parameter must be defined (-DMWG=... -DSB=...)"
#endif
#ifndef PRECISION
#define PRECISION 32
#endif
#ifndef TK_SHARED_LIMIT
#define TK_SHARED_LIMIT 65536
#endif
#ifndef TK_ASYNC_COPY
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define TK_ASYNC_COPY 0 // no cp.async before sm_80
#else
#define TK_ASYNC_COPY 1
#endif
#endif

namespace tk_gemm {

constexpr int threads = MDIMC * NDIMC;
constexpr int mwi = MWG / MDIMC; // elements of C per thread along M
constexpr int nwi = NWG / NDIMC; // and along N
constexpr int kdima = threads / MDIMA;
constexpr int kdimb = threads / NDIMB;
constexpr int mwa = MWG / MDIMA; // elements of the A tile a thread loads along M
constexpr int kwa = KWG / kdima; // and along K
constexpr int nwb = NWG / NDIMB;
constexpr int kwb = KWG / kdimb;
constexpr bool staged = SA || SB; // a tile goes through shared memory
constexpr int stage_bytes = (SA * KWG * MWG + SB * KWG * NWG) * 4; // one copy of the tiles
constexpr int buffers = staged && 2 * stage_bytes <= TK_SHARED_LIMIT ? 2 : 1;
constexpr bool async_copy = TK_ASYNC_COPY && buffers == 2;

static_assert(PRECISION == 32, "this kernel is fp32 only (PRECISION=32)");
static_assert(KWG % KWI == 0, "KWG % KWI == 0");
static_assert(MWG % (MDIMC * VWM) == 0, "MWG % (MDIMC * VWM) == 0");
static_assert(NWG % (NDIMC * VWN) == 0, "NWG % (NDIMC * VWN) == 0");
static_assert(MWG % (MDIMA * VWM) == 0, "MWG % (MDIMA * VWM) == 0");
static_assert(NWG % (NDIMB * VWN) == 0, "NWG % (NDIMB * VWN) == 0");
static_assert(threads % MDIMA == 0 && KWG % kdima == 0, "KWG % ((MDIMC * NDIMC) / MDIMA) == 0");
static_assert(threads % NDIMB == 0 && KWG % kdimb == 0, "KWG % ((MDIMC * NDIMC) / NDIMB) == 0");
static_assert(VWM == 1 || VWM == 2 || VWM == 4 || VWM == 8, "VWM is 1, 2, 4 or 8");
static_assert(VWN == 1 || VWN == 2 || VWN == 4 || VWN == 8, "VWN is 1, 2, 4 or 8");

// W floats read and written as one (or, for 8, two) vector accesses.
template <int W> struct alignas(W * 4 > 16 ? 16 : W * 4) vec { float v[W]; };
using vm = vec<VWM>;
using vn = vec<VWN>;

TK_DEVICE vm load_m(const float *p) { return *reinterpret_cast<const vm *>(p); }
TK_DEVICE vn load_n(const float *p) { return *reinterpret_cast<const vn *>(p); }

// The vector index, within the tile, of a thread's i-th vector (STRM / STRN).
TK_DEVICE int m_index(int i, int thread, int per_thread, int dim) {
  return STRM == 0 ? i + thread * per_thread : thread + i * dim;
}
TK_DEVICE int n_index(int i, int thread, int per_thread, int dim) {
  return STRN == 0 ? i + thread * per_thread : thread + i * dim;
}

// f(i, j, kk, offset) for the vectors a thread loads of a tile (the A tile: W = VWM, per_thread =
// mwa, k_per_thread = kwa, dim = MDIMA, strided = STRM): its [i][j]-th, at row kk of the slice and
// `offset` floats into the row; (l0, l1): the thread as dim x (threads / dim).
template <int W, int per_thread, int k_per_thread, int dim, bool strided, class F>
TK_DEVICE void each_vector(int l0, int l1, F f) {
#pragma unroll
  for (int i = 0; i < per_thread / W; ++i) {
#pragma unroll
    for (int j = 0; j < k_per_thread; ++j) {
      f(i, j, j + l1 * k_per_thread, (strided ? l0 + i * dim : i + l0 * (per_thread / W)) * W);
    }
  }
}
template <class F> TK_DEVICE void each_a(int la0, int la1, F f) {
  each_vector<VWM, mwa, kwa, MDIMA, STRM != 0>(la0, la1, f);
}
template <class F> TK_DEVICE void each_b(int lb0, int lb1, F f) {
  each_vector<VWN, nwb, kwb, NDIMB, STRN != 0>(lb0, lb1, f);
}

// Global -> shared memory without going through registers (cp.async): cp_async copies 4, 8 or 16
// bytes, copy_async W floats, and copy_wait() waits for the thread's copies. On the host
// (emulation), plain copies.
template <int Bytes> TK_DEVICE void cp_async(float *dst, const float *src) {
#ifdef __CUDA_ARCH__
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if (Bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(src) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(to), "l"(src), "n"(Bytes)
                 : "memory");
  }
#else
  *reinterpret_cast<vec<Bytes / 4> *>(dst) = *reinterpret_cast<const vec<Bytes / 4> *>(src);
#endif
}
template <int W> TK_DEVICE void copy_async(float *dst, const float *src) {
  constexpr int chunk = W > 4 ? 4 : W; // at most 16 bytes a copy
#pragma unroll
  for (int i = 0; i < W; i += chunk) {
    cp_async<chunk * 4>(dst + i, src + i);
  }
}
TK_DEVICE void copy_wait() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

} // namespace tk_gemm

extern "C" __global__ void __launch_bounds__(MDIMC *NDIMC)
    xgemm(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int m,
          int n, int k) {
  using namespace tk_gemm;
  const int tid_m = static_cast<int>(threadIdx.x);
  const int tid_n = static_cast<int>(threadIdx.y);
  const int tid = tid_n * MDIMC + tid_m;
  const float *a_tile = a + static_cast<long long>(blockIdx.x) * MWG; // column block_m of A
  const float *b_tile = b + static_cast<long long>(blockIdx.y) * NWG;

#if SA || SB
  // The staged tiles: A's buffers first, then B's.
  TK_DYNAMIC_SHARED(tiles, buffers * (SA * KWG * MWG + SB * KWG * NWG));
#endif
#if SA
  auto alm = reinterpret_cast<float(*)[KWG * MWG]>(tiles); // alm[buf][kk * MWG + mm]
  const int la0 = tid % MDIMA;
  const int la1 = tid / MDIMA;
  vm a_reg[mwa / VWM][kwa];
#endif
#if SB
  auto blm = reinterpret_cast<float(*)[KWG * NWG]>(tiles + buffers * SA * KWG * MWG);
  const int lb0 = tid % NDIMB;
  const int lb1 = tid / NDIMB;
  vn b_reg[nwb / VWN][kwb];
#endif

  // The slice at k0: global -> registers (fetch), registers -> shared buffer `buf` (stage), or
  // global -> shared buffer `buf` (copy).
  auto fetch = [&](int k0) {
#if SA
    each_a(la0, la1, [&](int i, int j, int kg, int off) {
      a_reg[i][j] = load_m(a_tile + static_cast<long long>(k0 + kg) * m + off);
    });
#endif
#if SB
    each_b(lb0, lb1, [&](int i, int j, int kg, int off) {
      b_reg[i][j] = load_n(b_tile + static_cast<long long>(k0 + kg) * n + off);
    });
#endif
    static_cast<void>(k0);
  };
  auto stage = [&](int buf) {
#if SA
    each_a(la0, la1, [&](int i, int j, int kg, int off) {
      *reinterpret_cast<vm *>(&alm[buf][kg * MWG + off]) = a_reg[i][j];
    });
#endif
#if SB
    each_b(lb0, lb1, [&](int i, int j, int kg, int off) {
      *reinterpret_cast<vn *>(&blm[buf][kg * NWG + off]) = b_reg[i][j];
    });
#endif
    static_cast<void>(buf);
  };
  auto copy = [&](int k0, int buf) {
#if SA
    each_a(la0, la1, [&](int, int, int kg, int off) {
      copy_async<VWM>(&alm[buf][kg * MWG + off],
                      a_tile + static_cast<long long>(k0 + kg) * m + off);
    });
#endif
#if SB
    each_b(lb0, lb1, [&](int, int, int kg, int off) {
      copy_async<VWN>(&blm[buf][kg * NWG + off],
                      b_tile + static_cast<long long>(k0 + kg) * n + off);
    });
#endif
    static_cast<void>(k0);
    static_cast<void>(buf);
  };

  float acc[nwi][mwi];
#pragma unroll
  for (int j = 0; j < nwi; ++j) {
#pragma unroll
    for (int i = 0; i < mwi; ++i) {
      acc[j][i] = 0.0f;
    }
  }

  // The K slice at k0 times the block's tiles: A and B from shared buffer `buf` (SA, SB) or from
  // global memory.
  auto multiply = [&](int k0, int buf) {
    for (int pwi = 0; pwi < KWG; pwi += KWI) {
#pragma unroll
      for (int pit = 0; pit < KWI; ++pit) {
        const int kk = pwi + pit;
        vm apm[mwi / VWM];
        vn bpm[nwi / VWN];
#pragma unroll
        for (int mi = 0; mi < mwi / VWM; ++mi) {
          const int mg = m_index(mi, tid_m, mwi / VWM, MDIMC);
#if SA
          apm[mi] = load_m(&alm[buf][kk * MWG + mg * VWM]);
#else
          apm[mi] = load_m(a_tile + static_cast<long long>(k0 + kk) * m + mg * VWM);
#endif
        }
#pragma unroll
        for (int ni = 0; ni < nwi / VWN; ++ni) {
          const int ng = n_index(ni, tid_n, nwi / VWN, NDIMC);
#if SB
          bpm[ni] = load_n(&blm[buf][kk * NWG + ng * VWN]);
#else
          bpm[ni] = load_n(b_tile + static_cast<long long>(k0 + kk) * n + ng * VWN);
#endif
        }
#pragma unroll
        for (int ni = 0; ni < nwi / VWN; ++ni) {
#pragma unroll
          for (int j = 0; j < VWN; ++j) {
#pragma unroll
            for (int mi = 0; mi < mwi / VWM; ++mi) {
#pragma unroll
              for (int i = 0; i < VWM; ++i) {
                acc[ni * VWN + j][mi * VWM + i] =
                    fmaf(apm[mi].v[i], bpm[ni].v[j], acc[ni * VWN + j][mi * VWM + i]);
              }
            }
          }
        }
      }
    }
    static_cast<void>(k0);
    static_cast<void>(buf);
  };

  if (async_copy) {
    copy(0, 0);
    int buf = 0;
    for (int k0 = 0; k0 < k; k0 += KWG) {
      copy_wait();     // this thread's share of the slice has landed
      __syncthreads(); // and everyone's; everyone is done with the other buffer too
      if (k0 + KWG < k) {
        copy(k0 + KWG, buf ^ 1); // in flight while this slice is multiplied
      }
      multiply(k0, buf);
      buf ^= 1;
    }
  } else {
    fetch(0);
    if (buffers == 2) {
      stage(0);
      __syncthreads();
    }
    int buf = 0;
    for (int k0 = 0; k0 < k; k0 += KWG) {
      const bool more = k0 + KWG < k;
      if (staged && buffers == 1) {
        stage(0);
        __syncthreads();
      }
      if (staged && more) {
        fetch(k0 + KWG); // in flight while this slice is multiplied
      }
      multiply(k0, buf);
      if (staged) {
        if (buffers == 2 && more) {
          stage(buf ^ 1); // its last readers passed the previous barrier
        }
        // Double buffers: the next slice is staged. One buffer: everyone is done with this slice
        // before the next one is staged.
        __syncthreads();
        buf ^= buffers - 1;
      }
    }
  }

  float *c_tile =
      c + static_cast<long long>(blockIdx.y) * NWG * m + static_cast<long long>(blockIdx.x) * MWG;
#pragma unroll
  for (int ni = 0; ni < nwi / VWN; ++ni) {
#pragma unroll
    for (int j = 0; j < VWN; ++j) {
      const int col = n_index(ni, tid_n, nwi / VWN, NDIMC) * VWN + j;
#pragma unroll
      for (int mi = 0; mi < mwi / VWM; ++mi) {
        const int mg = m_index(mi, tid_m, mwi / VWM, MDIMC);
        vm out;
#pragma unroll
        for (int i = 0; i < VWM; ++i) {
          out.v[i] = acc[ni * VWN + j][mi * VWM + i];
        }
        *reinterpret_cast<vm *>(c_tile + static_cast<long long>(col) * m + mg * VWM) = out;
      }
    }
  }
}
