#pragma once
// How the record of a search becomes a winner cache entry (private to the core): the entry is
// built here, beside its JSON form and its tuning log (cache_entry.cpp), and nowhere else.

#include "search.hpp"

#include <tunekit/config_space.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/winner_cache.hpp>

#include <string>

namespace tunekit::detail {

/// SHA-256 of every config's template and canonical text, in order: the same configs give the same
/// digest however the space was built (a product here, an explicit list in the Python package).
/// What `space_record::digest` holds (docs/cache.md, "space").
[[nodiscard]] std::string space_digest(const config_space &space);

/// Who searched, for what, with which settings: the parts of an entry the search does not know.
struct entry_context {
  const function_identity &function;
  const key &k; ///< the stored key
  const hardware_info &hw;
  const tunekit::dependencies &deps;
  const measure_policy &policy;
  std::string measurer;
  int world_size = 1;
  /// The call's candidates and how many prune_fn (and a lookup table) left out.
  std::size_t candidates = 0;
  std::size_t pruned = 0;
  const std::string &space_digest;
  /// `describe_buckets` of the tuner's key buckets; empty: none.
  std::string key_buckets{};
};

/// The measurer name of the entries an import writes (`tunekit cache import-kernel-tuner`,
/// docs/formats.md): timed by another tool, served whatever the tuner's measurer.
inline constexpr const char *imported_measurer = "kernel_tuner";
/// The name of CUDA-graph timing's measurers, in C++ and Python (docs/cuda.md, docs/python.md).
inline constexpr const char *graph_measurer = "cuda-graph";

/// Whether `e` was timed the other way from a tuner timing with `measurer`: by replays of a CUDA
/// graph where the tuner times eagerly, or the reverse. Such an entry is not served (docs/cache.md,
/// "measurer"); an entry that records no measurer, or an imported one, is, and so is one of
/// another measurer of the same way (a C++ entry in Python).
[[nodiscard]] inline bool timed_another_way(const cache_entry &e, const std::string &measurer) {
  if (e.measurer.empty() || e.measurer == imported_measurer || measurer.empty()) {
    return false;
  }
  return (e.measurer == graph_measurer) != (measurer == graph_measurer);
}

/// The entry recording `found`: its measured candidates (pruned ones are counted, not listed),
/// the winner and its position among the call's candidates, the strategy's record, a timestamp.
[[nodiscard]] cache_entry make_entry(const entry_context &ctx, search_result found);

} // namespace tunekit::detail
