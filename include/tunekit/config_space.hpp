#pragma once
/// \file config_space.hpp
/// The candidates a tuner chooses from: an explicit list of configs, or the product of named
/// parameter domains filtered by constraints. The first config is the stable default.

#include <tunekit/config.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tunekit {

/// One named parameter domain of a product space.
struct parameter {
  std::string name;
  std::vector<value> values;
};

/// A predicate a config of a product space must satisfy, e.g.
/// `[](const config& c) { return c.get_int("MWG") % (c.get_int("MDIMC") * c.get_int("VWM")) == 0;
/// }`
using constraint = std::function<bool(const config &)>;

class config_space final {
public:
  /// An empty space (a tuner built with one throws); a placeholder to assign to.
  config_space() = default;
  /// An explicit list. Throws `tunekit::error` when it is empty or two configs are equal.
  config_space(std::initializer_list<config> configs);
  explicit config_space(std::vector<config> configs);

  /// The product of `params` (the last parameter varies fastest), keeping only the configs that
  /// satisfy every constraint. Throws on an empty domain, a repeated name or an empty result.
  [[nodiscard]] static config_space product(const std::vector<parameter> &params,
                                            const std::vector<constraint> &constraints = {});

  [[nodiscard]] std::size_t size() const noexcept { return m_configs.size(); }
  [[nodiscard]] bool empty() const noexcept { return m_configs.empty(); }
  [[nodiscard]] const config &operator[](std::size_t i) const { return m_configs[i]; }
  [[nodiscard]] auto begin() const noexcept { return m_configs.begin(); }
  [[nodiscard]] auto end() const noexcept { return m_configs.end(); }
  [[nodiscard]] const std::vector<config> &configs() const noexcept { return m_configs; }

  /// Index of `c` in the space (fields in its order, values of the same type), or nullopt. A
  /// linear search: the tuner never calls it on a call's path.
  [[nodiscard]] std::optional<std::size_t> index_of(const config &c) const noexcept;
  /// True when some config has a field called `name`.
  [[nodiscard]] bool has_field(std::string_view name) const noexcept;

  /// For a space built by `product`: its parameters in declared order, so that search strategies
  /// see its structure (`search_space::from`). Empty for an explicit list.
  [[nodiscard]] const std::vector<parameter> &parameters() const noexcept { return m_parameters; }
  /// For a space built by `product`: its constraints. Empty for an explicit list.
  [[nodiscard]] const std::vector<constraint> &constraints() const noexcept {
    return m_constraints;
  }

private:
  std::vector<config> m_configs;
  std::vector<parameter> m_parameters;
  std::vector<constraint> m_constraints;
};

} // namespace tunekit
