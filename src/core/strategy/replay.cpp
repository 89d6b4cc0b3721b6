#include "../os.hpp"

#include <tunekit/error.hpp>
#include <tunekit/strategy/replay.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#ifdef TUNEKIT_HAS_ZLIB
#include <zlib.h>
#endif

namespace tunekit {

namespace {

using json = nlohmann::ordered_json;

[[noreturn]] void fail(std::string_view source, const std::string &what) {
  throw error("replay file " + std::string(source) + ": " + what);
}

std::string read_replay_file(const std::filesystem::path &path) {
  auto bytes = detail::read_file(path);
  if (!bytes) {
    fail(path.string(), "cannot be opened");
  }
  return std::move(*bytes);
}

std::string gunzip(const std::string &bytes, std::string_view source) {
#ifdef TUNEKIT_HAS_ZLIB
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) { // 32: accept a gzip header
    fail(source, "zlib could not be initialised");
  }
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buffer[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef *>(buffer);
    zs.avail_out = sizeof(buffer);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_OK || rc == Z_STREAM_END) {
      out.append(buffer, sizeof(buffer) - zs.avail_out);
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      rc = Z_BUF_ERROR; // input ended inside the stream
    }
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    fail(source, "is not valid gzip data (truncated or corrupt)");
  }
  return out;
#else
  (void)bytes;
  fail(source, "is gzip-compressed, but tunekit was built without zlib: decompress it first");
#endif
}

// The value as Python's str() prints it, which is how Kernel Tuner writes cache keys.
std::string python_text(const value &v) {
  if (v.is_bool()) {
    return v.as_bool() ? "True" : "False";
  }
  if (v.is_string()) {
    return v.as_string();
  }
  if (v.is_int()) {
    return std::to_string(v.as_int());
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v.as_double());
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) {
    s += ".0";
  }
  return s;
}

value json_value(const json &j, std::string_view source, const std::string &param) {
  if (j.is_boolean()) {
    return value(j.get<bool>());
  }
  if (j.is_number_integer()) {
    return value(j.get<std::int64_t>());
  }
  if (j.is_number_float()) {
    return value(j.get<double>());
  }
  if (j.is_string()) {
    return value(j.get<std::string>());
  }
  fail(source, "tune_params['" + param + "'] holds " + j.dump() + ", not a number, bool or string");
}

} // namespace

double replay_table::time_of(std::size_t index) const {
  auto pos = space.position_of(index);
  return pos ? times[*pos] : std::numeric_limits<double>::infinity();
}

std::vector<config> replay_table::best_configs(std::size_t k) const {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (std::isfinite(times[i])) {
      order.push_back(i);
    }
  }
  const std::size_t n = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [&](std::size_t a, std::size_t b) {
                      return times[a] < times[b] || (times[a] == times[b] && a < b);
                    });
  std::vector<config> out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(space.to_config(space.index_at(order[i])));
  }
  return out;
}

batch_evaluator replay_table::evaluator() const {
  return [this](std::span<const std::size_t> batch) {
    std::vector<double> out;
    out.reserve(batch.size());
    for (std::size_t i : batch) {
      out.push_back(time_of(i));
    }
    return out;
  };
}

