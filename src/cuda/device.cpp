#include <tunekit/cuda/device.hpp>
#include <tunekit/cuda/error.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace tunekit::cuda {

namespace {

// 13000 -> "13.0" (the runtime and driver encode 1000 * major + 10 * minor).
std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

} // namespace

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    // Clear the error so that it does not surface in the caller's next check.
    static_cast<void>(cudaGetLastError());
    return 0;
  }
  return n;
}

bool device_available() noexcept { return device_count() > 0; }

hardware_info device_hardware(int device) {
  const std::string what = "reading the identity of CUDA device " + std::to_string(device);
  int count = 0;
  check(cudaGetDeviceCount(&count), what);
  if (device < 0 || device >= count) {
    throw error(what + ": no such device (" + std::to_string(count) + " visible)");
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), what);
  hardware_info hw;
  hw.kind = "cuda";
  hw.name = prop.name;
  hw.arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  hw.units = prop.multiProcessorCount;
  hw.count = count;
  return hw;
}

hardware_info device_hardware() {
  int device = 0;
  check(cudaGetDevice(&device), "reading the current CUDA device");
  return device_hardware(device);
}

tunekit::dependencies dependencies() {
  tunekit::dependencies deps;
  int runtime = 0;
  check(cudaRuntimeGetVersion(&runtime), "reading the CUDA runtime version");
  deps["cuda_runtime"] = version_text(runtime);
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
    static_cast<void>(cudaGetLastError());
    deps["cuda_driver"] = "none";
  } else {
    deps["cuda_driver"] = version_text(driver);
  }
  return deps;
}

} // namespace tunekit::cuda
