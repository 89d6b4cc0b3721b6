// The runtime-compiled GEMM kernel (examples/cuda/gemm_rtc_kernel.cuh) compiled by the host
// compiler for one config (given as -D definitions with TK_ENTRY and TK_RUN naming the functions),
// and run on the CPU with one thread per CUDA thread and a barrier for __syncthreads, so that its
// indexing is checked where there is no GPU. Slow and only for small shapes.

#include <barrier>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

namespace {

struct emulated_dim3 {
  unsigned x = 0;
  unsigned y = 0;
  unsigned z = 0;
};
thread_local emulated_dim3 threadIdx;
thread_local emulated_dim3 blockIdx;
std::barrier<> *block_barrier = nullptr;

void __syncthreads() { block_barrier->arrive_and_wait(); }

} // namespace

#define TK_HOST_EMULATION 1
#define TK_DEVICE inline
#define __global__
#define __launch_bounds__(x)
#define __align__(n) __attribute__((aligned(n)))
// One block runs at a time, so function-static arrays are the block's shared memory.
#define __shared__ static
#define TK_DYNAMIC_SHARED(name, floats) static __attribute__((aligned(16))) float name[floats]
#define xgemm TK_ENTRY
#include "gemm_rtc_kernel.cuh"
#undef xgemm

void TK_RUN(const float *a, const float *b, float *c, int m, int n, int k) {
  for (unsigned by = 0; by < static_cast<unsigned>(n / NWG); ++by) {
    for (unsigned bx = 0; bx < static_cast<unsigned>(m / MWG); ++bx) {
      std::barrier<> barrier(MDIMC * NDIMC);
      block_barrier = &barrier;
      std::vector<std::thread> threads;
      for (unsigned ty = 0; ty < NDIMC; ++ty) {
        for (unsigned tx = 0; tx < MDIMC; ++tx) {
          threads.emplace_back([=] {
            threadIdx = {tx, ty, 0};
            blockIdx = {bx, by, 0};
            TK_ENTRY(a, b, c, m, n, k);
          });
        }
      }
      for (auto &t : threads) {
        t.join();
      }
    }
  }
}
