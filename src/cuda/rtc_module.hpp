#pragma once
// A compiled config loaded into the current context with the driver API (rtc_module.cpp). Internal
// to the CUDA backend.

#include <tunekit/cuda/rtc.hpp>

#include "rtc_driver.hpp"

#include <string>

namespace tunekit::cuda::rtc_detail {

/// One module loaded into the current context and its entry point with the limits read from its
/// attributes. Unloads the module when destroyed.
class loaded_module final {
public:
  /// Loads `binary` (a cubin, or PTX that the driver compiles now), finds `lowered_name` in it
  /// and reads its limits. Throws as `throw_driver_error` does, the message naming
  /// `description` and `target` and, for a module the driver rejects, its JIT log.
  loaded_module(const std::string &binary, const std::string &lowered_name,
                const std::string &description, const std::string &target);
  loaded_module(const loaded_module &) = delete;
  loaded_module &operator=(const loaded_module &) = delete;
  ~loaded_module();

  [[nodiscard]] loaded_function &function() noexcept { return m_function; }

private:
  CUmodule m_module = nullptr;
  loaded_function m_function;
};

} // namespace tunekit::cuda::rtc_detail
