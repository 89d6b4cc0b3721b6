// The runtime-compiled GEMM kernel run on the CPU (rtc_gemm_emulation.cpp) for configs that
// cover every Xgemm parameter (shared or global A and B, every vector width, contiguous and
// strided threads, 64 to 1024 threads, double-buffered shared tiles (128 x 128 ones beyond 48 KiB)
// and the single buffer where two do not fit the limit), against a plain triple loop. M != N, so a
// transposed index cannot pass; K spans several slices, so each shared buffer is reused.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#define TK_EMULATED(name) void run_##name(const float *, const float *, float *, int, int, int);
TK_EMULATED(e1)
TK_EMULATED(e2)
TK_EMULATED(e3)
TK_EMULATED(e4)
TK_EMULATED(e5)
TK_EMULATED(e6)
TK_EMULATED(e7)
TK_EMULATED(e8)
TK_EMULATED(e9)

namespace {

using runner = void (*)(const float *, const float *, float *, int, int, int);

std::vector<float> values(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  for (auto &x : v) {
    seed = seed * 1664525U + 1013904223U;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1U << 24) - 0.5f;
  }
  return v;
}

void check(runner run, const std::string &name) {
  constexpr int m = 256;
  constexpr int n = 128;
  constexpr int k = 160;
  const auto a = values(std::size_t{k} * m, 1); // a[kk * m + mm]
  const auto b = values(std::size_t{k} * n, 2); // b[kk * n + nn]
  std::vector<float> c(std::size_t{m} * n, std::nanf(""));
  run(a.data(), b.data(), c.data(), m, n, k);
  int wrong = 0;
  for (int nn = 0; nn < n; ++nn) {
    for (int mm = 0; mm < m; ++mm) {
      double ref = 0;
      for (int kk = 0; kk < k; ++kk) {
        ref += double(a[std::size_t(kk) * m + mm]) * double(b[std::size_t(kk) * n + nn]);
      }
      const float got = c[std::size_t(nn) * m + mm]; // column major
      if (!(std::fabs(got - ref) <= 1e-4)) {
        if (++wrong <= 5) {
          ADD_FAILURE() << name << ": C[" << mm << "][" << nn << "] = " << got << ", expected "
                        << ref;
        }
      }
    }
  }
  EXPECT_EQ(wrong, 0) << name;
}

} // namespace

TEST(rtc_gemm_emulation, shared_a_and_b_square_threads) { check(run_e1, "e1"); }
TEST(rtc_gemm_emulation, global_a_and_b_wide_vectors) { check(run_e2, "e2"); }
TEST(rtc_gemm_emulation, strided_threads_shared_a_only_vwm_8) { check(run_e3, "e3"); }
TEST(rtc_gemm_emulation, shared_b_only_strided_n_scalar_loads) { check(run_e4, "e4"); }
TEST(rtc_gemm_emulation, a_block_of_1024_threads) { check(run_e5, "e5"); }
TEST(rtc_gemm_emulation, the_best_a100_config_of_the_measured_space) { check(run_e6, "e6"); }
// 2 * (32 * 64 + 32 * 128) * 4 bytes = 48 KiB: two shared buffers, one barrier per slice, each
// filled by copies straight from global memory (cp.async from sm_80 on)...
TEST(rtc_gemm_emulation, double_buffered_at_the_48_kib_limit_the_best_h200_config) {
  check(run_e7, "e7");
}
// ... or through registers (TK_ASYNC_COPY=0, as before sm_80).
TEST(rtc_gemm_emulation, double_buffered_through_registers) { check(run_e9, "e9"); }
// 2 * (32 * 128 + 32 * 128) * 4 bytes = 64 KiB: one shared buffer, two barriers per slice.
TEST(rtc_gemm_emulation, single_buffer_where_two_do_not_fit_vwm_and_vwn_8) { check(run_e8, "e8"); }