replay_table parse_replay_table(std::string_view json_text, std::string_view source) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception &e) {
    fail(source, std::string("is not JSON: ") + e.what());
  }
  if (!doc.is_object()) {
    fail(source, "is not a JSON object");
  }
  replay_table t;
  t.source = std::string(source);
  if (auto it = doc.find("device_name"); it != doc.end() && it->is_string()) {
    t.device_name = it->get<std::string>();
  }
  if (auto it = doc.find("kernel_name"); it != doc.end() && it->is_string()) {
    t.kernel_name = it->get<std::string>();
  }
  auto tp = doc.find("tune_params");
  if (tp == doc.end()) {
    fail(source, "has no 'tune_params'");
  }
  if (!tp->is_object() || tp->empty()) {
    fail(source, "'tune_params' is not a non-empty object of parameter -> values");
  }
  std::vector<std::string> names;
  if (auto keys = doc.find("tune_params_keys"); keys != doc.end()) {
    if (!keys->is_array()) {
      fail(source, "'tune_params_keys' is not an array");
    }
    for (const auto &k : *keys) {
      if (!k.is_string()) {
        fail(source, "'tune_params_keys' holds " + k.dump() + ", not a name");
      }
      names.push_back(k.get<std::string>());
      if (!tp->contains(names.back())) {
        fail(source, "'tune_params_keys' names '" + names.back() + "', absent from 'tune_params'");
      }
    }
    if (names.size() != tp->size()) {
      fail(source, "'tune_params_keys' names " + std::to_string(names.size()) +
                       " parameters, 'tune_params' has " + std::to_string(tp->size()));
    }
  } else {
    for (const auto &[name, values] : tp->items()) {
      names.push_back(name);
    }
  }
  std::vector<parameter> params;
  std::vector<std::map<std::string, std::size_t>> by_text(names.size());
  for (std::size_t p = 0; p < names.size(); ++p) {
    const json &values = (*tp)[names[p]];
    if (!values.is_array() || values.empty()) {
      fail(source, "tune_params['" + names[p] + "'] is not a non-empty array");
    }
    parameter par{names[p], {}};
    for (const auto &v : values) {
      par.values.push_back(json_value(v, source, names[p]));
      by_text[p].emplace(python_text(par.values.back()), par.values.size() - 1);
    }
    params.push_back(std::move(par));
  }
  auto cache = doc.find("cache");
  if (cache == doc.end()) {
    fail(source, "has no 'cache'");
  }
  if (!cache->is_object()) {
    fail(source, "'cache' is not an object of \"v1,v2,...\" -> result");
  }
  std::vector<config> configs;
  configs.reserve(cache->size());
  t.times.reserve(cache->size());
  for (const auto &[key, entry] : cache->items()) {
    std::vector<field> fields;
    std::size_t start = 0;
    for (std::size_t p = 0; p < params.size(); ++p) {
      const std::size_t comma = key.find(',', start);
      const bool last = p + 1 == params.size();
      if ((comma == std::string::npos) != last) {
        fail(source, "cache key \"" + key + "\" does not hold " + std::to_string(params.size()) +
                         " comma-separated values (" + std::to_string(params.size()) +
                         " parameters)");
      }
      const std::string part = key.substr(start, last ? std::string::npos : comma - start);
      start = comma + 1;
      std::optional<std::size_t> d;
      if (auto it = by_text[p].find(part); it != by_text[p].end()) {
        d = it->second;
      } else { // a number written differently (e.g. 1e-05 and 0.00001)
        double x = 0;
        auto res = std::from_chars(part.data(), part.data() + part.size(), x);
        if (res.ec == std::errc() && res.ptr == part.data() + part.size()) {
          for (std::size_t i = 0; i < params[p].values.size() && !d; ++i) {
            const value &v = params[p].values[i];
            if ((v.is_int() && static_cast<double>(v.as_int()) == x) ||
                (v.is_double() && v.as_double() == x)) {
              d = i;
            }
          }
        }
      }
      if (!d) {
        fail(source, "cache key \"" + key + "\": '" + part + "' is not a value of parameter '" +
                         params[p].name + "'");
      }
      fields.push_back(field{params[p].name, params[p].values[*d]});
    }
    if (!entry.is_object()) {
      fail(source, "cache entry \"" + key + "\" is not an object");
    }
    auto time = entry.find("time");
    if (time == entry.end()) {
      fail(source, "cache entry \"" + key + "\" has no 'time'");
    }
    double ms = std::numeric_limits<double>::infinity(); // an error text: a failed config
    if (time->is_number()) {
      ms = time->get<double>();
      if (!std::isfinite(ms) || ms < 0) {
        fail(source, "cache entry \"" + key + "\" has time " + time->dump() +
                         "; a time is a finite, non-negative number of milliseconds");
      }
    } else if (!time->is_string()) {
      fail(source, "cache entry \"" + key + "\" has time " + time->dump() +
                       ", neither a number nor an error text");
    }
    configs.emplace_back(std::move(fields));
    t.times.push_back(ms);
    t.best_time_ms = std::min(t.best_time_ms, ms);
  }
  if (!std::isfinite(t.best_time_ms)) {
    fail(source, "has no cache entry with a time");
  }
  try {
    t.space = search_space::from_configs(std::move(params), configs);
  } catch (const error &e) {
    fail(source, e.what());
  }
  return t;
}

replay_table load_replay_table(const std::filesystem::path &path) {
  std::string bytes = read_replay_file(path);
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b) {
    bytes = gunzip(bytes, path.string());
  }
  return parse_replay_table(bytes, path.string());
}

} // namespace tunekit
