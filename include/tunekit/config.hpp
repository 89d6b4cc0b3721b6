#pragma once
/// \file config.hpp
/// A config: named typed values in declared order, e.g. `BLOCK=256, num_warps=4`.

#include <tunekit/value.hpp>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tunekit {

/// One named value of a config.
struct field {
  std::string name;
  tunekit::value value;
  friend bool operator==(const field &, const field &) = default;
};

/// Ordered named values. Names are unique; the order is the order of declaration and is part of
/// the canonical form. An optional template id names the implementation the config belongs to.
///
/// \code
/// tunekit::config c{{"BLOCK", 256}, {"num_warps", 4}};
/// auto block = c.get_int("BLOCK");
/// \endcode
class config final {
public:
  config() = default;
  config(std::initializer_list<field> fields);
  explicit config(std::vector<field> fields);

  /// Sets `name` to `v`: replaces the value in place if the name exists, else appends it.
  config &set(std::string_view name, value v);

  /// The value of `name`, or nullptr.
  [[nodiscard]] const value *find(std::string_view name) const noexcept;
  [[nodiscard]] bool contains(std::string_view name) const noexcept {
    return find(name) != nullptr;
  }
  /// The value of `name`; throws `tunekit::error` naming the field and the fields there are.
  [[nodiscard]] const value &at(std::string_view name) const;

  /// Typed getters; each throws `tunekit::error` naming the field on a missing name or wrong type.
  [[nodiscard]] std::int64_t get_int(std::string_view name) const;
  [[nodiscard]] double get_double(std::string_view name) const;
  [[nodiscard]] bool get_bool(std::string_view name) const;
  [[nodiscard]] const std::string &get_string(std::string_view name) const;

  [[nodiscard]] std::size_t size() const noexcept { return m_fields.size(); }
  [[nodiscard]] bool empty() const noexcept { return m_fields.empty(); }
  [[nodiscard]] auto begin() const noexcept { return m_fields.begin(); }
  [[nodiscard]] auto end() const noexcept { return m_fields.end(); }
  [[nodiscard]] const std::vector<field> &fields() const noexcept { return m_fields; }

  [[nodiscard]] const std::string &template_id() const noexcept { return m_template_id; }
  config &set_template_id(std::string id);

  /// Canonical text: `BLOCK=256, num_warps=4` (prefixed by `template_id:` when set).
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const config &, const config &) = default;

  /// The same template and the same fields whatever their order: one config to a space, an
  /// artifact, a lookup table and the cache (`==` also compares the order).
  [[nodiscard]] bool same_fields(const config &other) const noexcept;

private:
  std::vector<field> m_fields;
  std::string m_template_id;
};

} // namespace tunekit
