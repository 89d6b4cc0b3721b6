// Kernel Tuner cache files to and from winner cache entries (formats/kernel_tuner.hpp). The file is
// parsed by kernel_tuner_file.cpp, the parser the replay of measured spaces shares; this file maps
// it to an entry and writes an entry back in the layout of Kernel Tuner's own writer
// (`kernel_tuner.util.process_cache` for the header, `store_cache` for each record, `close_cache`
// for the end), which its reader (`read_cache`, `correct_open_cache`) expects: a file whose text
// does not end in `}\n}` is taken for one a crashed run left open, and gets braces appended.

#include "kernel_tuner_file.hpp"

#include "../json_io.hpp"
#include "../timestamp.hpp"

#include <tunekit/error.hpp>
#include <tunekit/formats/kernel_tuner.hpp>
#include <tunekit/measure.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

namespace tunekit {

namespace kt = detail::kernel_tuner;
using kt::json;

namespace {

constexpr std::string_view label = "Kernel Tuner cache file";

// Kernel Tuner's default number of timed runs per config (`tune_kernel(iterations=7)`).
constexpr int kernel_tuner_iterations = 7;

// The names Kernel Tuner gives the members of a record besides the parameters
// (`kernel_tuner.cache.cache.Cache.RESERVED_PARAM_KEYS`, and the error member).
constexpr std::array<std::string_view, 10> reserved_names = {
    "time",          "times",          "compile_time", "verification_time", "benchmark_time",
    "strategy_time", "framework_time", "timestamp",    "GFLOP/s",           "__error__"};

[[noreturn]] void fail(std::string_view source, const std::string &what) {
  throw error(std::string(label) + " " + std::string(source) + ": " + what);
}

bool digits(std::string_view s, std::size_t from, std::size_t n) {
  return s.size() >= from + n && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(from),
                                             s.begin() + static_cast<std::ptrdiff_t>(from + n),
                                             [](char c) { return c >= '0' && c <= '9'; });
}

// Kernel Tuner's `str(datetime.now(timezone.utc))` (`2024-06-18 11:36:56.137831+00:00`) as
// tunekit's `2024-06-18T11:36:56Z`; nullopt for another form or another time zone.
std::optional<std::string> tunekit_timestamp(std::string_view s) {
  if (!digits(s, 0, 4) || s[4] != '-' || !digits(s, 5, 2) || s[7] != '-' || !digits(s, 8, 2) ||
      (s[10] != ' ' && s[10] != 'T') || !digits(s, 11, 2) || s[13] != ':' || !digits(s, 14, 2) ||
      s[16] != ':' || !digits(s, 17, 2)) {
    return std::nullopt;
  }
  std::string_view rest = s.substr(19);
  if (rest.starts_with('.')) {
    std::size_t n = 1;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') {
      ++n;
    }
    rest.remove_prefix(n);
  }
  if (!rest.empty() && rest != "Z" && rest != "+00:00") {
    return std::nullopt;
  }
  return std::string(s.substr(0, 10)) + "T" + std::string(s.substr(11, 8)) + "Z";
}

// tunekit's `2026-11-29T22:28:28Z` as Kernel Tuner writes a time stamp; other text as it is.
std::string kernel_tuner_timestamp(const std::string &s) {
  if (s.size() == 20 && s[10] == 'T' && s.back() == 'Z' && tunekit_timestamp(s)) {
    return s.substr(0, 10) + " " + s.substr(11, 8) + "+00:00";
  }
  return s;
}

key key_of_problem_size(const json &doc, std::string_view source) {
  const auto it = doc.find("problem_size");
  const std::string advice = ": pass the key (--key) the entry is to be stored under";
  if (it == doc.end()) {
    fail(source, "has no 'problem_size' to key the entry by" + advice);
  }
  key k;
  try {
    if (it->is_array() && !it->empty()) {
      for (std::size_t i = 0; i < it->size(); ++i) {
        const json &v = (*it)[i];
        if (!v.is_primitive() || v.is_null()) {
          fail(source, "'problem_size' holds " + v.dump() + ", not a value" + advice);
        }
        k.push_back(detail::value_from_json(v, "problem_size[" + std::to_string(i) + "]"));
      }
    } else if (it->is_number_integer()) {
      k.push_back(detail::value_from_json(*it, "problem_size"));
    } else {
      fail(source, "'problem_size' is " + it->dump() + ", not an int or a list of values" + advice);
    }
  } catch (const error &e) {
    if (std::string_view(e.what()).starts_with(label)) {
      throw;
    }
    fail(source, e.what());
  }
  return k;
}

double time_member(const json &rec, std::string_view name, std::string_view where,
                   std::string_view source) {
  const json &t = rec.at(std::string(name));
  if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() < 0) {
    fail(source, std::string(where) + ": '" + std::string(name) + "' is " + t.dump() +
                     ", not a non-negative number of milliseconds");
  }
  return t.get<double>();
}

