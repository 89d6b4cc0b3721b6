#pragma once
// The strategies behind `make_strategy`. Private: callers pick a strategy by name.

#include "strategy_base.hpp"

#include <deque>
#include <memory>
#include <optional>
#include <span>

namespace tunekit::detail {

/// Uniform samples of valid configs, each measured once.
class random_strategy final : public strategy_base {
public:
  [[nodiscard]] std::string_view name() const noexcept override { return "random"; }
  [[nodiscard]] std::vector<std::size_t> ask(std::size_t max_batch) override;
};

/// Hill climbing over the Hamming neighbourhood (one parameter changed), neighbours tried in a
/// random order and the first improvement taken; when no neighbour improves, a restart from the
/// best unexplored start point or a random config.
class local_strategy final : public strategy_base {
public:
  [[nodiscard]] std::string_view name() const noexcept override { return "local"; }
  [[nodiscard]] std::vector<std::size_t> ask(std::size_t max_batch) override;

private:
  void on_start() override;
  void on_tell(std::size_t index, double time_ms) override;
  void move_to(std::size_t index);

  bool m_has_current = false;
  std::size_t m_current = 0;
  double m_current_time = 0;
  std::vector<std::size_t> m_queue; // untried neighbours of the current config, next at the back
  std::size_t m_next_start = 0;
};

/// Steady-state genetic algorithm: tournament selection of two parents among the best configs
/// seen, uniform crossover of their parameter values, mutation of each parameter with
/// probability 1/dimensions (to an adjacent or any value), repair of invalid children through
/// their valid Hamming neighbours; the population is the best `population` configs told so far.
class genetic_strategy final : public strategy_base {
public:
  [[nodiscard]] std::string_view name() const noexcept override { return "genetic"; }
  [[nodiscard]] std::vector<std::size_t> ask(std::size_t max_batch) override;

private:
  void on_start() override { m_population.clear(); }
  void on_tell(std::size_t index, double time_ms) override;
  std::optional<std::size_t> child();
  std::size_t tournament();

