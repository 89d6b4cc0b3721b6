#include "transfer.hpp"

#include "agreement.hpp"
#include "resolve.hpp"

#include <tunekit/strategy/search_space.hpp>

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

namespace tunekit::detail {

namespace {

// The best `transfer_per_entry` valid candidates of every entry of `fn` recorded for other
// hardware or another key that are not one parameter from a faster one taken (`distinct_best`),
// entries in path order, each fastest first.
std::vector<config> stored_winners(const winner_cache &cache, const function_identity &fn,
                                   const hardware_info &hw, const key &k) {
  std::vector<config> out;
  auto paths = cache.list(fn.name);
  std::sort(paths.begin(), paths.end());
  for (const auto &p : paths) {
    const auto r = winner_cache::read(p);
    if (!r.found() || r.value->function != fn || (r.value->hardware == hw && r.value->key == k)) {
      continue;
    }
    std::vector<config> fastest;
    for (const candidate_record *c : fastest_candidates(*r.value, r.value->candidates.size())) {
      fastest.push_back(c->config);
    }
    for (config &c : distinct_best(fastest, transfer_per_entry)) {
      out.push_back(std::move(c));
    }
  }
  return out;
}

} // namespace

std::vector<config> start_configs(const search_settings &settings, const winner_cache &cache,
                                  const function_identity &fn, const hardware_info &hw,
                                  const key &k, const std::vector<config> &candidates,
                                  const std::vector<bool> &kept, bool use_disk_cache,
                                  communicator &comm, const std::string &what) {
  std::vector<config> wanted = settings.start_configs;
  if (settings.transfer_from_cache && use_disk_cache) {
    const auto stored = stored_winners(cache, fn, hw, k);
    wanted.insert(wanted.end(), stored.begin(), stored.end());
  }
  // As candidate indices (doubles hold them exactly): kept ones, first occurrence.
  std::vector<double> picked;
  for (const auto &c : wanted) {
    const auto i = index_of_equivalent(candidates, c);
    if (i && kept[*i] &&
        std::find(picked.begin(), picked.end(), static_cast<double>(*i)) == picked.end()) {
      picked.push_back(static_cast<double>(*i));
    }
  }
  if (comm.size() > 1) {
    double count = static_cast<double>(picked.size());
    collective(what, "broadcast of the search's start points", [&] {
      comm.broadcast(std::as_writable_bytes(std::span(&count, 1)), 0);
      picked.resize(static_cast<std::size_t>(count));
      if (!picked.empty()) {
        comm.broadcast(std::as_writable_bytes(std::span(picked)), 0);
      }
    });
  }
  std::vector<config> out;
  for (double i : picked) {
    out.push_back(candidates[static_cast<std::size_t>(i)]);
  }
  return out;
}

} // namespace tunekit::detail
