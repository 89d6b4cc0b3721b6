#include "domains.hpp"

#include <tunekit/error.hpp>
#include <tunekit/strategy/search_space.hpp>

#include <algorithm>
#include <limits>
#include <mutex>
#include <set>
#include <string>

namespace tunekit {

struct search_space::state {
  std::vector<parameter> params;
  std::vector<std::size_t> radix;  // domain sizes
  std::vector<std::size_t> stride; // the last parameter varies fastest
  std::size_t product = 0;
  std::vector<constraint> constraints;
  bool listed = false;
  std::vector<std::size_t> valid;      // sorted valid indices of a list
  std::vector<std::size_t> position;   // list position of valid[i]
  std::vector<std::size_t> list_index; // index of list position i
  mutable std::once_flag enumerated_once;
  mutable std::vector<std::size_t> enumerated; // valid indices of a product, once asked for
};

std::shared_ptr<search_space::state> search_space::make_state(std::vector<parameter> params) {
  detail::check_params(params);
  auto s = std::make_shared<search_space::state>();
  s->params = std::move(params);
  const std::size_t n = s->params.size();
  s->radix.resize(n);
  s->stride.resize(n);
  constexpr std::size_t max_product = std::size_t{1} << 62U;
  std::size_t total = 1;
  for (std::size_t p = n; p-- > 0;) {
    s->radix[p] = s->params[p].values.size();
    s->stride[p] = total;
    if (total > max_product / s->radix[p]) {
      throw error("search space product is beyond 2^62 points (parameter '" + s->params[p].name +
                  "')");
    }
    total *= s->radix[p];
  }
  s->product = total;
  return s;
}

search_space search_space::product(std::vector<parameter> params,
                                   std::vector<constraint> constraints) {
  auto s = make_state(std::move(params));
  s->constraints = std::move(constraints);
  search_space out;
  out.m_state = std::move(s);
  return out;
}

search_space search_space::from_configs(std::span<const config> configs) {
  return from_configs(detail::inferred_parameters(configs), configs);
}

search_space search_space::from_configs(std::vector<parameter> params,
                                        std::span<const config> configs) {
  auto s = make_state(std::move(params));
  if (configs.empty()) {
    throw error("search space from configs needs at least one config");
  }
  s->listed = true;
  s->list_index.reserve(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const config &c = configs[i];
    std::size_t index = 0;
    for (std::size_t p = 0; p < s->params.size(); ++p) {
      const parameter &par = s->params[p];
      const value *v = c.find(par.name);
      if (v == nullptr) {
        throw error("search space from configs: config #" + std::to_string(i) + " (" +
                    c.to_string() + ") has no parameter '" + par.name + "'");
      }
      auto d = detail::find_in_domain(par, *v);
      if (!d) {
        throw error("search space from configs: config #" + std::to_string(i) + " (" +
                    c.to_string() + ") has " + par.name + "=" + v->to_string() +
                    ", which is not in its domain");
      }
      index += *d * s->stride[p];
    }
    s->list_index.push_back(index);
  }
  std::vector<std::size_t> order(configs.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return s->list_index[a] < s->list_index[b]; });
  s->valid.reserve(order.size());
  s->position.reserve(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t idx = s->list_index[order[k]];
    if (k > 0 && idx == s->valid.back()) {
      throw error("search space from configs: configs #" + std::to_string(s->position.back()) +
                  " and #" + std::to_string(order[k]) + " are the same point (" +
                  configs[order[k]].to_string() + ")");
    }
    s->valid.push_back(idx);
    s->position.push_back(order[k]);
  }
  search_space out;
  out.m_state = std::move(s);
  return out;
}

search_space search_space::from(const config_space &space) {
  if (space.empty()) {
    throw error("search space from an empty config space");
  }
  if (!space.parameters().empty()) {
    return from_configs(space.parameters(), space.configs());
  }
  return from_configs(space.configs());
}

