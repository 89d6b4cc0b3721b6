#pragma once
/// \file key.hpp
/// The business key of a call: ordered typed values from `key_fn` (shapes, strides, dtypes, world
/// size, mode). Up to `inline_capacity` values are stored without a heap allocation, so building a
/// key on every call is cheap.

#include <tunekit/value.hpp>

#include <cstddef>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

namespace tunekit {

class key final {
public:
  static constexpr std::size_t inline_capacity = 4;

  key() noexcept {} // NOLINT(modernize-use-equals-default): m_inline stays raw
  /// `key{m, n, "float32"}`: each argument becomes one value, built in place.
  template <class... T>
  requires(sizeof...(T) > 0 && (std::is_constructible_v<value, T &&> && ...) &&
           !(sizeof...(T) == 1 && (std::is_same_v<std::remove_cvref_t<T>, key> && ...)))
      key(T &&...values) { // NOLINT(google-explicit-constructor)
    try {
      (emplace_back(std::forward<T>(values)), ...);
    } catch (...) { // a value that throws (NaN, an unsigned above int64): no leak of the others
      destroy_inline();
      throw;
    }
  }
  explicit key(const std::vector<value> &values) {
    try {
      for (const auto &v : values) {
        push_back(v);
      }
    } catch (...) {
      destroy_inline();
      throw;
    }
  }
  key(const key &other) : m_overflow(other.m_overflow) {
    try {
      for (std::size_t i = 0; i < other.inline_size(); ++i) {
        new (slot(i)) value(other.inline_at(i));
        ++m_size; // counts what the catch below destroys
      }
    } catch (...) {
      destroy_inline();
      throw;
    }
    m_size = other.m_size;
  }
  key(key &&other) noexcept : m_overflow(std::move(other.m_overflow)) {
    for (std::size_t i = 0; i < other.inline_size(); ++i) {
      new (slot(i)) value(std::move(other.inline_at(i)));
    }
    m_size = other.m_size;
    other.clear();
  }
  key &operator=(const key &other) {
    if (this != &other) {
      key copy(other);
      *this = std::move(copy);
    }
    return *this;
  }
  key &operator=(key &&other) noexcept {
    if (this != &other) {
      clear();
      m_overflow = std::move(other.m_overflow);
      for (std::size_t i = 0; i < other.inline_size(); ++i) {
        new (slot(i)) value(std::move(other.inline_at(i)));
      }
      m_size = other.m_size;
      other.clear();
    }
    return *this;
  }
  ~key() { destroy_inline(); }

  // Inline: a key is built and compared on every tuned call. The first `inline_capacity` values
  // live in raw storage and only those present are constructed and destroyed.
  void push_back(const value &v) { emplace_back(v); }
  void push_back(value &&v) { emplace_back(std::move(v)); }
  /// Appends `value(std::forward<T>(v))`, built in place.
  template <class T> void emplace_back(T &&v) {
    if (m_size < inline_capacity) {
      new (slot(m_size)) value(std::forward<T>(v));
    } else {
      m_overflow.emplace_back(std::forward<T>(v));
    }
    ++m_size;
  }

  [[nodiscard]] std::size_t size() const noexcept { return m_size; }
  [[nodiscard]] bool empty() const noexcept { return m_size == 0; }
  [[nodiscard]] const value &operator[](std::size_t i) const noexcept {
    return i < inline_capacity ? inline_at(i) : m_overflow[i - inline_capacity];
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
  [[nodiscard]] std::size_t inline_size() const noexcept {
    return m_size < inline_capacity ? m_size : inline_capacity;
  }
  [[nodiscard]] void *slot(std::size_t i) noexcept { return m_inline + i * sizeof(value); }
  [[nodiscard]] value &inline_at(std::size_t i) noexcept {
    return *std::launder(reinterpret_cast<value *>(slot(i)));
  }
  [[nodiscard]] const value &inline_at(std::size_t i) const noexcept {
    return *std::launder(reinterpret_cast<const value *>(m_inline + i * sizeof(value)));
  }
  void destroy_inline() noexcept {
    for (std::size_t i = inline_size(); i > 0; --i) {
      inline_at(i - 1).~value();
    }
  }
  void clear() noexcept {
    destroy_inline();
    m_overflow.clear();
    m_size = 0;
  }

  alignas(value) unsigned char m_inline[inline_capacity * sizeof(value)];
  std::vector<value> m_overflow;
  std::size_t m_size = 0;
};

} // namespace tunekit

template <> struct std::hash<tunekit::key> {
  std::size_t operator()(const tunekit::key &k) const noexcept { return k.hash(); }
};
