// NVRTC's version and architectures, and the choice of what to compile for: a cubin of the
// device's architecture where NVRTC knows it, else PTX the driver compiles at load.

#include "rtc_target.hpp"

#include <tunekit/cuda/error.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/error.hpp>

#include "rtc_nvrtc.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <charconv>

namespace tunekit::cuda {

using rtc_detail::check_nvrtc;

std::string nvrtc_version() {
  int major = 0;
  int minor = 0;
  check_nvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<int> nvrtc_supported_archs() {
  int n = 0;
  check_nvrtc(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(n));
  check_nvrtc(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::string compile_target(std::string_view arch) {
  std::string_view digits = arch;
  for (const std::string_view prefix : {"sm_", "compute_"}) {
    if (digits.starts_with(prefix)) {
      digits.remove_prefix(prefix.size());
      break;
    }
  }
  std::string suffix;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    suffix = digits.back();
    digits.remove_suffix(1);
  }
  int number = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size() ||
      number <= 0) {
    throw error("'" + std::string(arch) + "' is not a CUDA architecture (expected e.g. sm_90)");
  }
  const auto archs = nvrtc_supported_archs();
  if (std::find(archs.begin(), archs.end(), number) != archs.end()) {
    return "sm_" + std::to_string(number) + suffix;
  }
  const auto below = std::find_if(archs.rbegin(), archs.rend(), [&](int a) { return a < number; });
  if (below == archs.rend()) {
    std::string list;
    for (const int a : archs) {
      if (!list.empty()) {
        list += ' ';
      }
      list += std::to_string(a);
    }
    throw error("NVRTC " + nvrtc_version() + " cannot compile for " + std::string(arch) +
                " (it supports " + list + ")");
  }
  // Newer than this NVRTC: PTX of the newest architecture it knows, compiled by the driver.
  return "compute_" + std::to_string(*below);
}

namespace rtc_detail {

std::string current_device_arch(const std::string &entry) {
  int device = 0;
  int major = 0;
  int minor = 0;
  const std::string what = "compiling " + entry +
                           ": reading the current device's architecture (set "
                           "compile_options::arch, e.g. \"sm_90\", to compile without one)";
  check(cudaGetDevice(&device), what);
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), what);
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), what);
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

} // namespace rtc_detail

} // namespace tunekit::cuda
