#include "devices.hpp"

#include <tunekit/cuda/device.hpp>

namespace tunekit::cli {

std::vector<hardware_info> accelerators(std::string &note) {
  std::vector<hardware_info> out;
  const int n = tunekit::cuda::device_count();
  if (n == 0) {
    note = "no CUDA device visible";
  }
  for (int i = 0; i < n; ++i) {
    out.push_back(tunekit::cuda::device_hardware(i));
  }
  return out;
}

} // namespace tunekit::cli
