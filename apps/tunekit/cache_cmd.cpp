// `tunekit cache list | show | clear`, and the valid entries the other commands read.

#include "commands.hpp"
#include "common.hpp"

#include "format.hpp"
#include "json_io.hpp"

#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <system_error>

namespace tunekit::cli {

using detail::json;

namespace {

double winner_time(const cache_entry &e) { return e.candidates[e.winner_index].time_ms; }

json summary_json(const load_result<cache_entry> &r) {
  json j{{"path", r.path.string()}};
  if (!r.found()) {
    j["problem"] = r.detail;
    return j;
  }
  const auto &e = *r.value;
  j["function"] = e.function.name;
  j["version"] = e.function.version;
  j["key"] = detail::to_json(e.key);
  j["hardware"] = detail::to_json(e.hardware);
  j["template_id"] = e.winner.template_id();
  j["winner"] = detail::to_json(e.winner);
  j["time_ms"] = winner_time(e);
  j["timestamp"] = e.timestamp;
  return j;
}

std::vector<load_result<cache_entry>> read_all(const winner_cache &cache,
                                               const std::string &function) {
  std::vector<load_result<cache_entry>> out;
  for (const auto &p : cache.list(function)) {
    out.push_back(winner_cache::read(p));
  }
  return out;
}

// 1 when any entry was reported bad.
int exit_code(const std::vector<load_result<cache_entry>> &entries) {
  for (const auto &r : entries) {
    if (!r.found()) {
      return 1;
    }
  }
  return 0;
}

void print_entry(const cache_entry &e) {
  std::cout << "  function  " << e.function.name << " (version '" << e.function.version
            << "')\n  key       " << e.key.to_string() << "\n  hardware  " << e.hardware.to_string()
            << "\n  measured  " << e.timestamp << " by " << e.measurer << ", " << e.policy.warmup
            << " warmup + " << e.policy.runs << " timed runs, " << to_string(e.policy.stat);
  if (e.policy.early_stop_factor != 0) {
    std::cout << ", early stop after " << e.policy.early_stop_after << " runs beyond "
              << e.policy.early_stop_factor << " x best";
  }
  std::cout << ", world size " << e.world_size << "\n";
  for (std::size_t i = 0; i < e.candidates.size(); ++i) {
    const auto &c = e.candidates[i];
    std::cout << (i == e.winner_index ? "  * " : "    ") << "#" << i << " [" << c.config.to_string()
              << "] " << to_string(c.status);
    if (c.status == candidate_status::ok) {
      std::cout << " " << detail::format_ms(c.time_ms);
      if (!c.reason.empty()) {
        std::cout << " (" << c.reason << ")";
      }
    } else if (!c.reason.empty()) {
      std::cout << ": " << c.reason;
    }
    std::cout << "\n";
  }
}

// The columns `cache list` prints on one line (its `--long` lines are not cut).
constexpr std::size_t list_width = 100;

// `open + inner + close` in at most `width` characters: `inner` (values or fields joined by ", ")
// is cut after the last whole item that fits, and ", ..." marks what was left out.
std::string elide(const std::string &open, const std::string &inner, const std::string &close,
                  std::size_t width) {
  if (open.size() + inner.size() + close.size() <= width) {
    return open + inner + close;
  }
  const std::string more = ", ...";
  const std::size_t room = width > open.size() + more.size() + close.size()
                               ? width - open.size() - more.size() - close.size()
                               : 0;
  std::size_t cut = room == 0 ? std::string::npos : inner.rfind(", ", room);
  if (cut == std::string::npos || cut == 0) { // not even one item fits: cut inside the first
    cut = std::min(room + more.size() - 3, inner.size());
    while (cut > 0 && (static_cast<unsigned char>(inner[cut]) & 0xC0U) == 0x80U) {
      --cut; // not inside a UTF-8 sequence
    }
    return open + inner.substr(0, cut) + "..." + close;
  }
  return open + inner.substr(0, cut) + more + close;
}

// A version too long for a line (a digest): its first and last four characters.
std::string short_version(const std::string &v) {
  return v.size() <= 12 ? v : v.substr(0, 4) + "..." + v.substr(v.size() - 4);
}

// One line of `cache list`: function, version (when there is one), key, winner and its time, in
// at most `list_width` columns (the key and the winner are cut when both do not fit).
std::string list_line(const cache_entry &e) {
  std::string head = e.function.name;
  if (!e.function.version.empty()) {
    head.append("  ").append(short_version(e.function.version));
  }
  const std::string tail = "  " + detail::format_ms(winner_time(e));
  std::string k = e.key.to_string(); // "(v, ...)"
  if (k.size() >= 2 && k.front() == '(' && k.back() == ')') {
    k = k.substr(1, k.size() - 2);
  }
  const std::string w = e.winner.to_string();
  const std::size_t fixed = head.size() + 2 + 2 + tail.size(); // the two separators
  const std::size_t room = list_width > fixed + 24 ? list_width - fixed : 24;
  // The key gets half of the room, or what the winner leaves; the winner what the key leaves.
  const std::size_t winner_full = w.size() + 2;
  const std::string key_text =
      elide("(", k, ")", std::max(room / 2, room - std::min(winner_full, room)));
  std::string line = head;
  line.append("  ").append(key_text);
  line.append("  ").append(elide("[", w, "]", room - key_text.size()));
  line.append(tail);
  return line;
}

} // namespace

std::filesystem::path cache_root(const global_options &g) {
  return g.cache_dir.empty() ? environment::from_env().cache_dir
                             : std::filesystem::path(g.cache_dir);
}

std::filesystem::path existing_cache_root(const global_options &g) {
  const std::filesystem::path root = cache_root(g);
  std::error_code ec;
  if (std::filesystem::is_directory(root, ec)) {
    return root;
  }
  const char *env = std::getenv("TUNEKIT_CACHE_DIR"); // NOLINT(concurrency-mt-unsafe)
  const std::string from = !g.cache_dir.empty()             ? "--cache-dir"
                           : env != nullptr && *env != '\0' ? "$TUNEKIT_CACHE_DIR"
                                                            : "the user cache";
  const bool exists = std::filesystem::exists(root, ec);
  throw error("cache directory " + root.string() +
              (exists ? " is not a directory" : " does not exist") + " (" + from + ")");
}

winner_cache open_cache(const global_options &g) { return winner_cache(existing_cache_root(g)); }

std::vector<cache_entry> valid_entries(const winner_cache &cache, const std::string &function,
                                       const std::string &version) {
  std::vector<cache_entry> out;
  for (auto &r : read_all(cache, function)) {
    if (!r.found()) {
      std::cerr << "tunekit: skipping " << r.path.string() << ": " << r.detail << "\n";
    } else if (version.empty() || r.value->function.version == version) {
      out.push_back(std::move(*r.value));
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::size_t j = i + 1; j < out.size(); ++j) {
      if (out[i].function.name == out[j].function.name && out[i].key == out[j].key &&
          out[i].hardware == out[j].hardware) {
        throw error("function '" + out[i].function.name + "' has entries of versions '" +
                    out[i].function.version + "' and '" + out[j].function.version + "' for key " +
                    out[i].key.to_string() + "; pass --version");
      }
    }
  }
  return out;
}

int cache_list(const global_options &g, const cache_options &o) {
  const winner_cache cache = open_cache(g);
  const auto entries = read_all(cache, o.function);
  if (o.json) {
    json j = json::array();
    for (const auto &r : entries) {
      j.push_back(summary_json(r));
    }
    std::cout << j.dump(2) << "\n";
    return exit_code(entries);
  }
  std::size_t bad = 0;
  for (const auto &r : entries) {
    if (!r.found()) {
      ++bad;
      std::cout << "BAD " << r.path.string() << ": " << r.detail << "\n";
      continue;
    }
    const auto &e = *r.value;
    if (!o.long_lines) {
      std::cout << list_line(e) << "\n";
      continue;
    }
    std::cout << e.function.name << "  " << e.function.version << "  " << e.key.to_string() << "  ["
              << e.winner.to_string() << "]  " << detail::format_ms(winner_time(e)) << "  "
              << e.hardware.to_string() << "  " << r.path.string() << "\n";
  }
  std::cout << entries.size() << plural(entries.size(), " entry", " entries");
  if (bad > 0) {
    std::cout << " (" << bad << " bad)";
  }
  std::cout << " in " << cache.root().string() << "\n";
  return exit_code(entries);
}

int cache_show(const global_options &g, const cache_options &o) {
  const auto entries = read_all(open_cache(g), o.function);
  json all = json::array();
  for (const auto &r : entries) {
    if (o.json) {
      all.push_back(r.found() ? json::parse(to_json(*r.value)) : summary_json(r));
      all.back()["path"] = r.path.string();
      continue;
    }
    std::cout << r.path.string() << "\n";
    if (r.found()) {
      print_entry(*r.value);
    } else {
      std::cout << "  BAD: " << r.detail << "\n";
    }
    std::cout << "\n";
  }
  if (o.json) {
    std::cout << all.dump(2) << "\n";
  }
  return exit_code(entries);
}

int cache_clear(const global_options &g, const cache_options &o) {
  const winner_cache cache = open_cache(g);
  const std::size_t removed = cache.remove(o.function).size();
  if (o.json) {
    std::cout << json{{"removed", removed}}.dump() << "\n";
  } else {
    std::cout << "removed " << removed << plural(removed, " entry", " entries") << " from "
              << (o.function.empty() ? cache.root() / "autotune" : cache.function_dir(o.function))
                     .string()
              << "\n";
  }
  return 0;
}

} // namespace tunekit::cli
