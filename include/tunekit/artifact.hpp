#pragma once
/// \file artifact.hpp
/// Offline artifacts: reviewed deployment files that serve a tuned config without measuring.
///
/// An artifact is `<artifact_dir>/<artifact.name>-<digest>.json`, where the digest is the SHA-256
/// of its identity: the artifact name, the declared key values, and the device's product name,
/// architecture and compute-unit count (host CPU model and cores for host functions). The file is
/// self-describing and deterministic: the same winner always produces the same bytes.
///
/// \code
/// tunekit::tuner_options o;
/// o.artifact.name = "scale";          // enables lookup when TUNEKIT_ARTIFACT_DIR is set
/// auto scale = tunekit::autotune("scale", space, key_fn, tunekit::keep_all{}, launch_scale, o)
///                  .with_default([](const float*, float*, float, std::int64_t) {
///                    return tunekit::config{{"BLOCK", 256}};
///                  });
/// \endcode

#include <tunekit/config.hpp>
#include <tunekit/config_space.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/load_result.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

struct cache_entry;

/// The part of the hardware an artifact is bound to.
struct device_identity {
  std::string name{};     ///< product name ("NVIDIA H200") or CPU model
  std::string arch{};     ///< "sm_90", "x86_64"
  std::int64_t units = 0; ///< SM count, or logical cores

  [[nodiscard]] static device_identity of(const hardware_info &hw);
  /// Non-empty name and architecture and at least one unit.
  [[nodiscard]] bool complete() const noexcept;
  friend bool operator==(const device_identity &, const device_identity &) = default;
};

/// One artifact: its identity and the config it serves.
struct artifact {
  static constexpr std::string_view schema = "tunekit.artifact/1";

  std::string name{};
  tunekit::key key{};
  /// Names of the key's values when the tuner declares them (self-description; not identity).
  std::vector<std::string> key_names{};
  device_identity device{};
  /// The served config (its template id included); never a value the caller pinned.
  tunekit::config config{};
};

/// True for 1-64 characters of letters, digits, `.`, `_` and `-`.
[[nodiscard]] bool is_valid_artifact_name(std::string_view name) noexcept;

/// SHA-256 (hex) of the canonical identity {name, key, device}.
[[nodiscard]] std::string artifact_digest(std::string_view name, const key &k,
                                          const device_identity &dev);

/// `<dir>/<name>-<digest>.json`.
[[nodiscard]] std::filesystem::path artifact_path(const std::filesystem::path &dir,
                                                  std::string_view name, const key &k,
                                                  const device_identity &dev);

/// The artifact's JSON text (deterministic; types kept exactly).
[[nodiscard]] std::string to_json(const artifact &a);
/// Parses and validates structure and types; throws `tunekit::error` saying what is wrong.
[[nodiscard]] artifact artifact_from_json(std::string_view text);

/// The artifact of (name, k, dev) in `dir`: found, missing, or a file that exists but was not used
/// (unreadable, invalid, recorded for another name, key or device), with `detail` saying why.
[[nodiscard]] load_result<artifact> load_artifact(const std::filesystem::path &dir,
                                                  std::string_view name, const key &k,
                                                  const device_identity &dev);

/// Why `c` may not be served by a tuner with this space, or empty when it may: it sets a pinned
/// value or a key axis, a value changed type (256 -> 256.0), or it is not a config of the space.
[[nodiscard]] std::string artifact_config_problem(const config &c, const config_space &space,
                                                  const config &pinned,
                                                  const std::vector<std::string> &key_names);

/// The artifact `name` that serves the winner of a winner-cache entry on the entry's device: the
/// entry's stored key (pinned pairs included, so a pinned call finds it), and its winner without
/// the pinned fields (the caller's values complete the config). `key_names` names the key values of
/// `key_fn` (the pinned pairs are named `"pinned NAME"`, `NAME` after them) or every stored value;
/// empty records none. Throws `tunekit::error` on an invalid name or a count of names that fits
/// neither.
[[nodiscard]] artifact make_artifact(std::string name, const cache_entry &entry,
                                     std::vector<std::string> key_names = {});

/// Writes the artifact atomically (temp file in the same directory, then rename); returns its
/// path. Throws `tunekit::error` on an invalid name, an incomplete device identity or I/O failure.
std::filesystem::path store_artifact(const std::filesystem::path &dir, const artifact &a);

/// Validates one artifact file as `tunekit artifact check` does: readable, structurally valid,
/// and named by its own identity. Empty when the file is good.
[[nodiscard]] std::string artifact_file_problem(const std::filesystem::path &path);

} // namespace tunekit
