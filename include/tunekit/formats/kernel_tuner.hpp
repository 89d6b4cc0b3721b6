#pragma once
/// \file formats/kernel_tuner.hpp
/// Kernel Tuner cache files to and from winner cache entries. Kernel Tuner (PyPI `kernel_tuner`,
/// 1.x) writes one cache file per tuning run: the device, the kernel, the problem size, the
/// tunable parameters, and one record per measured config (`docs/formats.md`, "Kernel Tuner cache
/// files", says what maps to what and what each direction loses).
///
/// \code
/// // A Kernel Tuner run becomes one entry of the winner cache...
/// auto text = tunekit::read_kernel_tuner_file("gemm_A100.json.gz");
/// tunekit::cache_entry e = tunekit::from_kernel_tuner_cache(
///     text, "gemm_A100.json.gz", {.function = {"gemm", "v3"}, .key = tunekit::key{4096, 4096}});
/// tunekit::winner_cache(cache_dir).store(e, tunekit::kernel_tuner_import_log(e,
/// "gemm_A100.json.gz"));
/// // ...and an entry becomes a file that kernel_tuner.tune_kernel(..., cache=FILE,
/// // simulation_mode=True) replays.
/// std::string file = tunekit::to_kernel_tuner_cache(e);
/// \endcode

#include <tunekit/key.hpp>
#include <tunekit/winner_cache.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tunekit {

/// What an imported file becomes: whose entry, and under which key.
struct kernel_tuner_import {
  /// The tuned function the entry belongs to (name and version).
  function_identity function;
  /// The entry's key; nullopt: the file's `problem_size` (an int, or a list of values).
  std::optional<tunekit::key> key{};
};

/// The text of a Kernel Tuner cache file, decompressed when it is gzip-compressed (told apart by
/// content). Throws `tunekit::error` naming the file when it cannot be read or decompressed.
[[nodiscard]] std::string read_kernel_tuner_file(const std::filesystem::path &path);

/// A Kernel Tuner cache file (its JSON text; `source` names it in errors) as one winner cache
/// entry: hardware named by `device_name` (kind `kernel_tuner`, arch `unknown`, 0 units, 1
/// device), each record a candidate in file order (its `time` as the time, its `times` as the
/// statistics, its `compile_time` as the preparation time; a failed record a failed candidate whose
/// reason is Kernel Tuner's error marker), the fastest valid one the winner. Throws
/// `tunekit::error` (`Kernel Tuner cache file <source>: <what is wrong>`) for a file that is not
/// one (missing or mistyped fields, a key whose values are not the parameters' values), an empty
/// `cache`, a file in which every config failed, and a missing key (no `key` given and no usable
/// `problem_size`).
[[nodiscard]] cache_entry from_kernel_tuner_cache(std::string_view text, std::string_view source,
                                                  const kernel_tuner_import &what);

/// The tuning log stored beside an imported entry: where it came from, then its candidates.
[[nodiscard]] std::string kernel_tuner_import_log(const cache_entry &e, std::string_view source);

/// The entry as a Kernel Tuner cache file, laid out as Kernel Tuner writes one (so that it reads
/// it, appends to it and replays it in simulation mode): `device_name` the hardware's name,
/// `kernel_name` the function's name, `problem_size` the key when it holds only ints (absent
/// otherwise), `tune_params` the candidates' fields with their values in the order first seen,
/// one record per candidate (`time` in ms, or `InvalidConfig` for a pruned candidate,
/// `CompilationFailedConfig` for a failure whose reason speaks of compiling, `RuntimeFailedConfig`
/// for other failures and wrong results; a reason that is itself a marker is kept). Throws
/// `tunekit::error` for an entry Kernel Tuner cannot hold: candidates of templates, candidates with
/// different fields, a field named like one of Kernel Tuner's own (`time`, `times`,
/// `compile_time`, ...), a string that is not UTF-8, two candidates with the same cache key.
[[nodiscard]] std::string to_kernel_tuner_cache(const cache_entry &e);

} // namespace tunekit
