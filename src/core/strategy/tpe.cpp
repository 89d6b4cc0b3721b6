// "tpe": the tree-structured Parzen estimator (`tpe_strategy`, tpe.hpp): the kernels, the split
// into a good group and the rest, the densities and their ratio, and the proposal loop that calls
// on the hybrid's mechanisms (hybrid.cpp) when their settings switch them on.

#include "tpe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace tunekit::detail {

void tpe_strategy::on_start() {
  const search_space &s = space();
  m_ordinal = ordinal_parameters(s);
  m_ordinal_wide = m_ordinal;
  for (std::size_t p = 0; p < s.dimensions(); ++p) {
    m_ordinal_wide[p] = m_ordinal[p] && s.domain_size(p) >= m_settings.fewest_ordered;
  }
  // The kernel of an observation at position j ([j][i], normalised over the domain): a discrete
  // Gaussian over the ordered positions of a domain of `fewest_ordered` values or more, an exact
  // match elsewhere; the multivariate densities spread a share of it uniformly (the independent
  // ones add a uniform prior instead).
  const double smoothing = m_settings.multivariate ? m_settings.smoothing : 0.0;
  auto table = [&](std::size_t p, double bandwidth, bool spread) {
    const std::size_t m = s.domain_size(p);
    std::vector<std::vector<double>> t(m, std::vector<double>(m, 0.0));
    for (std::size_t j = 0; j < m; ++j) {
      double total = 0;
      for (std::size_t i = 0; i < m; ++i) {
        const double dist = (static_cast<double>(i) - static_cast<double>(j)) / bandwidth;
        t[j][i] = spread ? std::exp(-0.5 * dist * dist) : (i == j ? 1.0 : 0.0);
        total += t[j][i];
      }
      for (double &k : t[j]) {
        k = (1 - smoothing) * k / total + smoothing / static_cast<double>(m);
      }
    }
    return t;
  };
  m_kernel.assign(s.dimensions(), {});
  m_kernel_widths.assign(s.dimensions(), {});
  for (std::size_t p = 0; p < s.dimensions(); ++p) {
    // A kernel over positions: ordered values, enough of them.
    const bool spread = m_ordinal_wide[p];
    m_kernel[p] = table(p, m_settings.bandwidth, spread);
    if (m_settings.narrow_bandwidth > 0 && m_settings.multivariate && m_ordinal[p]) {
      // Large domains: the width, wide or narrow. Small ones: exact, or the wide Gaussian where
      // the good configs say that time is smooth along them after all.
      m_kernel_widths[p] = {m_kernel[p], spread ? table(p, m_settings.narrow_bandwidth, true)
                                                : table(p, m_settings.bandwidth, true)};
    }
  }
  m_good.clear();
  m_failed_points.clear();
  m_ok_points.clear();
  m_absorbed = 0;
  m_chance_cache.clear();
  m_monotone_failures = true;
  m_log_ratio.clear();
  m_fitted_at = SIZE_MAX;
  m_since_best = 0;
  m_epoch_start = 0;
  m_epoch_best.reset();
  m_polish_used = 0;
  m_climb_at.reset();
  m_climb_queue.clear();
  m_climb_start.reset();
  m_climb_resumes = 0;
  m_proposed.clear();
  m_gaussian_process_picks = 0;
  m_pending_in_bad.clear();
  m_awaited.clear();
  m_landed = {};
  m_missed = {};
}

std::vector<observation> tpe_strategy::epoch_results() const {
  const auto &all = told_results();
  return {all.begin() + static_cast<std::ptrdiff_t>(std::min(m_epoch_start, all.size())),
          all.end()};
}

void tpe_strategy::on_tell(std::size_t index, double time_ms) {
  count_landing(index, time_ms);
  follow_climb(index, time_ms);
  const observation o{index, time_ms};
  if (improves(o, m_epoch_best)) {
    m_epoch_best = o;
    m_since_best = 0;
  } else {
    ++m_since_best;
  }
  if (has_best() && best().index == index) {
    m_polish_used = 0; // a new best of everything told: the polish's centre moves
  }
}

