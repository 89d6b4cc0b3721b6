#include "transfer.hpp"

#include "agreement.hpp"

#include <tunekit/config.hpp>
#include <tunekit/shapes.hpp>
#include <tunekit/strategy/search_space.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

// The public transfer helpers (declared in strategy/search_space.hpp, beside the space they map
// into): configs recorded elsewhere as start points, and which of a source's configs to take.
namespace tunekit {

std::vector<std::size_t> transfer_indices(const search_space &space,
                                          std::span<const config> configs) {
  std::vector<std::size_t> out;
  std::unordered_set<std::size_t> seen; // membership only; the order is the order given
  for (const config &c : configs) {
    auto idx = space.index_of(c);
    if (idx && space.is_valid(*idx) && seen.insert(*idx).second) {
      out.push_back(*idx);
    }
  }
  return out;
}

namespace {

// Parameters whose values differ between `a` and `b`, up to `limit` (one missing from either
// counts; configs of two templates differ in everything).
std::size_t differing(const config &a, const config &b, std::size_t limit) {
  if (a.template_id() != b.template_id()) {
    return limit;
  }
  std::size_t n = 0;
  for (const auto &[name, v] : a) {
    const value *w = b.find(name);
    n += w == nullptr || *w != v ? 1 : 0;
    if (n >= limit) {
      return n;
    }
  }
  for (const auto &[name, v] : b) {
    n += a.contains(name) ? 0 : 1;
  }
  return n;
}

} // namespace

std::vector<config> distinct_best(std::span<const config> fastest_first, std::size_t k) {
  std::vector<config> out;
  for (const config &c : fastest_first) {
    if (out.size() >= k) {
      break;
    }
    if (std::all_of(out.begin(), out.end(),
                    [&](const config &taken) { return differing(c, taken, 2) >= 2; })) {
      out.push_back(c);
    }
  }
  return out;
}

} // namespace tunekit

namespace tunekit::detail {

namespace {

// Every entry of `fn` recorded for other hardware or another key as a source of `space`: the best
// `transfer_per_entry` valid candidates not one parameter from a faster one taken
// (`distinct_best`), fastest first, and every candidate it measured that `space` holds. Since the
// first sources' first points are measured before any source agrees, the likeliest come first:
// entries of this hardware before other hardware's, and within each, the nearest key first (the
// key distance of nearest-key serving; keys that do not compare last), ties in path order.
std::vector<transfer_source> stored_sources(const winner_cache &cache, const function_identity &fn,
                                            const hardware_info &hw, const key &k,
                                            const search_space &space) {
  struct ranked {
    transfer_source source;
    bool other_hardware;
    double distance; // to `k`; +infinity where the keys do not compare
  };
  std::vector<ranked> found;
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
    transfer_source src;
    src.points = transfer_indices(space, distinct_best(fastest, transfer_per_entry));
    if (src.points.empty()) {
      continue;
    }
    for (const candidate_record &c : r.value->candidates) {
      if (auto idx = space.index_of(c.config); idx && space.is_valid(*idx)) {
        src.measured.push_back({*idx, c.status == candidate_status::ok
                                          ? c.time_ms
                                          : std::numeric_limits<double>::infinity()});
      }
    }
    double distance =
        key_distance(k, r.value->key).value_or(std::numeric_limits<double>::infinity());
    if (std::isnan(distance)) {
      distance = std::numeric_limits<double>::infinity(); // a NaN in a key: no order to keep
    }
    found.push_back({std::move(src), !(r.value->hardware == hw), distance});
  }
  std::stable_sort(found.begin(), found.end(), [](const ranked &a, const ranked &b) {
    return std::tie(a.other_hardware, a.distance) < std::tie(b.other_hardware, b.distance);
  });
  std::vector<transfer_source> out;
  for (auto &f : found) {
    out.push_back(std::move(f.source));
  }
  return out;
}

// Rank 0's `values` on every rank of `comm`: their count, then the values.
void broadcast_from_rank_zero(communicator &comm, const std::string &what, const char *step,
                              std::vector<double> &values) {
  double count = static_cast<double>(values.size());
  collective(what, step, [&] {
    comm.broadcast(std::as_writable_bytes(std::span(&count, 1)), 0);
    values.resize(static_cast<std::size_t>(count));
    if (!values.empty()) {
      comm.broadcast(std::as_writable_bytes(std::span(values)), 0);
    }
  });
}

} // namespace

std::vector<config> start_configs(const search_settings &settings,
                                  const std::vector<config> &candidates,
                                  const std::vector<bool> &kept, communicator &comm,
                                  const std::string &what) {
  // As candidate indices (doubles hold them exactly): kept ones, first occurrence.
  std::vector<double> picked;
  for (const auto &c : settings.start_configs) {
    const auto it = std::find_if(candidates.begin(), candidates.end(),
                                 [&](const config &x) { return x.same_fields(c); });
    const auto i = static_cast<double>(it - candidates.begin());
    if (it != candidates.end() && kept[static_cast<std::size_t>(i)] &&
        std::find(picked.begin(), picked.end(), i) == picked.end()) {
      picked.push_back(i);
    }
  }
  if (comm.size() > 1) {
    broadcast_from_rank_zero(comm, what, "broadcast of the search's start points", picked);
  }
  std::vector<config> out;
  for (double i : picked) {
    out.push_back(candidates[static_cast<std::size_t>(i)]);
  }
  return out;
}

std::vector<transfer_source> transfer_sources(const search_settings &settings,
                                              const winner_cache &cache,
                                              const function_identity &fn, const hardware_info &hw,
                                              const key &k, const search_space &space,
                                              bool use_disk_cache, communicator &comm,
                                              const std::string &what) {
  std::vector<transfer_source> sources;
  if (settings.transfer_from_cache && use_disk_cache && comm.rank() == 0) {
    sources = stored_sources(cache, fn, hw, k, space);
  }
  if (comm.size() <= 1) {
    return sources;
  }
  // Rank 0's sources, flattened: per source its point count, points, measured count, then index
  // and time of each (doubles hold the indices exactly).
  std::vector<double> flat;
  for (const auto &src : sources) {
    flat.push_back(static_cast<double>(src.points.size()));
    flat.insert(flat.end(), src.points.begin(), src.points.end());
    flat.push_back(static_cast<double>(src.measured.size()));
    for (const auto &e : src.measured) {
      flat.push_back(static_cast<double>(e.index));
      flat.push_back(e.time_ms);
    }
  }
  broadcast_from_rank_zero(comm, what, "broadcast of the search's transfer sources", flat);
  sources.clear();
  for (std::size_t at = 0; at < flat.size();) {
    transfer_source src;
    const auto points = static_cast<std::size_t>(flat[at++]);
    for (std::size_t j = 0; j < points; ++j) {
      src.points.push_back(static_cast<std::size_t>(flat[at++]));
    }
    const auto measured = static_cast<std::size_t>(flat[at++]);
    for (std::size_t j = 0; j < measured; ++j) {
      const auto index = static_cast<std::size_t>(flat[at]);
      src.measured.push_back({index, flat[at + 1]});
      at += 2;
    }
    sources.push_back(std::move(src));
  }
  return sources;
}

} // namespace tunekit::detail
