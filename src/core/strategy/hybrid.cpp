// "hybrid": the TPE model (tpe.cpp) with the mechanisms only the hybrid's settings switch on
// (`hybrid_settings`): the space-filling start (`spread`), the trust region (`stall`), the
// polish of the best config's radius-two neighbourhood (`polish_after`, `polish`), the
// additive model of main effects (`main_effects`), the proposals by expected improvement or a
// lower confidence bound under a Gaussian process (`gaussian_process`, `confidence_bound`, gp.hpp)
// and the late hill climber (`climb_after`, `climb`).

#include "tpe.hpp"

#include "gp.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tunekit::detail {

namespace {

// The parameters in which two configs' digits differ.
std::size_t parameters_apart(const std::vector<std::uint32_t> &a,
                             const std::vector<std::uint32_t> &b) {
  std::size_t differ = 0;
  for (std::size_t p = 0; p < a.size(); ++p) {
    differ += a[p] != b[p] ? 1 : 0;
  }
  return differ;
}

} // namespace

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
      far = std::min(far, parameters_apart(d, q));
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

std::optional<std::size_t> tpe_strategy::propose_climb() {
  if (m_climb_at) {
    while (!m_climb_queue.empty()) {
      const std::size_t c = m_climb_queue.back();
      m_climb_queue.pop_back();
      if (!seen(c) && !likely_fails(c)) {
        return c;
      }
    }
    m_climb_at.reset(); // every neighbour told or likely to fail: a local optimum
    if (m_settings.climb_pause > 0) {
      m_climb_resumes = told_results().size() + m_settings.climb_pause;
      return std::nullopt; // the model's turn
    }
  }
  if (m_climb_start) {
    return std::nullopt; // the fresh start's result is awaited
  }
  m_climb_start = draw_unseen_avoiding();
  return m_climb_start;
}

void tpe_strategy::follow_climb(std::size_t index, double time_ms) {
  const search_space &s = space();
  bool move = false;
  if (m_climb_start == index) {
    m_climb_start.reset();
    move = std::isfinite(time_ms);
  } else if (m_climb_at && std::isfinite(time_ms) && time_ms < m_climb_at->time_ms) {
    // Whoever proposed it, a faster config one parameter away is the first improvement.
    move = parameters_apart(s.digits(index), s.digits(m_climb_at->index)) == 1;
  }
  if (!move) {
    return;
  }
  m_climb_at = observation{index, time_ms};
  m_climb_queue = s.neighbours(index, neighbourhood::hamming);
  // A neighbour told before the climber came (the model's, another climb's) may be faster
  // already: the climber goes on to the fastest of those, at no cost, until none is faster.
  for (bool on = true; on;) {
    on = false;
    for (std::size_t c : m_climb_queue) {
      if (const double t = time_of(c); t < m_climb_at->time_ms) {
        m_climb_at = observation{c, t};
        on = true;
      }
    }
    if (on) {
      m_climb_queue = s.neighbours(m_climb_at->index, neighbourhood::hamming);
    }
  }
  rng().shuffle(std::span<std::size_t>(m_climb_queue));
}

namespace {

// The additive model: results of its own (fewer: no proposal), ridge weight of each effect, the
// temperature of the samples that favour each parameter's faster values (in standard deviations of
// log time), and the backfitting sweeps.
constexpr std::size_t main_effects_fewest = 6;
constexpr double main_effects_ridge = 1.0;
constexpr double main_effects_temperature = 0.5;
constexpr std::size_t main_effects_sweeps = 20;

} // namespace

void tpe_strategy::count_landing(std::size_t index, double time_ms) {
  const auto it = m_awaited.find(index);
  if (it == m_awaited.end()) {
    return;
  }
  const std::size_t kind = it->second;
  m_awaited.erase(it);
  std::vector<double> others;
  for (const auto &o : epoch_results()) {
    if (o.index != index) {
      others.push_back(o.time_ms);
    }
  }
  if (others.empty()) {
    return;
  }
  const auto quarter = others.begin() + static_cast<std::ptrdiff_t>(others.size() / 4);
  std::nth_element(others.begin(), quarter, others.end());
  (time_ms <= *quarter ? m_landed : m_missed)[kind] += 1;
}

