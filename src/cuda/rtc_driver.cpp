#include "rtc_driver.hpp"

#include <tunekit/cuda/error.hpp>

#include <cuda_runtime_api.h>

#include <mutex>

namespace tunekit::cuda::rtc_detail {

namespace {

// The ABI the function pointers are declared with (cuda.h of CUDA 12.0 and later).
constexpr unsigned driver_abi = 12000;

template <class F> void load_symbol(const char *symbol, F &out) {
  void *p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const cudaError_t e =
      cudaGetDriverEntryPointByVersion(symbol, &p, driver_abi, cudaEnableDefault, &found);
  if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr) {
    static_cast<void>(cudaGetLastError());
    const std::string why = e != cudaSuccess ? describe(e)
                            : found == cudaDriverEntryPointVersionNotSufficent
                                ? std::string("the installed driver is older than CUDA 12.0")
                                : std::string("symbol not found");
    throw fatal_candidate_error(std::string("loading the CUDA driver function ") + symbol + ": " +
                                why);
  }
  out = reinterpret_cast<F>(p);
}

driver_api load_driver() {
  use_runtime_context();
  driver_api d;
  load_symbol("cuGetErrorName", d.get_error_name);
  load_symbol("cuGetErrorString", d.get_error_string);
  load_symbol("cuCtxGetCurrent", d.ctx_get_current);
  load_symbol("cuCtxGetDevice", d.ctx_get_device);
  load_symbol("cuDeviceGetAttribute", d.device_get_attribute);
  load_symbol("cuModuleLoadDataEx", d.module_load_data_ex);
  load_symbol("cuModuleUnload", d.module_unload);
  load_symbol("cuModuleGetFunction", d.module_get_function);
  load_symbol("cuFuncGetAttribute", d.func_get_attribute);
  load_symbol("cuFuncSetAttribute", d.func_set_attribute);
  load_symbol("cuLaunchKernel", d.launch_kernel);
  return d;
}

} // namespace

const driver_api &driver() {
  static std::once_flag once;
  static driver_api api;
  std::call_once(once, [] { api = load_driver(); });
  return api;
}

void use_runtime_context() {
  check(cudaFree(nullptr), "initialising CUDA for a runtime-compiled kernel");
}

std::string describe_driver(CUresult code) {
  const char *name = nullptr;
  const char *text = nullptr;
  // Only reached after driver() loaded the functions (a failed driver call needs a driver).
  static_cast<void>(driver().get_error_name(code, &name));
  static_cast<void>(driver().get_error_string(code, &text));
  std::string out = name != nullptr ? name : "CUDA_ERROR";
  out += " (" + std::to_string(static_cast<int>(code)) + "): ";
  out += text != nullptr ? text : "unrecognized error code";
  return out;
}

void throw_driver_error(CUresult code, std::string_view context) {
  std::string msg(context);
  msg += ": ";
  msg += describe_driver(code);
  if (classify(static_cast<cudaError_t>(code)) == error_class::fatal) {
    throw fatal_candidate_error(msg + " (the CUDA context is no longer usable)");
  }
  throw error(msg);
}

} // namespace tunekit::cuda::rtc_detail
