#include "json_io.hpp"

#include <tunekit/error.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace tunekit::detail {

namespace {
[[noreturn]] void bad(std::string_view what, const std::string &msg) {
  throw error("'" + std::string(what) + "' " + msg);
}

std::string sub(std::string_view what, std::string_view name) {
  return what.empty() ? std::string(name) : std::string(what) + "." + std::string(name);
}

const char *type_name(json::value_t t) {
  switch (t) {
  case json::value_t::object:
    return "an object";
  case json::value_t::array:
    return "an array";
  case json::value_t::string:
    return "a string";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "an integer";
  case json::value_t::number_float:
    return "a number";
  case json::value_t::null:
    return "null";
  default:
    return "something else";
  }
}

bool is_integer(const json &j) { return j.is_number_integer() || j.is_number_unsigned(); }

// The member that holds a string value that is not UTF-8, as lowercase hex of its bytes.
constexpr const char *bytes_member = "bytes";
constexpr const char *hex_digits = "0123456789abcdef";

// The length of the UTF-8 sequence at s[i], or 0 when no well-formed sequence starts there.
std::size_t utf8_sequence(std::string_view s, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) {
    return 1;
  }
  std::size_t n = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    lo = c == 0xE0 ? 0xA0 : 0x80; // no overlong forms
    hi = c == 0xED ? 0x9F : 0xBF; // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    lo = c == 0xF0 ? 0x90 : 0x80; // no overlong forms
    hi = c == 0xF4 ? 0x8F : 0xBF; // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) {
    return 0;
  }
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) {
      return 0;
    }
  }
  return n;
}

std::string hex(std::string_view s) {
  std::string out;
  out.reserve(2 * s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    out += hex_digits[c >> 4];
    out += hex_digits[c & 15];
  }
  return out;
}

int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}
} // namespace

bool is_utf8(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) {
      return false;
    }
    i += n;
  }
  return true;
}

std::string utf8_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) {
      const auto c = static_cast<unsigned char>(s[i]);
      out += "\\x";
      out += static_cast<char>(std::toupper(hex_digits[c >> 4]));
      out += static_cast<char>(std::toupper(hex_digits[c & 15]));
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

const std::string &utf8_name(const std::string &s, std::string_view what) {
  if (!is_utf8(s)) {
    throw error(std::string(what) + " \"" + utf8_text(s) +
                "\" is not valid UTF-8; names must be UTF-8 (string values may hold any bytes)");
  }
  return s;
}

std::string dump(const json &j, int indent) {
  try {
    return j.dump(indent);
  } catch (const json::exception &e) {
    throw error(std::string("cannot write JSON: ") + e.what());
  }
}

json to_json(const value &v) {
  switch (v.type()) {
  case value_type::int64:
    return v.as_int();
  case value_type::float64:
    return v.as_double();
  case value_type::boolean:
    return v.as_bool();
  case value_type::string:
    // A string that is not UTF-8 cannot be a JSON string: its bytes are kept as {"bytes": hex}.
    if (!is_utf8(v.as_string())) {
      return json{{bytes_member, hex(v.as_string())}};
    }
    return v.as_string();
  }
  return nullptr;
}

json to_json(const config &c) {
  json j = json::object();
  for (const auto &f : c) {
    j[utf8_name(f.name, "config field name")] = to_json(f.value);
  }
  return j;
}

json to_json(const key &k) {
  json j = json::array();
  for (std::size_t i = 0; i < k.size(); ++i) {
    j.push_back(to_json(k[i]));
  }
  return j;
}

json to_json(const hardware_info &hw) {
  return json{{"kind", hw.kind},
              {"name", hw.name},
              {"arch", hw.arch},
              {"units", hw.units},
              {"count", hw.count}};
}

json to_json(const measure_policy &p) {
  json j{{"warmup", p.warmup}, {"runs", p.runs}, {"statistic", std::string(to_string(p.stat))}};
  // Only when on, so that entries written without an early stop read and compare as before.
  if (p.early_stop_factor != 0) {
    j["early_stop_factor"] = p.early_stop_factor;
    j["early_stop_after"] = p.early_stop_after;
  }
  return j;
}

json to_json(const sample_stats &s) {
  json j{
      {"mean", s.mean}, {"median", s.median}, {"min", s.min}, {"max", s.max}, {"stddev", s.stddev}};
  if (s.count > 0) { // absent: unknown, as in entries written before it was stored
    j["count"] = s.count;
    j["outliers"] = s.outliers;
  }
  return j;
}

value value_from_json(const json &j, std::string_view what) {
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      bad(what, "is an integer out of the int64 range");
    }
    return value(static_cast<std::int64_t>(u));
  }
  if (j.is_number_integer()) {
    return value(j.get<std::int64_t>());
  }
  if (j.is_number_float()) {
    return value(j.get<double>());
  }
  if (j.is_boolean()) {
    return value(j.get<bool>());
  }
  if (j.is_string()) {
    return value(j.get<std::string>());
  }
  if (j.is_object() && j.size() == 1 && j.contains(bytes_member)) {
    const json &h = j[bytes_member];
    if (!h.is_string()) {
      bad(sub(what, bytes_member), std::string("must be a string, not ") + type_name(h.type()));
    }
    const auto &text = h.get_ref<const std::string &>();
    std::string bytes;
    bytes.reserve(text.size() / 2);
    for (std::size_t i = 0; i < text.size(); i += 2) {
      const int high = hex_digit(text[i]);
      const int low = i + 1 < text.size() ? hex_digit(text[i + 1]) : -1;
      if (high < 0 || low < 0) {
        bad(sub(what, bytes_member), "must be an even number of lowercase hex digits");
      }
      bytes += static_cast<char>((high << 4) | low);
    }
    return value(std::move(bytes));
  }
  bad(what, std::string("must be an integer, number, boolean, string or {\"bytes\": hex}, not ") +
                type_name(j.type()));
}

