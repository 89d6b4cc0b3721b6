#pragma once
/// \file hardware.hpp
/// What changes the best config on this machine (the hardware digest), and the software the
/// winner was measured with (dependencies).

#include <tunekit/version.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace tunekit {

/// Identity of the hardware a tuner measures on.
struct hardware_info {
  std::string kind{};     ///< "host", "cuda", ...
  std::string name{};     ///< CPU model or device product name
  std::string arch{};     ///< ISA or compute capability ("x86_64", "sm_90")
  std::int64_t units = 0; ///< logical cores, or SMs per device
  std::int64_t count = 1; ///< devices visible (1 for the host)

  /// SHA-256 (hex) of the canonical form of the fields above.
  [[nodiscard]] std::string digest() const;
  /// `NVIDIA H200 (sm_90, 132 units, 1 device)`.
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const hardware_info &, const hardware_info &) = default;
};

/// The host: CPU model (from /proc/cpuinfo where available), architecture, logical cores.
[[nodiscard]] hardware_info host_hardware();

/// Name -> version of the software a measurement depends on, sorted by name.
using dependencies = std::map<std::string, std::string>;

/// tunekit's own version and the compiler it was built with.
[[nodiscard]] dependencies core_dependencies();

/// What changed from `recorded` to `now`, e.g. `cuda_runtime 12.4 -> 13.0, nccl none -> 2.28`;
/// empty when they are equal.
[[nodiscard]] std::string dependency_diff(const dependencies &recorded, const dependencies &now);

} // namespace tunekit
