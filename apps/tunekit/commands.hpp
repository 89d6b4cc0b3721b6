#pragma once
// The subcommands of `tunekit`, one file each (cache_cmd.cpp, artifact_cmd.cpp, table_cmd.cpp,
// device_cmd.cpp, kernels_cmd.cpp) over library operations; main.cpp only wires them to CLI11. Each
// returns the exit code: 0 success, 1 something checked is bad. Errors throw (main.cpp exits 2).

#include <tunekit/winner_cache.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace tunekit::cli {

/// Options before the subcommand.
struct global_options {
  std::string cache_dir; ///< empty: $TUNEKIT_CACHE_DIR, else the user cache
};

/// The winner cache `--cache-dir` names, else the environment's, for reading: throws when its
/// directory does not exist (`existing_cache_root`).
[[nodiscard]] winner_cache open_cache(const global_options &g);

/// The valid entries of `function` (all functions when empty; of `version` when given), each bad
/// file reported on stderr. Throws when entries of two versions hold the same key and hardware,
/// since which one is meant is unclear.
[[nodiscard]] std::vector<cache_entry>
valid_entries(const winner_cache &cache, const std::string &function, const std::string &version);

struct cache_options {
  std::string function; ///< empty: every function
  bool json = false;
  bool long_lines = false; ///< `list --long`: hardware and path too, nothing shortened
};
[[nodiscard]] int cache_list(const global_options &g, const cache_options &o);
[[nodiscard]] int cache_show(const global_options &g, const cache_options &o);
[[nodiscard]] int cache_clear(const global_options &g, const cache_options &o);

/// `cache import kernel-tuner FILE` and `cache export kernel-tuner` (kernel_tuner_cmd.cpp):
/// Kernel Tuner cache files to and from entries (docs/formats.md). A bad file to import exits 1.
struct kernel_tuner_import_options {
  std::filesystem::path file;
  std::string function;
  std::string version;
  std::string key;       ///< a JSON array; empty: the file's problem_size
  std::string cache_dir; ///< given after the subcommand; wins over the global one
};
[[nodiscard]] int cache_import_kernel_tuner(const global_options &g,
                                            const kernel_tuner_import_options &o);

struct kernel_tuner_export_options {
  std::string function;
  std::string version;
  std::string key; ///< a JSON array: that entry to the file `out`; empty: all to the folder
  std::filesystem::path out;
  std::string cache_dir; ///< given after the subcommand; wins over the global one
};
[[nodiscard]] int cache_export_kernel_tuner(const global_options &g,
                                            const kernel_tuner_export_options &o);

/// `cache import kernel-launcher FILE` and `cache export kernel-launcher`
/// (kernel_launcher_cmd.cpp): kernel_launcher wisdom files to and from entries (docs/formats.md).
/// A bad file to import exits 1.
struct kernel_launcher_import_options {
  std::filesystem::path file;
  std::string function;
  std::string version;
  /// Each a JSON array (the key of every problem size), or `SIZE=KEY` (the key of one problem
  /// size); none: each problem size is its entries' key.
  std::vector<std::string> keys;
  std::string cache_dir; ///< given after the subcommand; wins over the global one
};
[[nodiscard]] int cache_import_kernel_launcher(const global_options &g,
                                               const kernel_launcher_import_options &o);

struct kernel_launcher_export_options {
  std::string function;
  std::string version;
  std::string tuning_key;                 ///< the header's key; empty: the function's name
  std::vector<std::string> problem_sizes; ///< each `KEY=SIZE`, for keys that are no problem size
  std::filesystem::path out;              ///< a file, or a folder for `<tuning key>.wisdom`
  std::string cache_dir;                  ///< given after the subcommand; wins over the global one
};
[[nodiscard]] int cache_export_kernel_launcher(const global_options &g,
                                               const kernel_launcher_export_options &o);

struct artifact_check_options {
  std::filesystem::path dir;
  bool json = false;
};
[[nodiscard]] int artifact_check(const artifact_check_options &o);

struct artifact_emit_options {
  std::string name;
  std::string function;
  std::string version;
  std::filesystem::path out; ///< empty: $TUNEKIT_ARTIFACT_DIR
  std::vector<std::string> key_names;
  bool json = false;
};
[[nodiscard]] int artifact_emit(const global_options &g, const artifact_emit_options &o);

struct table_check_options {
  std::filesystem::path file;
  bool json = false;
};
[[nodiscard]] int table_check(const table_check_options &o);

struct table_export_options {
  std::string function;
  std::string version;
  std::string op;
  std::size_t top_k = 1;
  std::vector<std::string> template_hashes; ///< "TEMPLATE_ID=HASH"
  std::string key_format = "tunekit";       ///< "tunekit" or "inductor"
  std::string out;                          ///< empty or "-": stdout
};
[[nodiscard]] int table_export(const global_options &g, const table_export_options &o);

/// `kernels list | clear` (kernels_cmd.cpp, built only with the cuda backend).
struct kernels_options {
  bool json = false;
  double older_than_days = -1; ///< `clear`: only binaries written before that; < 0: all
};
[[nodiscard]] int kernels_list(const global_options &g, const kernels_options &o);
[[nodiscard]] int kernels_clear(const global_options &g, const kernels_options &o);

/// `report` (report_cmd.cpp): the HTML report, made by the Python package's `tunekit.report`.
struct report_options {
  std::vector<std::string> functions; ///< empty: every function
  std::string out = "tunekit-report.html";
  std::vector<std::string> flop;  ///< `[NAME=]EXPR` work per call, passed on (docs/report.md)
  std::vector<std::string> bytes; ///< `[NAME=]EXPR` bytes per call, passed on
};
[[nodiscard]] int report(const global_options &g, const report_options &o);

struct device_options {
  bool json = false;
};
[[nodiscard]] int device(const device_options &o);

} // namespace tunekit::cli
