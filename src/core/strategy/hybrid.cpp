// "hybrid": the TPE model (tpe.cpp) with the mechanisms only the hybrid's settings switch on
// (`hybrid_settings`): the space-filling start (`spread`), the trust region (`stall`) and the
// polish of the best config's radius-two neighbourhood (`polish_after`, `polish`).

#include "tpe.hpp"

#include <algorithm>
#include <utility>

namespace tunekit::detail {

std::unique_ptr<strategy> make_hybrid_strategy(const hybrid_settings &settings) {
  return std::make_unique<tpe_strategy>("hybrid", settings);
}

std::optional<std::size_t> tpe_strategy::draw_spread(std::span<const std::size_t> batch) {
  const search_space &s = space();
  // Away from every config told so far, not only this epoch's: after a restart the fresh start
  // looks for another basin instead of landing back in the one just left.
  std::vector<std::vector<std::uint32_t>> placed;
  for (const auto &o : told_results()) {
    placed.push_back(s.digits(o.index));
  }
  for (std::size_t c : batch) {
    placed.push_back(s.digits(c));
  }
  // The values of each parameter that a placed config has.
  std::vector<std::vector<bool>> used(s.dimensions());
  for (std::size_t p = 0; p < used.size(); ++p) {
    used[p].assign(s.domain_size(p), false);
  }
  for (const auto &q : placed) {
    for (std::size_t p = 0; p < q.size(); ++p) {
      used[p][q[p]] = true;
    }
  }
  // Ranked by the parameter values no placed config has (so that the first configs cover each
  // parameter's domain, as a Latin hypercube does), then by the parameters that differ from the
  // nearest placed config.
  std::optional<std::size_t> pick;
  std::pair<std::size_t, std::size_t> pick_rank{0, 0};
  for (std::size_t k = 0; k < m_settings.spread; ++k) {
    const auto c = s.sample_one(rng());
    if (!c || seen(*c)) {
      continue;
    }
    const auto d = s.digits(*c);
    std::size_t fresh = 0;
    for (std::size_t p = 0; p < d.size(); ++p) {
      fresh += used[p][d[p]] ? 0 : 1;
    }
    std::size_t far = d.size(); // parameters that differ from the nearest placed config
    for (const auto &q : placed) {
      std::size_t differ = 0;
      for (std::size_t p = 0; p < d.size(); ++p) {
        differ += d[p] != q[p] ? 1 : 0;
      }
      far = std::min(far, differ);
    }
    const std::pair<std::size_t, std::size_t> rank{fresh, far};
    if (!pick || rank > pick_rank) {
      pick = c;
      pick_rank = rank;
    }
  }
  if (pick) {
    mark_pending(*pick);
  }
  return pick;
}

std::optional<std::size_t> tpe_strategy::refine() {
  if (m_settings.stall == 0 || m_since_best < m_settings.stall || !m_epoch_best) {
    return std::nullopt;
  }
  std::optional<std::size_t> pick;
  double pick_score = 0;
  for (std::size_t c : space().neighbours(m_epoch_best->index, neighbourhood::hamming)) {
    if (seen(c) || likely_fails(c)) {
      continue; // where configs failed, a neighbour likely to fail counts as spent
    }
    const double sc = score(c);
    if (!pick || sc > pick_score) {
      pick = c;
      pick_score = sc;
    }
  }
  return pick;
}

std::vector<std::size_t> tpe_strategy::radius_two(std::size_t centre) {
  const search_space &s = space();
  const auto d = s.digits(centre);
  std::vector<std::size_t> out;
  auto consider = [&](std::size_t p, std::size_t dp, std::size_t q, std::size_t dq) {
    const std::size_t c = s.with_digit(s.with_digit(centre, p, dp), q, dq);
    if (!seen(c) && s.is_valid(c) && !likely_fails(c)) {
      out.push_back(c);
    }
  };
  std::size_t pairs = 0; // radius-two points of the product
  for (std::size_t p = 0; p < d.size(); ++p) {
    for (std::size_t q = p + 1; q < d.size(); ++q) {
      pairs += (s.domain_size(p) - 1) * (s.domain_size(q) - 1);
    }
  }
  constexpr std::size_t enumerate_limit = 4096;
  if (pairs <= enumerate_limit) {
    for (std::size_t p = 0; p < d.size(); ++p) {
      for (std::size_t q = p + 1; q < d.size(); ++q) {
        for (std::size_t dp = 0; dp < s.domain_size(p); ++dp) {
          for (std::size_t dq = 0; dq < s.domain_size(q); ++dq) {
            if (dp != d[p] && dq != d[q]) {
              consider(p, dp, q, dq);
            }
          }
        }
      }
    }
  } else {
    // A wide space: a quarter as many random radius-two points as the limit (repeats dropped).
    for (std::size_t k = 0; k < enumerate_limit / 4; ++k) {
      const std::size_t p = rng().below(d.size());
      const std::size_t q = rng().below(d.size());
      if (p == q || s.domain_size(p) < 2 || s.domain_size(q) < 2) {
        continue;
      }
      const std::size_t dp = (d[p] + 1 + rng().below(s.domain_size(p) - 1)) % s.domain_size(p);
      const std::size_t dq = (d[q] + 1 + rng().below(s.domain_size(q) - 1)) % s.domain_size(q);
      consider(p, dp, q, dq);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

std::optional<std::size_t> tpe_strategy::polish() {
  if (m_settings.polish == 0 || told_results().size() < m_settings.polish_after || !has_best() ||
      m_polish_used >= m_settings.polish) {
    return std::nullopt;
  }
  const search_space &s = space();
  std::optional<std::size_t> pick;
  for (std::size_t c : s.neighbours(best().index, neighbourhood::hamming)) {
    if (!seen(c) && !likely_fails(c)) {
      pick = c;
      break;
    }
  }
  if (!pick) {
    std::vector<std::size_t> around = radius_two(best().index);
    // Ranked by a model of everything told (the epoch's model may describe another basin); a
    // random share of them when there are many.
    for (std::size_t k = 0; k < around.size() && k < m_settings.polish_scored; ++k) {
      std::swap(around[k], around[k + rng().below(around.size() - k)]);
    }
    around.resize(std::min(around.size(), m_settings.polish_scored));
    points good;
    points bad;
    if (!around.empty()) {
      split(told_results(), good, bad);
    }
    double pick_score = 0;
    for (std::size_t c : around) {
      const double sc = density_ratio(s.digits(c), good, bad) + failure_weight(c);
      if (!pick || sc > pick_score || (sc == pick_score && c < *pick)) {
        pick = c;
        pick_score = sc;
      }
    }
  }
  // Nothing left around this best: spent until a new best (no search of it at every proposal).
  m_polish_used = pick ? m_polish_used + 1 : m_settings.polish;
  return pick;
}

} // namespace tunekit::detail
