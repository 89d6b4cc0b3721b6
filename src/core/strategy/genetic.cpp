// "genetic": a steady-state genetic algorithm (`genetic_settings`). The population is the best
// `population` configs told so far; a child is bred from two tournament winners by uniform
// crossover and mutation, and repaired through its valid Hamming neighbours when it is invalid or
// already seen.

#include "strategies.hpp"
#include "strategy_base.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace tunekit::detail {

namespace {

class genetic_strategy final : public strategy_base {
public:
  explicit genetic_strategy(const genetic_settings &settings) : m_settings(settings) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "genetic"; }
  [[nodiscard]] std::vector<std::size_t> ask(std::size_t max_batch) override;

private:
  void on_start() override { m_population.clear(); }
  void on_tell(std::size_t index, double time_ms) override;
  std::optional<std::size_t> child();
  std::size_t tournament();

  genetic_settings m_settings;
  std::vector<observation> m_population; // sorted by `better`
};

void genetic_strategy::on_tell(std::size_t index, double time_ms) {
  if (!std::isfinite(time_ms)) {
    return;
  }
  const observation o{index, time_ms};
  m_population.insert(std::upper_bound(m_population.begin(), m_population.end(), o, better), o);
  if (m_population.size() > m_settings.population) {
    m_population.pop_back();
  }
}

std::size_t genetic_strategy::tournament() {
  // Random members; the best wins (the population is sorted, so the smallest rank).
  std::size_t best_rank = m_population.size();
  for (std::size_t k = 0; k < m_settings.tournament; ++k) {
    best_rank = std::min<std::size_t>(best_rank, rng().below(m_population.size()));
  }
  return m_population[best_rank].index;
}

std::optional<std::size_t> genetic_strategy::child() {
  const search_space &s = space();
  const std::size_t dims = s.dimensions();
  const auto ordinal = ordinal_parameters(s);
  for (std::size_t attempt = 0; attempt < m_settings.attempts; ++attempt) {
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
    if (m_population.size() >= m_settings.min_parents &&
        told_results().size() >= m_settings.population) {
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

} // namespace

std::unique_ptr<strategy> make_genetic_strategy(const genetic_settings &settings) {
  return std::make_unique<genetic_strategy>(settings);
}

} // namespace tunekit::detail
