// `tunekit kernels list | clear`: the compile cache of runtime-compiled kernels
// (`<cache_dir>/kernels`, tunekit/cuda/rtc_cache.hpp). Built only with the cuda backend.

#include "commands.hpp"
#include "common.hpp"

#include "format.hpp"
#include "json_io.hpp"

#include <tunekit/cuda/rtc_cache.hpp>
#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace tunekit::cli {

using detail::json;

namespace {

// `18.4 KiB`.
std::string format_bytes(std::size_t bytes) {
  std::ostringstream s;
  s.precision(3);
  if (bytes < 1024) {
    s << bytes << " B";
  } else if (bytes < std::size_t{1024} * 1024) {
    s << static_cast<double>(bytes) / 1024.0 << " KiB";
  } else {
    s << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  }
  return s.str();
}

// What is wrong with a stored binary, or nothing: its header (`list`), then the file name against
// the header's target, then everything `load` checks (key, target, size, checksum), as the tuner
// would read it.
std::string problem_of(const std::filesystem::path &root, const cuda::kernel_cache_entry &e) {
  if (!e.problem.empty()) {
    return e.problem;
  }
  // The verdict is printed here; the warning `load` also logs would say it twice.
  const cuda::kernel_cache cache(root, [](log_level, std::string_view) {});
  const auto expected = cache.path_of(e.key, e.target);
  if (expected.filename() != e.path.filename()) {
    return "made for " + e.target + ", so it would be named " + expected.filename().string();
  }
  const auto loaded = cache.load(e.key, e.target);
  if (loaded.found()) {
    return {};
  }
  // `missing`: removed since `list` saw it.
  return loaded.detail.empty() ? std::string("cannot be read") : loaded.detail;
}

} // namespace

int kernels_list(const global_options &g, const kernels_options &o) {
  const auto root = existing_cache_root(g);
  const cuda::kernel_cache cache(root);
  const auto entries = cache.list();
  std::size_t bad = 0;
  json all = json::array();
  for (const auto &e : entries) {
    const std::string problem = problem_of(root, e);
    if (!problem.empty()) {
      ++bad;
    }
    if (o.json) {
      json j{{"path", e.path.string()}, {"key", e.key}};
      if (problem.empty()) {
        j.update(json{{"target", e.target},
                      {"description", e.description},
                      {"bytes", e.bytes},
                      {"compile_ms", e.compile_ms},
                      {"nvrtc", e.nvrtc},
                      {"created", e.created}});
      } else {
        j["problem"] = problem;
      }
      all.push_back(std::move(j));
    } else if (!problem.empty()) {
      std::cout << "BAD  " << e.path.string() << ": " << problem << "\n";
    } else {
      std::cout << "ok   " << e.key << "  " << e.target << "  " << format_bytes(e.bytes) << "  "
                << e.created << "  compiled in " << detail::format_ms(e.compile_ms) << " by NVRTC "
                << e.nvrtc << "  " << e.description << "\n";
    }
  }
  if (o.json) {
    std::cout << all.dump(2) << "\n";
  } else {
    std::cout << entries.size() << plural(entries.size(), " compiled kernel", " compiled kernels");
    if (bad > 0) {
      std::cout << " (" << bad << " bad)";
    }
    std::cout << " in " << cache.dir().string() << "\n";
  }
  return bad > 0 ? 1 : 0;
}

int kernels_clear(const global_options &g, const kernels_options &o) {
  const cuda::kernel_cache cache(existing_cache_root(g));
  std::size_t removed = 0;
  if (o.older_than_days < 0) {
    removed = cache.clear();
  } else {
    // Only binaries written more than the given days ago (BAD ones included).
    const auto age = std::chrono::duration_cast<std::filesystem::file_time_type::duration>(
        std::chrono::duration<double, std::ratio<86400>>(o.older_than_days));
    const auto cutoff = std::filesystem::file_time_type::clock::now() - age;
    for (const auto &e : cache.list()) {
      std::error_code ec;
      const auto written = std::filesystem::last_write_time(e.path, ec);
      if (ec || written >= cutoff) {
        continue;
      }
      const bool gone = std::filesystem::remove(e.path, ec);
      if (ec) {
        throw error("cannot remove " + e.path.string() + ": " + ec.message());
      }
      removed += gone ? 1 : 0;
    }
  }
  if (o.json) {
    std::cout << json{{"removed", removed}}.dump() << "\n";
  } else {
    std::cout << "removed " << removed << plural(removed, " compiled kernel", " compiled kernels")
              << " from " << cache.dir().string() << "\n";
  }
  return 0;
}

} // namespace tunekit::cli
