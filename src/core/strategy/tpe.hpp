#pragma once
// The tree-structured Parzen estimator behind "tpe" and "hybrid". The estimator and its proposal
// loop are in tpe.cpp; the mechanisms only the hybrid switches on (the space-filling start, the
// trust region, the polish) are in hybrid.cpp.

#include "strategies.hpp"
#include "strategy_base.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tunekit::detail {

/// Tree-structured Parzen estimator over the discrete space. The told configs are split into a
/// good group (the best `gamma` share) and the rest; each group gets a density over the space
/// built from kernels (a discrete Gaussian over the ordered positions of numeric domains of at
/// least `fewest_ordered` values, an exact match for other domains). Candidates are drawn from the
/// good density and the valid unseen one with the best density ratio good/rest is proposed.
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
/// reaches. A share of its proposals (`main_effects`) comes from an additive model of log time,
/// which puts together the values that separate good configs got right; of the others, a share
/// (`gaussian_process`) is the candidate of the largest expected improvement under a Gaussian
/// process of log time, early in an epoch (in a search without start points or transfer sources,
/// every other one of those the candidate of the lowest confidence bound, `confidence_bound`).
/// Late in a search (from `climb_after` told configs), most of the proposals after the polish's
/// come from a hill climber (`climb`), which walks the Hamming neighbourhoods the model ranks low
/// and, at each local optimum, leaves the model the next told configs (`climb_pause`).
class tpe_strategy final : public strategy_base {
public:
  tpe_strategy(std::string_view name, const tpe_settings &settings)
      : m_name(name), m_settings(settings) {}
  [[nodiscard]] std::string_view name() const noexcept override { return m_name; }
  [[nodiscard]] std::vector<std::size_t> ask(std::size_t max_batch) override;

private:
  using points = std::vector<std::vector<std::uint32_t>>;

  // tpe.cpp: the estimator.
  void on_start() override;
  void on_tell(std::size_t index, double time_ms) override;
  void fit();
  // With `count_pending`, the proposals not yet told join the bad group (once each until the next
  // fit).
  void count_pending_as_bad();
  void choose_widths();
  [[nodiscard]] double score(std::size_t index) const;
  void split(std::vector<observation> obs, points &good, points &bad) const;
  // Sum of the product kernels of centres[from..] at `d`; the uniform density over the product.
  [[nodiscard]] double kernel_sum(const std::vector<std::uint32_t> &d, const points &centres,
                                  std::size_t from = 0) const;
  [[nodiscard]] double uniform_density() const;
  [[nodiscard]] double density_ratio(const std::vector<std::uint32_t> &d, const points &good,
                                     const points &bad) const;
  [[nodiscard]] std::size_t draw_good();
  // Takes the configs told since the last fit into m_failed_points and m_ok_points.
  void absorb_failures();
  // The estimated chance that the config at `d` fails (`avoid_failures`); 0 before any failure.
  [[nodiscard]] double failure_chance(const std::vector<std::uint32_t> &d) const;
  // failure_chance of the config at `index`, computed once per fit.
  [[nodiscard]] double cached_failure_chance(std::size_t index) const;
  // log(1 - the chance that the config at `index` fails); 0 before any failure.
  [[nodiscard]] double failure_weight(std::size_t index) const;
  // At least as large as `b` in every ordered parameter, equal in the others.
  [[nodiscard]] bool at_least(const std::vector<std::uint32_t> &a,
                              const std::vector<std::uint32_t> &b) const;
  // At least as large as a told failure while failures look monotone, or a chance of failing
  // above one half.
  [[nodiscard]] bool likely_fails(std::size_t index) const;
  // A uniform unseen config, of up to eight draws the first not likely to fail (marked pending).
  [[nodiscard]] std::optional<std::size_t> draw_unseen_avoiding();
  [[nodiscard]] std::vector<observation> epoch_results() const;

