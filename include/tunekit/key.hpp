#pragma once
/// \file key.hpp
/// The business key of a call: ordered typed values from `key_fn` (shapes, strides, dtypes, world
/// size, mode). Up to `inline_capacity` values are stored without a heap allocation, so building a
/// key on every call is cheap.

#include <tunekit/value.hpp>

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

namespace tunekit {

class key final {
public:
  static constexpr std::size_t inline_capacity = 4;

  key() noexcept = default;
  key(std::initializer_list<value> values) {
    for (const auto &v : values) {
      push_back(v);
    }
  }
  explicit key(const std::vector<value> &values) {
    for (const auto &v : values) {
      push_back(v);
    }
  }

  // Inline: a key is built and hashed on every tuned call.
  void push_back(value v) {
    if (m_size < inline_capacity) {
      m_inline[m_size] = std::move(v);
    } else {
      m_overflow.push_back(std::move(v));
    }
    ++m_size;
  }

  [[nodiscard]] std::size_t size() const noexcept { return m_size; }
  [[nodiscard]] bool empty() const noexcept { return m_size == 0; }
  [[nodiscard]] const value &operator[](std::size_t i) const noexcept {
    return i < inline_capacity ? m_inline[i] : m_overflow[i - inline_capacity];
  }
  [[nodiscard]] std::vector<value> values() const;

  /// Canonical text: `(1048576, "float32", true)`.
  [[nodiscard]] std::string to_string() const;
  [[nodiscard]] std::size_t hash() const noexcept {
    std::size_t h = m_size;
    for (std::size_t i = 0; i < m_size; ++i) {
      h ^= (*this)[i].hash() + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    }
    return h;
  }

  friend bool operator==(const key &a, const key &b) noexcept {
    if (a.m_size != b.m_size) {
      return false;
    }
    for (std::size_t i = 0; i < a.m_size; ++i) {
      if (!(a[i] == b[i])) {
        return false;
      }
    }
    return true;
  }

private:
  std::array<value, inline_capacity> m_inline{};
  std::vector<value> m_overflow;
  std::size_t m_size = 0;
};

} // namespace tunekit

template <> struct std::hash<tunekit::key> {
  std::size_t operator()(const tunekit::key &k) const noexcept { return k.hash(); }
};
