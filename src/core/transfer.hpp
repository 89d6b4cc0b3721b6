#pragma once
// Transfer (docs/search.md): where a strategy search starts. The configured start configs, then,
// when asked, the winners and runners-up that the winner cache holds for the same function on
// other hardware or for other keys, one transfer source per entry, taken as far as each agrees
// with the search's results; every rank takes rank 0's lists, so all propose the same candidates.

#include <tunekit/communicator.hpp>
#include <tunekit/config.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/strategy/run_search.hpp>
#include <tunekit/strategy/search_space.hpp>
#include <tunekit/tuner_options.hpp>
#include <tunekit/winner_cache.hpp>

#include <string>
#include <vector>

namespace tunekit::detail {

/// How many of each stored entry's best candidates a search starts from (`distinct_best`).
inline constexpr std::size_t transfer_per_entry = 3;

/// The configured start configs that are kept candidates, in order, the same on every rank of
/// `comm`.
[[nodiscard]] std::vector<config> start_configs(const search_settings &settings,
                                                const std::vector<config> &candidates,
                                                const std::vector<bool> &kept, communicator &comm,
                                                const std::string &what);

/// With `transfer_from_cache` (and the disk cache in use): one transfer source per winner cache
/// entry of `fn` recorded for other hardware or another key (in path order), as indices of
/// `space`: its `transfer_per_entry` best candidates not one parameter from a faster one taken
/// (`distinct_best`), and every candidate it measured with its time, for the agreement
/// (`transfer_agrees`). Rank 0's sources for every rank of `comm`.
[[nodiscard]] std::vector<transfer_source>
transfer_sources(const search_settings &settings, const winner_cache &cache,
                 const function_identity &fn, const hardware_info &hw, const key &k,
                 const search_space &space, bool use_disk_cache, communicator &comm,
                 const std::string &what);

} // namespace tunekit::detail
