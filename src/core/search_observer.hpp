#pragma once
// What a search does, for those who watch it (DESIGN.md, "stages"): the search emits events and
// never formats output itself, as google/benchmark's runner hands `Run`s to its reporters and
// nvbench's benchmarks talk to a `printer_base`. Observers watch; they do not steer.
//
// Implementations here: `verbose_lines` (the INFO lines of a verbose call) and `progress_lines`
// (the live progress line, src/core/progress.hpp); `observer_list` sends each event to several.

#include "progress.hpp"
#include "rank_log.hpp"

#include <tunekit/config.hpp>
#include <tunekit/winner_cache.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tunekit::detail {

struct search_result;

/// What a search is about to do.
struct search_plan {
  const std::string &what;    ///< "tuner 'x', key (...)"
  std::size_t candidates = 0; ///< candidates of the call
  std::size_t kept = 0;       ///< of them, kept by prune_fn (and the lookup table's choices)
  std::size_t planned = 0;    ///< candidates it plans to measure (the budget for a strategy)
  bool forced = false;        ///< `TUNEKIT_ALWAYS_TUNE=1`
};

/// Receives what a search does, in this order: `search_started`; per batch `batch_started`, per
/// candidate this rank measures `candidate_started` and `candidate_measured`, then
/// `batch_reduced`; `search_finished` when a winner was picked. Every method defaults to nothing.
class search_observer {
public:
  search_observer() = default;
  search_observer(const search_observer &) = delete;
  search_observer &operator=(const search_observer &) = delete;
  virtual ~search_observer() = default;

  virtual void search_started(const search_plan & /*plan*/) {}
  /// `prepared`: the configs of the batch handed to the preparer (empty without one).
  virtual void batch_started(std::span<const config> /*prepared*/) {}
  virtual void candidate_started(std::size_t /*index*/, const config & /*c*/) {}
  /// This rank measured candidate `index`; `r` holds its status, reason and time on this rank.
  virtual void candidate_measured(std::size_t /*index*/, const candidate_record & /*r*/) {}
  /// The batch `indices` was reduced across ranks: `times` are the worst-rank times, `others`
  /// how many of the batch other ranks measured.
  virtual void batch_reduced(std::span<const std::size_t> /*indices*/,
                             std::span<const double> /*times*/, std::size_t /*others*/) {}
  virtual void search_finished(const search_result & /*result*/) {}
};

/// Sends every event to each observer in the order added; `search_finished` goes in reverse
/// order, so that the live progress line (added last) is closed before the lines that follow it.
class observer_list final : public search_observer {
public:
  void add(search_observer *o) {
    if (o != nullptr) {
      m_observers.push_back(o);
    }
  }
  void search_started(const search_plan &plan) override;
  void batch_started(std::span<const config> prepared) override;
  void candidate_started(std::size_t index, const config &c) override;
  void candidate_measured(std::size_t index, const candidate_record &r) override;
  void batch_reduced(std::span<const std::size_t> indices, std::span<const double> times,
                     std::size_t others) override;
  void search_finished(const search_result &result) override;

private:
  std::vector<search_observer *> m_observers;
};

/// The INFO lines of a verbose search: what it searches, one line per candidate with the best so
/// far, and the winner. Before each line it erases `progress`'s line (when one is drawn).
class verbose_lines final : public search_observer {
public:
  verbose_lines(const rank_log &log, progress_reporter *progress)
      : m_log(log), m_progress(progress) {}
  void search_started(const search_plan &plan) override;
  void candidate_measured(std::size_t index, const candidate_record &r) override;
  void search_finished(const search_result &result) override;

private:
  void line(const std::string &text);

  const rank_log &m_log;
  progress_reporter *m_progress;
  std::string m_what;
  std::size_t m_planned = 0;
  std::size_t m_done = 0;
  std::optional<config> m_best;
  double m_best_ms = std::numeric_limits<double>::infinity();
};

/// The live progress line of a search (`progress_reporter`).
class progress_lines final : public search_observer {
public:
  explicit progress_lines(progress_reporter &progress) : m_progress(progress) {}
  void batch_started(std::span<const config> prepared) override;
  void candidate_started(std::size_t index, const config &c) override;
  void candidate_measured(std::size_t index, const candidate_record &r) override;
  void batch_reduced(std::span<const std::size_t> indices, std::span<const double> times,
                     std::size_t others) override;
  void search_finished(const search_result &result) override;

private:
  progress_reporter &m_progress;
};

} // namespace tunekit::detail