// Python's `json.dumps(j)` (separators ", " and ": ", non-ASCII escaped), as `store_cache` writes
// each record.
void python_dumps(const json &j, std::string &out) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto &[k, v] : j.items()) {
      out += first ? "" : ", ";
      first = false;
      out += json(k).dump(-1, ' ', true);
      out += ": ";
      python_dumps(v, out);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < j.size(); ++i) {
      out += i == 0 ? "" : ", ";
      python_dumps(j[i], out);
    }
    out += ']';
  } else {
    out += j.dump(-1, ' ', true);
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The error marker a candidate that did not run becomes.
std::string error_marker(const candidate_record &c) {
  if (kt::is_error_marker(c.reason)) {
    return c.reason;
  }
  switch (c.status) {
  case candidate_status::pruned:
    return "InvalidConfig";
  case candidate_status::failed:
    return lower(c.reason).find("compil") != std::string::npos ? "CompilationFailedConfig"
                                                               : "RuntimeFailedConfig";
  default:
    return "RuntimeFailedConfig";
  }
}

std::string entry_name(const cache_entry &e) {
  return "entry of '" + e.function.name + "' for key " + e.key.to_string();
}

} // namespace

std::string read_kernel_tuner_file(const std::filesystem::path &path) {
  return kt::read_text(path, label);
}

cache_entry from_kernel_tuner_cache(std::string_view text, std::string_view source,
                                    const kernel_tuner_import &what) {
  const kt::file f = kt::parse(text, source, label);
  const json &doc = f.doc;
  cache_entry e;
  e.function = what.function;
  const auto device = doc.find("device_name");
  if (device == doc.end() || !device->is_string()) {
    fail(source, device == doc.end() ? "has no 'device_name'"
                                     : "'device_name' is " + device->dump() + ", not a string");
  }
  for (const auto &p : f.params) {
    if (std::find(reserved_names.begin(), reserved_names.end(), p.name) != reserved_names.end()) {
      fail(source, "parameter '" + p.name + "' has the name of a member of every record");
    }
  }
  e.hardware = hardware_info{"kernel_tuner", device->get<std::string>(), "unknown", 0, 1};
  e.key = what.key ? *what.key : key_of_problem_size(doc, source);
  if (f.records.empty()) {
    fail(source, "has an empty 'cache': no config to import");
  }
  std::optional<std::string> newest;
  std::optional<std::size_t> winner;
  std::size_t winner_runs = 0;
  for (const auto &r : f.records) {
    const std::string where = "cache entry \"" + r.key + "\"";
    candidate_record c;
    c.config = config(r.fields);
    const json &rec = *r.body;
    if (rec.contains("compile_time")) {
      if (const double ms = time_member(rec, "compile_time", where, source); ms > 0) {
        c.prepare_ms = ms;
      }
    }
    if (auto ts = rec.find("timestamp"); ts != rec.end() && ts->is_string()) {
      if (auto t = tunekit_timestamp(ts->get_ref<const std::string &>());
          t && (!newest || *t > *newest)) {
        newest = std::move(t);
      }
    }
    std::size_t runs = 0;
    if (r.error.empty()) {
      c.status = candidate_status::ok;
      c.time_ms = r.time_ms;
      c.stats = sample_stats{r.time_ms, r.time_ms, r.time_ms, r.time_ms, 0};
      if (auto times = rec.find("times"); times != rec.end()) {
        std::vector<double> samples;
        if (times->is_array()) {
          for (const json &t : *times) {
            if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() < 0) {
              samples.clear();
              break;
            }
            samples.push_back(t.get<double>());
          }
        }
        if (samples.empty()) {
          fail(source, where + ": 'times' is " + times->dump(-1, ' ', true).substr(0, 80) +
                           ", not a list of non-negative times in milliseconds");
        }
        c.stats = summarize(samples);
        runs = samples.size();
      }
      if (!winner || c.time_ms < e.candidates[*winner].time_ms) {
        winner = e.candidates.size();
        winner_runs = runs;
      }
    } else {
      c.status = candidate_status::failed;
      c.reason = r.error;
    }
    e.candidates.push_back(std::move(c));
  }
  if (!winner) {
    fail(source, "has no config with a time: all " + std::to_string(f.records.size()) +
                     " of its configs failed");
  }
  e.winner_index = *winner;
  e.winner = e.candidates[*winner].config;
  e.policy = measure_policy{};
  e.policy.warmup = 0;
  e.policy.runs = winner_runs > 0 ? static_cast<int>(winner_runs) : kernel_tuner_iterations;
  e.policy.stat = statistic::mean;
  e.measurer = "kernel_tuner";
  e.world_size = 1;
  e.timestamp = newest ? *newest : detail::utc_timestamp();
  return e;
}

