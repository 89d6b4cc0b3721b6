#pragma once
// Transfer (docs/search.md): where a strategy search starts. The configured start configs, then,
// when asked, the winners and runners-up that the winner cache holds for the same function on
// other hardware or for other keys; every rank takes rank 0's list, so all propose the same
// candidates.

#include <tunekit/communicator.hpp>
#include <tunekit/config.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/tuner_options.hpp>
#include <tunekit/winner_cache.hpp>

#include <string>
#include <vector>

namespace tunekit::detail {

/// How many of each stored entry's best candidates a search starts from (`distinct_best`).
inline constexpr std::size_t transfer_per_entry = 3;

/// The kept candidates a search starts from, in order, the same on every rank of `comm`.
[[nodiscard]] std::vector<config>
start_configs(const search_settings &settings, const winner_cache &cache,
              const function_identity &fn, const hardware_info &hw, const key &k,
              const std::vector<config> &candidates, const std::vector<bool> &kept,
              bool use_disk_cache, communicator &comm, const std::string &what);

} // namespace tunekit::detail