config config_from_json(const json &j, std::string_view what) {
  if (!j.is_object()) {
    bad(what, std::string("must be an object, not ") + type_name(j.type()));
  }
  std::vector<field> fields;
  for (const auto &[name, v] : j.items()) {
    fields.push_back(field{name, value_from_json(v, sub(what, name))});
  }
  return config(std::move(fields));
}

key key_from_json(const json &j, std::string_view what) {
  if (!j.is_array()) {
    bad(what, std::string("must be an array, not ") + type_name(j.type()));
  }
  key k;
  for (std::size_t i = 0; i < j.size(); ++i) {
    k.push_back(value_from_json(j[i], std::string(what) + "[" + std::to_string(i) + "]"));
  }
  return k;
}

const json &member(const json &j, std::string_view name, json::value_t type,
                   std::string_view what) {
  if (!j.is_object()) {
    bad(what, std::string("must be an object, not ") + type_name(j.type()));
  }
  auto it = j.find(std::string(name));
  if (it == j.end()) {
    bad(sub(what, name), "is missing");
  }
  const bool ok = type == json::value_t::number_integer ? is_integer(*it)
                  : type == json::value_t::number_float ? it->is_number()
                                                        : it->type() == type;
  if (!ok) {
    bad(sub(what, name),
        std::string("must be ") + type_name(type) + ", not " + type_name(it->type()));
  }
  return *it;
}

std::string string_member(const json &j, std::string_view name, std::string_view what) {
  return member(j, name, json::value_t::string, what).get<std::string>();
}

std::int64_t int_member(const json &j, std::string_view name, std::string_view what) {
  return value_from_json(member(j, name, json::value_t::number_integer, what), sub(what, name))
      .as_int();
}

hardware_info hardware_from_json(const json &j, std::string_view what) {
  hardware_info hw;
  hw.kind = string_member(j, "kind", what);
  hw.name = string_member(j, "name", what);
  hw.arch = string_member(j, "arch", what);
  hw.units = int_member(j, "units", what);
  hw.count = int_member(j, "count", what);
  return hw;
}

measure_policy policy_from_json(const json &j, std::string_view what) {
  measure_policy p;
  p.warmup = static_cast<int>(int_member(j, "warmup", what));
  p.runs = static_cast<int>(int_member(j, "runs", what));
  const std::string s = string_member(j, "statistic", what);
  if (s == "mean") {
    p.stat = statistic::mean;
  } else if (s == "median") {
    p.stat = statistic::median;
  } else if (s == "min") {
    p.stat = statistic::min;
  } else {
    bad(sub(what, "statistic"), "must be mean, median or min, not '" + s + "'");
  }
  if (j.contains("early_stop_factor")) {
    p.early_stop_factor =
        member(j, "early_stop_factor", json::value_t::number_float, what).get<double>();
    if (!std::isfinite(p.early_stop_factor) || p.early_stop_factor < 1) {
      bad(sub(what, "early_stop_factor"), "must be at least 1");
    }
    p.early_stop_after = static_cast<int>(int_member(j, "early_stop_after", what));
    if (p.early_stop_after < 1) {
      bad(sub(what, "early_stop_after"), "must be at least 1");
    }
  }
  return p;
}

sample_stats stats_from_json(const json &j, std::string_view what) {
  auto num = [&](std::string_view name) {
    return member(j, name, json::value_t::number_float, what).get<double>();
  };
  sample_stats s;
  s.mean = num("mean");
  s.median = num("median");
  s.min = num("min");
  s.max = num("max");
  s.stddev = num("stddev");
  const auto runs = [&](std::string_view name) -> std::size_t {
    if (!j.contains(name)) {
      return 0; // written before it was stored
    }
    const auto n = int_member(j, name, what);
    if (n < 0) {
      bad(what, std::string(name) + " is negative");
    }
    return static_cast<std::size_t>(n);
  };
  s.count = runs("count");
  s.outliers = runs("outliers");
  if (s.outliers > s.count) {
    bad(what, "counts more outliers than runs");
  }
  return s;
}