std::string kernel_tuner_import_log(const cache_entry &e, std::string_view source) {
  std::string log = tuning_log(e, 0);
  // The last line of a search's log says how long it took; an import did not search.
  if (const auto last = log.rfind("winner #"); last != std::string::npos) {
    log.resize(last);
  }
  return detail::utc_timestamp() + " imported from Kernel Tuner cache file " + std::string(source) +
         "\n" + log + "winner #" + std::to_string(e.winner_index) + " [" + e.winner.to_string() +
         "], the fastest valid config of the file\n";
}

std::string to_kernel_tuner_cache(const cache_entry &e) {
  // The parameters: every candidate's fields, names and values in the order first seen.
  std::vector<parameter> params;
  for (const auto &c : e.candidates) {
    if (!c.config.template_id().empty()) {
      throw error(entry_name(e) + ": candidate [" + c.config.to_string() +
                  "] belongs to template '" + c.config.template_id() +
                  "'; a Kernel Tuner cache file has no templates");
    }
    for (const auto &fld : c.config) {
      if (std::find(reserved_names.begin(), reserved_names.end(), fld.name) !=
          reserved_names.end()) {
        throw error(entry_name(e) + ": its parameter '" + fld.name +
                    "' has the name of a member Kernel Tuner gives every record");
      }
      if (fld.value.is_string() && !detail::is_utf8(fld.value.as_string())) {
        throw error(entry_name(e) + ": parameter '" + fld.name +
                    "' has a value that is not UTF-8 text (" + fld.value.to_string() +
                    "), which a Kernel Tuner file cannot hold");
      }
      auto p = std::find_if(params.begin(), params.end(),
                            [&](const parameter &q) { return q.name == fld.name; });
      if (p == params.end()) {
        params.push_back(parameter{fld.name, {}});
        p = params.end() - 1;
      }
      if (std::find(p->values.begin(), p->values.end(), fld.value) == p->values.end()) {
        p->values.push_back(fld.value);
      }
    }
  }
  json header = json::object();
  header["device_name"] = e.hardware.name;
  header["kernel_name"] = e.function.name;
  const auto keys = e.key.values();
  if (!keys.empty() &&
      std::all_of(keys.begin(), keys.end(), [](const value &v) { return v.is_int(); })) {
    header["problem_size"] = detail::to_json(e.key);
  }
  header["tune_params_keys"] = json::array();
  header["tune_params"] = json::object();
  for (const auto &p : params) {
    header["tune_params_keys"].push_back(p.name);
    json values = json::array();
    for (const auto &v : p.values) {
      values.push_back(detail::to_json(v));
    }
    header["tune_params"][p.name] = std::move(values);
  }
  header["objective"] = "time";
  header["cache"] = json::object();
  // `json.dumps(c, indent="")` without its last `}\n}`, as `process_cache` starts a file.
  std::string out;
  try {
    out = header.dump(0, ' ', true);
  } catch (const json::exception &ex) {
    throw error(entry_name(e) + ": " + ex.what());
  }
  out.resize(out.size() - 3);
  const std::string timestamp = kernel_tuner_timestamp(e.timestamp);
  std::set<std::string> written;
  for (const auto &c : e.candidates) {
    json rec = json::object();
    std::string key;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const value *v = c.config.find(params[i].name);
      if (v == nullptr) {
        throw error(entry_name(e) + ": candidate [" + c.config.to_string() + "] has no '" +
                    params[i].name +
                    "', which other candidates have; Kernel Tuner needs every parameter in "
                    "every config");
      }
      if (i > 0) {
        key += ',';
      }
      key += kt::python_str(*v);
      rec[params[i].name] = detail::to_json(*v);
    }
    if (!written.insert(key).second) {
      throw error(entry_name(e) + ": two candidates have the Kernel Tuner cache key \"" + key +
                  "\"");
    }
    if (c.status == candidate_status::ok) {
      rec["time"] = c.time_ms;
    } else {
      rec["time"] = error_marker(c);
    }
    rec["compile_time"] = c.prepare_ms ? json(*c.prepare_ms) : json(0);
    rec["verification_time"] = 0;
    rec["benchmark_time"] = 0;
    rec["strategy_time"] = 0;
    rec["framework_time"] = 0;
    rec["timestamp"] = timestamp;
    // `store_cache`: a newline, then `json.dumps({key: record})` without its braces, then a comma.
    out += "\n";
    python_dumps(json(key), out);
    out += ": ";
    python_dumps(rec, out);
    out += ",";
  }
  if (out.back() == ',') {
    out.pop_back(); // `close_cache`
  }
  out += "}\n}";
  return out;
}

} // namespace tunekit
