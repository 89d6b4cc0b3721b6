// kernel_launcher wisdom files to and from winner cache entries (formats/kernel_launcher.hpp).
//
// The format is that of kernel_launcher (github KernelTuner/kernel_launcher). Its C++ reader
// (`process_wisdom_file`, `load_best_config`) takes line 1 for the header, a JSON object whose
// `version` must be "1.0", whose `key` must be the kernel's tuning key, whose `objective` names
// the record member to minimise, and whose `tunable_parameters` must each be a parameter of the
// kernel's space. Every later line that is not empty and does not start with `#` is one record:
// `config` (one value per header parameter, in that order, each a value of its parameter),
// `problem_size` (up to three extents, absent ones 1), the objective, and
// `environment.device_name`. Of the records of the device's name and the problem size it picks
// the one of the least objective (the first of equals); failing that, one of the nearest problem
// size, then one of another device. A line it cannot read it skips with a warning. Its Python
// writer (`write_wisdom`) writes the header as `{"version", "objective": "time",
// "tunable_parameters", "key"}` and each record as `{"config", "problem_size", "time",
// "environment": {"date", "device_name", "compute_capability", "kernel_tuner_version", ...}}`
// with `json.dumps`, the records of one device and problem size fastest first.
//
// tunekit reads more strictly than kernel_launcher (a line it would skip is an error here, since
// an import that silently drops records is worse than one that says why it cannot import) and
// writes what both of kernel_launcher's readers accept.

#include "kernel_tuner_file.hpp"

#include "../json_io.hpp"
#include "../os.hpp"
#include "../timestamp.hpp"

#include <tunekit/error.hpp>
#include <tunekit/formats/kernel_launcher.hpp>
#include <tunekit/measure.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace tunekit {

using json = nlohmann::ordered_json;

namespace {

constexpr std::string_view label = "kernel_launcher wisdom file";
constexpr std::string_view wisdom_version = "1.0";
constexpr std::string_view wisdom_objective = "time";
// The timed runs per config of kernel_launcher's tuning script (`tune.py --iterations`).
constexpr int tune_py_iterations = 5;
constexpr std::int64_t max_extent = std::numeric_limits<std::uint32_t>::max();

[[noreturn]] void fail(std::string_view source, const std::string &what) {
  throw error(std::string(label) + " " + std::string(source) + ": " + what);
}

// A JSON value in a message: its text, cut after 60 characters.
std::string shown(const json &j) {
  std::string s = j.dump(-1, ' ', true);
  if (s.size() > 60) {
    s.resize(57);
    s += "...";
  }
  return s;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view space = " \t\r\n\v\f";
  const auto first = s.find_first_not_of(space);
  if (first == std::string_view::npos) {
    return {};
  }
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

// Python's `json.dumps(j)`: separators ", " and ": ", non-ASCII escaped, floats as `repr` prints
// them; how `write_wisdom` writes each line.
void python_dumps(const json &j, std::string &out) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto &[k, v] : j.items()) {
      if (!first) {
        out += ", ";
      }
      first = false;
      out += json(k).dump(-1, ' ', true);
      out += ": ";
      python_dumps(v, out);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (i > 0) {
        out += ", ";
      }
      python_dumps(j[i], out);
    }
    out += ']';
  } else if (j.is_number_float()) {
    out += detail::kernel_tuner::python_str(value(j.get<double>()));
  } else {
    out += j.dump(-1, ' ', true);
  }
}

// A value of a record's `config`, as kernel_launcher reads one: an int, a bool, a float or a
// string.
std::optional<value> config_value(const json &j) {
  if (j.is_boolean()) {
    return value(j.get<bool>());
  }
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return value(static_cast<std::int64_t>(u));
  }
  if (j.is_number_integer()) {
    return value(j.get<std::int64_t>());
  }
  if (j.is_number_float() && std::isfinite(j.get<double>())) {
    return value(j.get<double>());
  }
  if (j.is_string()) {
    return value(j.get<std::string>());
  }
  return std::nullopt;
}

