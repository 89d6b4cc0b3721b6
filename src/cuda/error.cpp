#include <tunekit/cuda/error.hpp>

namespace tunekit::cuda {

std::string_view to_string(error_class c) noexcept {
  switch (c) {
  case error_class::candidate:
    return "candidate";
  case error_class::fatal:
    return "fatal";
  }
  return "unknown";
}

error_class classify(cudaError_t code) noexcept {
  switch (code) {
  // Sticky errors: the runtime documents that "any further CUDA work will return the same error"
  // and that the process must be restarted to use CUDA again.
  case cudaErrorIllegalAddress:
  case cudaErrorMisalignedAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorLaunchTimeout:
  case cudaErrorAssert:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorTensorMemoryLeak:
  case cudaErrorContained:
  case cudaErrorExternalDevice:
  case cudaErrorMpsClientTerminated:
  // Hardware faults and a runtime that cannot say what happened: nothing measured afterwards can be
  // trusted.
  case cudaErrorECCUncorrectable:
  case cudaErrorNvlinkUncorrectable:
  case cudaErrorUnknown:
  // No usable device or context at all: every candidate would fail the same way.
  case cudaErrorNoDevice:
  case cudaErrorInvalidDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorInitializationError:
  case cudaErrorCudartUnloading:
  case cudaErrorStartupFailure:
  case cudaErrorDevicesUnavailable:
  case cudaErrorDeviceUninitialized:
  case cudaErrorContextIsDestroyed:
  case cudaErrorSystemNotReady:
  case cudaErrorSystemDriverMismatch:
  case cudaErrorCompatNotSupportedOnDevice:
  case cudaErrorStubLibrary:
    return error_class::fatal;
  default:
    return error_class::candidate;
  }
}

std::string describe(cudaError_t code) {
  const char *name = cudaGetErrorName(code);
  const char *text = cudaGetErrorString(code);
  std::string out = name != nullptr ? name : "cudaError";
  out += " (" + std::to_string(static_cast<int>(code)) + "): ";
  out += text != nullptr ? text : "unrecognized error code";
  return out;
}

void throw_error(cudaError_t code, std::string_view context) {
  std::string msg;
  if (!context.empty()) {
    msg.append(context);
    msg += ": ";
  }
  msg += describe(code);
  if (classify(code) == error_class::fatal) {
    throw fatal_candidate_error(msg + " (the CUDA context is no longer usable)");
  }
  throw error(msg);
}

void check_launch(std::string_view context) { check(cudaGetLastError(), context); }

void check_stream(cudaStream_t stream, std::string_view context) {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) {
    throw_error(launch, context);
  }
  check(cudaStreamSynchronize(stream), context);
}

} // namespace tunekit::cuda
