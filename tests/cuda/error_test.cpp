// Classification of CUDA error codes and the messages thrown for them. Needs no GPU.
#include <tunekit/cuda/error.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using tunekit::cuda::classify;
using tunekit::cuda::error_class;

// What `f` throws: "fatal: <what>", "error: <what>" or "none".
template <class F> std::string thrown_by(F f) {
  try {
    f();
  } catch (const tunekit::fatal_candidate_error &e) {
    return std::string("fatal: ") + e.what();
  } catch (const tunekit::error &e) {
    return std::string("error: ") + e.what();
  }
  return "none";
}

cudaError_t returns(cudaError_t code) { return code; }

TEST(cuda_error, launch_problems_fail_only_the_candidate) {
  for (cudaError_t code :
       {cudaErrorLaunchOutOfResources, cudaErrorInvalidConfiguration, cudaErrorInvalidValue,
        cudaErrorMemoryAllocation, cudaErrorCooperativeLaunchTooLarge, cudaErrorInvalidClusterSize,
        cudaErrorNoKernelImageForDevice, cudaErrorInvalidDeviceFunction, cudaErrorNotReady}) {
    EXPECT_EQ(classify(code), error_class::candidate) << cudaGetErrorName(code);
  }
}

TEST(cuda_error, errors_that_poison_the_context_are_fatal) {
  for (cudaError_t code :
       {cudaErrorIllegalAddress, cudaErrorMisalignedAddress, cudaErrorLaunchFailure,
        cudaErrorLaunchTimeout, cudaErrorAssert, cudaErrorHardwareStackError,
        cudaErrorIllegalInstruction, cudaErrorInvalidAddressSpace, cudaErrorInvalidPc,
        cudaErrorECCUncorrectable, cudaErrorUnknown, cudaErrorNoDevice,
        cudaErrorInsufficientDriver}) {
    EXPECT_EQ(classify(code), error_class::fatal) << cudaGetErrorName(code);
  }
}

TEST(cuda_error, success_passes) {
  EXPECT_NO_THROW(tunekit::cuda::check(cudaSuccess, "nothing"));
  EXPECT_NO_THROW(TUNEKIT_CUDA_CHECK(returns(cudaSuccess)));
}

TEST(cuda_error, candidate_failure_throws_error_with_name_and_text) {
  EXPECT_EQ(
      thrown_by([] { tunekit::cuda::check(cudaErrorLaunchOutOfResources, "launching scale"); }),
      "error: launching scale: cudaErrorLaunchOutOfResources (701): too many resources "
      "requested for launch");
  EXPECT_EQ(thrown_by([] { tunekit::cuda::check(cudaErrorInvalidConfiguration); }),
            "error: cudaErrorInvalidConfiguration (9): invalid configuration argument");
}

TEST(cuda_error, poisoning_error_throws_fatal_candidate_error) {
  const std::string msg = thrown_by([] { tunekit::cuda::check(cudaErrorIllegalAddress, "gemm"); });
  EXPECT_EQ(msg.rfind("fatal: gemm: cudaErrorIllegalAddress (700): ", 0), 0u) << msg;
  EXPECT_NE(msg.find("an illegal memory access was encountered"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no longer usable"), std::string::npos) << msg;
  // It is still a tunekit::error, so code that catches those sees it.
  EXPECT_THROW(tunekit::cuda::throw_error(cudaErrorMisalignedAddress), tunekit::error);
}

TEST(cuda_error, check_macro_names_the_call_and_its_place) {
  const std::string msg = thrown_by([] { TUNEKIT_CUDA_CHECK(returns(cudaErrorInvalidValue)); });
  EXPECT_EQ(msg.rfind("error: returns(cudaErrorInvalidValue) (", 0), 0u) << msg;
  EXPECT_NE(msg.find("error_test.cpp:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cudaErrorInvalidValue (1): invalid argument"), std::string::npos) << msg;
}

TEST(cuda_error, unknown_codes_keep_their_number) {
  const auto code = static_cast<cudaError_t>(12345);
  EXPECT_NE(tunekit::cuda::describe(code).find("12345"), std::string::npos)
      << tunekit::cuda::describe(code);
  EXPECT_EQ(classify(code), error_class::candidate);
}

TEST(cuda_error, class_names) {
  EXPECT_EQ(tunekit::cuda::to_string(error_class::candidate), "candidate");
  EXPECT_EQ(tunekit::cuda::to_string(error_class::fatal), "fatal");
}

} // namespace