double tpe_strategy::landing_rate(std::size_t kind) const {
  // From a prior of one in five.
  return (1 + m_landed[kind]) / (5 + m_landed[kind] + m_missed[kind]);
}

double tpe_strategy::main_effects_share() const {
  return std::clamp(
      m_settings.main_effects * landing_rate(by_main_effects) / landing_rate(by_model), 0.05, 0.6);
}

double tpe_strategy::gaussian_process_share() const {
  return std::clamp(m_settings.gaussian_process * landing_rate(by_gaussian_process) /
                        landing_rate(by_model),
                    0.05, 0.8);
}

std::optional<std::size_t> tpe_strategy::pick_by_gaussian_process(std::span<const std::size_t> pool,
                                                                  std::size_t max_batch) {
  const search_space &s = space();
  std::vector<std::vector<std::uint32_t>> x;
  std::vector<double> y;
  for (const auto &o : epoch_results()) {
    if (std::isfinite(o.time_ms) && o.time_ms > 0) {
      x.push_back(s.digits(o.index));
      y.push_back(std::log(o.time_ms));
    }
  }
  // In a batch, the results of the batch's other proposals arrive with this one's: the process
  // starts that much sooner, once the random start is told.
  std::size_t from = m_settings.gaussian_process_from;
  if (m_settings.count_pending && max_batch > 1) {
    from = std::max(m_settings.initial, from > max_batch - 1 ? from - (max_batch - 1) : 0);
  }
  if (y.size() < from || y.size() > m_settings.gaussian_process_until) {
    return std::nullopt;
  }
  // Numeric domains of fewer than `fewest_ordered` values are ordered or method switches: both
  // distances are fitted and the more likely one kept (as `narrow_bandwidth` lets the good configs
  // choose for the kernels).
  gaussian_process gp(s, m_ordinal);
  bool fitted = gp.fit(x, y);
  if (m_ordinal_wide != m_ordinal) {
    gaussian_process other(s, m_ordinal_wide);
    if (other.fit(std::move(x), y) && (!fitted || other.log_likelihood() > gp.log_likelihood())) {
      gp = std::move(other);
      fitted = true;
    }
  }
  if (!fitted) {
    return std::nullopt;
  }
  if (m_settings.count_pending) {
    std::vector<std::vector<std::uint32_t>> pending;
    for (std::size_t c : pending_indices()) {
      pending.push_back(s.digits(c));
    }
    gp.believe(pending);
  }
  // The model's candidates, and uniform ones: the expected improvement also looks away from the
  // good configs, where the process is unsure.
  std::vector<std::size_t> candidates(pool.begin(), pool.end());
  for (std::size_t k = 0; k < m_settings.gaussian_process_samples; ++k) {
    const auto c = s.sample_one(rng());
    if (c && !seen(*c) && !likely_fails(*c)) {
      candidates.push_back(*c);
    }
  }
  // Every other pick by the lower confidence bound (the lowest first), the rest by the largest
  // expected improvement. With results from elsewhere, every pick by expected improvement: the
  // bound's picks away from the configs measured would delay the improvements around the
  // transferred ones.
  const bool by_bound =
      m_settings.confidence_bound > 0 && !transfers() && m_gaussian_process_picks++ % 2 == 0;
  std::optional<std::size_t> pick;
  double pick_score = 0;
  for (std::size_t c : candidates) {
    const auto d = s.digits(c);
    const double sc = by_bound ? -gp.lower_confidence_bound(d, m_settings.confidence_bound)
                               : gp.expected_improvement(d);
    if (!pick || sc > pick_score || (sc == pick_score && c < *pick)) {
      pick = c;
      pick_score = sc;
    }
  }
  return pick;
}

