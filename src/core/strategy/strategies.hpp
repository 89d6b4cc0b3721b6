#pragma once
// The built-in strategies: each one's settings, with their defaults where they are declared, and
// its factory. Each strategy lives in its own file; the registry (registry.cpp) names them for
// `make_strategy` and `strategy_names`. Private: callers pick a strategy by name.
//
// The defaults were chosen on measured spaces (docs/search.md, bench/results/*search*): a
// strategy's proposals for a seed depend on every one of them.

#include <tunekit/strategy/search_space.hpp>
#include <tunekit/strategy/strategy.hpp>

#include <cstddef>
#include <memory>

namespace tunekit::detail {

/// "random" (random.cpp): uniform samples of valid configs, each measured once. It has no
/// settings.
[[nodiscard]] std::unique_ptr<strategy> make_random_strategy();

/// Settings of "local" (local.cpp): hill climbing, neighbours tried in a random order and the first
/// improvement taken; when no neighbour improves, a restart from a random config.
struct local_settings {
  /// The moves of the climb: one parameter changed to any other value.
  neighbourhood moves = neighbourhood::hamming;
};
[[nodiscard]] std::unique_ptr<strategy> make_local_strategy(const local_settings &settings = {});

/// Settings of "genetic" (genetic.cpp): a steady-state genetic algorithm. Children come from
/// tournament selection of two parents among the best configs seen, uniform crossover of their
/// parameter values, mutation of each parameter with probability 1/dimensions (to an adjacent or
/// any value), and repair of invalid children through their valid Hamming neighbours.
struct genetic_settings {
  /// The population: the best this many configs told so far. Until this many configs have been
  /// told, proposals are random.
  std::size_t population = 20;
  /// Members drawn (with repeats) for a tournament; the best of them is a parent.
  std::size_t tournament = 3;
  /// Fewest finite results in the population for children to be bred.
  std::size_t min_parents = 4;
  /// Children tried (each repaired when invalid or seen) before a random config is proposed.
  std::size_t attempts = 16;
};
[[nodiscard]] std::unique_ptr<strategy>
make_genetic_strategy(const genetic_settings &settings = {});

/// Settings of "tpe" (tpe.cpp), the tree-structured Parzen estimator, as Optuna's default:
/// independent per-parameter densities with a uniform prior. The hybrid (`hybrid_settings`) runs
/// the same estimator with other values and switches on the mechanisms whose settings are 0 here.
struct tpe_settings {
  /// Random configs (after the start points) before the model.
  std::size_t initial = 10;
  /// Fraction of the told configs in the "good" group.
  double gamma = 0.15;
  /// Most configs in the good group.
  std::size_t max_good = 25;
  /// Samples of the good density scored per proposal.
  std::size_t candidates = 48;
  /// Hamming neighbours of this many best configs also scored (0: none).
  std::size_t neighbour_tops = 0;
  /// Chance of a uniform random proposal once the model runs.
  double explore = 0;
  /// Densities: mixtures of product kernels (parameter interactions count), not products of
  /// marginals.
  bool multivariate = false;
  /// Kernel width over ordered positions.
  double bandwidth = 1.0;
  /// Numeric domains of fewer values start with an exact-match kernel, as categories have: over
  /// three or four values a Gaussian of width 1 spreads most of an observation onto its
  /// neighbours, and such small domains are often switches between methods (pnpoly's
  /// `between_method`, 0-3) whose order means nothing. With `narrow_bandwidth` on, the good
  /// configs may widen it to the Gaussian of `bandwidth`.
  std::size_t fewest_ordered = 3;
  /// Share of each multivariate kernel spread uniformly over the domain.
  double smoothing = 0.1;
  /// Kernel width chosen per ordered parameter from the measurements (multivariate only; 0: off,
  /// every parameter keeps `bandwidth`): at each fit, each ordered parameter takes the width,
  /// `bandwidth` or this one (an exact match or `bandwidth` for domains of fewer than
  /// `fewest_ordered` values), under which the good group's configs explain each other best (the
  /// leave-one-out log-likelihood of the group's mixture, the other parameters' kernels as they
  /// are), once the group has four configs (before that, the kernel it starts with). Time that is
  /// smooth along a parameter (block and tile sizes of a convolution) keeps the wide kernel; time
  /// that turns on exact values (pnpoly's) gets the narrow one.
  double narrow_bandwidth = 0;
  /// Main effects (multivariate only; 0: off): once the model runs, this share of proposals comes
  /// from an additive model of log time, one effect per parameter value (ridge-shrunk, fitted by
  /// backfitting to the results of the epoch's own proposals, so that transferred results do not
  /// steer it): the unseen valid config it predicts fastest among its best combination and samples
  /// that favour each parameter's faster values. It recombines what separate good configs got
  /// right, which a mixture centred on each of them does not. The share follows how often its
  /// proposals land in the best quarter of the results against the model's (each counted from a
  /// prior of one in five), between 0.05 and 0.6.
  double main_effects = 0;
  /// Gaussian process (multivariate only; 0: off): once the model runs, while the epoch has from
  /// `gaussian_process_from` to `gaussian_process_until` finite results, this share of the
  /// proposals that are not the additive model's is the config of the largest expected improvement
  /// under a Gaussian process of log time fitted to them (gp.hpp), among the model's candidates and
  /// `gaussian_process_samples` uniform unseen ones, instead of the model's best density ratio.
  /// Numeric domains of fewer than `fewest_ordered` values count as ordered in one fit and as
  /// categories in another; the more likely process is kept.
  /// The share follows how often its proposals land in the best quarter against the density
  /// ratio's (each counted from a prior of one in five), between 0.05 and 0.8.
  double gaussian_process = 0;
  std::size_t gaussian_process_from = 10;
  std::size_t gaussian_process_until = 100;
  std::size_t gaussian_process_samples = 512;
  /// With the Gaussian process (0: off): every other config it picks, the first included, is the
  /// one of the lowest confidence bound, the predicted log time less this many standard deviations
  /// of the prediction, instead of the one of the largest expected improvement. Expected
  /// improvement keeps to the best result's surroundings once the process is sure of them; the
  /// bound also tries where the process is unsure and the prediction is not poor. Not in a search
  /// with start points or transfer sources (`strategy::expect_transfer`): there every pick is by
  /// expected improvement, so that the improvements around the transferred configs come first.
  double confidence_bound = 0;
  /// Batches (multivariate only): while a batch is filled, or proposals are made ahead of the
  /// results (`search_options::lookahead`), the proposals not yet told count. Each joins the bad
  /// group of the density ratio until it is told (as Optuna's constant liar does); the Gaussian
  /// process is told each at its own prediction (a kriging believer: the mean is unchanged, the
  /// uncertainty there falls, so expected improvement and the bound look elsewhere); and the
  /// process starts `max_batch - 1` results before `gaussian_process_from` (not before the random
  /// start is told), since the results of a batch arrive together. Without proposals pending
  /// (batches of one, no lookahead) nothing changes.
  bool count_pending = false;
  /// Trust region: after this many told configs without a new best (0: never), the next proposal
  /// is the unseen Hamming neighbour of the best config with the best density ratio, until that
  /// neighbourhood is spent.
  std::size_t stall = 0;
  /// Told configs without a new best (0: never), with the trust region spent, before the model
  /// restarts.
  std::size_t restart = 0;
  /// Space-filling start (0: plain uniform draws): each random config before the model (at the
  /// start and after a restart) is, of this many uniform valid samples, the one with the most
  /// parameter values that no config told so far (in any epoch) or proposed with it has, then the
  /// one that differs in the most parameters from the nearest of those configs.
  std::size_t spread = 0;
  /// Polish: once this many configs have been told (0: never), up to `polish` proposals around the
  /// best config told so far (a new best gets its own): its unseen Hamming neighbours, then its
  /// radius-two neighbours (two parameters changed), best density ratio first under a model of
  /// every told config. Ranking them costs at most `polish_scored` density ratios per proposal.
  std::size_t polish_after = 0;
  std::size_t polish = 0;
  std::size_t polish_scored = 128;
  /// Climbing: once this many configs have been told (0: never), this share (`climb`) of the
  /// proposals that are not the polish's or the trust region's comes from a hill climber, as the
  /// "local" strategy runs one: the unseen Hamming neighbours of the climber's config in random
  /// order, a move to the first told neighbour that is faster (whoever proposed it; on arriving,
  /// on to the fastest neighbour told before while one is faster), a fresh random config once
  /// every neighbour is told (a local optimum). It walks along a parameter whose time
  /// turns on values the model's kernels cannot tell apart (a block size fast only at powers of
  /// two), which the model, confined to what its kernels rank well, leaves alone.
  std::size_t climb_after = 0;
  double climb = 0;
  /// At each local optimum of the climber, the next this many told configs are the model's
  /// (its restarts included) before the climber starts afresh (0: at once). Without a pause the
  /// model has one in ten of the late proposals, and in long searches its restarts, which find
  /// basins away from every told config, come later.
  std::size_t climb_pause = 0;
  /// Failures (multivariate only): once a told config has failed (+infinity: it did not compile,
  /// launch or run), every candidate's density ratio is weighted by its estimated chance to
  /// succeed, so that the model stops proposing where configs fail. The chance of failing is the
  /// kernel density of every told failure over that of every told config (all epochs: a failure
  /// is the config's, not the basin's), each mixture with the uniform density as one more member
  /// weighted by the share of failures told so far. The weight is log(1 - chance), at least
  /// log(0.01).
  bool avoid_failures = false;
};
[[nodiscard]] std::unique_ptr<strategy> make_tpe_strategy(const tpe_settings &settings = {});

/// Settings of "hybrid" (hybrid.cpp), the default strategy: the TPE model steering a local search,
/// with a space-filling start, a trust region, restarts and a late polish (`tpe_strategy`). Each
/// value below replaces the `tpe_settings` default; the figures are in the bench/results file that
/// docs/search.md names for each setting.
struct hybrid_settings : tpe_settings {
  constexpr hybrid_settings() {
    multivariate = true;    // parameter interactions count
    initial = 6;            // fewer random configs before the model than tpe's ten
    neighbour_tops = 3;     // the Hamming neighbours of the three best configs are scored too
    explore = 0.1;          // so that transferred winners cannot confine the search
    stall = 10;             // trust region after ten told configs without a new best
    restart = 80;           // restart after eighty without a new best, the trust region spent
    spread = 32;            // each random config the most spread of 32 samples
    polish_after = 200;     // polish from 200 told configs on (100-300: 0.993-0.996 at 400)
    polish = 100;           // up to 100 proposals around each best (50 too few, 150 no better)
    climb_after = 200;      // from 200 told configs on, after the polish's proposals,
    climb = 0.9;            // nine in ten of the rest from a hill climber (from 100: worse)
    climb_pause = 40;       // and forty to the model after each local optimum of the climber
    avoid_failures = true;  // where configs failed, fewer proposals
    narrow_bandwidth = 0.5; // per ordered parameter, the width of 1 or 0.5 the good configs favour
    fewest_ordered = 5;   // numeric domains of 3 or 4 values: exact first, wide if it explains more
    main_effects = 0.2;   // a fifth of the proposals from the additive model, then by its progress
    gaussian_process = 5; // most of the rest by expected improvement while it lands as well
    confidence_bound = 3; // every other of those by the lower bound, 3 deviations below the mean
    count_pending = true; // a batch's proposals spread: pending ones count as bad, or as predicted
  }
};
[[nodiscard]] std::unique_ptr<strategy> make_hybrid_strategy(const hybrid_settings &settings = {});

} // namespace tunekit::detail
