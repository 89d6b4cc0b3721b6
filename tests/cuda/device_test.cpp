#include "gpu_test.hpp"

#include <tunekit/cuda/device.hpp>
#include <tunekit/cuda/options.hpp>
#include <tunekit/error.hpp>

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace {

using tunekit::cuda::test::gpu_test;

class device_test : public gpu_test {};

TEST_F(device_test, identity_matches_the_device_properties) {
  int count = 0;
  TUNEKIT_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    TUNEKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    const auto hw = tunekit::cuda::device_hardware(d);
    EXPECT_EQ(hw.kind, "cuda");
    EXPECT_EQ(hw.name, prop.name);
    EXPECT_EQ(hw.arch, "sm_" + std::to_string(prop.major) + std::to_string(prop.minor));
    EXPECT_EQ(hw.units, prop.multiProcessorCount);
    EXPECT_EQ(hw.count, count);
    EXPECT_GT(hw.units, 0);
  }
  EXPECT_EQ(tunekit::cuda::device_count(), count);
  EXPECT_TRUE(tunekit::cuda::device_available());
}

TEST_F(device_test, identity_is_stable_and_differs_from_the_host) {
  const auto a = tunekit::cuda::device_hardware(0);
  const auto b = tunekit::cuda::device_hardware(0);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.digest(), b.digest());
  EXPECT_NE(a.digest(), tunekit::host_hardware().digest());
}

TEST_F(device_test, current_device_overload_reads_the_current_device) {
  int current = -1;
  TUNEKIT_CUDA_CHECK(cudaGetDevice(&current));
  EXPECT_EQ(tunekit::cuda::device_hardware(), tunekit::cuda::device_hardware(current));
}

TEST_F(device_test, a_device_that_does_not_exist_is_an_error_naming_it) {
  const int count = tunekit::cuda::device_count();
  try {
    static_cast<void>(tunekit::cuda::device_hardware(count));
    ADD_FAILURE() << "no error for device " << count;
  } catch (const tunekit::fatal_candidate_error &e) {
    ADD_FAILURE() << "a missing device index must not be fatal: " << e.what();
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("device " + std::to_string(count)), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(static_cast<void>(tunekit::cuda::device_hardware(-1)), tunekit::error);
}

TEST_F(device_test, driver_version_is_recorded) {
  const auto deps = tunekit::cuda::dependencies();
  ASSERT_TRUE(deps.contains("cuda_driver"));
  EXPECT_TRUE(std::regex_match(deps.at("cuda_driver"), std::regex(R"(\d+\.\d+)")))
      << deps.at("cuda_driver");
}

TEST_F(device_test, tuner_options_carry_the_cuda_measurer_and_identity) {
  const auto o = tunekit::cuda::make_tuner_options({.stream = stream(), .flush_l2 = true});
  ASSERT_NE(o.measurer, nullptr);
  EXPECT_EQ(o.measurer->name(), "cuda");
  ASSERT_TRUE(o.hardware.has_value());
  EXPECT_EQ(*o.hardware, tunekit::cuda::device_hardware());
  EXPECT_EQ(o.dependencies, tunekit::cuda::dependencies());
  const auto *m = dynamic_cast<const tunekit::cuda::event_measurer *>(o.measurer.get());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->options().stream, stream());
  EXPECT_TRUE(m->options().flush_l2);
  EXPECT_THROW(
      static_cast<void>(tunekit::cuda::make_tuner_options({}, tunekit::cuda::device_count())),
      tunekit::error);
}

} // namespace