const std::vector<parameter> &search_space::parameters() const noexcept {
  static const std::vector<parameter> none;
  return m_state ? m_state->params : none;
}

std::size_t search_space::dimensions() const noexcept {
  return m_state ? m_state->params.size() : 0;
}

std::size_t search_space::domain_size(std::size_t p) const {
  if (p >= dimensions()) {
    throw error("search space has no parameter #" + std::to_string(p) + " (it has " +
                std::to_string(dimensions()) + ")");
  }
  return m_state->radix[p];
}

std::size_t search_space::product_size() const noexcept { return m_state ? m_state->product : 0; }

bool search_space::is_listed() const noexcept { return m_state && m_state->listed; }

std::optional<std::size_t> search_space::valid_count() const noexcept {
  if (!m_state) {
    return 0;
  }
  if (m_state->listed) {
    return m_state->valid.size();
  }
  return std::nullopt;
}

bool search_space::is_valid(std::size_t index) const noexcept {
  if (!m_state || index >= m_state->product) {
    return false;
  }
  if (m_state->listed) {
    return std::binary_search(m_state->valid.begin(), m_state->valid.end(), index);
  }
  if (m_state->constraints.empty()) {
    return true;
  }
  try {
    const config c = to_config(index);
    return std::all_of(m_state->constraints.begin(), m_state->constraints.end(),
                       [&](const constraint &keep) { return keep(c); });
  } catch (...) {
    return false;
  }
}

config search_space::to_config(std::size_t index) const {
  if (index >= product_size()) {
    throw error("search space index " + std::to_string(index) + " is outside the product of " +
                std::to_string(product_size()) + " points");
  }
  std::vector<field> fields;
  fields.reserve(m_state->params.size());
  for (std::size_t p = 0; p < m_state->params.size(); ++p) {
    fields.push_back(field{m_state->params[p].name, m_state->params[p].values[digit(index, p)]});
  }
  return config(std::move(fields));
}

std::optional<std::size_t> search_space::index_of(const config &c) const {
  if (!m_state) {
    return std::nullopt;
  }
  std::size_t index = 0;
  for (std::size_t p = 0; p < m_state->params.size(); ++p) {
    const value *v = c.find(m_state->params[p].name);
    if (v == nullptr) {
      return std::nullopt;
    }
    auto d = detail::find_in_domain(m_state->params[p], *v);
    if (!d) {
      return std::nullopt;
    }
    index += *d * m_state->stride[p];
  }
  return index;
}

std::size_t search_space::digit(std::size_t index, std::size_t p) const noexcept {
  return (index / m_state->stride[p]) % m_state->radix[p];
}

std::vector<std::uint32_t> search_space::digits(std::size_t index) const {
  std::vector<std::uint32_t> out(dimensions());
  for (std::size_t p = 0; p < out.size(); ++p) {
    out[p] = static_cast<std::uint32_t>(digit(index, p));
  }
  return out;
}

std::size_t search_space::from_digits(std::span<const std::uint32_t> digits) const {
  if (digits.size() != dimensions()) {
    throw error("search space has " + std::to_string(dimensions()) + " parameters, not " +
                std::to_string(digits.size()));
  }
  std::size_t index = 0;
  for (std::size_t p = 0; p < digits.size(); ++p) {
    if (digits[p] >= m_state->radix[p]) {
      throw error("search space parameter '" + m_state->params[p].name + "' has " +
                  std::to_string(m_state->radix[p]) + " values, no position " +
                  std::to_string(digits[p]));
    }
    index += digits[p] * m_state->stride[p];
  }
  return index;
}

std::size_t search_space::with_digit(std::size_t index, std::size_t p,
                                     std::size_t d) const noexcept {
  const std::size_t old = digit(index, p);
  return index - old * m_state->stride[p] + d * m_state->stride[p];
}

