// `tunekit`: inspect and manage what tunekit keeps on disk (winner caches, offline artifacts,
// lookup tables) and report this machine's devices. See docs/cli.md.
//
// Exit codes: 0 success; 1 something checked is bad (an artifact, a table); 2 an error (a missing
// directory, an unwritable file); CLI11's own codes for usage errors.

#include "devices.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/winner_cache.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

// --- JSON forms for --json output -------------------------------------------------------------

json to_json(const tunekit::value &v) {
  switch (v.type()) {
  case tunekit::value_type::int64:
    return v.as_int();
  case tunekit::value_type::float64:
    return v.as_double();
  case tunekit::value_type::boolean:
    return v.as_bool();
  case tunekit::value_type::string:
    return v.as_string();
  }
  return nullptr;
}

json to_json(const tunekit::key &k) {
  json j = json::array();
  for (const auto &v : k.values()) {
    j.push_back(to_json(v));
  }
  return j;
}

json to_json(const tunekit::config &c) {
  json j = json::object();
  for (const auto &f : c) {
    j[f.name] = to_json(f.value);
  }
  return j;
}

json to_json(const tunekit::hardware_info &hw) {
  return json{{"kind", hw.kind},       {"name", hw.name},   {"arch", hw.arch},
              {"units", hw.units},     {"count", hw.count}, {"digest", hw.digest()},
              {"text", hw.to_string()}};
}

std::string read_text(const fs::path &p, bool &ok) {
  std::ifstream in(p, std::ios::binary);
  ok = static_cast<bool>(in);
  std::stringstream s;
  if (ok) {
    s << in.rdbuf();
  }
  return s.str();
}

std::string format_ms(double ms) {
  if (!std::isfinite(ms)) {
    return "-";
  }
  std::ostringstream s;
  s.precision(4);
  s << ms << " ms";
  return s.str();
}

// --- the winner cache --------------------------------------------------------------------------

struct loaded_entry {
  fs::path path;
  std::optional<tunekit::cache_entry> entry;
  std::string problem;
};

