// `tunekit cache list | show | clear`, and the valid entries the other commands read.

#include "commands.hpp"
#include "common.hpp"

#include "format.hpp"
#include "json_io.hpp"

#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>

#include <iostream>

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

} // namespace

std::filesystem::path cache_root(const global_options &g) {
  return g.cache_dir.empty() ? environment::from_env().cache_dir
                             : std::filesystem::path(g.cache_dir);
}

winner_cache open_cache(const global_options &g) { return winner_cache(cache_root(g)); }

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
