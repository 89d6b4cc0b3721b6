#pragma once
// The few driver API functions runtime-compiled kernels need, loaded at their first use through the
// CUDA runtime (cudaGetDriverEntryPointByVersion), so that nothing links libcuda and a machine
// without a driver can still compile kernels (private to tunekit::cuda).

#include <cuda.h>

#include <string>
#include <string_view>

namespace tunekit::cuda::rtc_detail {

struct driver_api {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuModuleLoadDataEx) module_load_data_ex = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuFuncGetAttribute) func_get_attribute = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
};

/// The driver's functions, loaded once (making the runtime's primary context current on the loading
/// thread). Throws `tunekit::fatal_candidate_error` when there is no usable driver.
[[nodiscard]] const driver_api &driver();

/// Makes the runtime's primary context of the current device current on this thread (the driver
/// calls that follow use it).
void use_runtime_context();

/// `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701): too many resources requested for launch`.
[[nodiscard]] std::string describe_driver(CUresult code);

/// Throws for a failed driver call: `tunekit::fatal_candidate_error` when the code means the
/// context is broken (the runtime's codes share the driver's numbers, so `classify` decides), else
/// `tunekit::error`; the message is `<context>: <describe_driver(code)>`.
[[noreturn]] void throw_driver_error(CUresult code, std::string_view context);

inline void check_driver(CUresult code, std::string_view context) {
  if (code != CUDA_SUCCESS) {
    throw_driver_error(code, context);
  }
}

} // namespace tunekit::cuda::rtc_detail
