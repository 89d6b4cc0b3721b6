#pragma once
/// \file load_result.hpp
/// The outcome of reading one stored file (a winner cache entry, an artifact): a typed status for
/// the expected misses, a detail sentence for people, and the value on a hit. Readers never throw
/// for a file that is missing or bad; they say which of these it was.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tunekit {

/// Why a stored file did or did not answer.
enum class load_status {
  found,             ///< the file exists, is valid and matches the identity asked for
  missing,           ///< no such file
  unreadable,        ///< the file exists but cannot be opened or read
  invalid,           ///< not valid JSON, wrong schema, wrong types, or a failed self-check
  identity_mismatch, ///< valid, but recorded for another function, hardware, key or device
};
[[nodiscard]] std::string_view to_string(load_status s) noexcept;

/// `value` is set exactly when `status` is `found`; `detail` says what was wrong otherwise
/// (empty for `found` and `missing`).
template <class T> struct load_result {
  load_status status = load_status::missing;
  std::optional<T> value{};
  std::string detail{};
  std::filesystem::path path{};

  [[nodiscard]] bool found() const noexcept { return status == load_status::found; }
  /// True for a file that exists but was not used (anything but found or missing): worth a
  /// warning.
  [[nodiscard]] bool rejected() const noexcept {
    return status != load_status::found && status != load_status::missing;
  }
};

} // namespace tunekit
