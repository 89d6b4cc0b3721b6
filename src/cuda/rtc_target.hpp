#pragma once
// What a program compiles for (rtc_target.cpp, beside the public `compile_target`): the
// architecture of the current device. Internal to the CUDA backend.

#include <string>

namespace tunekit::cuda::rtc_detail {

/// `sm_XY` of the current device, read through the CUDA runtime. Throws `tunekit::error` saying
/// that `compile_options::arch` compiles without a device, with `entry` in the message.
[[nodiscard]] std::string current_device_arch(const std::string &entry);

} // namespace tunekit::cuda::rtc_detail