std::vector<std::size_t> search_space::neighbours(std::size_t index, neighbourhood kind) const {
  std::vector<std::size_t> out;
  if (!m_state || index >= m_state->product) {
    return out;
  }
  for (std::size_t p = 0; p < m_state->params.size(); ++p) {
    const std::size_t d = digit(index, p);
    const std::size_t n = m_state->radix[p];
    auto consider = [&](std::size_t to) {
      const std::size_t candidate = with_digit(index, p, to);
      if (is_valid(candidate)) {
        out.push_back(candidate);
      }
    };
    if (kind == neighbourhood::adjacent) {
      if (d > 0) {
        consider(d - 1);
      }
      if (d + 1 < n) {
        consider(d + 1);
      }
    } else {
      for (std::size_t to = 0; to < n; ++to) {
        if (to != d) {
          consider(to);
        }
      }
    }
  }
  return out;
}

const std::vector<std::size_t> &search_space::valid_indices() const {
  static const std::vector<std::size_t> none;
  if (!m_state) {
    return none;
  }
  if (m_state->listed) {
    return m_state->valid;
  }
  if (m_state->product > enumeration_limit) {
    throw error("search space of " + std::to_string(m_state->product) +
                " points is too large to enumerate (limit " + std::to_string(enumeration_limit) +
                ")");
  }
  std::call_once(m_state->enumerated_once, [this] {
    std::vector<std::size_t> all;
    for (std::size_t i = 0; i < m_state->product; ++i) {
      if (is_valid(i)) {
        all.push_back(i);
      }
    }
    m_state->enumerated = std::move(all);
  });
  return m_state->enumerated;
}

std::optional<std::size_t> search_space::sample_one(search_rng &rng) const {
  auto one = sample(rng, 1);
  if (one.empty()) {
    return std::nullopt;
  }
  return one.front();
}

std::vector<std::size_t> search_space::sample(search_rng &rng, std::size_t count) const {
  std::vector<std::size_t> out;
  if (!m_state || count == 0) {
    return out;
  }
  auto from_list = [&](const std::vector<std::size_t> &valid) {
    if (count >= valid.size()) {
      out = valid;
      rng.shuffle(std::span<std::size_t>(out));
      return;
    }
    if (count * 4 >= valid.size()) {
      std::vector<std::size_t> copy = valid;
      for (std::size_t i = 0; i < count; ++i) { // partial Fisher-Yates
        std::swap(copy[i], copy[i + rng.below(copy.size() - i)]);
      }
      copy.resize(count);
      out = std::move(copy);
      return;
    }
    std::set<std::size_t> seen;
    while (out.size() < count) {
      const std::size_t idx = valid[rng.below(valid.size())];
      if (seen.insert(idx).second) {
        out.push_back(idx);
      }
    }
  };
  if (m_state->listed) {
    from_list(m_state->valid);
    return out;
  }
  // Rejection over the product; when too few draws land on valid configs, enumerate (once).
  std::set<std::size_t> seen;
  const std::size_t max_draws = 64 * count + 4096;
  for (std::size_t draw = 0; draw < max_draws && out.size() < count; ++draw) {
    const std::size_t idx = rng.below(m_state->product);
    if (seen.count(idx) == 0 && is_valid(idx)) {
      seen.insert(idx);
      out.push_back(idx);
    }
  }
  if (out.size() == count || m_state->product > enumeration_limit) {
    return out;
  }
  out.clear();
  from_list(valid_indices());
  return out;
}

std::optional<std::size_t> search_space::position_of(std::size_t index) const {
  if (!m_state || !m_state->listed) {
    return std::nullopt;
  }
  auto it = std::lower_bound(m_state->valid.begin(), m_state->valid.end(), index);
  if (it == m_state->valid.end() || *it != index) {
    return std::nullopt;
  }
  return m_state->position[static_cast<std::size_t>(it - m_state->valid.begin())];
}

std::size_t search_space::index_at(std::size_t position) const {
  if (!m_state || !m_state->listed || position >= m_state->list_index.size()) {
    throw error("search space has no listed config at position " + std::to_string(position));
  }
  return m_state->list_index[position];
}

} // namespace tunekit
