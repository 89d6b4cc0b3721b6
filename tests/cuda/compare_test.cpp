#include "gpu_test.hpp"
#include "test_kernels.hpp"

#include <tunekit/cuda/compare.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using namespace tunekit::cuda::test;

class compare_test : public gpu_test {
protected:
  void upload(float *dst, const std::vector<float> &src) {
    TUNEKIT_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.size() * sizeof(float),
                                       cudaMemcpyHostToDevice, stream()));
  }
};

TEST_F(compare_test, equal_arrays_have_no_error) {
  constexpr std::size_t n = 100'003;
  device_buffer a(n);
  device_buffer b(n);
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) {
    host[i] = std::sin(static_cast<float>(i));
  }
  upload(a.get(), host);
  upload(b.get(), host);
  const auto c = tunekit::cuda::compare(a.get(), b.get(), n, stream());
  EXPECT_EQ(c.count, n);
  EXPECT_EQ(c.relative_error, 0.0);
  EXPECT_EQ(c.max_abs_error, 0.0);
  EXPECT_EQ(c.non_finite, 0u);
  EXPECT_TRUE(c.within(0.0));
}

TEST_F(compare_test, relative_and_absolute_error_match_the_host) {
  constexpr std::size_t n = 1 << 20;
  device_buffer out(n);
  device_buffer ref(n);
  std::vector<float> r(n);
  std::vector<float> o(n);
  double diff2 = 0;
  double ref2 = 0;
  double max_abs = 0;
  for (std::size_t i = 0; i < n; ++i) {
    r[i] = 1.0f + static_cast<float>(i % 7);
    o[i] = r[i] + (i % 3 == 0 ? 1e-3f : -2e-3f) * static_cast<float>(i % 5);
    const double d = static_cast<double>(o[i]) - static_cast<double>(r[i]);
    diff2 += d * d;
    ref2 += static_cast<double>(r[i]) * static_cast<double>(r[i]);
    max_abs = std::max(max_abs, std::fabs(d));
  }
  upload(out.get(), o);
  upload(ref.get(), r);
  const auto c = tunekit::cuda::compare(out.get(), ref.get(), n, stream());
  EXPECT_NEAR(c.relative_error, std::sqrt(diff2 / ref2), 1e-9);
  EXPECT_DOUBLE_EQ(c.max_abs_error, max_abs);
  EXPECT_TRUE(c.within(1e-3));
  EXPECT_FALSE(c.within(1e-5));
}

TEST_F(compare_test, nan_and_infinity_never_pass) {
  constexpr std::size_t n = 4096;
  device_buffer out(n);
  device_buffer ref(n);
  std::vector<float> r(n, 1.0f);
  std::vector<float> o(n, 1.0f);
  o[17] = std::numeric_limits<float>::quiet_NaN();
  o[4000] = std::numeric_limits<float>::infinity();
  upload(out.get(), o);
  upload(ref.get(), r);
  const auto c = tunekit::cuda::compare(out.get(), ref.get(), n, stream());
  EXPECT_EQ(c.non_finite, 2u);
  EXPECT_EQ(c.relative_error, 0.0) << "finite elements agree";
  EXPECT_FALSE(c.within(1.0));
}

TEST_F(compare_test, poison_makes_every_unwritten_element_fail) {
  constexpr std::size_t n = 10'000;
  device_buffer out(n);
  device_buffer ref(n);
  TUNEKIT_CUDA_CHECK(launch_fill(ref.get(), n, 3.0f, 256, stream()));
  tunekit::cuda::poison(out.get(), n * sizeof(float), stream());
  EXPECT_EQ(tunekit::cuda::compare(out.get(), ref.get(), n, stream()).non_finite, n);
  // A kernel that writes all but the last 10 elements.
  TUNEKIT_CUDA_CHECK(launch_fill(out.get(), n - 10, 3.0f, 256, stream()));
  const auto c = tunekit::cuda::compare(out.get(), ref.get(), n, stream());
  EXPECT_EQ(c.non_finite, 10u);
  EXPECT_FALSE(c.within(1e-3));
}

TEST_F(compare_test, empty_input_compares_equal_without_touching_memory) {
  const auto c = tunekit::cuda::compare(nullptr, nullptr, 0, stream());
  EXPECT_EQ(c.count, 0u);
  EXPECT_TRUE(c.within(0.0));
}

} // namespace
