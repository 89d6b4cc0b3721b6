#include "json_io.hpp"

#include <tunekit/config_space.hpp>
#include <tunekit/error.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>

namespace tunekit {

config_space::config_space(std::initializer_list<config> configs)
    : config_space(std::vector<config>(configs)) {}

config_space::config_space(std::vector<config> configs) : m_configs(std::move(configs)) {
  if (m_configs.empty()) {
    throw error("config space needs at least one config (an empty list was given)");
  }
  // Configs by a hash that ignores field order, compared field by field (text could make
  // distinct configs look alike).
  std::unordered_multimap<std::size_t, std::size_t> seen;
  for (std::size_t i = 0; i < m_configs.size(); ++i) {
    const config &c = m_configs[i];
    std::size_t h = std::hash<std::string>{}(c.template_id());
    for (const auto &f : c) {
      // Names are JSON object keys in cache entries, artifacts and tables: UTF-8 only.
      static_cast<void>(detail::utf8_name(f.name, "config field name"));
      h += (std::hash<std::string>{}(f.name) * 31) ^ f.value.hash();
    }
    auto [first, last] = seen.equal_range(h);
    for (auto it = first; it != last; ++it) {
      const config &other = m_configs[it->second];
      if (other == c) {
        throw error("config space lists the same config twice (#" + std::to_string(it->second) +
                    " and #" + std::to_string(i) + ": " + c.to_string() + ")");
      }
      if (other.same_fields(c)) {
        throw error("config space lists the same config twice, its fields in another order (#" +
                    std::to_string(it->second) + ": " + other.to_string() + "; #" +
                    std::to_string(i) + ": " + c.to_string() +
                    "): a config is its set of fields, whatever their order");
      }
    }
    seen.emplace(h, i);
  }
}

config_space config_space::product(const std::vector<parameter> &params,
                                   const std::vector<constraint> &constraints) {
  if (params.empty()) {
    throw error("config space product needs at least one parameter");
  }
  std::set<std::string> names;
  std::size_t total = 1;
  for (const auto &p : params) {
    static_cast<void>(detail::utf8_name(p.name, "parameter name"));
    if (p.values.empty()) {
      throw error("parameter '" + p.name + "' has no values");
    }
    if (!names.insert(p.name).second) {
      throw error("parameter '" + p.name + "' is declared twice");
    }
    for (std::size_t i = 0; i < p.values.size(); ++i) {
      if (std::find(p.values.begin(), p.values.begin() + static_cast<std::ptrdiff_t>(i),
                    p.values[i]) != p.values.begin() + static_cast<std::ptrdiff_t>(i)) {
        throw error("parameter '" + p.name + "' lists the value " + p.values[i].to_string() +
                    " twice");
      }
    }
    if (__builtin_mul_overflow(total, p.values.size(), &total)) {
      std::string sizes;
      for (const auto &q : params) {
        sizes += (sizes.empty() ? "" : " x ") + std::to_string(q.values.size());
      }
      throw error("config space product of " + sizes +
                  " values has more configs than a 64-bit count holds; a materialised space "
                  "cannot be this large (search such spaces with tunekit::search_space)");
    }
  }
  std::vector<config> out;
  std::vector<std::size_t> idx(params.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    std::vector<field> fields;
    fields.reserve(params.size());
    for (std::size_t p = 0; p < params.size(); ++p) {
      fields.push_back(field{params[p].name, params[p].values[idx[p]]});
    }
    config c(std::move(fields));
    if (std::all_of(constraints.begin(), constraints.end(),
                    [&](const constraint &keep) { return keep(c); })) {
      out.push_back(std::move(c));
    }
    // Advance the odometer: the last parameter varies fastest.
    for (std::size_t p = params.size(); p-- > 0;) {
      if (++idx[p] < params[p].values.size()) {
        break;
      }
      idx[p] = 0;
    }
  }
  if (out.empty()) {
    throw error("constraints removed all " + std::to_string(total) +
                " configs of the parameter product");
  }
  config_space s; // distinct by construction: names and domain values are unique
  s.m_configs = std::move(out);
  s.m_parameters = params;
  s.m_constraints = constraints;
  return s;
}

std::optional<std::size_t> config_space::index_of(const config &c) const noexcept {
  auto it = std::find(m_configs.begin(), m_configs.end(), c);
  if (it == m_configs.end()) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(it - m_configs.begin());
}

bool config_space::has_field(std::string_view name) const noexcept {
  return std::any_of(m_configs.begin(), m_configs.end(),
                     [&](const config &c) { return c.contains(name); });
}

} // namespace tunekit
