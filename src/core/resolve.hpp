#pragma once
// The stored sources of one call (DESIGN.md, "The flow of one call", steps 2-5): each is a step
// that may propose one candidate, and `stored_proposal` is the order in which they are asked. The
// tuner then agrees on the proposal across ranks and searches when there is none.

#include "candidates.hpp"
#include "nearest.hpp"
#include "rank_log.hpp"

#include <tunekit/config_space.hpp>
#include <tunekit/detail/function_ref.hpp>
#include <tunekit/environment.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tuner_options.hpp>
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
  const std::string &buckets;      ///< what the entries' `key_buckets` must be
  const std::string &measurer;     ///< what the entries' `measurer` must be (empty: any)
  const rank_log &log;
  /// The keys the tuner knows, for nearest-key serving (`miss_policy::nearest`); null: off.
  const known_keys *known = nullptr;
};

/// One source's answer: a candidate index and who gave it (for `source::nearest`, the key its
/// winner was stored for).
struct proposal {
  std::size_t index;
  source from;
  std::optional<key> nearest_to{};
};

/// One call being resolved.
struct resolve_call {
  call_candidates &candidates;
  const function_ref<config()> *default_fn;
  bool verbose;
};

/// Steps 2-5 of the chain, in order: winner cache, artifact, lookup table, the nearest known key
/// (when the miss policy is `nearest`), default; the first that answers proposes. A lookup table
/// that names several kept candidates ends the chain without a proposal (a search among them
/// follows; see `table_narrowing`). Under `TUNEKIT_ALWAYS_TUNE=1` none of them answers: forced
/// tuning searches the whole kept space. Each step asks prune_fn about its own candidate only.
[[nodiscard]] std::optional<proposal> stored_proposal(const resolve_sources &s,
                                                      const resolve_call &c);

/// When no stored answer is held by every rank, after `prune_all`: the lookup table's choices
/// among the kept candidates when it names several (a search measures only these, and its
/// provenance is `table_search`), else empty. Every rank computes it the same way, so their
/// candidate lists stay equal. Forced tuning has no table (`resolve_sources::table` is null).
[[nodiscard]] std::vector<std::size_t> table_narrowing(const resolve_sources &s,
                                                       call_candidates &c);

/// What a search at `level` may spend: the configured settings and policy, and under `quick` at
/// most `quick_max_evaluations` evaluations and `quick_warmup` warmup / `quick_runs` timed runs
/// per candidate (`off` and `cached` never search).
struct search_effort {
  search_settings settings;
  measure_policy policy;
};
[[nodiscard]] search_effort search_effort_of(effort level, const search_settings &settings,
                                             const measure_policy &policy);

/// Step 5 alone: the tuner's default function (deferred mode hands it out before `arm`). Throws
/// `tunekit::error` when it throws or gives a config that is not a candidate.
[[nodiscard]] std::optional<proposal> from_default(const resolve_call &c);

} // namespace tunekit::detail
