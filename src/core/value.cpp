#include <tunekit/error.hpp>
#include <tunekit/value.hpp>

#include <charconv>
#include <cmath>
#include <string>

namespace tunekit {

std::string_view to_string(value_type t) noexcept {
  switch (t) {
  case value_type::int64:
    return "int";
  case value_type::float64:
    return "double";
  case value_type::boolean:
    return "bool";
  case value_type::string:
    return "string";
  }
  return "unknown";
}

namespace {
[[noreturn]] void wrong_type(value_type want, const value &v) {
  throw error("expected a value of type " + std::string(to_string(want)) + ", got " +
              std::string(to_string(v.type())) + " " + v.to_string());
}

std::string double_text(double d) {
  if (std::isnan(d)) {
    return "nan";
  }
  if (std::isinf(d)) {
    return d > 0 ? "inf" : "-inf";
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, end);
  // Keep doubles distinguishable from integers: 256.0, not 256.
  if (s.find_first_of(".en") == std::string::npos) {
    s += ".0";
  }
  return s;
}
} // namespace

std::int64_t value::as_int() const {
  if (!is_int()) {
    wrong_type(value_type::int64, *this);
  }
  return std::get<0>(m_v);
}

double value::as_double() const {
  if (!is_double()) {
    wrong_type(value_type::float64, *this);
  }
  return std::get<1>(m_v);
}

bool value::as_bool() const {
  if (!is_bool()) {
    wrong_type(value_type::boolean, *this);
  }
  return std::get<2>(m_v);
}

const std::string &value::as_string() const {
  if (!is_string()) {
    wrong_type(value_type::string, *this);
  }
  return std::get<3>(m_v);
}

std::string value::to_string() const {
  switch (type()) {
  case value_type::int64:
    return std::to_string(std::get<0>(m_v));
  case value_type::float64:
    return double_text(std::get<1>(m_v));
  case value_type::boolean:
    return std::get<2>(m_v) ? "true" : "false";
  case value_type::string: {
    std::string out = "\"";
    for (char c : std::get<3>(m_v)) {
      if (c == '"' || c == '\\') {
        out += '\\';
      }
      out += c;
    }
    return out + "\"";
  }
  }
  return {};
}

} // namespace tunekit
