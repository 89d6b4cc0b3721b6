#pragma once
/// \file value.hpp
/// The closed value type of tunekit: every config field and key element is one of int64, double,
/// bool or string, and keeps that type exactly when it is persisted.

#include <tunekit/error.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace tunekit {

/// The type held by a `value`, in the order of the underlying variant.
enum class value_type { int64, float64, boolean, string };

/// Name of a value type as written in errors and files ("int", "double", "bool", "string").
[[nodiscard]] std::string_view to_string(value_type t) noexcept;

/// One typed value. Integers of any width become int64 (an unsigned value above the int64 range is
/// an error), finite floating point becomes double, `bool` stays bool (it never decays to an
/// integer), text becomes string.
class value final {
public:
  using variant_type = std::variant<std::int64_t, double, bool, std::string>;

  value() noexcept : m_v(std::int64_t{0}) {}
  value(bool b) noexcept : m_v(b) {} // NOLINT(google-explicit-constructor)
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) value(T i)
      : m_v(static_cast<std::int64_t>(i)) { // NOLINT(google-explicit-constructor)
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t)) {
      if (i > static_cast<T>(std::numeric_limits<std::int64_t>::max())) {
        throw error("integer value " + std::to_string(i) + " is outside the int64 range");
      }
    }
  }
  /// Throws `tunekit::error` for NaN and infinities: they never compare equal as keys and cannot be
  /// stored in JSON.
  template <class T>
  requires std::is_floating_point_v<T> value(T d)
      : m_v(static_cast<double>(d)) { // NOLINT(google-explicit-constructor)
    if (!std::isfinite(d)) {
      throw error("a value must be finite, not " + std::to_string(static_cast<double>(d)));
    }
  }
  value(const char *s) : m_v(std::string(s)) {}        // NOLINT(google-explicit-constructor)
  value(std::string s) noexcept : m_v(std::move(s)) {} // NOLINT(google-explicit-constructor)
  value(std::string_view s) : m_v(std::string(s)) {}   // NOLINT(google-explicit-constructor)

  [[nodiscard]] value_type type() const noexcept { return static_cast<value_type>(m_v.index()); }
  [[nodiscard]] bool is_int() const noexcept { return m_v.index() == 0; }
  [[nodiscard]] bool is_double() const noexcept { return m_v.index() == 1; }
  [[nodiscard]] bool is_bool() const noexcept { return m_v.index() == 2; }
  [[nodiscard]] bool is_string() const noexcept { return m_v.index() == 3; }

  /// Typed accessors; each throws `tunekit::error` naming the expected and actual type.
  [[nodiscard]] std::int64_t as_int() const;
  [[nodiscard]] double as_double() const;
  [[nodiscard]] bool as_bool() const;
  [[nodiscard]] const std::string &as_string() const;

  [[nodiscard]] const variant_type &variant() const noexcept { return m_v; }

  /// Canonical text: 256, 2.5, true, "abc" (strings quoted, so 1 and "1" differ).
  [[nodiscard]] std::string to_string() const;
  [[nodiscard]] std::size_t hash() const noexcept {
    // Inline (hot path). The alternative's index is mixed in so that 1, 1.0 and true differ.
    std::size_t h = 0;
    switch (m_v.index()) {
    case 0:
      h = std::hash<std::int64_t>{}(*std::get_if<0>(&m_v));
      break;
    case 1:
      h = std::hash<double>{}(*std::get_if<1>(&m_v));
      break;
    case 2:
      h = *std::get_if<2>(&m_v) ? 1 : 0;
      break;
    default:
      h = std::hash<std::string>{}(*std::get_if<3>(&m_v));
      break;
    }
    return (h * 0x9E3779B97F4A7C15ULL) ^ m_v.index();
  }

  friend bool operator==(const value &a, const value &b) noexcept {
    // Inline (hot path: a resolved call compares its key with the remembered winner's).
    if (a.m_v.index() != b.m_v.index()) {
      return false;
    }
    switch (a.m_v.index()) {
    case 0:
      return *std::get_if<0>(&a.m_v) == *std::get_if<0>(&b.m_v);
    case 1:
      return *std::get_if<1>(&a.m_v) == *std::get_if<1>(&b.m_v);
    case 2:
      return *std::get_if<2>(&a.m_v) == *std::get_if<2>(&b.m_v);
    default:
      return *std::get_if<3>(&a.m_v) == *std::get_if<3>(&b.m_v);
    }
  }

private:
  variant_type m_v;
};

} // namespace tunekit

template <> struct std::hash<tunekit::value> {
  std::size_t operator()(const tunekit::value &v) const noexcept { return v.hash(); }
};
