// Parameter domains of a search space: their checks, finding a value in one, and the domains
// inferred from a list of configs.

#include "domains.hpp"

#include <tunekit/error.hpp>

#include <algorithm>
#include <set>
#include <string>

namespace tunekit::detail {

namespace {

bool is_number(const value &v) noexcept { return v.is_int() || v.is_double(); }

double number_of(const value &v) noexcept {
  return v.is_int() ? static_cast<double>(v.as_int()) : v.as_double();
}

// Equal values, or numbers of equal value (2 and 2.0).
bool values_match(const value &a, const value &b) noexcept {
  if (a == b) {
    return true;
  }
  return is_number(a) && is_number(b) && number_of(a) == number_of(b);
}

} // namespace

std::optional<std::size_t> find_in_domain(const parameter &p, const value &v) noexcept {
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    if (p.values[i] == v) {
      return i;
    }
  }
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    if (values_match(p.values[i], v)) {
      return i;
    }
  }
  return std::nullopt;
}

void check_params(const std::vector<parameter> &params) {
  if (params.empty()) {
    throw error("search space needs at least one parameter");
  }
  std::set<std::string> names;
  for (const auto &p : params) {
    if (p.values.empty()) {
      throw error("search space parameter '" + p.name + "' has no values");
    }
    if (!names.insert(p.name).second) {
      throw error("search space parameter '" + p.name + "' is declared twice");
    }
    for (std::size_t i = 0; i < p.values.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (p.values[i] == p.values[j]) {
          throw error("search space parameter '" + p.name + "' lists the value " +
                      p.values[i].to_string() + " twice");
        }
      }
    }
  }
}

std::vector<parameter> inferred_parameters(std::span<const config> configs) {
  if (configs.empty()) {
    throw error("search space from configs needs at least one config");
  }
  const config &first = configs.front();
  if (first.empty()) {
    throw error("search space from configs: the first config has no fields");
  }
  std::vector<parameter> params;
  params.reserve(first.size());
  for (const auto &f : first) {
    params.push_back(parameter{f.name, {}});
  }
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const config &c = configs[i];
    if (!c.template_id().empty()) {
      throw error("search space from configs: config #" + std::to_string(i) + " (" + c.to_string() +
                  ") has a template id; list one template's configs at a time");
    }
    if (c.size() != params.size()) {
      throw error("search space from configs: config #" + std::to_string(i) + " (" + c.to_string() +
                  ") has " + std::to_string(c.size()) + " fields, the first has " +
                  std::to_string(params.size()));
    }
    for (std::size_t p = 0; p < params.size(); ++p) {
      const field &f = c.fields()[p];
      if (f.name != params[p].name) {
        throw error("search space from configs: config #" + std::to_string(i) + " (" +
                    c.to_string() + ") has field '" + f.name + "' where the first has '" +
                    params[p].name + "'");
      }
      auto &dom = params[p].values;
      if (std::find(dom.begin(), dom.end(), f.value) == dom.end()) {
        dom.push_back(f.value);
      }
    }
  }
  for (auto &p : params) {
    auto &dom = p.values;
    if (std::all_of(dom.begin(), dom.end(), [](const value &v) { return is_number(v); })) {
      std::stable_sort(dom.begin(), dom.end(),
                       [](const value &a, const value &b) { return number_of(a) < number_of(b); });
      // 2 and 2.0 are distinct values but would be one domain position: refuse them.
      for (std::size_t i = 1; i < dom.size(); ++i) {
        if (number_of(dom[i]) == number_of(dom[i - 1])) {
          throw error("search space from configs: parameter '" + p.name + "' holds both " +
                      dom[i - 1].to_string() + " and " + dom[i].to_string());
        }
      }
    } else if (std::all_of(dom.begin(), dom.end(), [](const value &v) { return v.is_bool(); })) {
      std::sort(dom.begin(), dom.end(),
                [](const value &a, const value &b) { return !a.as_bool() && b.as_bool(); });
    }
  }
  return params;
}

} // namespace tunekit::detail