std::vector<loaded_entry> load_entries(const tunekit::winner_cache &cache,
                                       const std::string &function) {
  std::vector<loaded_entry> out;
  for (const auto &p : cache.list(function)) {
    loaded_entry e;
    e.path = p;
    bool ok = false;
    const std::string text = read_text(p, ok);
    if (!ok) {
      e.problem = "cannot be read";
    } else {
      try {
        e.entry = tunekit::cache_entry_from_json(text);
      } catch (const tunekit::error &err) {
        e.problem = err.what();
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

double winner_time(const tunekit::cache_entry &e) { return e.candidates[e.winner_index].time_ms; }

json summary_json(const loaded_entry &l) {
  json j{{"path", l.path.string()}};
  if (!l.entry) {
    j["problem"] = l.problem;
    return j;
  }
  const auto &e = *l.entry;
  j["function"] = e.function.name;
  j["version"] = e.function.version;
  j["key"] = to_json(e.key);
  j["hardware"] = to_json(e.hardware);
  j["template_id"] = e.winner.template_id();
  j["winner"] = to_json(e.winner);
  j["time_ms"] = winner_time(e);
  j["timestamp"] = e.timestamp;
  return j;
}

int cache_list(const tunekit::winner_cache &cache, const std::string &function, bool as_json) {
  const auto entries = load_entries(cache, function);
  if (as_json) {
    json j = json::array();
    for (const auto &l : entries) {
      j.push_back(summary_json(l));
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (const auto &l : entries) {
    if (!l.entry) {
      std::cout << "BAD " << l.path.string() << ": " << l.problem << "\n";
      continue;
    }
    const auto &e = *l.entry;
    std::cout << e.function.name << "  " << e.function.version << "  " << e.key.to_string() << "  ["
              << e.winner.to_string() << "]  " << format_ms(winner_time(e)) << "  "
              << e.hardware.to_string() << "  " << l.path.string() << "\n";
  }
  std::cout << entries.size() << (entries.size() == 1 ? " entry" : " entries") << " in "
            << cache.root().string() << "\n";
  return 0;
}

int cache_show(const tunekit::winner_cache &cache, const std::string &function, bool as_json) {
  const auto entries = load_entries(cache, function);
  json all = json::array();
  for (const auto &l : entries) {
    if (as_json) {
      all.push_back(l.entry ? json::parse(tunekit::to_json(*l.entry)) : summary_json(l));
      all.back()["path"] = l.path.string();
      continue;
    }
    std::cout << l.path.string() << "\n";
    if (!l.entry) {
      std::cout << "  BAD: " << l.problem << "\n\n";
      continue;
    }
    const auto &e = *l.entry;
    std::cout << "  function  " << e.function.name << " (version '" << e.function.version
              << "')\n  key       " << e.key.to_string() << "\n  hardware  "
              << e.hardware.to_string() << "\n  measured  " << e.timestamp << " by " << e.measurer
              << ", " << e.policy.warmup << " warmup + " << e.policy.runs << " timed runs, "
              << tunekit::to_string(e.policy.stat) << ", world size " << e.world_size << "\n";
    for (std::size_t i = 0; i < e.candidates.size(); ++i) {
      const auto &c = e.candidates[i];
      std::cout << (i == e.winner_index ? "  * " : "    ") << "#" << i << " ["
                << c.config.to_string() << "] " << tunekit::to_string(c.status);
      if (c.status == tunekit::candidate_status::ok) {
        std::cout << " " << format_ms(c.time_ms);
      } else if (!c.reason.empty()) {
        std::cout << ": " << c.reason;
      }
      std::cout << "\n";
    }
    std::cout << "\n";
  }
  if (as_json) {
    std::cout << all.dump(2) << "\n";
  }
  return 0;
}

int cache_clear(const tunekit::winner_cache &cache, const std::string &function, bool as_json) {
  std::size_t removed = 0;
  for (const auto &p : cache.list(function)) {
    std::error_code ec;
    auto log = p;
    log.replace_extension(".log");
    fs::remove(log, ec);
    removed += fs::remove(p, ec) ? 1 : 0;
  }
  if (as_json) {
    std::cout << json{{"removed", removed}}.dump() << "\n";
  } else {
    std::cout
        << "removed " << removed << (removed == 1 ? " entry" : " entries") << " from "
        << (function.empty() ? cache.root() / "autotune" : cache.function_dir(function)).string()
        << "\n";
  }
  return 0;
}

// The valid entries of `function` (of `version` when given); throws when two versions would give
// the same output, since which one is meant is unclear.
std::vector<tunekit::cache_entry> valid_entries(const tunekit::winner_cache &cache,
                                                const std::string &function,
                                                const std::string &version) {
  std::vector<tunekit::cache_entry> out;
  for (auto &l : load_entries(cache, function)) {
    if (!l.entry) {
      std::cerr << "tunekit: skipping " << l.path.string() << ": " << l.problem << "\n";
    } else if (version.empty() || l.entry->function.version == version) {
      out.push_back(std::move(*l.entry));
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::size_t j = i + 1; j < out.size(); ++j) {
      if (out[i].function.name == out[j].function.name && out[i].key == out[j].key &&
          out[i].hardware == out[j].hardware) {
        throw tunekit::error("function '" + out[i].function.name + "' has entries of versions '" +
                             out[i].function.version + "' and '" + out[j].function.version +
                             "' for key " + out[i].key.to_string() + "; pass --version");
      }
    }
  }
  return out;
}

// --- artifacts ---------------------------------------------------------------------------------

int artifact_check(const fs::path &dir, bool as_json) {
  if (!fs::is_directory(dir)) {
    throw tunekit::error("no such directory: " + dir.string());
  }
  std::vector<fs::path> files;
  for (const auto &e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".json") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::size_t bad = 0;
  json list = json::array();
  for (const auto &f : files) {
    const std::string problem = tunekit::artifact_file_problem(f);
    bad += problem.empty() ? 0 : 1;
    if (as_json) {
      json r{{"file", f.string()}, {"ok", problem.empty()}};
      if (!problem.empty()) {
        r["problem"] = problem;
      }
      list.push_back(std::move(r));
    } else if (problem.empty()) {
      std::cout << "ok   " << f.string() << "\n";
    } else {
      std::cout << "BAD  " << f.string() << ": " << problem << "\n";
    }
  }
  if (as_json) {
    std::cout << json{{"dir", dir.string()}, {"files", list}, {"bad", bad}}.dump(2) << "\n";
  } else {
    std::cout << files.size() << (files.size() == 1 ? " artifact" : " artifacts") << ", " << bad
              << " bad\n";
  }
  return bad == 0 ? 0 : 1;
}

int artifact_emit(const tunekit::winner_cache &cache, const std::string &name,
                  const std::string &function, const std::string &version, const fs::path &out,
                  const std::vector<std::string> &key_names, bool as_json) {
  if (!tunekit::is_valid_artifact_name(name)) {
    throw tunekit::error("invalid artifact name '" + name +
                         "': use 1-64 letters, digits, '.', '_' or '-'");
  }
  json list = json::array();
  const auto entries = valid_entries(cache, function, version);
  if (entries.empty()) {
    throw tunekit::error("no valid winner-cache entries of function '" + function + "' in " +
                         cache.root().string());
  }
  for (const auto &e : entries) {
    tunekit::artifact a;
    a.name = name;
    a.key = e.key;
    if (key_names.size() == e.key.size()) {
      a.key_names = key_names;
    }
    a.device = tunekit::device_identity::of(e.hardware);
    a.config = e.winner;
    const auto path = tunekit::store_artifact(out, a);
    if (as_json) {
      list.push_back(
          json{{"file", path.string()}, {"key", to_json(e.key)}, {"config", to_json(e.winner)}});
    } else {
      std::cout << "wrote " << path.string() << "  " << e.key.to_string() << "  ["
                << e.winner.to_string() << "]\n";
    }
  }
  if (as_json) {
    std::cout << list.dump(2) << "\n";
  } else {
    std::cout << entries.size() << (entries.size() == 1 ? " artifact" : " artifacts")
              << " written to " << out.string() << "\n";
  }
  return 0;
}

// --- lookup tables -----------------------------------------------------------------------------

int table_check(const fs::path &file, bool as_json) {
  std::string problem;
  std::size_t keys = 0;
  std::size_t entries = 0;
  try {
    const auto t = tunekit::lookup_table::load(file);
    keys = t.size();
    for (const auto &[k, es] : t.entries()) {
      entries += es.size();
    }
  } catch (const tunekit::error &e) {
    problem = e.what();
  }
  if (as_json) {
    json j{{"file", file.string()}, {"ok", problem.empty()}, {"keys", keys}, {"entries", entries}};
    if (!problem.empty()) {
      j["problem"] = problem;
    }
    std::cout << j.dump(2) << "\n";
  } else if (problem.empty()) {
    std::cout << "ok   " << file.string() << ": " << keys << " keys, " << entries << " entries\n";
  } else {
    std::cout << "BAD  " << problem << "\n";
  }
  return problem.empty() ? 0 : 1;
}

int table_export(const tunekit::winner_cache &cache, const std::string &function,
                 const std::string &version, const std::string &op, std::size_t top_k,
                 const std::string &out) {
  if (top_k == 0) {
    throw tunekit::error("--top-k must be at least 1");
  }
  tunekit::lookup_table t;
  for (const auto &e : valid_entries(cache, function, version)) {
    std::vector<const tunekit::candidate_record *> ok;
    for (const auto &c : e.candidates) {
      if (c.status == tunekit::candidate_status::ok) {
        ok.push_back(&c);
      }
    }
    std::stable_sort(ok.begin(), ok.end(),
                     [](const auto *a, const auto *b) { return a->time_ms < b->time_ms; });
    const std::string key =
        tunekit::table_key(e.hardware.name, e.key, "", op.empty() ? e.function.name : op);
    if (t.find(key) != nullptr) {
      throw tunekit::error("two entries give the table key '" + key +
                           "' (several functions with one --op?)");
    }
    for (std::size_t i = 0; i < ok.size() && i < top_k; ++i) {
      t.add(key, tunekit::table_entry{ok[i]->config, ""});
    }
  }
  const std::string text = t.to_json();
  if (out.empty() || out == "-") {
    std::cout << text;
  } else {
    tunekit::write_file_atomically(out, text);
    std::cerr << "wrote " << t.size() << " keys to " << out << "\n";
  }
  return 0;
}

// --- devices -----------------------------------------------------------------------------------

int device(bool as_json) {
  std::string note;
  const tunekit::hardware_info host = tunekit::host_hardware();
  const auto accel = tunekit::cli::accelerators(note);
  auto identity = [](const tunekit::hardware_info &hw) {
    const auto d = tunekit::device_identity::of(hw);
    return json{{"name", d.name}, {"arch", d.arch}, {"units", d.units}};
  };
  if (as_json) {
    json j{{"host", to_json(host)}, {"devices", json::array()}};
    j["host"]["identity"] = identity(host);
    for (const auto &hw : accel) {
      json d = to_json(hw);
      d["identity"] = identity(hw);
      j["devices"].push_back(std::move(d));
    }
    if (!note.empty()) {
      j["note"] = note;
    }
    j["tunekit"] = tunekit::version();
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "host    " << host.to_string() << "\n        digest " << host.digest() << "\n";
  for (std::size_t i = 0; i < accel.size(); ++i) {
    std::cout << accel[i].kind << " " << i << "  " << accel[i].to_string() << "\n        digest "
              << accel[i].digest() << "\n";
  }
  if (!note.empty()) {
    std::cout << "(" << note << ")\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tunekit: inspect winner caches, offline artifacts, lookup tables and devices"};
  app.require_subcommand(1);
  std::string cache_dir;
  app.add_option("--cache-dir", cache_dir,
                 "winner cache directory (default: $TUNEKIT_CACHE_DIR, else the user cache)");
  bool as_json = false;
  int rc = 0;
  std::string function;
  std::string version;
  auto cache_of = [&] {
    return tunekit::winner_cache(cache_dir.empty() ? tunekit::environment::from_env().cache_dir
                                                   : fs::path(cache_dir));
  };
  auto json_flag = [&](CLI::App *sub) {
    sub->add_flag("--json", as_json, "machine-readable JSON on stdout");
  };

  auto *cache = app.add_subcommand("cache", "winner cache entries")->require_subcommand(1);
  for (const char *name : {"list", "show", "clear"}) {
    const std::string what = name == std::string("list")   ? "one line per entry"
                             : name == std::string("show") ? "every entry with its candidates"
                                                           : "remove entries and their logs";
    auto *sub = cache->add_subcommand(name, what);
    sub->add_option("--function", function, "only this function's entries");
    json_flag(sub);
    sub->callback([&, n = std::string(name)] {
      const auto c = cache_of();
      rc = n == "list"   ? cache_list(c, function, as_json)
           : n == "show" ? cache_show(c, function, as_json)
                         : cache_clear(c, function, as_json);
    });
  }

  auto *art = app.add_subcommand("artifact", "offline artifacts")->require_subcommand(1);
  std::string dir;
  auto *check = art->add_subcommand("check", "validate every artifact of a directory");
  check->add_option("DIR", dir, "artifact directory")->required();
  json_flag(check);
  check->callback([&] { rc = artifact_check(dir, as_json); });
  auto *emit = art->add_subcommand("emit", "write artifacts from winner cache entries");
  std::string name;
  std::string out;
  std::vector<std::string> key_names;
  emit->add_option("--name", name, "artifact name (the tuner's artifact_name)")->required();
  emit->add_option("--function", function, "the tuned function whose entries to emit")->required();
  emit->add_option("--version", version, "only entries of this function version");
  emit->add_option("--out", out, "artifact directory (default: $TUNEKIT_ARTIFACT_DIR)");
  emit->add_option("--key-names", key_names, "names of the key's values, recorded in the files")
      ->delimiter(',');
  json_flag(emit);
  emit->callback([&] {
    fs::path target = out.empty() ? tunekit::environment::from_env().artifact_dir : fs::path(out);
    if (target.empty()) {
      throw tunekit::error("no artifact directory: pass --out or set TUNEKIT_ARTIFACT_DIR");
    }
    rc = artifact_emit(cache_of(), name, function, version, target, key_names, as_json);
  });

  auto *table = app.add_subcommand("table", "lookup tables")->require_subcommand(1);
  std::string file;
  auto *tcheck = table->add_subcommand("check", "validate a lookup table file");
  tcheck->add_option("FILE", file, "lookup table")->required();
  json_flag(tcheck);
  tcheck->callback([&] { rc = table_check(file, as_json); });
  auto *texport =
      table->add_subcommand("export", "write a lookup table (device-specific keys) from the cache");
  std::string op;
  std::size_t top_k = 1;
  texport->add_option("--function", function, "only this function's entries");
  texport->add_option("--version", version, "only entries of this function version");
  texport->add_option("--op", op, "op name ending each key (default: the function name)");
  texport->add_option("--top-k", top_k, "keep the k fastest valid choices per key")
      ->capture_default_str();
  texport->add_option("--out", out, "output file (default: stdout)");
  texport->callback([&] { rc = table_export(cache_of(), function, version, op, top_k, out); });

  auto *dev = app.add_subcommand("device", "identity and hardware digest of this machine");
  json_flag(dev);
  dev->callback([&] { rc = device(as_json); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  } catch (const std::exception &e) {
    std::cerr << "tunekit: error: " << e.what() << "\n";
    return 2;
  }
  return rc;
}