namespace {

// The good group: the best `gamma` share of `n` told configs (at least one, at most `max_good`).
std::size_t good_count(const tpe_settings &settings, std::size_t n) {
  const auto wanted = static_cast<std::size_t>(std::ceil(settings.gamma * static_cast<double>(n)));
  return std::clamp<std::size_t>(wanted, 1, std::max<std::size_t>(1, settings.max_good));
}

} // namespace

void tpe_strategy::split(std::vector<observation> obs, points &good, points &bad) const {
  std::sort(obs.begin(), obs.end(), better);
  const std::size_t n_good = good_count(m_settings, obs.size());
  good.clear();
  bad.clear();
  for (std::size_t k = 0; k < obs.size(); ++k) {
    (k < n_good ? good : bad).push_back(space().digits(obs[k].index));
  }
}

void tpe_strategy::choose_widths() {
  // Per ordered parameter, the kernel width under which the good configs explain each other best
  // (leave-one-out log-likelihood of the good group's mixture), the other parameters' kernels as
  // they are.
  const auto &g = m_good_points;
  constexpr std::size_t fewest = 4; // good configs to judge by; fewer: the default width
  for (std::size_t p = 0; p < m_kernel_widths.size(); ++p) {
    if (m_kernel_widths[p].empty()) {
      continue;
    }
    if (g.size() < fewest) {
      m_kernel[p] = m_kernel_widths[p].front();
      continue;
    }
    std::size_t best = 0;
    double best_ll = -std::numeric_limits<double>::infinity();
    for (std::size_t w = 0; w < m_kernel_widths[p].size(); ++w) {
      const auto &kp = m_kernel_widths[p][w];
      double ll = 0;
      for (std::size_t i = 0; i < g.size(); ++i) {
        double sum = 0;
        for (std::size_t j = 0; j < g.size(); ++j) {
          if (j == i) {
            continue;
          }
          double prod = kp[g[j][p]][g[i][p]];
          for (std::size_t q = 0; q < g[i].size(); ++q) {
            if (q != p) {
              prod *= m_kernel[q][g[j][q]][g[i][q]];
            }
          }
          sum += prod;
        }
        ll += std::log(sum / static_cast<double>(g.size() - 1) + 1e-300);
      }
      if (ll > best_ll) {
        best_ll = ll;
        best = w;
      }
    }
    m_kernel[p] = m_kernel_widths[p][best];
  }
}

void tpe_strategy::fit() {
  const search_space &s = space();
  if (m_settings.multivariate) {
    split(epoch_results(), m_good_points, m_bad_points);
    choose_widths();
    m_pending_in_bad.clear();
    count_pending_as_bad();
    if (m_settings.avoid_failures) {
      absorb_failures();
    }
    m_fitted_at = told_results().size();
    return;
  }
  std::vector<observation> obs = epoch_results();
  std::sort(obs.begin(), obs.end(), better);
  const std::size_t n = obs.size();
  const std::size_t n_good = good_count(m_settings, n);
  const std::size_t dims = s.dimensions();
  m_good.assign(dims, {});
  m_log_ratio.assign(dims, {});
  for (std::size_t p = 0; p < dims; ++p) {
    const std::size_t m = s.domain_size(p);
    const auto &kernel = m_kernel[p];
    std::vector<double> good(m, 1.0 / static_cast<double>(m)); // prior weight 1, uniform
    std::vector<double> bad(m, 1.0 / static_cast<double>(m));
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t j = s.digit(obs[k].index, p);
      auto &dst = k < n_good ? good : bad;
      for (std::size_t i = 0; i < m; ++i) {
        dst[i] += kernel[j][i];
      }
    }
    const double good_total = 1.0 + static_cast<double>(n_good);
    const double bad_total = 1.0 + static_cast<double>(n - std::min(n, n_good));
    m_log_ratio[p].resize(m);
    for (std::size_t i = 0; i < m; ++i) {
      good[i] /= good_total;
      m_log_ratio[p][i] = std::log(good[i]) - std::log(bad[i] / bad_total);
    }
    m_good[p] = std::move(good);
  }
  m_fitted_at = told_results().size();
}

