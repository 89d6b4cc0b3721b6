#pragma once
/// \file winner_cache.hpp
/// The winner cache on disk: `<root>/autotune/<function>/<digest>.json`, one entry per (function
/// identity, hardware, key), with a tuning log `<digest>.log` beside it. Entries are written
/// atomically (temp file in the same directory, then rename) and validated when read: a corrupt,
/// truncated, wrong-schema or mismatched entry is reported and skipped, never trusted.

#include <tunekit/config.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/measure.hpp>

#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

/// What happened to one candidate of a search.
enum class candidate_status {
  ok,           ///< measured; its time is valid
  failed,       ///< it threw or its launch failed; `reason` says why
  wrong_result, ///< it ran but the correctness check rejected its output
  pruned,       ///< prune_fn removed it; never run
};
[[nodiscard]] std::string_view to_string(candidate_status s) noexcept;

/// One candidate of a search, as measured.
struct candidate_record {
  tunekit::config config;
  candidate_status status = candidate_status::ok;
  /// The policy's statistic in milliseconds; +infinity unless `status` is ok.
  double time_ms = std::numeric_limits<double>::infinity();
  sample_stats stats{};
  std::string reason;
};

/// The name and code identity of a tuned function.
struct function_identity {
  std::string name;
  /// A hash of the tuned code or an explicit version string.
  std::string version;
  friend bool operator==(const function_identity &, const function_identity &) = default;
};

/// One winner cache entry.
struct cache_entry {
  static constexpr std::string_view schema = "tunekit.winner_cache/1";

  function_identity function;
  tunekit::key key;
  hardware_info hardware;
  tunekit::dependencies dependencies;
  tunekit::config winner;
  std::size_t winner_index = 0; ///< index of the winner in `candidates`
  std::vector<candidate_record> candidates;
  measure_policy policy;
  std::string measurer;
  int world_size = 1;
  std::string timestamp; ///< UTC, ISO 8601
};

/// Serialises an entry to its JSON text (types kept exactly).
[[nodiscard]] std::string to_json(const cache_entry &e);
/// Parses and validates an entry; throws `tunekit::error` saying what is wrong with it.
[[nodiscard]] cache_entry cache_entry_from_json(std::string_view text);

/// The digest naming an entry: SHA-256 over function identity, hardware digest and canonical key.
[[nodiscard]] std::string cache_digest(const function_identity &fn, const hardware_info &hw,
                                       const key &k);

class winner_cache final {
public:
  /// `root` is the cache directory (e.g. `environment::cache_dir`).
  explicit winner_cache(std::filesystem::path root);

  [[nodiscard]] const std::filesystem::path &root() const noexcept { return m_root; }
  /// `<root>/autotune/<function name, made file-safe>`.
  [[nodiscard]] std::filesystem::path function_dir(std::string_view function) const;
  [[nodiscard]] std::filesystem::path entry_path(const function_identity &fn,
                                                 const hardware_info &hw, const key &k) const;

  /// Outcome of a lookup. `entry` is set on a valid hit; `problem` says why a file that exists was
  /// not used (corrupt, wrong schema, mismatched identity).
  struct lookup_result {
    std::optional<cache_entry> entry;
    std::string problem;
    std::filesystem::path path;
  };
  [[nodiscard]] lookup_result load(const function_identity &fn, const hardware_info &hw,
                                   const key &k) const;

  /// Writes the entry (and `log_text` as the tuning log beside it) atomically; returns its path.
  /// Throws `tunekit::error` naming the path when it cannot be written.
  std::filesystem::path store(const cache_entry &e, std::string_view log_text) const;

  /// Every `*.json` entry file, optionally of one function.
  [[nodiscard]] std::vector<std::filesystem::path> list(std::string_view function = {}) const;

private:
  std::filesystem::path m_root;
};

/// Writes `text` to `path` atomically: a temp file in the same directory, flushed, then renamed
/// over `path`. Creates the directory. Throws `tunekit::error` naming the path on failure.
void write_file_atomically(const std::filesystem::path &path, std::string_view text);

} // namespace tunekit
