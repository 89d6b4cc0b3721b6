#pragma once
/// \file environment.hpp
/// Every setting tunekit takes from the environment, read in one place (`environment::from_env`).
/// A tuner reads it once when it is built; tests pass their own.

#include <filesystem>
#include <string>

namespace tunekit {

struct environment {
  /// `TUNEKIT_CACHE_DIR`; default `$XDG_CACHE_HOME/tunekit`, else `~/.cache/tunekit`.
  std::filesystem::path cache_dir{};
  /// `TUNEKIT_ALWAYS_TUNE=1`: ignore stored results and retune.
  bool always_tune = false;
  /// `TUNEKIT_VERSION_CHECK=1`: a cache entry recorded with other dependencies is retuned.
  bool version_check = false;
  /// `TUNEKIT_VERBOSE=1`: every call behaves as if `verbose` were passed.
  bool verbose = false;
  /// `TUNEKIT_PROGRESS=1`: a search shows its live progress on stderr (local rank 0), as with
  /// `verbose`, without the verbose lines.
  bool progress = false;
  /// `TUNEKIT_ARTIFACT_DIR`: where reviewed artifacts are served from (empty: none).
  std::filesystem::path artifact_dir{};
  /// `TUNEKIT_LOOKUP_TABLE`: a lookup table file (empty: none).
  std::filesystem::path lookup_table{};
  /// `TUNEKIT_LOG_DIR`; default `./.autotune_logs`.
  std::filesystem::path log_dir = ".autotune_logs";
  /// `TUNEKIT_AUTOTUNE`: how much every call of a tuner may do, `off`, `cached`, `quick` or `full`
  /// (any case; see `tunekit::effort`). Kept as written: a tuner reads it when it is built, where
  /// empty means `full` and anything else that names no effort is a warning, then `full`.
  std::string autotune{};

  /// Reads the variables above. A flag is on for `1`, `true`, `yes` or `on` (any case).
  [[nodiscard]] static environment from_env();
};

} // namespace tunekit