void tpe_strategy::count_pending_as_bad() {
  if (!m_settings.count_pending || !m_settings.multivariate) {
    return;
  }
  for (std::size_t c : pending_indices()) {
    if (std::find(m_pending_in_bad.begin(), m_pending_in_bad.end(), c) == m_pending_in_bad.end()) {
      m_pending_in_bad.push_back(c);
      m_bad_points.push_back(space().digits(c));
    }
  }
}

double tpe_strategy::kernel_sum(const std::vector<std::uint32_t> &d, const points &centres,
                                std::size_t from) const {
  double sum = 0;
  for (std::size_t k = from; k < centres.size(); ++k) {
    double prod = 1;
    for (std::size_t p = 0; p < d.size(); ++p) {
      prod *= m_kernel[p][centres[k][p]][d[p]];
    }
    sum += prod;
  }
  return sum;
}

double tpe_strategy::uniform_density() const {
  double uniform = 1;
  for (std::size_t p = 0; p < space().dimensions(); ++p) {
    uniform /= static_cast<double>(space().domain_size(p));
  }
  return uniform;
}

double tpe_strategy::density_ratio(const std::vector<std::uint32_t> &d, const points &good,
                                   const points &bad) const {
  auto density = [&](const points &centres) {
    return kernel_sum(d, centres) / static_cast<double>(std::max<std::size_t>(1, centres.size()));
  };
  const double uniform = uniform_density();
  // The uniform prior as one more member of each mixture keeps both densities positive.
  const double g = (density(good) * static_cast<double>(good.size()) + uniform) /
                   static_cast<double>(good.size() + 1);
  const double b = (density(bad) * static_cast<double>(bad.size()) + uniform) /
                   static_cast<double>(bad.size() + 1);
  return std::log(g) - std::log(b);
}

void tpe_strategy::absorb_failures() {
  const auto &told = told_results();
  const search_space &s = space();
  for (; m_absorbed < told.size(); ++m_absorbed) {
    const auto &o = told[m_absorbed];
    auto d = s.digits(o.index);
    // Failures look like a resource running out while no config that succeeded is at least as
    // large, in every ordered parameter, as one that failed.
    if (std::isfinite(o.time_ms)) {
      m_monotone_failures =
          m_monotone_failures && std::none_of(m_failed_points.begin(), m_failed_points.end(),
                                              [&](const auto &bad) { return at_least(d, bad); });
      m_ok_points.push_back(std::move(d));
    } else {
      m_monotone_failures =
          m_monotone_failures && std::none_of(m_ok_points.begin(), m_ok_points.end(),
                                              [&](const auto &ok) { return at_least(ok, d); });
      m_failed_points.push_back(std::move(d));
    }
  }
  m_chance_cache.clear();
}

double tpe_strategy::failure_chance(const std::vector<std::uint32_t> &d) const {
  if (m_failed_points.empty()) {
    return 0;
  }
  const double uniform = uniform_density();
  // The uniform member carries the share of failures told so far: far from every told config the
  // chance is that share. Successes: the most recent `failure_successes`, weighted for all.
  const double failed = static_cast<double>(m_failed_points.size());
  const double ok = static_cast<double>(m_ok_points.size());
  const std::size_t kept = std::min(m_ok_points.size(), failure_successes);
  const double f = kernel_sum(d, m_failed_points);
  const double k = kept == 0 ? 0.0
                             : kernel_sum(d, m_ok_points, m_ok_points.size() - kept) * ok /
                                   static_cast<double>(kept);
  const double share = failed / (failed + ok);
  return std::clamp((f + share * uniform) / (f + k + uniform), 0.0, 0.99);
}

