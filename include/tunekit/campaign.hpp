#pragma once
/// \file campaign.hpp
/// Offline campaigns (docs/shapes.md): the calls of many keys (shapes, batch sizes) of one tuned
/// function, tuned as one job. Across the ranks of a communicator, each rank tunes its share of
/// the calls on its own. The winner cache is the checkpoint: a key with an entry is a cache hit,
/// so a campaign started again after a kill resumes where it stopped.

#include <tunekit/communicator.hpp>
#include <tunekit/tuner.hpp>
#include <tunekit/tuner_options.hpp>

#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

namespace tunekit {

struct campaign_options {
  /// The ranks that share the calls; null: `default_communicator()`, else this process.
  communicator *comm = nullptr;
  /// Rank-local work (nothing collective inside the tuned function): rank r tunes every size-th
  /// call starting at r, alone, and the ranks meet at a barrier at the end. Their winners reach
  /// each other through the winner cache, so it must be a folder every rank reads (one node, or a
  /// shared filesystem). false: every rank makes every call on `comm`, as collective work needs.
  bool split = true;
  /// One info line per call (local rank 0 of `comm` only).
  bool verbose = false;
};

/// What a campaign did on this rank.
struct campaign_result {
  std::size_t calls = 0; ///< in the whole campaign
  int rank = 0;
  int size = 1;
  /// (position in `calls`, the source that answered) of each call this rank made, in order.
  std::vector<std::pair<std::size_t, source>> sources{};
  /// Calls this rank searched for.
  [[nodiscard]] std::size_t tuned() const noexcept {
    std::size_t n = 0;
    for (const auto &[i, s] : sources) {
      n += s == source::search || s == source::table_search ? 1 : 0;
    }
    return n;
  }
};

/// Makes the calls `calls` (each a tuple of the tuned function's arguments) of `tuned` (a
/// `tuned_function`), as `campaign_options` says. The results of the calls are dropped.
template <class Tuned, class... Args>
campaign_result campaign(Tuned &tuned, const std::vector<std::tuple<Args...>> &calls,
                         const campaign_options &o = {}) {
  communicator *picked = o.comm != nullptr ? o.comm : default_communicator();
  single_process_communicator alone;
  communicator &comm = picked != nullptr ? *picked : alone;
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
  return r;
}

} // namespace tunekit
