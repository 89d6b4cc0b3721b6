#pragma once
// Small helpers every subcommand of `tunekit` shares.

#include "commands.hpp"

#include <cstddef>
#include <filesystem>

namespace tunekit::cli {

/// The cache root: `--cache-dir` when given, else the environment's (`TUNEKIT_CACHE_DIR`, else the
/// user cache directory).
[[nodiscard]] std::filesystem::path cache_root(const global_options &g);

/// `cache_root(g)` for a command that reads the cache: throws (exit 2) naming the directory and
/// where it came from when it is not an existing directory, rather than listing nothing.
[[nodiscard]] std::filesystem::path existing_cache_root(const global_options &g);

/// `one` for exactly one thing, `many` otherwise (" entry" / " entries").
[[nodiscard]] constexpr const char *plural(std::size_t n, const char *one,
                                           const char *many) noexcept {
  return n == 1 ? one : many;
}

} // namespace tunekit::cli
