#pragma once
/// \file rtc_cache.hpp
/// The compile cache of runtime-compiled kernels: one file per compiled program under
/// `<cache_dir>/kernels/`, named by the SHA-256 of everything that went into the compile (source,
/// every header's contents, options, compile-time values, NVRTC version, target architecture).
///
/// A file is a one-line JSON header (schema, key, target, lowered name, payload size and SHA-256)
/// followed by the binary (a cubin, or PTX where the driver compiles it at load). Files are
/// written atomically; a reader that finds a truncated, corrupt or mismatched file reports it
/// through the log sink and answers why it did not use it (`load_result`), so the kernel is
/// compiled again and the file rewritten. Nothing here touches CUDA: the cache is plain files.
///
/// \code
/// tunekit::cuda::kernel_cache cache(tunekit::environment::from_env().cache_dir);
/// for (const auto &e : cache.list()) std::printf("%s %s\n", e.key.c_str(), e.description.c_str());
/// cache.clear();  // `tunekit kernels clear`
/// \endcode

#include <tunekit/load_result.hpp>
#include <tunekit/log.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::cuda {

/// One compiled program as the compile cache stores it.
struct kernel_binary {
  /// SHA-256 (hex) of the compile's inputs; names the file.
  std::string key;
  /// "sm_90": a cubin for that architecture; "compute_90": PTX the driver compiles at load.
  std::string target;
  /// The entry point's lowered (mangled) name, as `cuModuleGetFunction` wants it.
  std::string lowered_name;
  /// What was compiled, for people: `gemm [MWG=64, NWG=64, ...]`.
  std::string description;
  /// The cubin or PTX bytes.
  std::string binary;
  /// How long NVRTC took, in milliseconds.
  double compile_ms = 0;
  /// NVRTC version that compiled it ("13.0").
  std::string nvrtc;
};

/// What `kernel_cache::list` reports about one stored binary (the header only; the payload is not
/// checked).
struct kernel_cache_entry {
  std::filesystem::path path;
  std::string key;
  std::string target;
  std::string description;
  std::string nvrtc;     ///< NVRTC version that compiled it ("13.0")
  std::string created;   ///< UTC, ISO 8601
  std::size_t bytes = 0; ///< payload size
  double compile_ms = 0; ///< NVRTC time
  std::string problem;   ///< non-empty when the header cannot be read (the file is corrupt)
};

/// The compile cache on disk. Cheap to copy; safe to use from several threads and processes (each
/// write is a rename of a complete file).
class kernel_cache final {
public:
  /// `root` is the tunekit cache directory (`environment::cache_dir`); binaries go to
  /// `<root>/kernels/`. `log` receives the warnings about skipped files (default:
  /// `default_log_sink()`).
  explicit kernel_cache(std::filesystem::path root, log_sink log = {});

  /// The cache of `environment::from_env().cache_dir`.
  [[nodiscard]] static kernel_cache from_env(log_sink log = {});

  /// `<root>/kernels`.
  [[nodiscard]] const std::filesystem::path &dir() const noexcept { return m_dir; }
  /// `<dir>/<key>.cubin` for a cubin target, `<dir>/<key>.ptx` for a PTX one.
  [[nodiscard]] std::filesystem::path path_of(std::string_view key, std::string_view target) const;

  /// The stored binary of `key` for `target` (`found`), or why there is none: `missing` (no
  /// file), `unreadable`, `invalid` (truncated, corrupt, not a binary of this cache) or
  /// `identity_mismatch` (made for another key or target), with `detail` saying what and `path`
  /// naming the file. A file that exists but is not used is also reported to the log sink as
  /// "compile cache: skipping <path>: <detail>; compiling it again" (the caller compiles again and
  /// `store` replaces it). Never throws for a bad file.
  ///
  /// \code
  /// if (const auto r = cache.load(key, "sm_90"); r.found()) {
  ///   use(r.value->binary);
  /// } else if (r.rejected()) {
  ///   std::printf("%s: %s (%s)\n", r.path.c_str(), r.detail.c_str(),
  ///               std::string(tunekit::to_string(r.status)).c_str());
  /// }
  /// \endcode
  [[nodiscard]] load_result<kernel_binary> load(std::string_view key,
                                                std::string_view target) const;

  /// Writes `b` atomically (temp file, then rename). Throws `tunekit::error` naming the path when
  /// it cannot be written.
  void store(const kernel_binary &b) const;

  /// Every stored binary, sorted by path (`tunekit kernels list`).
  [[nodiscard]] std::vector<kernel_cache_entry> list() const;

  /// Removes every stored binary (and stale temp files); returns how many binaries were removed
  /// (`tunekit kernels clear`). Throws `tunekit::error` when a file cannot be removed.
  std::size_t clear() const;

private:
  std::filesystem::path m_dir;
  log_sink m_log;
};

} // namespace tunekit::cuda
