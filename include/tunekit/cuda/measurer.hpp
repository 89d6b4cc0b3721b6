#pragma once
/// \file measurer.hpp
/// The CUDA measurer: times each run of a candidate with CUDA events on the caller's stream, or
/// (graph timing) replays of a CUDA graph that holds a batch of its runs.

#include <tunekit/measure.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tunekit::cuda {

/// How an `event_measurer` times candidates.
struct event_measurer_options {
  /// The stream the tuned function launches its work on. Events are recorded on it, so work the
  /// function puts on other streams is not timed unless it joins this one.
  cudaStream_t stream = nullptr;
  /// Before each timed run, overwrite a buffer as large as the L2 cache so that every timed run
  /// starts with a cold cache instead of reading what the previous run left there.
  bool flush_l2 = false;
  /// Size of the flush buffer in bytes; 0: twice the device's L2 (`cudaDevAttrL2CacheSize`). The
  /// buffer is allocated once, at the first measurement that flushes, and kept.
  std::size_t flush_bytes = 0;
  /// Called before every run (warmup and timed), outside the timed region: switch the inputs the
  /// tuned function reads to the next of several sets, so that repeated runs over one buffer do
  /// not measure the cache. The function sees the change through state it shares with the hook.
  std::function<void()> rotate{};
  /// Graph timing. 0 (the default): every run of a candidate is launched eagerly and timed between
  /// two events. N > 0: the candidate's runs are captured N at a time in a CUDA graph on `stream`,
  /// and each timed sample is one replay of that graph between two events, divided by N: the time
  /// of one run inside a captured program, without the host's launch cost. The function must be
  /// capturable (see `event_measurer`); `stream` must be a stream of its own (not the legacy
  /// default stream). The measurer's name is then "cuda-graph".
  int graph_launches = 0;
};

/// Times candidates with CUDA events: `policy.warmup` untimed runs, then `policy.runs` runs each
/// between two events on `options.stream`, optionally with an L2 flush before each timed run.
/// Returns milliseconds per timed run.
///
/// With the policy's early stop (`measure_policy::early_stop_factor`) it waits for the first
/// `early_stop_after` timed runs, and returns them when their mean exceeds the factor times
/// `candidate_info::best_ms`; otherwise one untimed run refills the stream and the timed runs go
/// on. Without it, nothing waits before the last run.
///
/// After every run it checks `cudaGetLastError`, and after the last one it waits for the stream;
/// a CUDA error there is thrown as `check` does (see error.hpp): a bad launch fails only the
/// candidate, an illegal address stops tuning with `fatal_candidate_error`.
///
/// CUDA is touched only by the first measurement (events, flush buffer), on the device current at
/// that time; a later measurement on another device makes them again there. A measurer may be
/// shared by tuners; measurements are serialised.
///
/// With `graph_launches` = N > 0 (graph timing, docs/cuda.md), a candidate is measured as:
///
/// 1. one eager run, waited for: lazy initialisation (module loading, workspaces) happens outside
///    the capture, and a failure that has nothing to do with capturing fails the candidate as in
///    eager timing;
/// 2. a capture on `stream` (`cudaStreamBeginCapture`, thread-local mode) of N runs, each after
///    `rotate` and the reset hook (`candidate_info::reset`), so that the graph holds N reset + run
///    pairs and the time includes the reset's work; nothing executes while capturing;
/// 3. `max(1, policy.warmup)` untimed replays, then `policy.runs` replays each between two events,
///    with the L2 flush (when asked for) before each timed replay, so only the first run of a
///    replay starts cold. Each sample is the replay's time divided by N. The policy's early stop
///    is checked per sample, as for eager runs.
///
/// A function that cannot be captured (it synchronizes, allocates, copies to pageable host memory,
/// launches on the legacy default stream, forks to another stream without joining back, or puts no
/// work on `stream` at all) fails that candidate with a reason that says graph timing needs a
/// capturable function. Every path ends the capture it began and destroys the graph.
///
/// \code
/// tunekit::tuner_options o;
/// o.measurer = std::make_shared<tunekit::cuda::event_measurer>(
///     tunekit::cuda::event_measurer_options{.stream = stream, .flush_l2 = true});
/// \endcode
class event_measurer final : public tunekit::measurer {
public:
  /// Throws `tunekit::error` for a negative `graph_launches`, and for graph timing on the legacy
  /// default stream (`nullptr`, `cudaStreamLegacy`), which cannot be captured. Touches no CUDA.
  explicit event_measurer(event_measurer_options options = {});
  /// Times on `stream` with the other options at their defaults.
  explicit event_measurer(cudaStream_t stream);
  ~event_measurer() override;

  [[nodiscard]] std::vector<double> measure(const candidate_info &info,
                                            detail::function_ref<void()> run,
                                            const measure_policy &policy) override;
  /// "cuda", or "cuda-graph" with graph timing (`graph_launches` > 0): cache entries record how
  /// their candidates were timed.
  [[nodiscard]] std::string name() const override {
    return m_options.graph_launches > 0 ? "cuda-graph" : "cuda";
  }

  [[nodiscard]] const event_measurer_options &options() const noexcept { return m_options; }
  /// Bytes of the flush buffer; 0 until a measurement has flushed.
  [[nodiscard]] std::size_t flush_bytes() const noexcept;

private:
  struct resources;
  event_measurer_options m_options;
  std::unique_ptr<resources> m_resources;
};

} // namespace tunekit::cuda
