#pragma once
/// \file formats/kernel_launcher.hpp
/// kernel_launcher wisdom files to and from winner cache entries. kernel_launcher (a C++ library
/// for runtime-compiled CUDA kernels) keeps the tuned configs of one kernel in
/// `<tuning key>.wisdom`, written by its Python package (`kernel_launcher.write_wisdom`, which
/// `tune.py` calls after a Kernel Tuner run): a JSON header line, then one JSON record per line
/// (a config, the problem size, the time, the device), for any number of devices and problem
/// sizes. A file becomes one entry per (device, problem size); entries of one function become one
/// file (`docs/formats.md`, "kernel_launcher wisdom files", says what maps to what and what each
/// direction loses).
///
/// \code
/// // A wisdom file becomes entries of the winner cache...
/// auto text = tunekit::read_kernel_launcher_file("wisdom/vector_add.wisdom");
/// auto wisdom = tunekit::from_kernel_launcher_wisdom(text, "vector_add.wisdom",
///                                                    {.function = {"vector_add", "v2"}});
/// tunekit::winner_cache cache(cache_dir);
/// for (const auto &e : wisdom.entries) {
///   cache.store(e, tunekit::kernel_launcher_import_log(e, "vector_add.wisdom"));
/// }
/// // ...and entries become a file that kernel_launcher's WisdomKernel reads.
/// std::string file =
///     tunekit::to_kernel_launcher_wisdom(wisdom.entries, {.tuning_key = "vector_add"});
/// \endcode

#include <tunekit/key.hpp>
#include <tunekit/winner_cache.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tunekit {

/// A problem size as kernel_launcher holds one (`kernel_launcher::ProblemSize`): three extents, an
/// absent one 1. `[100, 100]` and `[100, 100, 1]` in a file are the same problem size.
struct kernel_launcher_problem_size {
  std::uint32_t x = 1;
  std::uint32_t y = 1;
  std::uint32_t z = 1;

  /// The key of its entries: `(x)`, `(x, y)` or `(x, y, z)`, trailing extents of 1 left out (as
  /// kernel_launcher prints a problem size).
  [[nodiscard]] tunekit::key to_key() const;
  /// The problem size a key of 1 to 3 ints, each in [0, 2^32), names; nullopt for another key.
  [[nodiscard]] static std::optional<kernel_launcher_problem_size> from_key(const tunekit::key &k);
  /// `(1024)`, `(100, 100)`: the text of `to_key()`.
  [[nodiscard]] std::string to_string() const;
  friend auto operator<=>(const kernel_launcher_problem_size &,
                          const kernel_launcher_problem_size &) = default;
};

/// What an imported file becomes: whose entries, and under which keys.
struct kernel_launcher_import {
  /// The tuned function the entries belong to (name and version).
  function_identity function;
  /// The key of the entries of a problem size not listed in `keys`; allowed only when the file
  /// holds one such problem size. nullopt: each problem size's own key (`to_key()`).
  std::optional<tunekit::key> key{};
  /// The key of the entries of each listed problem size (every one must be in the file).
  std::vector<std::pair<kernel_launcher_problem_size, tunekit::key>> keys{};
};

/// An imported wisdom file.
struct kernel_launcher_wisdom {
  std::string tuning_key; ///< the header's `key`: the kernel's tuning key
  /// One per (device name, problem size), in the order the file first names each.
  std::vector<cache_entry> entries;
};

/// The text of the wisdom file at `path`. Throws `tunekit::error` naming the file when it cannot
/// be read.
[[nodiscard]] std::string read_kernel_launcher_file(const std::filesystem::path &path);

/// A wisdom file (its text; `source` names it in errors) as winner cache entries, one per
/// (`environment.device_name`, `problem_size`) of its records: hardware named by the device (kind
/// `kernel_launcher`, arch `sm_<compute_capability>` of the winner's record, else `unknown`; 0
/// units, 1 device), each record of the pair a candidate in file order (its `time` as the time),
/// the fastest (the first of equals, as kernel_launcher chooses) the winner. Empty lines and
/// lines starting with `#` or `//` are skipped. Throws `tunekit::error`
/// (`kernel_launcher wisdom file <source>: <what is wrong>`) for a file that is not one: a header
/// that is not line 1's JSON object, a `version` other than "1.0", an `objective` other than
/// "time", a missing or mistyped `key` or `tunable_parameters`, a record line that is not JSON or
/// lacks or mistypes `config` (one value per parameter), `problem_size` (1 to 3 ints in
/// [0, 2^32)), `time` (finite, not negative) or `environment.device_name`, a config twice for one
/// device and problem size, no record at all; and for keys that do not fit the file (see
/// `kernel_launcher_import`), or give two entries of one device the same key.
[[nodiscard]] kernel_launcher_wisdom
from_kernel_launcher_wisdom(std::string_view text, std::string_view source,
                            const kernel_launcher_import &what);

/// The tuning log stored beside an imported entry: where it came from, then its candidates.
[[nodiscard]] std::string kernel_launcher_import_log(const cache_entry &e, std::string_view source);

/// How entries are written as a wisdom file.
struct kernel_launcher_export {
  /// The header's `key`, which kernel_launcher compares with the kernel's tuning key; empty: the
  /// function's name.
  std::string tuning_key{};
  /// The problem size of the entries of each listed key (each must be some entry's key); an entry
  /// whose key is not listed must have a key that is a problem size (`from_key`).
  std::vector<std::pair<tunekit::key, kernel_launcher_problem_size>> problem_sizes{};
};

/// The file name kernel_launcher looks for: the tuning key with each character other than
/// `[0-9A-Za-z_.-]` replaced by `_`, then `.wisdom`.
[[nodiscard]] std::string kernel_launcher_file_name(std::string_view tuning_key);

/// Entries of one function (of any hardware and keys) as one wisdom file, laid out as
/// kernel_launcher's `write_wisdom` writes one: the header (`version` "1.0", `objective` "time",
/// `tunable_parameters` the candidates' fields in the order first seen, `key`), then per entry
/// (ordered by device name, then problem size) one record per valid candidate, fastest first:
/// `config` (the values in `tunable_parameters` order), `problem_size` (`[x, y, z]`), `time` (ms),
/// `environment` (`date` from the timestamp, `device_name` the hardware's name,
/// `compute_capability` from an `sm_<digits>` arch, versions from the dependencies). Failed,
/// wrong-result and pruned candidates are not written. Throws `tunekit::error` for entries a
/// wisdom file cannot hold: none, of two functions, candidates of templates, candidates with
/// different fields or no fields, a string that is not UTF-8, two candidates with the same config,
/// an entry without a valid candidate, a key that is no problem size and has none given, two
/// entries of one device name and problem size, a `problem_sizes` key that no entry has.
[[nodiscard]] std::string to_kernel_launcher_wisdom(const std::vector<cache_entry> &entries,
                                                    const kernel_launcher_export &how = {});

} // namespace tunekit
