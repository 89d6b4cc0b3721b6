// `tunekit cache import kernel-tuner FILE` and `tunekit cache export kernel-tuner`: Kernel Tuner
// cache files to and from winner cache entries (docs/formats.md).

#include "commands.hpp"
#include "common.hpp"

#include "format.hpp"
#include "json_io.hpp"
#include "os.hpp"

#include <tunekit/error.hpp>
#include <tunekit/formats/kernel_tuner.hpp>

#include <iostream>
#include <system_error>

namespace tunekit::cli {

namespace {

global_options with_cache_dir(const global_options &g, const std::string &cache_dir) {
  global_options out = g;
  if (!cache_dir.empty()) {
    out.cache_dir = cache_dir;
  }
  return out;
}

key key_option(const std::string &text) {
  const auto j = detail::parse(text, "--key");
  if (!j.is_array()) {
    throw error("--key must be a JSON array of the key's values, e.g. '[4096, \"float32\"]', not " +
                text);
  }
  return detail::key_from_json(j, "--key");
}

std::size_t failed(const cache_entry &e) {
  std::size_t n = 0;
  for (const auto &c : e.candidates) {
    n += c.status == candidate_status::ok ? 0 : 1;
  }
  return n;
}

} // namespace

int cache_import_kernel_tuner(const global_options &g, const kernel_tuner_import_options &o) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(o.file, ec)) {
    throw error("no such file: " + o.file.string());
  }
  kernel_tuner_import what{{o.function, o.version}, std::nullopt};
  if (!o.key.empty()) {
    what.key = key_option(o.key);
  }
  cache_entry e;
  try {
    e = from_kernel_tuner_cache(read_kernel_tuner_file(o.file), o.file.string(), what);
  } catch (const error &bad) { // the file was read and is not one tunekit can import
    std::cerr << "tunekit: error: " << bad.what() << "\n";
    return 1;
  }
  // An import makes the cache directory when it is not there.
  const winner_cache cache(cache_root(with_cache_dir(g, o.cache_dir)));
  const bool replaced =
      std::filesystem::exists(cache.entry_path(e.function, e.hardware, e.key), ec);
  const auto path = cache.store(e, kernel_tuner_import_log(e, o.file.string()));
  const std::size_t n = e.candidates.size();
  std::cout << (replaced ? "replaced " : "wrote ") << path.string() << "\n  " << n
            << plural(n, " config", " configs") << " (" << failed(e) << " failed) of "
            << e.hardware.name << ", key " << e.key.to_string() << ", winner ["
            << e.winner.to_string() << "] "
            << detail::format_ms(e.candidates[e.winner_index].time_ms) << "\n";
  return 0;
}

int cache_export_kernel_tuner(const global_options &g, const kernel_tuner_export_options &o) {
  const winner_cache cache = open_cache(with_cache_dir(g, o.cache_dir));
  auto entries = valid_entries(cache, o.function, o.version);
  std::optional<key> wanted;
  if (!o.key.empty()) {
    wanted = key_option(o.key);
    std::erase_if(entries, [&](const cache_entry &e) { return !(e.key == *wanted); });
  }
  if (entries.empty()) {
    throw error("no valid winner-cache entries of function '" + o.function + "'" +
                (wanted ? " for key " + wanted->to_string() : std::string()) + " in " +
                cache.root().string());
  }
  if (wanted && entries.size() > 1) {
    std::string where;
    for (const auto &e : entries) {
      where += "\n  " + e.hardware.to_string() + " (version '" + e.function.version + "')";
    }
    throw error("function '" + o.function + "' has " + std::to_string(entries.size()) +
                " entries for key " + wanted->to_string() + ":" + where +
                "\npass --version, or leave out --key to write one file per entry to a folder");
  }
  // Every file is made (and so checked) before the first is written.
  std::vector<std::pair<std::filesystem::path, std::string>> files;
  for (const auto &e : entries) {
    auto path = o.out;
    if (!wanted || std::filesystem::is_directory(path)) {
      const auto entry = cache.entry_path(e.function, e.hardware, e.key);
      path /= cache.function_dir(e.function.name).filename().string() + "-" +
              entry.stem().string() + ".json";
    }
    files.emplace_back(std::move(path), to_kernel_tuner_cache(e));
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    detail::write_file_atomically(files[i].first, files[i].second);
    const auto &e = entries[i];
    std::cout << "wrote " << files[i].first.string() << "  " << e.key.to_string() << "  "
              << e.hardware.name << "  [" << e.winner.to_string() << "]  " << e.candidates.size()
              << plural(e.candidates.size(), " config", " configs") << "\n";
  }
  if (files.size() > 1 || !wanted) {
    std::cout << files.size() << plural(files.size(), " file", " files") << " written to "
              << o.out.string() << "\n";
  }
  return 0;
}

} // namespace tunekit::cli