  // hybrid.cpp: the space-filling start, the trust region, the polish and the main effects.
  [[nodiscard]] std::optional<std::size_t> draw_spread(std::span<const std::size_t> batch);
  // The additive model's proposal, or nothing (too few results of its own, nothing unseen).
  [[nodiscard]] std::optional<std::size_t> propose_main_effects();
  // The share of proposals the additive model gets now; counts a told proposal for its kind.
  [[nodiscard]] double main_effects_share() const;
  // Which part of the strategy made a proposal (`m_awaited`, `landing_rate`).
  enum proposal_kind : std::size_t {
    by_model = 0,
    by_main_effects = 1,
    by_gaussian_process = 2,
    proposal_kinds = 3
  };
  // Whether proposals are counted by the kind that made them (a share follows their progress).
  [[nodiscard]] bool counts_kinds() const noexcept {
    return m_settings.main_effects > 0 || m_settings.gaussian_process > 0;
  }
  // How often the told proposals of a kind (below) landed in the best quarter.
  [[nodiscard]] double landing_rate(std::size_t kind) const;
  // The share of the model's proposals the Gaussian process scores now.
  [[nodiscard]] double gaussian_process_share() const;
  // Of `pool`, the config of the largest expected improvement; nothing if the process cannot fit.
  // `max_batch`: the batch being filled.
  [[nodiscard]] std::optional<std::size_t>
  pick_by_gaussian_process(std::span<const std::size_t> pool, std::size_t max_batch);
  void count_landing(std::size_t index, double time_ms);
  [[nodiscard]] std::optional<std::size_t> refine();
  [[nodiscard]] std::optional<std::size_t> polish();
  [[nodiscard]] std::vector<std::size_t> radius_two(std::size_t centre);
  // `climb`: the climber's next proposal (a neighbour of its config, or a fresh start), or
  // nothing (its start's result is awaited, nothing unseen is left, or a local optimum was
  // reached: the model's pause begins).
  [[nodiscard]] std::optional<std::size_t> propose_climb();
  // Moves the climber to a told config: its start, or a faster Hamming neighbour of its config.
  void follow_climb(std::size_t index, double time_ms);

  std::string m_name;
  tpe_settings m_settings;
  std::vector<bool> m_ordinal; // per parameter: numbers in order
  // Per parameter: numbers in order, at least `fewest_ordered` of them (a kernel over positions).
  std::vector<bool> m_ordinal_wide;
  std::vector<std::vector<double>> m_good;      // per parameter: density of the good group
  std::vector<std::vector<double>> m_log_ratio; // per parameter: log good - log bad
  // Multivariate: kernel tables per parameter ([centre][position]) and the groups' digits.
  std::vector<std::vector<std::vector<double>>> m_kernel;
  // Per ordered parameter, the kernel tables of the widths `choose_widths` picks from.
  std::vector<std::vector<std::vector<std::vector<double>>>> m_kernel_widths;
  points m_good_points;
  points m_bad_points;                       // and the proposals pending, with `count_pending`
  std::vector<std::size_t> m_pending_in_bad; // those proposals
  // `avoid_failures`: every told config that failed and every one that succeeded (all epochs),
  // taken in as they are told (m_absorbed of them so far).
  points m_failed_points;
  points m_ok_points;
  std::size_t m_absorbed = 0;
  // Successes that count in `failure_chance` (the most recent; each weighs for the rest).
  static constexpr std::size_t failure_successes = 256;
  // No told success is at least as large as a told failure (`at_least`): failures look like a
  // resource running out, so a config at least as large as one that failed is likely to fail.
  bool m_monotone_failures = true;
  // failure_chance by index since the last fit (looked up, never iterated).
  mutable std::unordered_map<std::size_t, double> m_chance_cache;
  std::size_t m_fitted_at = SIZE_MAX; // number of told results of the last fit
  std::size_t m_since_best = 0;       // told configs since m_epoch_best improved
  // Restarts: the model sees the results told since m_epoch_start only; m_epoch_best is the best of
  // those, the centre of the trust region.
  std::size_t m_epoch_start = 0;
  std::optional<observation> m_epoch_best;
  std::size_t m_polish_used = 0; // proposals around best(), the centre of the polish
  // `climb`: the climber's config and its neighbours not yet proposed (shuffled, taken from the
  // back); a fresh start awaiting its result; the told count at which the pause after its last
  // local optimum ends (`climb_pause`).
  std::optional<observation> m_climb_at;
  std::vector<std::size_t> m_climb_queue;
  std::optional<std::size_t> m_climb_start;
  std::size_t m_climb_resumes = 0;
  // `main_effects`, `gaussian_process`: the configs this strategy proposed (looked up, never
  // iterated), and of those not yet told, which kind proposed them (`proposal_kind`); per kind,
  // the told proposals that landed in the best quarter of the results and those that did not.
  std::unordered_set<std::size_t> m_proposed;
  std::unordered_map<std::size_t, std::size_t> m_awaited;
  std::array<double, proposal_kinds> m_landed{};
  std::array<double, proposal_kinds> m_missed{};
  // `confidence_bound`: the configs the Gaussian process picked (the even ones by the bound).
  std::size_t m_gaussian_process_picks = 0;
};

} // namespace tunekit::detail
