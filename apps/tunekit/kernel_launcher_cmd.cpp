// `tunekit cache import kernel-launcher FILE` and `tunekit cache export kernel-launcher`:
// kernel_launcher wisdom files to and from winner cache entries (docs/formats.md).

#include "commands.hpp"
#include "common.hpp"

#include "format.hpp"
#include "json_io.hpp"
#include "os.hpp"

#include <tunekit/error.hpp>
#include <tunekit/formats/kernel_launcher.hpp>

#include <nlohmann/json.hpp>

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

key key_of(const std::string &text, const std::string &option) {
  const auto j = detail::parse(text, option);
  if (!j.is_array()) {
    throw error(option + " must give the key as a JSON array of its values, e.g. '[4096, " +
                "\"float32\"]', not " + text);
  }
  return detail::key_from_json(j, option);
}

kernel_launcher_problem_size size_of(const std::string &text, const std::string &option) {
  const auto j = detail::parse(text, option);
  std::optional<kernel_launcher_problem_size> ps;
  if (j.is_array()) {
    try {
      ps = kernel_launcher_problem_size::from_key(detail::key_from_json(j, option));
    } catch (const error &) {
      ps.reset();
    }
  }
  if (!ps) {
    throw error(option + ": " + text +
                " is not a problem size (a JSON array of 1 to 3 ints from 0 to 4294967295)");
  }
  return *ps;
}

// `--key KEY` (every problem size's key) or `--key SIZE=KEY`. A text that is JSON as a whole is a
// key; otherwise the problem size ends at the first '=' (a problem size holds none).
void add_key(const std::string &text, kernel_launcher_import &what) {
  if (nlohmann::json::accept(text)) {
    if (what.key) {
      throw error("--key gives the key of every problem size twice (" + what.key->to_string() +
                  " and " + text + ")");
    }
    what.key = key_of(text, "--key");
    return;
  }
  const auto eq = text.find('=');
  if (eq == std::string::npos) {
    throw error("--key must be a JSON array, or SIZE=KEY (e.g. '[1024, 1024]=[1024, 1024, " +
                std::string("\"float32\"]'), not ") + text);
  }
  what.keys.emplace_back(size_of(text.substr(0, eq), "--key"),
                         key_of(text.substr(eq + 1), "--key"));
}

// `--problem-size KEY=SIZE`: a problem size holds no '=', so it starts after the last one.
std::pair<key, kernel_launcher_problem_size> problem_size_option(const std::string &text) {
  const auto eq = text.rfind('=');
  if (eq == std::string::npos) {
    throw error("--problem-size must be KEY=SIZE (e.g. '[4096, \"float32\"]=[4096]'), not " + text);
  }
  return {key_of(text.substr(0, eq), "--problem-size"),
          size_of(text.substr(eq + 1), "--problem-size")};
}

} // namespace

int cache_import_kernel_launcher(const global_options &g, const kernel_launcher_import_options &o) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(o.file, ec)) {
    throw error("no such file: " + o.file.string());
  }
  kernel_launcher_import what{{o.function, o.version}, std::nullopt, {}};
  for (const auto &k : o.keys) {
    add_key(k, what);
  }
  kernel_launcher_wisdom wisdom;
  try {
    wisdom = from_kernel_launcher_wisdom(read_kernel_launcher_file(o.file), o.file.string(), what);
  } catch (const error &bad) { // the file was read and is not one tunekit can import
    std::cerr << "tunekit: error: " << bad.what() << "\n";
    return 1;
  }
  // An import makes the cache directory when it is not there.
  const winner_cache cache(cache_root(with_cache_dir(g, o.cache_dir)));
  for (const auto &e : wisdom.entries) {
    const bool replaced =
        std::filesystem::exists(cache.entry_path(e.function, e.hardware, e.key), ec);
    const auto path = cache.store(e, kernel_launcher_import_log(e, o.file.string()));
    const std::size_t n = e.candidates.size();
    std::cout << (replaced ? "replaced " : "wrote ") << path.string() << "\n  " << n
              << plural(n, " config", " configs") << " of " << e.hardware.name << ", key "
              << e.key.to_string() << ", winner [" << e.winner.to_string() << "] "
              << detail::format_ms(e.candidates[e.winner_index].time_ms) << "\n";
  }
  const std::size_t n = wisdom.entries.size();
  std::cout << n << plural(n, " entry", " entries") << " of tuning key '" << wisdom.tuning_key
            << "' imported from " << o.file.string() << "\n";
  return 0;
}

int cache_export_kernel_launcher(const global_options &g, const kernel_launcher_export_options &o) {
  kernel_launcher_export how;
  how.tuning_key = o.tuning_key;
  for (const auto &p : o.problem_sizes) {
    how.problem_sizes.push_back(problem_size_option(p));
  }
  const winner_cache cache = open_cache(with_cache_dir(g, o.cache_dir));
  const auto entries = valid_entries(cache, o.function, o.version);
  if (entries.empty()) {
    throw error("no valid winner-cache entries of function '" + o.function + "'" +
                (o.version.empty() ? std::string() : " version '" + o.version + "'") + " in " +
                cache.root().string());
  }
  const std::string text = to_kernel_launcher_wisdom(entries, how);
  const std::string name =
      kernel_launcher_file_name(how.tuning_key.empty() ? o.function : how.tuning_key);
  std::error_code ec;
  auto path = o.out;
  if (std::filesystem::is_directory(path, ec)) {
    path /= name;
  }
  detail::write_file_atomically(path, text);
  std::size_t records = 0;
  std::string lines;
  for (const auto &e : entries) {
    std::size_t valid = 0;
    for (const auto &c : e.candidates) {
      valid += c.status == candidate_status::ok ? 1 : 0;
    }
    records += valid;
    auto ps = kernel_launcher_problem_size::from_key(e.key);
    for (const auto &[k, size] : how.problem_sizes) {
      if (k == e.key) {
        ps = size;
      }
    }
    lines += "  " + e.key.to_string() + "  problem size [" + std::to_string(ps->x) + ", " +
             std::to_string(ps->y) + ", " + std::to_string(ps->z) + "]  " + e.hardware.name +
             "  [" + e.winner.to_string() + "]  " + std::to_string(valid) +
             plural(valid, " record", " records") + "\n";
  }
  std::cout << "wrote " << path.string() << ": " << entries.size()
            << plural(entries.size(), " entry", " entries") << ", " << records
            << plural(records, " record", " records") << "\n"
            << lines;
  if (path.filename().string() != name) {
    std::cerr << "tunekit: note: kernel_launcher looks for the wisdom of tuning key '"
              << (how.tuning_key.empty() ? o.function : how.tuning_key) << "' in " << name << "\n";
  }
  return 0;
}

} // namespace tunekit::cli
