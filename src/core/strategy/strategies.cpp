#include "strategies.hpp"

#include <tunekit/error.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

namespace tunekit::detail {

namespace {

bool better(const observation &a, const observation &b) noexcept {
  return a.time_ms < b.time_ms || (a.time_ms == b.time_ms && a.index < b.index);
}

// Numeric domains of more than two values are ordered: neighbouring positions are related.
std::vector<bool> ordinal_parameters(const search_space &space) {
  std::vector<bool> out;
  for (const auto &p : space.parameters()) {
    out.push_back(p.values.size() > 2 &&
                  std::all_of(p.values.begin(), p.values.end(),
                              [](const value &v) { return v.is_int() || v.is_double(); }));
  }
  return out;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// random

std::vector<std::size_t> random_strategy::ask(std::size_t max_batch) {
  return draw_unseen(max_batch);
}

// ---------------------------------------------------------------------------------------------
// local search with restarts

void local_strategy::on_start() {
  m_has_current = false;
  m_queue.clear();
  m_next_start = 0;
}

void local_strategy::move_to(std::size_t index) {
  m_has_current = true;
  m_current = index;
  m_current_time = time_of(index);
  m_queue = space().neighbours(index, neighbourhood::hamming);
  rng().shuffle(std::span<std::size_t>(m_queue));
}

void local_strategy::on_tell(std::size_t index, double time_ms) {
  if (!std::isfinite(time_ms)) {
    return;
  }
  if (!m_has_current || time_ms < m_current_time) {
    move_to(index); // first improvement
  }
}

std::vector<std::size_t> local_strategy::ask(std::size_t max_batch) {
  std::vector<std::size_t> out;
  while (out.size() < max_batch) {
    if (m_has_current) {
      while (!m_queue.empty() && seen(m_queue.back())) {
        m_queue.pop_back();
      }
      if (!m_queue.empty()) {
        out.push_back(m_queue.back());
        mark_pending(m_queue.back());
        m_queue.pop_back();
        continue;
      }
      if (!out.empty()) {
        break; // the neighbourhood is spent: restart after these are told
      }
      m_has_current = false; // a local optimum: restart
    }
    auto fresh = draw_unseen(1);
    if (fresh.empty()) {
      break;
    }
    out.push_back(fresh.front());
    if (out.size() == 1 && max_batch > 1) {
      break; // measure the restart point before walking from it
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// genetic algorithm

void genetic_strategy::on_tell(std::size_t index, double time_ms) {
  if (!std::isfinite(time_ms)) {
    return;
  }
  const observation o{index, time_ms};
  m_population.insert(std::upper_bound(m_population.begin(), m_population.end(), o, better), o);
  if (m_population.size() > population) {
    m_population.pop_back();
  }
}

std::size_t genetic_strategy::tournament() {
  // Three random members; the best wins (the population is sorted, so the smallest rank).
  std::size_t best_rank = m_population.size();
  for (int k = 0; k < 3; ++k) {
    best_rank = std::min<std::size_t>(best_rank, rng().below(m_population.size()));
  }
  return m_population[best_rank].index;
}

std::optional<std::size_t> genetic_strategy::child() {
  const search_space &s = space();
  const std::size_t dims = s.dimensions();
  const auto ordinal = ordinal_parameters(s);
  for (int attempt = 0; attempt < 16; ++attempt) {
    const auto a = s.digits(tournament());
    const auto b = s.digits(tournament());
    std::vector<std::uint32_t> d(dims);
    for (std::size_t p = 0; p < dims; ++p) {
      d[p] = rng().chance(0.5) ? a[p] : b[p];
      if (rng().chance(1.0 / static_cast<double>(dims))) {
        const std::size_t n = s.domain_size(p);
        if (ordinal[p] && rng().chance(0.5)) {
          const bool up = rng().chance(0.5);
          if (up && d[p] + 1 < n) {
            ++d[p];
          } else if (!up && d[p] > 0) {
            --d[p];
          }
        } else {
          d[p] = static_cast<std::uint32_t>(rng().below(n));
        }
      }
    }
    std::size_t c = s.from_digits(d);
    if (!s.is_valid(c) || seen(c)) {
      // Repair: a valid, unseen config one parameter away.
      std::vector<std::size_t> near = s.neighbours(c, neighbourhood::hamming);
      std::erase_if(near, [&](std::size_t i) { return seen(i); });
      if (near.empty()) {
        continue;
      }
      c = near[rng().below(near.size())];
    }
    return c;
  }
  return std::nullopt;
}

std::vector<std::size_t> genetic_strategy::ask(std::size_t max_batch) {
  std::vector<std::size_t> out;
  while (out.size() < max_batch) {
    std::optional<std::size_t> c;
    if (m_population.size() >= 4 && told_results().size() >= population) {
      c = child();
    }
    if (!c) {
      auto fresh = draw_unseen(1);
      if (fresh.empty()) {
        break;
      }
      c = fresh.front();
    }
    mark_pending(*c);
    out.push_back(*c);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// tree-structured Parzen estimator (and the hybrid)

void tpe_strategy::on_start() {
  const search_space &s = space();
  m_ordinal = ordinal_parameters(s);
  // The kernel of an observation at position j ([j][i], normalised over the domain): a discrete
  // Gaussian over ordered positions, an exact match elsewhere; the multivariate densities spread a
  // share of it uniformly (the independent ones add a uniform prior instead).
  const double smoothing = m_settings.multivariate ? m_settings.smoothing : 0.0;
  m_kernel.assign(s.dimensions(), {});
  for (std::size_t p = 0; p < s.dimensions(); ++p) {
    const std::size_t m = s.domain_size(p);
    m_kernel[p].assign(m, std::vector<double>(m, 0.0));
    for (std::size_t j = 0; j < m; ++j) {
      double total = 0;
      for (std::size_t i = 0; i < m; ++i) {
        const double dist =
            (static_cast<double>(i) - static_cast<double>(j)) / m_settings.bandwidth;
        m_kernel[p][j][i] = m_ordinal[p] ? std::exp(-0.5 * dist * dist) : (i == j ? 1.0 : 0.0);
        total += m_kernel[p][j][i];
      }
      for (double &k : m_kernel[p][j]) {
        k = (1 - smoothing) * k / total + smoothing / static_cast<double>(m);
      }
    }
  }
  m_good.clear();
  m_log_ratio.clear();
  m_fitted_at = SIZE_MAX;
  m_since_best = 0;
  m_epoch_start = 0;
  m_epoch_best.reset();
  m_polish_used = 0;
}

std::vector<observation> tpe_strategy::epoch_results() const {
  const auto &all = told_results();
  return {all.begin() + static_cast<std::ptrdiff_t>(std::min(m_epoch_start, all.size())),
          all.end()};
}

void tpe_strategy::on_tell(std::size_t index, double time_ms) {
  const observation o{index, time_ms};
  if (std::isfinite(time_ms) && (!m_epoch_best || better(o, *m_epoch_best))) {
    m_epoch_best = o;
    m_since_best = 0;
  } else {
    ++m_since_best;
  }
  if (has_best() && best().index == index) {
    m_polish_used = 0; // a new best of everything told: the polish's centre moves
  }
}

std::optional<std::size_t> tpe_strategy::refine() {
  if (m_settings.stall == 0 || m_since_best < m_settings.stall || !m_epoch_best) {
    return std::nullopt;
  }
  std::optional<std::size_t> pick;
  double pick_score = 0;
  for (std::size_t c : space().neighbours(m_epoch_best->index, neighbourhood::hamming)) {
    if (seen(c)) {
      continue;
    }
    const double sc = score(c);
    if (!pick || sc > pick_score) {
      pick = c;
      pick_score = sc;
    }
  }
  return pick;
}

// The good group: the best `gamma` share of `obs` (at least one, at most `max_good`).
static std::size_t good_count(const tpe_settings &settings, std::size_t n) {
  const auto wanted = static_cast<std::size_t>(std::ceil(settings.gamma * static_cast<double>(n)));
  return std::clamp<std::size_t>(wanted, 1, std::max<std::size_t>(1, settings.max_good));
}

void tpe_strategy::split(std::vector<observation> obs, points &good, points &bad) const {
  std::sort(obs.begin(), obs.end(), better);
  const std::size_t n_good = good_count(m_settings, obs.size());
  good.clear();
  bad.clear();
  for (std::size_t k = 0; k < obs.size(); ++k) {
    (k < n_good ? good : bad).push_back(space().digits(obs[k].index));
  }
}

std::vector<std::size_t> tpe_strategy::radius_two(std::size_t centre) {
  const search_space &s = space();
  const auto d = s.digits(centre);
  std::vector<std::size_t> out;
  auto consider = [&](std::size_t p, std::size_t dp, std::size_t q, std::size_t dq) {
    const std::size_t c = s.with_digit(s.with_digit(centre, p, dp), q, dq);
    if (!seen(c) && s.is_valid(c)) {
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
    if (!seen(c)) {
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
      const double sc = density_ratio(s.digits(c), good, bad);
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

void tpe_strategy::fit() {
  const search_space &s = space();
  if (m_settings.multivariate) {
    split(epoch_results(), m_good_points, m_bad_points);
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

double tpe_strategy::density_ratio(const std::vector<std::uint32_t> &d, const points &good,
                                   const points &bad) const {
  auto density = [&](const points &centres) {
    double sum = 0;
    for (const auto &c : centres) {
      double prod = 1;
      for (std::size_t p = 0; p < d.size(); ++p) {
        prod *= m_kernel[p][c[p]][d[p]];
      }
      sum += prod;
    }
    return sum / static_cast<double>(std::max<std::size_t>(1, centres.size()));
  };
  double uniform = 1;
  for (std::size_t p = 0; p < d.size(); ++p) {
    uniform /= static_cast<double>(space().domain_size(p));
  }
  // The uniform prior as one more member of each mixture keeps both densities positive.
  const double g = (density(good) * static_cast<double>(good.size()) + uniform) /
                   static_cast<double>(good.size() + 1);
  const double b = (density(bad) * static_cast<double>(bad.size()) + uniform) /
                   static_cast<double>(bad.size() + 1);
  return std::log(g) - std::log(b);
}

double tpe_strategy::score(std::size_t index) const {
  if (m_settings.multivariate) {
    return density_ratio(space().digits(index), m_good_points, m_bad_points);
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
      auto fresh = draw_unseen(1);
      if (fresh.empty()) {
        break;
      }
      out.push_back(fresh.front());
      continue;
    }
    if (m_fitted_at != told_results().size()) {
      fit();
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
    if (pool.empty()) {
      auto fresh = draw_unseen(1);
      if (fresh.empty()) {
        break;
      }
      out.push_back(fresh.front());
      continue;
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
  }
  return out;
}

} // namespace tunekit::detail

namespace tunekit {

std::vector<std::string> strategy_names() {
  return {"hybrid", "tpe", "genetic", "local", "random"};
}

std::unique_ptr<strategy> make_strategy(std::string_view name) {
  if (name == "random") {
    return std::make_unique<detail::random_strategy>();
  }
  if (name == "local") {
    return std::make_unique<detail::local_strategy>();
  }
  if (name == "genetic") {
    return std::make_unique<detail::genetic_strategy>();
  }
  if (name == "tpe") {
    return std::make_unique<detail::tpe_strategy>("tpe", detail::tpe_settings{});
  }
  if (name == "hybrid") {
    detail::tpe_settings s;
    s.multivariate = true;
    s.initial = 6;
    s.neighbour_tops = 3;
    s.explore = 0.1;
    s.stall = 10;
    s.restart = 30;
    s.spread = 32;
    s.polish_after = 200;
    s.polish = 100;
    return std::make_unique<detail::tpe_strategy>("hybrid", s);
  }
  std::string known;
  for (const auto &n : strategy_names()) {
    known += (known.empty() ? "" : ", ") + n;
  }
  throw error("unknown search strategy '" + std::string(name) + "' (known: " + known + ")");
}

} // namespace tunekit