double tpe_strategy::cached_failure_chance(std::size_t index) const {
  if (auto it = m_chance_cache.find(index); it != m_chance_cache.end()) {
    return it->second;
  }
  const double chance = failure_chance(space().digits(index));
  m_chance_cache.emplace(index, chance);
  return chance;
}

double tpe_strategy::failure_weight(std::size_t index) const {
  return m_failed_points.empty() ? 0.0 : std::log(1 - cached_failure_chance(index));
}

bool tpe_strategy::at_least(const std::vector<std::uint32_t> &a,
                            const std::vector<std::uint32_t> &b) const {
  for (std::size_t p = 0; p < a.size(); ++p) {
    if (m_ordinal[p] ? a[p] < b[p] : a[p] != b[p]) {
      return false;
    }
  }
  return true;
}

bool tpe_strategy::likely_fails(std::size_t index) const {
  if (m_failed_points.empty()) {
    return false;
  }
  if (m_monotone_failures) {
    const auto d = space().digits(index);
    if (std::any_of(m_failed_points.begin(), m_failed_points.end(),
                    [&](const auto &bad) { return at_least(d, bad); })) {
      return true; // at least as large as a config that failed
    }
  }
  return cached_failure_chance(index) > 0.5;
}

std::optional<std::size_t> tpe_strategy::draw_unseen_avoiding() {
  if (!m_failed_points.empty()) {
    for (std::size_t k = 0; k < 8; ++k) {
      const auto c = space().sample_one(rng());
      if (c && !seen(*c) && !likely_fails(*c)) {
        mark_pending(*c);
        return c;
      }
    }
  }
  auto fresh = draw_unseen(1);
  return fresh.empty() ? std::nullopt : std::optional<std::size_t>(fresh.front());
}

double tpe_strategy::score(std::size_t index) const {
  if (m_settings.multivariate) {
    return density_ratio(space().digits(index), m_good_points, m_bad_points) +
           failure_weight(index);
  }
  double total = 0;
  for (std::size_t p = 0; p < m_log_ratio.size(); ++p) {
    total += m_log_ratio[p][space().digit(index, p)];
  }
  return total;
}

std::size_t tpe_strategy::draw_good() {
  if (m_settings.multivariate) {
    const auto &c = m_good_points[rng().below(m_good_points.size())];
    std::vector<std::uint32_t> d(c.size());
    for (std::size_t p = 0; p < d.size(); ++p) {
      d[p] = static_cast<std::uint32_t>(rng().weighted(m_kernel[p][c[p]]));
    }
    return space().from_digits(d);
  }
  std::vector<std::uint32_t> d(m_good.size());
  for (std::size_t p = 0; p < d.size(); ++p) {
    d[p] = static_cast<std::uint32_t>(rng().weighted(m_good[p]));
  }
  return space().from_digits(d);
}

