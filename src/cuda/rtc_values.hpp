#pragma once
// How a config becomes compile-time values (rtc_values.cpp): `-D` options, the entry's name
// expression and the NVRTC options of one compile. Internal to the CUDA backend.

#include <tunekit/cuda/rtc.hpp>

#include <string>
#include <vector>

namespace tunekit::cuda::rtc_detail {

/// `-DNAME=VALUE` of each definition, `-DNAME` for an empty value.
[[nodiscard]] std::vector<std::string> define_options(const std::vector<definition> &defs);

/// `entry<a, b>`, or `entry` as it is when there are no arguments (a kernel that is not a
/// template: `saxpy<>` would not parse).
[[nodiscard]] std::string name_expression(const std::string &entry,
                                          const std::vector<std::string> &template_args);

/// Every NVRTC option of one compile of `d` for `target`: the architecture, the include paths,
/// the program's options, then the config's `config_options`.
[[nodiscard]] std::vector<std::string>
nvrtc_options(const kernel_definition &d, const std::string &target,
              const std::vector<std::string> &config_options);

} // namespace tunekit::cuda::rtc_detail
