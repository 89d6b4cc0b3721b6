#pragma once
/// \file campaign.hpp
/// Offline campaigns (docs/shapes.md): the calls of many keys (shapes, batch sizes) of one tuned
/// function, tuned as one job. Across the ranks of a communicator, each rank tunes its share of
/// the calls on its own. The winner cache is the checkpoint: a key with an entry is a cache hit,
/// so a campaign started again after a kill resumes where it stopped. At its end a campaign can
/// write what ships: an artifact per key (docs/artifacts.md) and a lookup table of its keys
/// (docs/lookup_tables.md), both from the winner cache entries of exactly its keys.

#include <tunekit/communicator.hpp>
#include <tunekit/config.hpp>
#include <tunekit/key.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tuner.hpp>
#include <tunekit/tuner_options.hpp>

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tunekit {

/// The artifacts a campaign writes at its end: one per key of the campaign, the files forced
/// tuning writes (`<dir>/<name>-<digest>.json`, docs/artifacts.md).
struct campaign_artifacts {
  /// The folder; empty: no artifacts.
  std::filesystem::path dir{};
  /// The artifact name; empty: the tuner's `artifact.name`. The key names recorded are the
  /// tuner's `artifact.key_names`, as forced tuning records them.
  std::string name{};
};

/// The lookup table a campaign writes at its end: what `tunekit table export` writes (its
/// options, docs/lookup_tables.md), of the campaign's keys only. The defaults are the tuner's own
/// table options, so that the tuner reading the table back looks up the keys it holds.
struct campaign_table {
  /// The table file; empty: no table.
  std::filesystem::path path{};
  /// The op name ending the keys; nullopt: the tuner's `table.op_name`, else its name.
  std::optional<std::string> op{};
  /// The fastest valid choices kept per key, fastest first (at least 1).
  std::size_t top_k = 1;
  /// The additional params of the keys; nullopt: the tuner's `table.params`.
  std::optional<config> params{};
  /// template_id -> source hash recorded with the choices of that template; nullopt: the
  /// tuner's `table.template_hashes`. Given here, each must name a template some choice has.
  std::optional<std::map<std::string, std::string>> template_hashes{};
  /// How the input keys and params are written; nullopt: the tuner's `table.key_format`.
  std::optional<table_key_format> key_format{};
};

struct campaign_options {
  /// The ranks that share the calls; null: `default_communicator()`, else this process.
  communicator *comm = nullptr;
  /// Rank-local work (nothing collective inside the tuned function): rank r tunes every size-th
  /// call starting at r, alone, and the ranks meet at a barrier at the end. Their winners reach
  /// each other through the winner cache, so it must be a folder every rank reads (one node, or a
  /// shared filesystem). false: every rank makes every call on `comm`, as collective work needs.
  bool split = true;
  /// One info line per call (local rank 0 of `comm` only), and one per file written at the end.
  bool verbose = false;
  /// An artifact per key, written at the end (none when `artifacts.dir` is empty).
  campaign_artifacts artifacts{};
  /// A lookup table of the keys, written at the end (none when `table.path` is empty).
  campaign_table table{};
};

/// A key of a campaign that is in none of its artifacts and not in its table, and why.
struct campaign_missing {
  tunekit::key key{}; ///< as stored: bucketed, with the pinned pairs
  std::string why{};  ///< "no winner cache entry", or why the entry was not used
};

/// What the end of a campaign wrote.
struct campaign_outputs {
  /// The artifact files written, one per key with an entry, in the order of the calls.
  std::vector<std::filesystem::path> artifacts{};
  /// The table file written; empty: none.
  std::filesystem::path table{};
  /// Keys of the campaign without a usable winner cache entry (answered by nearest-key serving,
  /// a lookup table, an artifact or a default, not searched): in no output, and warned about.
  std::vector<campaign_missing> missing{};
};

/// What a campaign did on this rank.
struct campaign_result {
  std::size_t calls = 0; ///< in the whole campaign
  int rank = 0;
  int size = 1;
  /// (position in `calls`, the source that answered) of each call this rank made, in order.
  std::vector<std::pair<std::size_t, source>> sources{};
  /// The artifact files rank 0 wrote at the end (the same list on every rank).
  std::vector<std::filesystem::path> artifacts{};
  /// The table file rank 0 wrote at the end; empty: none.
  std::filesystem::path table{};
  /// The campaign's keys that are in no output (see `campaign_outputs::missing`).
  std::vector<campaign_missing> missing{};
  /// Calls this rank searched for.
  [[nodiscard]] std::size_t tuned() const noexcept {
    std::size_t n = 0;
    for (const auto &[i, s] : sources) {
      n += s == source::search || s == source::table_search ? 1 : 0;
    }
    return n;
  }
};

/// Throws `tunekit::error` when the outputs asked for cannot be written, before anything is
/// tuned: artifacts without a valid artifact name (given or the tuner's), a table with `top_k`
/// 0, or either for a tuner that does not use the winner cache on disk (they are written from
/// its entries).
void check_campaign_outputs(const tuner &t, const campaign_artifacts &artifacts,
                            const campaign_table &table);

/// Writes the artifacts and the lookup table of `keys` (stored keys of `t`: key_fn's values,
/// then the pinned pairs; bucketed here as the tuner buckets them, each key once) from `t`'s
/// winner cache entries of this version and hardware. An entry recorded with other key buckets
/// or for another config space is not used, as a call would not serve it. A key without a usable
/// entry is listed in `missing` and warned about. Everything is built before anything is
/// written, and each file is written atomically. Throws `tunekit::error` when a file cannot be
/// built or written (an incomplete device identity, an I/O error, a template hash given for a
/// template no choice has).
[[nodiscard]] campaign_outputs write_campaign_outputs(const tuner &t, const std::vector<key> &keys,
                                                      const campaign_artifacts &artifacts,
                                                      const campaign_table &table,
                                                      bool verbose = false);

namespace detail {
/// After a split campaign's barrier: drops from `t`'s memory the keys of `calls` (as the tuned
/// function makes them) that this rank resolved alone, each as called and in the tuner's
/// buckets. Every rank then resolves every key of the campaign the same way on its next call
/// (the agreement collectives, hits in the shared winner cache): a key left in memory on the one
/// rank that tuned it would skip the collectives the other ranks run for it.
void forget_resolved_alone(tuner &t, const std::vector<key> &calls);

/// The end of a campaign on every rank of `comm` (after its barrier): rank 0 writes the outputs
/// (`write_campaign_outputs`) and broadcasts what it wrote, or its error, so that every rank
/// returns the same outputs or throws the same error. Nothing when no output is asked for.
[[nodiscard]] campaign_outputs finish_campaign(const tuner &t, communicator &comm,
                                               const std::vector<key> &keys,
                                               const campaign_artifacts &artifacts,
                                               const campaign_table &table, bool verbose);
} // namespace detail

/// Makes the calls `calls` (each a tuple of the tuned function's arguments) of `tuned` (a
/// `tuned_function`), as `campaign_options` says. The results of the calls are dropped. With
/// `artifacts.dir` or `table.path` set, rank 0 then writes those files from the winner cache
/// entries of the calls' keys (`write_campaign_outputs`), and every rank returns what it wrote.
template <class Tuned, class... Args>
campaign_result campaign(Tuned &tuned, const std::vector<std::tuple<Args...>> &calls,
                         const campaign_options &o = {}) {
  static_assert(detail::is_tuned_function<std::remove_cv_t<Tuned>>::value,
                "tunekit: campaign takes the tunekit::tuned_function that tunekit::autotune "
                "returns, and calls of its arguments; see docs/shapes.md");
  if constexpr (!detail::is_tuned_function<std::remove_cv_t<Tuned>>::value) {
    return {}; // reported above
  } else {
    communicator *picked = o.comm != nullptr ? o.comm : default_communicator();
    single_process_communicator alone;
    communicator &comm = picked != nullptr ? *picked : alone;
    const bool outputs = !o.artifacts.dir.empty() || !o.table.path.empty();
    if (outputs) {
      check_campaign_outputs(tuned.tuner(), o.artifacts, o.table);
    }
    campaign_result r;
    r.calls = calls.size();
    r.rank = comm.rank();
    r.size = comm.size();
    const bool split = o.split && r.size > 1;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (split && static_cast<int>(i % static_cast<std::size_t>(r.size)) != r.rank) {
        continue;
      }
      call_options co;
      co.comm = split ? &alone : &comm;
      co.verbose = o.verbose && comm.local_rank() == 0;
      std::tuple<Args...> args = calls[i]; // a tuned function may write its arguments
      std::apply([&](auto &...a) { static_cast<void>(tuned.with(co)(a...)); }, args);
      r.sources.emplace_back(i, tuned.tuner().last_source());
    }
    if (r.size > 1) {
      comm.barrier();
    }
    if (split) {
      std::vector<key> alone_keys;
      for (const auto &[i, from] : r.sources) {
        if (from != source::memory) {
          alone_keys.push_back(
              std::apply([&](const auto &...a) { return tuned.key_of(a...); }, calls[i]));
        }
      }
      detail::forget_resolved_alone(tuned.tuner(), alone_keys);
    }
    if (outputs) {
      std::vector<key> keys;
      keys.reserve(calls.size());
      for (const auto &c : calls) {
        keys.push_back(std::apply([&](const auto &...a) { return tuned.key_of(a...); }, c));
      }
      campaign_outputs w = detail::finish_campaign(tuned.tuner(), comm, keys, o.artifacts, o.table,
                                                   o.verbose && comm.local_rank() == 0);
      r.artifacts = std::move(w.artifacts);
      r.table = std::move(w.table);
      r.missing = std::move(w.missing);
    }
    return r;
  }
}

} // namespace tunekit
