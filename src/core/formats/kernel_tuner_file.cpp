#include "kernel_tuner_file.hpp"

#include "../json_io.hpp"
#include "../os.hpp"

#include <tunekit/error.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#ifdef TUNEKIT_HAS_ZLIB
#include <zlib.h>
#endif

namespace tunekit::detail::kernel_tuner {

namespace {

class reporter {
public:
  reporter(std::string_view label, std::string_view source)
      : m_prefix(std::string(label) + " " + std::string(source) + ": ") {}
  [[noreturn]] void fail(const std::string &what) const { throw error(m_prefix + what); }

private:
  std::string m_prefix;
};

std::string gunzip(const std::string &bytes, const reporter &r) {
#ifdef TUNEKIT_HAS_ZLIB
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) { // 32: accept a gzip header
    r.fail("zlib could not be initialised");
  }
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  // The file size limit holds for what it inflates to as well.
  const std::uint64_t limit = max_file_size().value_or(default_max_file_size);
  char buffer[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef *>(buffer);
    zs.avail_out = sizeof(buffer);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_OK || rc == Z_STREAM_END) {
      out.append(buffer, sizeof(buffer) - zs.avail_out);
    }
    if (limit > 0 && out.size() > limit) {
      inflateEnd(&zs);
      r.fail("inflates to over " + std::to_string(limit) +
             " bytes, larger than the file size limit (TUNEKIT_MAX_FILE_SIZE); it is not read");
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      rc = Z_BUF_ERROR; // input ended inside the stream
    }
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    r.fail("is not valid gzip data (truncated or corrupt)");
  }
  return out;
#else
  (void)bytes;
  r.fail("is gzip-compressed, but tunekit was built without zlib: decompress it first");
#endif
}

value json_value(const json &j, const reporter &r, const std::string &param) {
  if (j.is_boolean()) {
    return value(j.get<bool>());
  }
  if (j.is_number_unsigned() &&
      j.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    r.fail("tune_params['" + param + "'] holds " + j.dump() + ", outside the int64 range");
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
  r.fail("tune_params['" + param + "'] holds " + j.dump() +
         ", not a (finite) number, bool or string");
}

// Whether the JSON value `j` (a record's own parameter field) is the value `v`: the same type, or
// numbers that are equal (Python's `==`, which Kernel Tuner's lookups use).
bool same_value(const json &j, const value &v) {
  if (v.is_bool()) {
    return j.is_boolean() && j.get<bool>() == v.as_bool();
  }
  if (v.is_string()) {
    return j.is_string() && j.get_ref<const std::string &>() == v.as_string();
  }
  if (!j.is_number()) {
    return false;
  }
  const double x = v.is_int() ? static_cast<double>(v.as_int()) : v.as_double();
  if (j.is_number_unsigned() && v.is_int()) {
    return v.as_int() >= 0 && j.get<std::uint64_t>() == static_cast<std::uint64_t>(v.as_int());
  }
  if (j.is_number_integer() && v.is_int()) {
    return j.get<std::int64_t>() == v.as_int();
  }
  return j.get<double>() == x;
}

// The position in `p.values` of the value written `text` in a cache key: the same text, else a
// number written differently (`1e-05` and `0.00001`).
std::optional<std::size_t> value_of_text(const parameter &p,
                                         const std::map<std::string, std::size_t> &by_text,
                                         const std::string &text) {
  if (auto it = by_text.find(text); it != by_text.end()) {
    return it->second;
  }
  double x = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), x);
  if (res.ec == std::errc() && res.ptr == text.data() + text.size()) {
    for (std::size_t i = 0; i < p.values.size(); ++i) {
      const value &v = p.values[i];
      if ((v.is_int() && static_cast<double>(v.as_int()) == x) ||
          (v.is_double() && v.as_double() == x)) {
        return i;
      }
    }
  }
  return std::nullopt;
}

std::vector<std::string> split_key(const std::string &key, std::size_t parts) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t p = 0; p < parts; ++p) {
    const std::size_t comma = key.find(',', start);
    const bool last = p + 1 == parts;
    if ((comma == std::string::npos) != last) {
      return {};
    }
    out.push_back(key.substr(start, last ? std::string::npos : comma - start));
    start = comma + 1;
  }
  return out;
}

} // namespace

