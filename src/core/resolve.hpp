#pragma once
// The resolution chain of one call (DESIGN.md, "The flow of one call"): each stored source is a
// step that may propose one candidate, and `stored_proposal` is the order in which they are asked.
// The tuner then agrees on the proposal across ranks and searches when there is none.

#include "rank_log.hpp"

#include <tunekit/config_space.hpp>
#include <tunekit/detail/function_ref.hpp>
#include <tunekit/environment.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tuner.hpp>
#include <tunekit/winner_cache.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tunekit::detail {

/// What the steps read: the tuner's fixed state.
struct resolve_sources {
  const std::string &name;
  const tuner_options &opts;
  const environment &env;
  const winner_cache &cache;
  const hardware_info &hw;
  const dependencies &deps;
  const lookup_table *table;
  const std::vector<std::string> &templates; ///< template ids of the space, in order
  const config_space &space;
  const std::string &space_digest; ///< what the entries' `space.digest` must be
  const rank_log &log;
};

/// One source's answer: a candidate index and who gave it.
struct proposal {
  std::size_t index;
  source from;
};

/// One call being resolved.
struct resolve_call {
  const key &k; ///< key_fn's key (lookup table keys are built from it)
  const key
      &pinned; ///< the key with the call's pinned values appended (cache and artifact identity)
  const call_options &o;
  const std::vector<config> &candidates; ///< the space with the pinned values applied
  const std::vector<bool> &kept;         ///< what prune_fn keeps
  const function_ref<config()> *default_fn;
  bool verbose;
  const std::string &what; ///< "tuner 'x', key (...)" for messages
  /// `cached_winner` has judged the cache entry already: step 2 answers `cached` without
  /// reading the entry again.
  bool cache_judged = false;
  std::optional<proposal> cached{};
};

/// The outcome of the stored sources.
struct stored_answer {
  std::optional<proposal> answer;
  /// Set when the lookup table names several of the kept candidates: a search (when the ranks do
  /// not all hold the same answer) measures only these, and its provenance is `table_search`.
  std::optional<std::vector<bool>> search_among;
};

/// Steps 2-5 of the chain, in order: winner cache, artifact, lookup table, default. Under
/// `TUNEKIT_ALWAYS_TUNE=1` none of them answers (forced tuning searches the whole kept space).
[[nodiscard]] stored_answer stored_proposal(const resolve_sources &s, const resolve_call &c);

/// Step 2 for a call without pinned values, before anything is pruned: the winner cache entry
/// of `pinned`, its winner found at the position the entry records and `prune` asked about that
/// one config only, so that a hit costs the same whatever the size of the space.
struct cache_lookup {
  std::optional<proposal> answer;
  /// False when the entry is left to `from_cache` (an entry of an older version, which records no
  /// position, or prune_fn rejects or throws for its winner); nothing was reported about it then.
  bool judged = true;
};
[[nodiscard]] cache_lookup cached_winner(const resolve_sources &s, const key &pinned,
                                         function_ref<bool(const config &)> prune);

/// Step 2: the winner cache entry of this call, if it is valid and its winner is still kept.
[[nodiscard]] std::optional<proposal> from_cache(const resolve_sources &s, const resolve_call &c);
/// Step 3: the reviewed artifact of this call (artifact name and directory set).
[[nodiscard]] std::optional<proposal> from_artifact(const resolve_sources &s,
                                                    const resolve_call &c);
/// Step 4: the kept candidates the lookup table names (device-specific key first); empty when the
/// table says nothing. `warnings` collects dropped entries, reported only when the table is used.
[[nodiscard]] std::vector<std::size_t> table_choices(const resolve_sources &s,
                                                     const resolve_call &c, std::string &table_key,
                                                     std::vector<std::string> &warnings);
/// Step 5: the tuner's default function. Throws `tunekit::error` when it throws or gives a config
/// that is not a candidate.
[[nodiscard]] std::optional<proposal> from_default(const resolve_sources &s, const resolve_call &c);

/// Config fields the caller pins are refused (naming the field) unless `allow_arg_overwrite`.
void check_pins(const std::string &tuner, const config_space &space, const call_options &o);
/// The space with the pinned values applied; configs that become equal collapse into one.
[[nodiscard]] std::vector<config> pinned_candidates(const config_space &space,
                                                    const config &pinned);

/// `c` with the pinned values set.
[[nodiscard]] config with_pins(config c, const config &pinned);
/// Index of the candidate equal to `c` up to the order of its fields.
[[nodiscard]] std::optional<std::size_t> index_of_equivalent(const std::vector<config> &cands,
                                                             const config &c);

} // namespace tunekit::detail
