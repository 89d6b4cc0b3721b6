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
  key(std::initializer_list<value> values);
  explicit key(const std::vector<value> &values);

  void push_back(value v);

  [[nodiscard]] std::size_t size() const noexcept { return m_size; }
  [[nodiscard]] bool empty() const noexcept { return m_size == 0; }
  [[nodiscard]] const value &operator[](std::size_t i) const noexcept {
    return i < inline_capacity ? m_inline[i] : m_overflow[i - inline_capacity];
  }
  [[nodiscard]] std::vector<value> values() const;

  /// Canonical text: `(1048576, "float32", true)`.
  [[nodiscard]] std::string to_string() const;
  [[nodiscard]] std::size_t hash() const noexcept;

  friend bool operator==(const key &a, const key &b) noexcept;

private:
  std::array<value, inline_capacity> m_inline{};
  std::vector<value> m_overflow;
  std::size_t m_size = 0;
};

} // namespace tunekit

template <> struct std::hash<tunekit::key> {
  std::size_t operator()(const tunekit::key &k) const noexcept { return k.hash(); }
};