bool is_error_marker(std::string_view s) noexcept {
  return std::find(error_markers.begin(), error_markers.end(), s) != error_markers.end();
}

std::string python_str(const value &v) {
  if (v.is_bool()) {
    return v.as_bool() ? "True" : "False";
  }
  if (v.is_string()) {
    return v.as_string();
  }
  if (v.is_int()) {
    return std::to_string(v.as_int());
  }
  // repr(float): the shortest digits that read back as the same double, in fixed notation when
  // the decimal exponent is in [-4, 16), else as d.ddde+XX (at least two exponent digits).
  const double d = v.as_double();
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const std::size_t e_at = sci.find('e');
  const int exponent = std::stoi(sci.substr(e_at + 1));
  if (exponent < -4 || exponent >= 16) {
    return sci;
  }
  const bool negative = sci[0] == '-';
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < e_at; ++i) {
    if (sci[i] != '.') {
      digits += sci[i];
    }
  }
  std::string out = negative ? "-" : "";
  if (exponent >= 0) {
    const auto whole = static_cast<std::size_t>(exponent) + 1;
    if (digits.size() < whole) {
      digits.append(whole - digits.size(), '0');
    }
    out += digits.substr(0, whole);
    out += '.';
    out += digits.size() > whole ? digits.substr(whole) : std::string("0");
  } else {
    out += "0.";
    out.append(static_cast<std::size_t>(-exponent - 1), '0');
    out += digits;
  }
  return out;
}

