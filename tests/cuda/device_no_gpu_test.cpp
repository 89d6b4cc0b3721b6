// Device queries on any machine: they must answer without a GPU or a driver, and fail with a clear
// error (not a crash) where a device is needed.
#include <tunekit/cuda/device.hpp>
#include <tunekit/cuda/measurer.hpp>
#include <tunekit/error.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace {

TEST(cuda_device, runtime_version_is_recorded_without_a_device) {
  const auto deps = tunekit::cuda::dependencies();
  ASSERT_TRUE(deps.contains("cuda_runtime"));
  ASSERT_TRUE(deps.contains("cuda_driver"));
  int runtime = 0;
  ASSERT_EQ(cudaRuntimeGetVersion(&runtime), cudaSuccess);
  EXPECT_EQ(deps.at("cuda_runtime"),
            std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10));
}

TEST(cuda_device, availability_never_throws) {
  bool available = false;
  EXPECT_NO_THROW(available = tunekit::cuda::device_available());
  EXPECT_EQ(available, tunekit::cuda::device_count() > 0);
}

TEST(cuda_device, building_a_measurer_touches_no_cuda) {
  // A stream handle that was never created: fine as long as nothing is measured.
  auto *stream = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x1000});
  const tunekit::cuda::event_measurer m(stream);
  EXPECT_EQ(m.options().stream, stream);
  EXPECT_FALSE(m.options().flush_l2);
  EXPECT_EQ(m.flush_bytes(), 0u);
  EXPECT_EQ(m.name(), "cuda");
}

TEST(cuda_device, without_a_device_identity_and_measurement_are_errors) {
  if (tunekit::cuda::device_available()) {
    GTEST_SKIP() << "a CUDA device is visible";
  }
  EXPECT_THROW(static_cast<void>(tunekit::cuda::device_hardware(0)), tunekit::error);
  // Building a measurer touches no CUDA; measuring does, and fails cleanly.
  tunekit::cuda::event_measurer m;
  EXPECT_EQ(m.flush_bytes(), 0u);
  const tunekit::key k{1};
  const tunekit::config c{{"x", 1}};
  int runs = 0;
  auto run = [&] { ++runs; };
  EXPECT_THROW(static_cast<void>(m.measure(tunekit::candidate_info{"t", k, c, 0, 1}, run, {})),
               tunekit::error);
  EXPECT_EQ(runs, 0);
}

} // namespace
