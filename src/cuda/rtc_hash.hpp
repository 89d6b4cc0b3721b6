#pragma once
// What identifies a runtime-compiled kernel (rtc_hash.cpp): the program's digest over its source,
// headers and include files, and the compile cache key of one config. Internal to the CUDA
// backend.

#include <tunekit/cuda/rtc.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::cuda::rtc_detail {

/// The bytes of `path`; throws `tunekit::error` "cannot read <path>".
[[nodiscard]] std::string read_text(const std::filesystem::path &path);

/// SHA-256 of the source, the headers, every file under the include directories (read now) and the
/// options of `d`: `kernel_program::digest`. Throws `tunekit::error` naming an include directory
/// that does not exist, cannot be listed, or holds too many files to hash.
[[nodiscard]] std::string program_digest(const kernel_definition &d);

/// The compile cache key of one config: SHA-256 of the program's digest, the NVRTC version, the
/// target, the config's definitions and its entry's name expression.
[[nodiscard]] std::string config_key(std::string_view program_digest, std::string_view nvrtc,
                                     std::string_view target, const std::vector<definition> &defs,
                                     std::string_view name_expression);

} // namespace tunekit::cuda::rtc_detail