std::vector<std::size_t> tpe_strategy::ask(std::size_t max_batch) {
  std::vector<std::size_t> out;
  const search_space &s = space();
  while (out.size() < max_batch) {
    // Random configs besides the start points first: transferred winners alone would confine the
    // model to the region where other devices were fast.
    // After a restart, configs proposed in this batch count towards the fresh start, but the
    // model needs at least one told result of the new epoch to fit.
    const bool warm =
        m_epoch_start == 0
            ? told_results().size() >= m_settings.initial + start_points().size()
            : told_results().size() > m_epoch_start &&
                  told_results().size() + pending_count() >= m_epoch_start + m_settings.initial;
    if (!warm && m_settings.spread > 0) {
      if (auto c = draw_spread(out)) {
        out.push_back(*c);
        continue;
      }
    }
    if (!warm || (m_settings.explore > 0 && rng().chance(m_settings.explore))) {
      auto fresh = draw_unseen_avoiding();
      if (!fresh) {
        break;
      }
      out.push_back(*fresh);
      continue;
    }
    if (m_fitted_at != told_results().size()) {
      fit();
    } else {
      count_pending_as_bad(); // the batch's proposals so far
    }
    if (auto r = polish()) {
      mark_pending(*r);
      out.push_back(*r);
      continue;
    }
    if (auto r = refine()) {
      mark_pending(*r);
      out.push_back(*r);
      continue;
    }
    if (m_settings.restart > 0 && m_since_best >= m_settings.restart) {
      // A long stall and the trust region spent: the model starts over from fresh random configs,
      // away from the basin it converged to (everything told stays seen, and the driver keeps the
      // overall best).
      m_epoch_start = told_results().size();
      m_epoch_best.reset();
      m_since_best = 0;
      m_fitted_at = SIZE_MAX;
      continue;
    }
    if (m_settings.climb_after > 0 && told_results().size() >= m_settings.climb_after &&
        told_results().size() >= m_climb_resumes && rng().chance(m_settings.climb)) {
      if (auto r = propose_climb()) {
        mark_pending(*r);
        out.push_back(*r);
        continue;
      }
    }
    if (m_settings.main_effects > 0 && rng().chance(main_effects_share())) {
      if (auto r = propose_main_effects()) {
        mark_pending(*r);
        m_awaited[*r] = by_main_effects;
        out.push_back(*r);
        continue;
      }
    }
    std::vector<std::size_t> pool;
    for (std::size_t k = 0; k < m_settings.candidates; ++k) {
      const std::size_t c = draw_good();
      if (s.is_valid(c) && !seen(c)) {
        pool.push_back(c);
      }
    }
    if (m_settings.neighbour_tops > 0) {
      std::vector<observation> obs = epoch_results();
      std::erase_if(obs, [](const observation &o) { return !std::isfinite(o.time_ms); });
      const std::size_t tops = std::min(m_settings.neighbour_tops, obs.size());
      std::partial_sort(obs.begin(), obs.begin() + static_cast<std::ptrdiff_t>(tops), obs.end(),
                        better);
      for (std::size_t k = 0; k < tops; ++k) {
        for (std::size_t c : s.neighbours(obs[k].index, neighbourhood::hamming)) {
          if (!seen(c)) {
            pool.push_back(c);
          }
        }
      }
    }
    if (!m_failed_points.empty()) {
      // Where configs failed: the candidates likely to fail go, unless every one is.
      std::vector<std::size_t> likely_ok;
      for (std::size_t c : pool) {
        if (!likely_fails(c)) {
          likely_ok.push_back(c);
        }
      }
      if (!likely_ok.empty()) {
        pool = std::move(likely_ok);
      }
    }
    if (pool.empty()) {
      auto fresh = draw_unseen(1);
      if (fresh.empty()) {
        break;
      }
      out.push_back(fresh.front());
      continue;
    }
    if (m_settings.gaussian_process > 0 && rng().chance(gaussian_process_share())) {
      if (auto r = pick_by_gaussian_process(pool, max_batch)) {
        mark_pending(*r);
        m_awaited[*r] = by_gaussian_process;
        out.push_back(*r);
        continue;
      }
    }
    std::size_t pick = pool.front();
    double pick_score = score(pick);
    for (std::size_t c : pool) {
      const double sc = score(c);
      if (sc > pick_score || (sc == pick_score && c < pick)) {
        pick = c;
        pick_score = sc;
      }
    }
    mark_pending(pick);
    out.push_back(pick);
    if (counts_kinds()) {
      m_awaited[pick] = by_model;
    }
  }
  if (counts_kinds()) {
    m_proposed.insert(out.begin(), out.end());
  }
  return out;
}

std::unique_ptr<strategy> make_tpe_strategy(const tpe_settings &settings) {
  return std::make_unique<tpe_strategy>("tpe", settings);
}

} // namespace tunekit::detail
