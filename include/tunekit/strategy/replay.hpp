#pragma once
/// \file strategy/replay.hpp
/// Replay of a measured space: a Kernel Tuner cache file (`.json`, or gzip-compressed) read into a
/// `search_space` whose valid set is the configs in the file, with each one's measured time. A
/// strategy run over it "measures" by looking times up, so strategies are compared without a GPU
/// and with the best possible time known.
///
/// File format: `{"tune_params_keys": [names], "tune_params": {name: [values]}, "cache":
/// {"v1,v2,...": {"time": ms} | {"time": "error text"} | {"__error__": "InvalidConfig", ...}}}`;
/// the cache key joins the values of `tune_params_keys` (else of `tune_params`, in file order)
/// with commas, as Python prints them. The parser is the one `cache import kernel-tuner` uses
/// (formats/kernel_tuner.hpp).

#include <tunekit/config.hpp>
#include <tunekit/strategy/run_search.hpp>
#include <tunekit/strategy/search_space.hpp>

#include <cstddef>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

/// A measured space.
struct replay_table {
  /// Where it came from (the path, or the name given to `parse_replay_table`).
  std::string source;
  /// `device_name` and `kernel_name` of the file when present, else empty.
  std::string device_name;
  std::string kernel_name;
  /// Parameters from `tune_params`; valid configs: the cache entries (failed ones included).
  search_space space;
  /// Time of each cache entry by its position in the list (`space.position_of`), in
  /// milliseconds; +infinity for an entry that records an error.
  std::vector<double> times;
  /// Smallest time in the file.
  double best_time_ms = std::numeric_limits<double>::infinity();

  /// The recorded time of `index`; +infinity when it failed or is not in the file.
  [[nodiscard]] double time_of(std::size_t index) const;
  /// The `k` fastest configs, fastest first (ties to the earlier entry): what another device
  /// would transfer from this one.
  [[nodiscard]] std::vector<config> best_configs(std::size_t k) const;
  /// An evaluator that looks times up (for `run_search`); it refers to this table.
  [[nodiscard]] batch_evaluator evaluator() const;
};

/// Reads a Kernel Tuner cache file, gzip-compressed or not (told apart by content). Throws
/// `tunekit::error` naming the file and what is wrong: unreadable, not gzip or JSON, a missing or
/// malformed `tune_params` or `cache`, a cache key whose values do not match the parameters, an
/// entry without a time, no entry with a time at all.
[[nodiscard]] replay_table load_replay_table(const std::filesystem::path &path);

/// Parses the JSON text of a Kernel Tuner cache file; `source` names it in errors.
[[nodiscard]] replay_table parse_replay_table(std::string_view json_text, std::string_view source);

} // namespace tunekit
