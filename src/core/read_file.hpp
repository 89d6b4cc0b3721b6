#pragma once
// Reading a whole stored file (private to the core): the one place the readers of cache entries,
// artifacts and lookup tables open a file.

#include <filesystem>
#include <optional>
#include <string>

namespace tunekit::detail {

/// The bytes of `path`, or nullopt when it cannot be opened or read (missing, a directory, no
/// permission, an I/O error).
[[nodiscard]] std::optional<std::string> read_file(const std::filesystem::path &path);

} // namespace tunekit::detail