  static constexpr std::size_t population = 20;
  std::vector<observation> m_population; // sorted by time, then index
};

/// Settings of the tree-structured Parzen estimator (and of the hybrid built on it).
struct tpe_settings {
  std::size_t initial = 10;       // random configs (after the start points) before the model
  double gamma = 0.15;            // fraction of the told configs in the "good" group
  std::size_t max_good = 25;      // most configs in the good group
  std::size_t candidates = 48;    // samples of the good density scored per proposal
  std::size_t neighbour_tops = 0; // Hamming neighbours of this many best configs also scored
  double explore = 0;             // chance of a uniform random proposal after the start
  bool multivariate = false; // densities: mixtures of product kernels, not products of marginals
  double bandwidth = 1.0;    // kernel width over ordered positions
  double smoothing = 0.1;    // share of each kernel spread uniformly over the domain
  // Trust region: after this many told configs without a new best (0: never), the next proposal is
  // the unseen Hamming neighbour of the best config with the best density ratio, until that
  // neighbourhood is spent.
  std::size_t stall = 0;
  std::size_t restart = 0; // told configs without a new best (0: never) before the model restarts
  // Space-filling start (0: plain uniform draws): each random config before the model (at the
  // start and after a restart) is, of this many uniform valid samples, the one with the most
  // parameter values that no config told so far (in any epoch) or proposed with it has, then the
  // one that differs in the most parameters from the nearest of those configs.
  std::size_t spread = 0;
  // Polish: once this many configs have been told (0: never), up to `polish` proposals around the
  // best config told so far (a new best gets its own): its unseen Hamming neighbours, then its
  // radius-two neighbours (two parameters changed), best density ratio first under a model of
  // every told config. Ranking them costs at most `polish_scored` density ratios per proposal.
  std::size_t polish_after = 0;
  std::size_t polish = 0;
  std::size_t polish_scored = 128;
};

/// Tree-structured Parzen estimator over the discrete space. The told configs are split into a
/// good group (the best `gamma` share) and the rest; each group gets a density over the space
/// built from kernels (a discrete Gaussian over the ordered positions of numeric domains, an exact
/// match for other domains). Candidates are drawn from the good density and the valid unseen one
/// with the best density ratio good/rest is proposed.
///
/// "tpe" uses independent per-parameter densities with a uniform prior (as Optuna's default).
/// "hybrid" uses multivariate densities (a mixture of product kernels centred on the told
/// configs, so that parameter interactions count), also scores the Hamming neighbours of the best
/// configs (the model steers a local search), starts from fewer random configs and keeps a small
/// chance of a uniform random proposal (so that transferred winners cannot confine it). It also
/// refines and restarts: after `stall` told configs without a new best, it proposes the unseen
/// Hamming neighbours of the best config first (a trust region of radius one, best density ratio
/// first); after `restart` told configs without a new best and with that neighbourhood spent, the
/// model forgets what it was told (it stays seen, never proposed again) and starts over from
/// random configs, so that a search converged to one basin spends the rest of its budget looking
/// for another. Its random configs (at the start and after a restart) fill the space: each is the
/// one of `spread` uniform samples that brings the most parameter values no told config has (so
/// the first configs cover each parameter's domain, as a Latin hypercube does), then the one
/// farthest, in parameters that differ, from every config told so far (so that a restart starts
/// away from the basins already searched).
/// Late in a search (from `polish_after` told configs) it polishes the best config told so far:
/// up to `polish` proposals in its radius-two neighbourhood, where an isolated optimum two
/// parameters away from a broad basin lies that neither the model nor the radius-one trust region
/// reaches.
class tpe_strategy final : public strategy_base {
public:
  tpe_strategy(std::string_view name, tpe_settings settings) : m_name(name), m_settings(settings) {}
  [[nodiscard]] std::string_view name() const noexcept override { return m_name; }
  [[nodiscard]] std::vector<std::size_t> ask(std::size_t max_batch) override;

private:
  void on_start() override;
  void on_tell(std::size_t index, double time_ms) override;
  void fit();
  [[nodiscard]] std::optional<std::size_t> refine();
  [[nodiscard]] double score(std::size_t index) const;
  [[nodiscard]] std::optional<std::size_t> polish();
  [[nodiscard]] std::vector<std::size_t> radius_two(std::size_t centre);
  using points = std::vector<std::vector<std::uint32_t>>;
  void split(std::vector<observation> obs, points &good, points &bad) const;
  [[nodiscard]] double density_ratio(const std::vector<std::uint32_t> &d, const points &good,
                                     const points &bad) const;
  [[nodiscard]] std::size_t draw_good();
  [[nodiscard]] std::optional<std::size_t> draw_spread(std::span<const std::size_t> batch);

  std::string m_name;
  tpe_settings m_settings;
  std::vector<bool> m_ordinal;                  // per parameter
  std::vector<std::vector<double>> m_good;      // per parameter: density of the good group
  std::vector<std::vector<double>> m_log_ratio; // per parameter: log good - log bad
  // Multivariate: kernel tables per parameter ([centre][position]) and the groups' digits.
  std::vector<std::vector<std::vector<double>>> m_kernel;
  points m_good_points;
  points m_bad_points;
  std::size_t m_fitted_at = SIZE_MAX; // number of told results of the last fit
  std::size_t m_since_best = 0;       // told configs since m_epoch_best improved
  // Restarts: the model sees the results told since m_epoch_start only; m_epoch_best is the best of
  // those, the centre of the trust region.
  std::size_t m_epoch_start = 0;
  std::optional<observation> m_epoch_best;
  std::size_t m_polish_used = 0; // proposals around best(), the centre of the polish
  [[nodiscard]] std::vector<observation> epoch_results() const;
};

} // namespace tunekit::detail