// A text that is the same for two lists of values kernel_launcher takes for the same config (its
// values compare numbers by value: 1 and 1.0 are one value).
std::string values_identity(const std::vector<const value *> &values) {
  std::string out;
  for (const value *v : values) {
    if (v->is_bool()) {
      out += v->as_bool() ? "b1" : "b0";
    } else if (v->is_string()) {
      out += 's';
      out += std::to_string(v->as_string().size());
      out += ':';
      out += v->as_string();
    } else if (v->is_int()) {
      out += 'n';
      out += std::to_string(v->as_int());
    } else {
      const double d = v->as_double();
      out += 'n';
      if (std::trunc(d) == d && std::abs(d) < 9.0e18) {
        out += std::to_string(static_cast<std::int64_t>(d));
      } else {
        out += detail::kernel_tuner::python_str(*v);
      }
    }
    out += ';';
  }
  return out;
}

std::string config_identity(const config &c) {
  std::vector<const value *> values;
  for (const auto &f : c) {
    values.push_back(&f.value);
  }
  return values_identity(values);
}

// An int member of `env` that is there: a non-negative integer, else the file is refused.
std::optional<std::int64_t> env_int(const json &env, std::string_view name,
                                    const std::string &where, std::string_view source) {
  const auto it = env.find(std::string(name));
  if (it == env.end()) {
    return std::nullopt;
  }
  if (!it->is_number_integer() ||
      (it->is_number_unsigned() &&
       it->get<std::uint64_t>() >
           static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) ||
      it->get<std::int64_t>() < 0) {
    fail(source, where + ": 'environment." + std::string(name) + "' is " + shown(*it) +
                     ", not a non-negative integer");
  }
  return it->get<std::int64_t>();
}

std::optional<std::string> env_string(const json &env, std::string_view name,
                                      const std::string &where, std::string_view source) {
  const auto it = env.find(std::string(name));
  if (it == env.end()) {
    return std::nullopt;
  }
  if (!it->is_string()) {
    fail(source,
         where + ": 'environment." + std::string(name) + "' is " + shown(*it) + ", not a string");
  }
  return it->get<std::string>();
}

// CUDA's encoding of a version (1000 * major + 10 * minor + patch) as text: 12040 -> "12.4",
// 12041 -> "12.4.1"; and back.
std::string cuda_version_text(std::int64_t v) {
  std::string s = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  if (v % 10 != 0) {
    s += "." + std::to_string(v % 10);
  }
  return s;
}

std::optional<std::int64_t> cuda_version_number(const std::string &s) {
  std::int64_t parts[3] = {0, 0, 0};
  std::size_t n = 0;
  std::size_t i = 0;
  while (n < 3) {
    const std::size_t start = i;
    std::int64_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 9) {
      v = v * 10 + (s[i] - '0');
      ++i;
    }
    if (i == start) {
      return std::nullopt;
    }
    parts[n++] = v;
    if (i == s.size()) {
      break;
    }
    if (s[i] != '.') {
      return std::nullopt;
    }
    ++i;
  }
  if (i != s.size() || n < 2 || parts[1] > 99 || parts[2] > 9) {
    return std::nullopt;
  }
  return parts[0] * 1000 + parts[1] * 10 + parts[2];
}

bool digits(std::string_view s, std::size_t from, std::size_t n) {
  return s.size() >= from + n && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(from),
                                             s.begin() + static_cast<std::ptrdiff_t>(from + n),
                                             [](char c) { return c >= '0' && c <= '9'; });
}