file parse(std::string_view text, std::string_view source, std::string_view label) {
  const reporter r(label, source);
  file f;
  try {
    f.doc = detail::parse_json(text);
  } catch (const error &e) {
    r.fail(std::string("is not JSON: ") + e.what());
  }
  const json &doc = f.doc;
  if (!doc.is_object()) {
    r.fail("is not a JSON object");
  }
  auto tp = doc.find("tune_params");
  if (tp == doc.end()) {
    r.fail("has no 'tune_params'");
  }
  if (!tp->is_object() || tp->empty()) {
    r.fail("'tune_params' is not a non-empty object of parameter -> values");
  }
  std::vector<std::string> names;
  if (auto keys = doc.find("tune_params_keys"); keys != doc.end()) {
    if (!keys->is_array()) {
      r.fail("'tune_params_keys' is not an array");
    }
    for (const auto &k : *keys) {
      if (!k.is_string()) {
        r.fail("'tune_params_keys' holds " + k.dump() + ", not a name");
      }
      names.push_back(k.get<std::string>());
      if (!tp->contains(names.back())) {
        r.fail("'tune_params_keys' names '" + names.back() + "', absent from 'tune_params'");
      }
      if (std::count(names.begin(), names.end(), names.back()) > 1) {
        r.fail("'tune_params_keys' names '" + names.back() + "' twice");
      }
    }
    if (names.size() != tp->size()) {
      r.fail("'tune_params_keys' names " + std::to_string(names.size()) +
             " parameters, 'tune_params' has " + std::to_string(tp->size()));
    }
  } else {
    for (const auto &[name, values] : tp->items()) {
      names.push_back(name);
    }
  }
  std::vector<std::map<std::string, std::size_t>> by_text(names.size());
  for (std::size_t p = 0; p < names.size(); ++p) {
    const json &values = tp->at(names[p]);
    if (!values.is_array() || values.empty()) {
      r.fail("tune_params['" + names[p] + "'] is not a non-empty array");
    }
    parameter par{names[p], {}};
    for (const auto &v : values) {
      par.values.push_back(json_value(v, r, names[p]));
      by_text[p].emplace(python_str(par.values.back()), par.values.size() - 1);
    }
    f.params.push_back(std::move(par));
  }
  const auto &params = f.params;
  auto cache = doc.find("cache");
  if (cache == doc.end()) {
    r.fail("has no 'cache'");
  }
  if (!cache->is_object()) {
    r.fail("'cache' is not an object of \"v1,v2,...\" -> result");
  }
  std::map<std::vector<std::size_t>, std::string> seen; // value positions -> first key
  f.records.reserve(cache->size());
  for (const auto &item : cache->items()) {
    const std::string &key = item.key();
    const json &entry = item.value();
    const std::string where = "cache entry \"" + key + "\"";
    if (!entry.is_object()) {
      r.fail(where + " is not an object");
    }
    // The values: from the key, else (a string value holding a comma) from the record's own
    // parameter fields, which must then give back the key.
    std::vector<std::size_t> pos(params.size());
    const auto parts = split_key(key, params.size());
    if (!parts.empty()) {
      for (std::size_t p = 0; p < params.size(); ++p) {
        const auto d = value_of_text(params[p], by_text[p], parts[p]);
        if (!d) {
          r.fail("cache key \"" + key + "\": '" + parts[p] + "' is not a value of parameter '" +
                 params[p].name + "'");
        }
        pos[p] = *d;
      }
    } else {
      const bool has_all = std::all_of(params.begin(), params.end(),
                                       [&](const parameter &p) { return entry.contains(p.name); });
      if (!has_all) {
        r.fail("cache key \"" + key + "\" does not hold " + std::to_string(params.size()) +
               " comma-separated values (" + std::to_string(params.size()) + " parameters)");
      }
      std::string joined;
      for (std::size_t p = 0; p < params.size(); ++p) {
        const json &given = entry.at(params[p].name);
        const auto &vals = params[p].values;
        const auto it = std::find_if(vals.begin(), vals.end(),
                                     [&](const value &v) { return same_value(given, v); });
        if (it == vals.end()) {
          r.fail(where + ": " + params[p].name + " = " + given.dump() +
                 " is not a value of that parameter");
        }
        pos[p] = static_cast<std::size_t>(it - vals.begin());
        joined += p == 0 ? "" : ",";
        joined += python_str(*it);
      }
      if (joined != key) {
        r.fail(where + ": its parameters give the key \"" + joined + "\"");
      }
    }
    record rec{key, {}, &entry, std::numeric_limits<double>::infinity(), {}};
    for (std::size_t p = 0; p < params.size(); ++p) {
      const value &v = params[p].values[pos[p]];
      if (auto own = entry.find(params[p].name); own != entry.end() && !same_value(*own, v)) {
        r.fail(where + ": its field " + params[p].name + " = " + own->dump() +
               " does not match the key's value " + python_str(v));
      }
      rec.fields.push_back(field{params[p].name, v});
    }
    if (auto [it, fresh] = seen.emplace(pos, key); !fresh) {
      r.fail("cache keys \"" + it->second + "\" and \"" + key + "\" name the same config");
    }
    // A failure: any field holding an error marker (as Kernel Tuner's reader decides), else a
    // time that is text.
    for (const auto &[name, v] : entry.items()) {
      if (v.is_string() && is_error_marker(v.get_ref<const std::string &>()) &&
          (rec.error.empty() || name == "__error__")) {
        rec.error = v.get<std::string>();
      }
    }
    if (rec.error.empty()) {
      auto time = entry.find("time");
      if (time == entry.end()) {
        r.fail(where + " has no 'time'");
      }
      if (time->is_number()) {
        rec.time_ms = time->get<double>();
        if (!std::isfinite(rec.time_ms) || rec.time_ms < 0) {
          r.fail(where + " has time " + time->dump() +
                 "; a time is a finite, non-negative number of milliseconds");
        }
      } else if (time->is_string()) {
        rec.error = time->get<std::string>();
      } else {
        r.fail(where + " has time " + time->dump() + ", neither a number nor an error text");
      }
    }
    f.records.push_back(std::move(rec));
  }
  return f;
}

std::string read_text(const std::filesystem::path &path, std::string_view label) {
  const reporter r(label, path.string());
  std::string why;
  auto bytes = detail::read_file(path, &why);
  if (!bytes) {
    r.fail(why);
  }
  if (bytes->size() >= 2 && static_cast<unsigned char>((*bytes)[0]) == 0x1f &&
      static_cast<unsigned char>((*bytes)[1]) == 0x8b) {
    return gunzip(*bytes, r);
  }
  return std::move(*bytes);
}

} // namespace tunekit::detail::kernel_tuner