namespace {

// Builds the document for nlohmann's SAX parser as its own DOM builder does, with two
// differences: nesting deeper than max_json_depth is refused before it is built (the library's
// copies, comparisons and dumps recurse, so a deep document would overflow the stack), and an
// object is built in time linear in its size (ordered_json's own insert searches the members it
// holds, which makes an object of N members cost N^2, and its members, of a const name, are
// copied, not moved, when their vector grows). A member named twice is refused.
class dom_builder {
public:
  json root;
  /// When set, each member of a top-level object goes to it once read, instead of into `root`
  /// (`parse_json_members`); false from it stops the parse.
  const member_fn *member = nullptr;

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t & /*text*/) {
    return put(json(v));
  }
  bool string(json::string_t &v) { return put(json(std::move(v))); }
  bool binary(json::binary_t &v) { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t /*size*/) { return open(true); }
  bool start_array(std::size_t /*size*/) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t &k) {
    m_stack.back().key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t /*position*/, const std::string & /*token*/,
                   const nlohmann::detail::exception &e) {
    throw error(e.what());
  }

private:
  // An array or object being read: its elements, or its members (with names that move) and the
  // name of the member being read.
  struct frame {
    bool object = false;
    std::vector<json> elements{};
    std::vector<std::pair<std::string, json>> members{};
    json::string_t key{};
  };

  bool open(bool object) {
    if (m_stack.size() >= max_json_depth) {
      throw error("it nests arrays and objects more than " + std::to_string(max_json_depth) +
                  " levels deep");
    }
    m_stack.push_back(frame{object});
    return true;
  }

  static void refuse_twice(const std::vector<std::pair<std::string, json>> &members) {
    const std::string *twice = nullptr;
    constexpr std::size_t searched = 16; // small objects are searched, larger ones sorted
    if (members.size() <= searched) {
      for (std::size_t i = 0; i < members.size() && twice == nullptr; ++i) {
        for (std::size_t j = 0; j < i; ++j) {
          if (members[j].first == members[i].first) {
            twice = &members[i].first;
            break;
          }
        }
      }
    } else {
      // Sorted by the names' hashes (names of one long prefix compare slowly), then the names of
      // one hash compared.
      std::vector<std::pair<std::size_t, const std::string *>> names;
      names.reserve(members.size());
      for (const auto &m : members) {
        names.emplace_back(std::hash<std::string>{}(m.first), &m.first);
      }
      std::sort(names.begin(), names.end(),
                [](const auto &a, const auto &b) { return a.first < b.first; });
      for (std::size_t i = 1; i < names.size() && twice == nullptr; ++i) {
        for (std::size_t j = i; j-- > 0 && names[j].first == names[i].first;) {
          if (*names[j].second == *names[i].second) {
            twice = names[i].second;
            break;
          }
        }
      }
    }
    if (twice != nullptr) {
      throw error("the member \"" + utf8_text(*twice) + "\" appears twice in one object");
    }
  }

  bool close() {
    frame f = std::move(m_stack.back());
    m_stack.pop_back();
    if (!f.object) {
      json v = json::array();
      v.get_ref<json::array_t &>() = std::move(f.elements);
      return put(std::move(v));
    }
    refuse_twice(f.members);
    json v = json::object();
    auto &members = v.get_ref<json::object_t &>();
    members.reserve(f.members.size());
    for (auto &m : f.members) {
      // The vector under ordered_json's object: appended without its search (checked above).
      members.emplace_back(std::move(m.first), std::move(m.second));
    }
    return put(std::move(v));
  }

  bool put(json v) {
    if (m_stack.empty()) {
      root = std::move(v);
      return true;
    }
    frame &f = m_stack.back();
    if (f.object && member != nullptr && m_stack.size() == 1) {
      return (*member)(f.key, v);
    }
    if (f.object) {
      f.members.emplace_back(std::move(f.key), std::move(v));
    } else {
      f.elements.push_back(std::move(v));
    }
    return true;
  }

  std::vector<frame> m_stack;
};

} // namespace

json parse_json(std::string_view text) {
  dom_builder b;
  try {
    json::sax_parse(text.begin(), text.end(), &b);
  } catch (const json::exception &e) {
    throw error(e.what());
  }
  return std::move(b.root);
}

json parse_json_members(std::string_view text, const member_fn &member) {
  dom_builder b;
  b.member = &member;
  try {
    json::sax_parse(text.begin(), text.end(), &b);
  } catch (const json::exception &e) {
    throw error(e.what());
  }
  return std::move(b.root);
}

json parse(std::string_view text, std::string_view what) {
  try {
    return parse_json(text);
  } catch (const error &e) {
    throw error(std::string(what) + " is not valid JSON: " + e.what());
  }
}

} // namespace tunekit::detail