int number(std::string_view s, std::size_t from, std::size_t n) {
  int v = 0;
  for (std::size_t i = from; i < from + n; ++i) {
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// A record's `date` (Python's `isoformat()`: `2026-03-01T10:00:00.123456`, with `+01:00` or `Z`
// when it says its zone) as tunekit's UTC `2026-03-01T09:00:00Z`; nullopt for a time that does not
// say its zone (`write_wisdom` writes the local time of the tuning machine) or another form.
std::optional<std::string> utc_of_date(std::string_view s) {
  if (!digits(s, 0, 4) || s[4] != '-' || !digits(s, 5, 2) || s[7] != '-' || !digits(s, 8, 2) ||
      (s[10] != 'T' && s[10] != ' ') || !digits(s, 11, 2) || s[13] != ':' || !digits(s, 14, 2) ||
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
  int offset_min = 0;
  if (rest == "Z") {
    offset_min = 0;
  } else if ((rest.size() == 6 || rest.size() == 5) && (rest[0] == '+' || rest[0] == '-') &&
             digits(rest, 1, 2) &&
             (rest.size() == 6 ? rest[3] == ':' && digits(rest, 4, 2) : digits(rest, 3, 2))) {
    const int hh = number(rest, 1, 2);
    const int mm = number(rest, rest.size() - 2, 2);
    if (hh > 23 || mm > 59) {
      return std::nullopt;
    }
    offset_min = (rest[0] == '-' ? -1 : 1) * (hh * 60 + mm);
  } else {
    return std::nullopt;
  }
  using namespace std::chrono;
  const year_month_day ymd{year{number(s, 0, 4)}, month{static_cast<unsigned>(number(s, 5, 2))},
                           day{static_cast<unsigned>(number(s, 8, 2))}};
  const int hh = number(s, 11, 2);
  const int mi = number(s, 14, 2);
  const int ss = number(s, 17, 2);
  if (!ymd.ok() || hh > 23 || mi > 59 || ss > 59) {
    return std::nullopt;
  }
  const sys_seconds t = sys_days{ymd} + hours{hh} + minutes{mi} + seconds{ss} - minutes{offset_min};
  const auto d = floor<days>(t);
  const year_month_day u{d};
  const hh_mm_ss<seconds> tod{t - d};
  const int y = static_cast<int>(u.year());
  if (y < 0 || y > 9999) {
    return std::nullopt;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", y,
                static_cast<unsigned>(u.month()), static_cast<unsigned>(u.day()),
                static_cast<int>(tod.hours().count()), static_cast<int>(tod.minutes().count()),
                static_cast<int>(tod.seconds().count()));
  return std::string(buf);
}

// tunekit's `2026-11-29T22:28:28Z` as Python's `isoformat()` of a UTC time; other text as it is.
std::string date_of_timestamp(const std::string &s) {
  if (s.size() == 20 && s.back() == 'Z' && utc_of_date(s)) {
    return s.substr(0, 19) + "+00:00";
  }
  return s;
}

struct header {
  std::string key;
  std::vector<std::string> params;
};

header parse_header(std::string_view line, std::string_view source) {
  json h;
  try {
    h = detail::parse_json(line);
  } catch (const error &e) {
    fail(source, std::string("line 1 is not the JSON header that kernel_launcher reads first: ") +
                     e.what());
  }
  if (!h.is_object()) {
    fail(source, "line 1, the header, is " + shown(h) + ", not a JSON object");
  }
  const auto version = h.find("version");
  if (version == h.end()) {
    fail(source, "its header has no 'version'");
  }
  if (!version->is_string() || version->get_ref<const std::string &>() != wisdom_version) {
    fail(source, "its header has version " + shown(*version) +
                     "; kernel_launcher reads wisdom files of version \"1.0\"");
  }
  const auto objective = h.find("objective");
  if (objective == h.end()) {
    fail(source, "its header has no 'objective'");
  }
  if (!objective->is_string()) {
    fail(source, "its header's 'objective' is " + shown(*objective) + ", not a string");
  }
  if (objective->get_ref<const std::string &>() != wisdom_objective) {
    fail(source, "its header's objective is " + shown(*objective) +
                     ", not \"time\": tunekit imports times (as kernel_launcher's Python reader "
                     "does)");
  }
  const auto key = h.find("key");
  if (key == h.end()) {
    fail(source, "its header has no 'key' (the kernel's tuning key)");
  }
  if (!key->is_string()) {
    fail(source, "its header's 'key' is " + shown(*key) + ", not a string");
  }
  header out;
  out.key = key->get<std::string>();
  const auto params = h.find("tunable_parameters");
  if (params == h.end()) {
    fail(source, "its header has no 'tunable_parameters'");
  }
  if (!params->is_array()) {
    fail(source,
         "its header's 'tunable_parameters' is " + shown(*params) + ", not a list of names");
  }
  for (const auto &p : *params) {
    if (!p.is_string()) {
      fail(source, "its header's 'tunable_parameters' holds " + shown(p) + ", not a name");
    }
    if (std::find(out.params.begin(), out.params.end(), p.get_ref<const std::string &>()) !=
        out.params.end()) {
      fail(source, "its header's 'tunable_parameters' names '" + p.get<std::string>() + "' twice");
    }
    out.params.push_back(p.get<std::string>());
  }
  if (out.params.empty()) {
    fail(source, "its header's 'tunable_parameters' is empty: the file holds no tuned configs");
  }
  return out;
}

struct record {
  std::size_t line = 0;
  config cfg;
  kernel_launcher_problem_size size;
  double time_ms = 0;
  std::string device;
  std::optional<std::int64_t> compute_capability;
  std::optional<std::string> utc_date; ///< the record's date in UTC, when it says its zone
  dependencies deps;
};

record parse_record(std::string_view text, std::size_t line, const header &h,
                    std::string_view source) {
  const std::string where = "line " + std::to_string(line);
  json r;
  try {
    r = detail::parse_json(text);
  } catch (const error &e) {
    fail(source, where + " is not JSON: " + e.what());
  }
  if (!r.is_object()) {
    fail(source, where + " is " + shown(r) + ", not a record (a JSON object)");
  }
  record rec;
  rec.line = line;
  const auto cfg = r.find("config");
  if (cfg == r.end()) {
    fail(source, where + " has no 'config'");
  }
  if (!cfg->is_array()) {
    fail(source, where + ": 'config' is " + shown(*cfg) + ", not a list of values");
  }
  if (cfg->size() != h.params.size()) {
    fail(source, where + ": 'config' holds " + std::to_string(cfg->size()) +
                     (cfg->size() == 1 ? " value" : " values") + " for the " +
                     std::to_string(h.params.size()) + " tunable_parameters of the header");
  }
  std::vector<field> fields;
  for (std::size_t i = 0; i < h.params.size(); ++i) {
    auto v = config_value((*cfg)[i]);
    if (!v) {
      fail(source, where + ": 'config' gives " + h.params[i] + " = " + shown((*cfg)[i]) +
                       ", not an int (in the int64 range), a bool, a float or a string");
    }
    fields.push_back(field{h.params[i], std::move(*v)});
  }
  rec.cfg = config(std::move(fields));
  const auto ps = r.find("problem_size");
  if (ps == r.end()) {
    fail(source, where + " has no 'problem_size'");
  }
  if (!ps->is_array() || ps->size() > 3) {
    fail(source, where + ": 'problem_size' is " + shown(*ps) +
                     ", not a list of at most 3 extents (kernel_launcher's x, y, z)");
  }
  std::uint32_t *extents[3] = {&rec.size.x, &rec.size.y, &rec.size.z};
  for (std::size_t i = 0; i < ps->size(); ++i) {
    const json &x = (*ps)[i];
    if (!x.is_number_integer() ||
        (x.is_number_unsigned() &&
         x.get<std::uint64_t>() > static_cast<std::uint64_t>(max_extent)) ||
        (!x.is_number_unsigned() &&
         (x.get<std::int64_t>() < 0 || x.get<std::int64_t>() > max_extent))) {
      fail(source, where + ": 'problem_size' holds " + shown(x) +
                       ", not an extent (an int from 0 to 4294967295)");
    }
    *extents[i] = static_cast<std::uint32_t>(x.get<std::uint64_t>());
  }
  const auto time = r.find(std::string(wisdom_objective));
  if (time == r.end()) {
    fail(source, where + " has no 'time'");
  }
  if (!time->is_number() || !std::isfinite(time->get<double>()) || time->get<double>() < 0) {
    fail(source, where + ": 'time' is " + shown(*time) +
                     ", not a finite, non-negative number of milliseconds");
  }
  rec.time_ms = time->get<double>();
  const auto env = r.find("environment");
  if (env == r.end()) {
    fail(source, where + " has no 'environment' (which names the device)");
  }
  if (!env->is_object()) {
    fail(source, where + ": 'environment' is " + shown(*env) + ", not an object");
  }
  auto device = env_string(*env, "device_name", where, source);
  if (!device) {
    fail(source, where + ": 'environment' has no 'device_name'");
  }
  rec.device = std::move(*device);
  rec.compute_capability = env_int(*env, "compute_capability", where, source);
  if (auto date = env_string(*env, "date", where, source)) {
    rec.utc_date = utc_of_date(*date);
  }
  if (auto kt = env_string(*env, "kernel_tuner_version", where, source)) {
    rec.deps["kernel_tuner"] = std::move(*kt);
  }
  if (auto v = env_int(*env, "cuda_driver_version", where, source)) {
    rec.deps["cuda_driver"] = cuda_version_text(*v);
  }
  if (auto v = env_int(*env, "cuda_version", where, source)) {
    rec.deps["cuda_runtime"] = cuda_version_text(*v);
  }
  return rec;
}

struct group {
  std::string device;
  kernel_launcher_problem_size size;
  std::vector<std::size_t> records; ///< indices into the records, in file order
};

std::string entry_name(const cache_entry &e) {
  return "entry of '" + e.function.name + "' for key " + e.key.to_string() + " on " +
         e.hardware.name;
}

// A value as a wisdom file holds it; throws for a string that is not UTF-8 text.
json wisdom_value(const value &v, const cache_entry &e, const std::string &name) {
  if (v.is_bool()) {
    return v.as_bool();
  }
  if (v.is_int()) {
    return v.as_int();
  }
  if (v.is_double()) {
    return v.as_double();
  }
  if (!detail::is_utf8(v.as_string())) {
    throw error(entry_name(e) + ": parameter '" + name + "' has a value that is not UTF-8 text (" +
                v.to_string() + "), which a wisdom file cannot hold");
  }
  return v.as_string();
}

} // namespace

key kernel_launcher_problem_size::to_key() const {
  key k;
  k.push_back(value(static_cast<std::int64_t>(x)));
  if (y != 1 || z != 1) {
    k.push_back(value(static_cast<std::int64_t>(y)));
  }
  if (z != 1) {
    k.push_back(value(static_cast<std::int64_t>(z)));
  }
  return k;
}

std::optional<kernel_launcher_problem_size>
kernel_launcher_problem_size::from_key(const tunekit::key &k) {
  if (k.size() < 1 || k.size() > 3) {
    return std::nullopt;
  }
  kernel_launcher_problem_size ps;
  std::uint32_t *extents[3] = {&ps.x, &ps.y, &ps.z};
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (!k[i].is_int() || k[i].as_int() < 0 || k[i].as_int() > max_extent) {
      return std::nullopt;
    }
    *extents[i] = static_cast<std::uint32_t>(k[i].as_int());
  }
  return ps;
}

std::string kernel_launcher_problem_size::to_string() const { return to_key().to_string(); }

std::string read_kernel_launcher_file(const std::filesystem::path &path) {
  std::string why;
  auto text = detail::read_file(path, &why);
  if (!text) {
    fail(path.string(), why);
  }
  return std::move(*text);
}

kernel_launcher_wisdom from_kernel_launcher_wisdom(std::string_view text, std::string_view source,
                                                   const kernel_launcher_import &what) {
  // Line 1 is the header; kernel_launcher's readers skip nothing before it.
  std::size_t end = text.find('\n');
  const std::string_view first = text.substr(0, end);
  if (trim(first).empty()) {
    fail(source, text.empty() ? "is empty: a wisdom file starts with its header line"
                              : "line 1 is empty: a wisdom file starts with its header line");
  }
  const header h = parse_header(first, source);
  std::vector<record> records;
  std::size_t line = 1;
  while (end != std::string_view::npos) {
    const std::size_t start = end + 1;
    end = text.find('\n', start);
    ++line;
    const std::string_view l = trim(
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (l.empty() || l.starts_with('#') || l.starts_with("//")) {
      continue;
    }
    records.push_back(parse_record(l, line, h, source));
  }
  if (records.empty()) {
    fail(source, "holds no records: no config to import");
  }

  // The records of each (device, problem size), in the order the file first names each.
  std::vector<group> groups;
  std::map<std::pair<std::string, kernel_launcher_problem_size>, std::size_t> group_of;
  std::vector<kernel_launcher_problem_size> sizes;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const record &r = records[i];
    auto [it, fresh] = group_of.emplace(std::pair{r.device, r.size}, groups.size());
    if (fresh) {
      groups.push_back(group{r.device, r.size, {}});
      if (std::find(sizes.begin(), sizes.end(), r.size) == sizes.end()) {
        sizes.push_back(r.size);
      }
    }
    groups[it->second].records.push_back(i);
  }

  // The key of each problem size.
  std::map<kernel_launcher_problem_size, key> key_of;
  for (const auto &[ps, k] : what.keys) {
    if (std::find(sizes.begin(), sizes.end(), ps) == sizes.end()) {
      fail(source, "holds no record of problem size " + ps.to_string() + ", whose key was given");
    }
    if (!key_of.emplace(ps, k).second) {
      fail(source, "the key of problem size " + ps.to_string() + " is given twice");
    }
  }
  std::vector<kernel_launcher_problem_size> unlisted;
  for (const auto &ps : sizes) {
    if (key_of.count(ps) == 0) {
      unlisted.push_back(ps);
    }
  }
  if (what.key && unlisted.size() > 1) {
    std::string list;
    for (const auto &ps : unlisted) {
      if (!list.empty()) {
        list += ", ";
      }
      list += ps.to_string();
    }
    fail(source, "holds " + std::to_string(unlisted.size()) + " problem sizes (" + list +
                     ") that one key was given for: give the key of each (--key SIZE=KEY)");
  }
  for (const auto &ps : unlisted) {
    key_of.emplace(ps, what.key ? *what.key : ps.to_key());
  }
  // Two entries of one device under one key: equal keys have equal texts, so only groups of the
  // same text are compared.
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> by_key_text;
  for (std::size_t a = 0; a < groups.size(); ++a) {
    auto &same = by_key_text[{groups[a].device, key_of.at(groups[a].size).to_string()}];
    for (const std::size_t b : same) {
      if (key_of.at(groups[a].size) == key_of.at(groups[b].size)) {
        fail(source, "problem sizes " + groups[b].size.to_string() + " and " +
                         groups[a].size.to_string() + " of device '" + groups[a].device +
                         "' would both be stored under key " +
                         key_of.at(groups[a].size).to_string());
      }
    }
    same.push_back(a);
  }

  kernel_launcher_wisdom out;
  out.tuning_key = h.key;
  const std::string now = detail::utc_timestamp();
  for (const auto &g : groups) {
    cache_entry e;
    e.function = what.function;
    e.key = key_of.at(g.size);
    std::map<std::string, std::size_t> seen; // config identity -> line
    std::optional<std::string> newest;
    std::size_t winner = 0;
    for (const std::size_t i : g.records) {
      const record &r = records[i];
      auto [it, fresh] = seen.emplace(config_identity(r.cfg), r.line);
      if (!fresh) {
        fail(source, "lines " + std::to_string(it->second) + " and " + std::to_string(r.line) +
                         " hold the same config [" + r.cfg.to_string() + "] for device '" +
                         g.device + "' and problem size " + g.size.to_string());
      }
      candidate_record c;
      c.config = r.cfg;
      c.status = candidate_status::ok;
      c.time_ms = r.time_ms;
      c.stats = sample_stats{r.time_ms, r.time_ms, r.time_ms, r.time_ms, 0};
      if (e.candidates.empty() || c.time_ms < e.candidates[winner].time_ms) {
        winner = e.candidates.size();
      }
      e.candidates.push_back(std::move(c));
      if (r.utc_date && (!newest || *r.utc_date > *newest)) {
        newest = r.utc_date;
      }
    }
    const record &best = records[g.records[winner]];
    e.hardware =
        hardware_info{"kernel_launcher", g.device,
                      best.compute_capability ? "sm_" + std::to_string(*best.compute_capability)
                                              : std::string("unknown"),
                      0, 1};
    e.dependencies = best.deps;
    e.winner_index = winner;
    e.winner = e.candidates[winner].config;
    e.policy = measure_policy{};
    e.policy.warmup = 0;
    e.policy.runs = tune_py_iterations;
    e.policy.stat = statistic::mean;
    e.measurer = "kernel_tuner";
    e.world_size = 1;
    e.timestamp = newest ? *newest : now;
    out.entries.push_back(std::move(e));
  }
  return out;
}

std::string kernel_launcher_import_log(const cache_entry &e, std::string_view source) {
  std::string log = tuning_log(e, 0);
  // The last line of a search's log says how long it took; an import did not search.
  if (const auto last = log.rfind("winner #"); last != std::string::npos) {
    log.resize(last);
  }
  return detail::utc_timestamp() + " imported from kernel_launcher wisdom file " +
         std::string(source) + "\n" + log + "winner #" + std::to_string(e.winner_index) + " [" +
         e.winner.to_string() +
         "], the fastest record of the file for its device and problem size\n";
}

std::string kernel_launcher_file_name(std::string_view tuning_key) {
  std::string name(tuning_key);
  for (char &c : name) {
    const bool keep = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      c == '_' || c == '-' || c == '.';
    if (!keep) {
      c = '_';
    }
  }
  return name + ".wisdom";
}

std::string to_kernel_launcher_wisdom(const std::vector<cache_entry> &entries,
                                      const kernel_launcher_export &how) {
  if (entries.empty()) {
    throw error("no entries to write as a kernel_launcher wisdom file");
  }
  const std::string &function = entries.front().function.name;
  for (const auto &e : entries) {
    if (e.function.name != function) {
      throw error("entries of functions '" + function + "' and '" + e.function.name +
                  "': a kernel_launcher wisdom file holds the configs of one kernel");
    }
  }
  const std::string tuning_key = how.tuning_key.empty() ? function : how.tuning_key;
  if (!detail::is_utf8(tuning_key)) {
    throw error("the tuning key '" + detail::utf8_text(tuning_key) +
                "' is not UTF-8 text, which a wisdom file cannot hold");
  }
  for (std::size_t i = 0; i < how.problem_sizes.size(); ++i) {
    const key &k = how.problem_sizes[i].first;
    for (std::size_t j = 0; j < i; ++j) {
      if (how.problem_sizes[j].first == k) {
        throw error("the problem size of key " + k.to_string() + " is given twice");
      }
    }
    if (std::none_of(entries.begin(), entries.end(),
                     [&](const cache_entry &e) { return e.key == k; })) {
      throw error("a problem size is given for key " + k.to_string() + ", which no entry of '" +
                  function + "' has");
    }
  }

  // Each entry's problem size and valid candidates.
  struct part {
    const cache_entry *entry;
    kernel_launcher_problem_size size;
    std::vector<const candidate_record *> valid;
  };
  std::vector<part> parts;
  std::vector<std::string> params;
  for (const auto &e : entries) {
    part p{&e, {}, {}};
    const auto given = std::find_if(
        how.problem_sizes.begin(), how.problem_sizes.end(),
        [&](const std::pair<key, kernel_launcher_problem_size> &g) { return g.first == e.key; });
    if (given != how.problem_sizes.end()) {
      p.size = given->second;
    } else if (auto ps = kernel_launcher_problem_size::from_key(e.key)) {
      p.size = *ps;
    } else {
      throw error(entry_name(e) +
                  ": its key is not a problem size (1 to 3 ints from 0 to 4294967295); give "
                  "the problem size it is to be written with");
    }
    if (!detail::is_utf8(e.hardware.name)) {
      throw error(entry_name(e) + ": its device name is not UTF-8 text");
    }
    for (const auto &c : e.candidates) {
      if (c.status != candidate_status::ok) {
        continue; // kernel_launcher's writer keeps measured configs only
      }
      if (!c.config.template_id().empty()) {
        throw error(entry_name(e) + ": candidate [" + c.config.to_string() +
                    "] belongs to template '" + c.config.template_id() +
                    "'; a wisdom file has no templates");
      }
      for (const auto &f : c.config) {
        if (!detail::is_utf8(f.name)) {
          throw error(entry_name(e) + ": a parameter name is not UTF-8 text (" +
                      detail::utf8_text(f.name) + ")");
        }
        if (std::find(params.begin(), params.end(), f.name) == params.end()) {
          params.push_back(f.name);
        }
      }
      p.valid.push_back(&c);
    }
    if (p.valid.empty()) {
      throw error(entry_name(e) + ": it has no valid candidate, and a wisdom file holds measured "
                                  "configs only");
    }
    parts.push_back(std::move(p));
  }
  if (params.empty()) {
    throw error("the candidates of '" + function +
                "' have no fields: a wisdom file holds configs of tunable parameters");
  }
  std::stable_sort(parts.begin(), parts.end(), [](const part &a, const part &b) {
    return std::tie(a.entry->hardware.name, a.size) < std::tie(b.entry->hardware.name, b.size);
  });
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const part &a = parts[i - 1];
    const part &b = parts[i];
    if (a.entry->hardware.name == b.entry->hardware.name && a.size == b.size) {
      throw error("entries of '" + function + "' for keys " + a.entry->key.to_string() + " and " +
                  b.entry->key.to_string() + " on " + a.entry->hardware.name +
                  " both have problem size " + a.size.to_string() +
                  "; kernel_launcher tells records apart by device name and problem size only");
    }
  }

  std::string out;
  json head = json::object();
  head["version"] = wisdom_version;
  head["objective"] = wisdom_objective;
  head["tunable_parameters"] = params;
  head["key"] = tuning_key;
  python_dumps(head, out);
  out += '\n';
  for (auto &p : parts) {
    const cache_entry &e = *p.entry;
    std::stable_sort(p.valid.begin(), p.valid.end(),
                     [](const candidate_record *a, const candidate_record *b) {
                       return a->time_ms < b->time_ms;
                     });
    json env = json::object();
    env["date"] = date_of_timestamp(e.timestamp);
    env["device_name"] = e.hardware.name;
    if (e.hardware.arch.size() > 3 && e.hardware.arch.starts_with("sm_") &&
        e.hardware.arch.size() <= 12 && digits(e.hardware.arch, 3, e.hardware.arch.size() - 3)) {
      env["compute_capability"] = std::stoll(e.hardware.arch.substr(3));
    }
    if (auto kt = e.dependencies.find("kernel_tuner"); kt != e.dependencies.end()) {
      env["kernel_tuner_version"] = kt->second;
    }
    for (const auto &[dep, member] : {std::pair{"cuda_driver", "cuda_driver_version"},
                                      std::pair{"cuda_runtime", "cuda_version"}}) {
      if (auto d = e.dependencies.find(dep); d != e.dependencies.end()) {
        if (auto v = cuda_version_number(d->second)) {
          env[member] = *v;
        }
      }
    }
    if (!detail::is_utf8(env["date"].get_ref<const std::string &>()) ||
        (env.contains("kernel_tuner_version") &&
         !detail::is_utf8(env["kernel_tuner_version"].get_ref<const std::string &>()))) {
      throw error(entry_name(e) + ": its timestamp or kernel_tuner version is not UTF-8 text");
    }
    json size = json::array({p.size.x, p.size.y, p.size.z});
    std::set<std::string> seen;
    for (const candidate_record *c : p.valid) {
      if (!std::isfinite(c->time_ms) || c->time_ms < 0) {
        throw error(entry_name(e) + ": candidate [" + c->config.to_string() +
                    "] is valid but has no finite, non-negative time");
      }
      json cfg = json::array();
      std::vector<const value *> values;
      for (const auto &name : params) {
        const value *v = c->config.find(name);
        if (v == nullptr) {
          throw error(entry_name(e) + ": candidate [" + c->config.to_string() + "] has no '" +
                      name +
                      "', which other candidates have; a wisdom file gives every parameter in "
                      "every config");
        }
        cfg.push_back(wisdom_value(*v, e, name));
        values.push_back(v);
      }
      if (!seen.insert(values_identity(values)).second) {
        throw error(entry_name(e) + ": two candidates have the config [" + c->config.to_string() +
                    "]");
      }
      json rec = json::object();
      rec["config"] = std::move(cfg);
      rec["problem_size"] = size;
      rec["time"] = c->time_ms;
      rec["environment"] = env;
      python_dumps(rec, out);
      out += '\n';
    }
  }
  return out;
}

} // namespace tunekit
