#pragma once
// The Kernel Tuner cache file as Kernel Tuner 1.x reads and writes it (private to the core): the
// one parser that the replay of measured spaces (strategy/replay.cpp) and the import into winner
// cache entries (formats/kernel_tuner.cpp) share, and the Python text of a value that Kernel Tuner
// joins into a cache key. Kernel Tuner's own reader is `kernel_tuner.util.read_cache`: a file is
// `{"device_name", "kernel_name", "problem_size", "tune_params_keys", "tune_params", "objective",
// "cache": {"v1,v2,...": {<param>: v, ..., "time": ms, ...}}}`, the key being
// `",".join(str(v) for v in values)` in `tune_params_keys` order, and a record whose value is one
// of the error markers (`error_markers`) a failed config.

#include <tunekit/config.hpp>
#include <tunekit/config_space.hpp>
#include <tunekit/value.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::detail::kernel_tuner {

using json = nlohmann::ordered_json;

/// The strings Kernel Tuner's reader turns into failures (`ErrorConfig` and its subclasses), as
/// its writer stores them: in `"time"` (1.0-1.3) or in `"__error__"` (1.4 on).
inline constexpr std::array<std::string_view, 4> error_markers = {
    "ErrorConfig", "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig"};
[[nodiscard]] bool is_error_marker(std::string_view s) noexcept;

/// `str(v)` in Python, which is how Kernel Tuner writes each value into a cache key: `True`,
/// `256`, `0.5`, `1e-05`, `100000.0`, a string as it is.
[[nodiscard]] std::string python_str(const value &v);

/// One record of `cache`.
struct record {
  std::string key;           ///< `"v1,v2,..."` as in the file
  std::vector<field> fields; ///< the parameters' values, in `tune_params_keys` order
  const json *body;          ///< the record object (points into `file::doc`)
  double time_ms;            ///< the measured time; +infinity when it failed
  std::string error;         ///< why it failed (the marker or the time's text); empty when ok
};

/// A parsed file. Not copyable: the records point into `doc`.
struct file {
  json doc; ///< the whole document (an object)
  /// `tune_params` in `tune_params_keys` order (else in file order); values typed as written.
  std::vector<parameter> params;
  std::vector<record> records; ///< in file order

  file() = default;
  file(const file &) = delete;
  file &operator=(const file &) = delete;
  file(file &&) noexcept = default;
  file &operator=(file &&) noexcept = default;
  ~file() = default;
};

/// Parses and validates the text of a cache file. Errors are `tunekit::error`s reading
/// `<label> <source>: <what is wrong>`: not JSON or not an object, a missing or malformed
/// `tune_params`, `tune_params_keys` or `cache`, a cache key whose values are not values of the
/// parameters (or disagree with the record's own parameter fields), a record without a time or
/// with a negative or non-numeric one, two keys naming the same config. An empty `cache` and a
/// file in which every config failed are left to the caller.
[[nodiscard]] file parse(std::string_view text, std::string_view source, std::string_view label);

/// The text of the file at `path`, decompressed when it is gzip (told by its first bytes). Throws
/// `tunekit::error` (`<label> <path>: ...`) when it cannot be read or decompressed.
[[nodiscard]] std::string read_text(const std::filesystem::path &path, std::string_view label);

} // namespace tunekit::detail::kernel_tuner