std::optional<std::size_t> tpe_strategy::propose_main_effects() {
  const search_space &s = space();
  std::vector<std::vector<std::uint32_t>> x;
  std::vector<double> y;
  for (const auto &o : epoch_results()) {
    if (std::isfinite(o.time_ms) && o.time_ms > 0 && m_proposed.contains(o.index)) {
      x.push_back(s.digits(o.index));
      y.push_back(std::log(o.time_ms));
    }
  }
  if (y.size() < main_effects_fewest) {
    return std::nullopt;
  }
  const auto n = static_cast<double>(y.size());
  double mean = 0;
  for (double v : y) {
    mean += v / n;
  }
  double var = 0;
  for (double v : y) {
    var += (v - mean) * (v - mean) / n;
  }
  const double sd = var > 0 ? std::sqrt(var) : 1.0;
  for (double &v : y) {
    v = (v - mean) / sd;
  }
  // One effect per parameter value, ridge-shrunk; backfitting solves the ridge regression over
  // the values' indicators one parameter at a time (within a parameter they are orthogonal).
  std::vector<std::vector<double>> effect(s.dimensions());
  for (std::size_t p = 0; p < effect.size(); ++p) {
    effect[p].assign(s.domain_size(p), 0.0);
  }
  std::vector<double> fitted(y.size(), 0.0);
  for (std::size_t sweep = 0; sweep < main_effects_sweeps; ++sweep) {
    for (std::size_t p = 0; p < effect.size(); ++p) {
      std::vector<double> sum(effect[p].size(), 0.0);
      std::vector<double> count(effect[p].size(), 0.0);
      for (std::size_t i = 0; i < y.size(); ++i) {
        sum[x[i][p]] += y[i] - (fitted[i] - effect[p][x[i][p]]);
        count[x[i][p]] += 1;
      }
      std::vector<double> next(effect[p].size());
      for (std::size_t v = 0; v < next.size(); ++v) {
        next[v] = sum[v] / (count[v] + main_effects_ridge);
      }
      for (std::size_t i = 0; i < y.size(); ++i) {
        fitted[i] += next[x[i][p]] - effect[p][x[i][p]];
      }
      effect[p] = std::move(next);
    }
  }
  auto predict = [&](std::size_t index) {
    double t = 0;
    for (std::size_t p = 0; p < effect.size(); ++p) {
      t += effect[p][s.digit(index, p)];
    }
    return t;
  };
  // Candidates: the fastest value of every parameter together, and samples that draw each
  // parameter's value with weight exp(-(effect - fastest) / temperature).
  std::vector<std::vector<double>> weights(effect.size());
  std::vector<std::uint32_t> fastest(effect.size());
  for (std::size_t p = 0; p < effect.size(); ++p) {
    const auto low = std::min_element(effect[p].begin(), effect[p].end());
    fastest[p] = static_cast<std::uint32_t>(low - effect[p].begin());
    for (double e : effect[p]) {
      weights[p].push_back(std::exp(-(e - *low) / main_effects_temperature));
    }
  }
  std::vector<std::size_t> candidates{s.from_digits(fastest)};
  std::vector<std::uint32_t> d(effect.size());
  for (std::size_t k = 0; k < 4 * m_settings.candidates; ++k) {
    for (std::size_t p = 0; p < d.size(); ++p) {
      d[p] = static_cast<std::uint32_t>(rng().weighted(weights[p]));
    }
    candidates.push_back(s.from_digits(d));
  }
  std::optional<std::size_t> pick;
  double pick_time = 0;
  for (std::size_t c : candidates) {
    if (!s.is_valid(c) || seen(c) || likely_fails(c)) {
      continue; // where configs failed, the failure model's verdict holds here too
    }
    const double t = predict(c);
    if (!pick || t < pick_time) {
      pick = c;
      pick_time = t;
    }
  }
  return pick;
}

} // namespace tunekit::detail
