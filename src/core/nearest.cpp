#include "nearest.hpp"
#include "cache_entry.hpp"

#include <tunekit/shapes.hpp>

#include <algorithm>
#include <numeric>

namespace tunekit::detail {

void known_keys::add(const key &k, const config &c) {
  const auto it =
      std::find_if(m_known.begin(), m_known.end(), [&](const auto &kc) { return kc.first == k; });
  if (it != m_known.end()) {
    it->second = c;
  } else {
    m_known.emplace_back(k, c);
  }
}

void known_keys::scan_once(const winner_cache &cache, const function_identity &fn,
                           const hardware_info &hw, const std::string &space_digest,
                           const std::string &buckets, const std::string &measurer) {
  if (m_scanned) {
    return;
  }
  m_scanned = true;
  const std::string digest = hw.digest();
  for (const auto &path : cache.list(fn.name)) {
    auto r = winner_cache::read(path);
    if (!r.found()) {
      continue; // a bad file is reported when its own key is looked up
    }
    const cache_entry &e = *r.value;
    if (!(e.function == fn) || e.hardware.digest() != digest || e.key_buckets != buckets ||
        (e.space && e.space->digest != space_digest) || timed_another_way(e, measurer)) {
      continue;
    }
    if (std::none_of(m_known.begin(), m_known.end(),
                     [&](const auto &kc) { return kc.first == e.key; })) {
      m_known.emplace_back(e.key, e.winner);
    }
  }
}

std::optional<std::pair<std::size_t, key>>
known_keys::nearest(call_candidates &c, std::span<const std::size_t> over) const {
  const stored_key_parts want = split_stored_key(c.stored_key());
  std::vector<key> inputs;
  std::vector<std::size_t> from;
  for (std::size_t i = 0; i < m_known.size(); ++i) {
    stored_key_parts p = split_stored_key(m_known[i].first);
    if (p.pinned == want.pinned && key_distance(want.input, p.input, over)) {
      inputs.push_back(std::move(p.input));
      from.push_back(i);
    }
  }
  // Nearest first; a winner that is not a kept candidate of this call hands over to the next.
  while (!inputs.empty()) {
    const auto at = nearest_key(want.input, inputs, over);
    if (!at) {
      break;
    }
    const auto &[k, winner] = m_known[from[*at]];
    if (const auto i = c.find(winner); i && c.kept(*i)) {
      return std::pair{*i, k};
    }
    inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(*at));
    from.erase(from.begin() + static_cast<std::ptrdiff_t>(*at));
  }
  return std::nullopt;
}

} // namespace tunekit::detail
