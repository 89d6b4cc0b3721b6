#pragma once
// Graph timing (event_measurer_options::graph_launches): how a candidate is run once, captured,
// replayed and timed, apart from the CUDA calls that do it. The measurer drives it with the real
// calls on its stream (measurer.cpp); tests/cuda/graph_timing_test.cpp drives it with a stand-in,
// without a device.

#include <tunekit/detail/function_ref.hpp>
#include <tunekit/measure.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace tunekit::cuda::graph_detail {

/// The CUDA calls a measurement makes on the measurer's stream, one member per call, each
/// returning the call's error code. The graph and its instantiation are the object's: made by
/// `end_capture` and `instantiate`, freed by `destroy`.
class device_calls {
public:
  device_calls() = default;
  device_calls(const device_calls &) = delete;
  device_calls &operator=(const device_calls &) = delete;
  virtual ~device_calls() = default;

  /// `cudaGetLastError`: reads and clears the last error of this thread.
  [[nodiscard]] virtual cudaError_t last_error() = 0;
  /// `cudaStreamSynchronize` of the stream.
  [[nodiscard]] virtual cudaError_t synchronize() = 0;
  /// `cudaStreamBeginCapture` of the stream in thread-local mode.
  [[nodiscard]] virtual cudaError_t begin_capture() = 0;
  /// `cudaStreamEndCapture`; keeps the graph it returns (none after an invalidated capture).
  [[nodiscard]] virtual cudaError_t end_capture() = 0;
  /// Whether the stream is capturing, an invalidated capture included (`cudaStreamIsCapturing`);
  /// true when that cannot be read.
  [[nodiscard]] virtual bool capturing() = 0;
  /// The nodes of the captured graph (`cudaGraphGetNodes`).
  [[nodiscard]] virtual cudaError_t node_count(std::size_t &count) = 0;
  /// `cudaGraphInstantiate` of the captured graph.
  [[nodiscard]] virtual cudaError_t instantiate() = 0;
  /// `cudaGraphLaunch` of the instantiated graph on the stream: one replay.
  [[nodiscard]] virtual cudaError_t replay() = 0;
  /// Before timed replay `i`: the L2 flush on the stream where the measurer flushes
  /// (`cudaMemsetAsync`), else nothing.
  [[nodiscard]] virtual cudaError_t flush(int i) = 0;
  /// `cudaEventRecord` of timing event `e` (0 to 2 * runs - 1) on the stream.
  [[nodiscard]] virtual cudaError_t record(std::size_t e) = 0;
  /// `cudaEventSynchronize` of timing event `e`.
  [[nodiscard]] virtual cudaError_t wait(std::size_t e) = 0;
  /// `cudaEventElapsedTime` from event `start` to event `stop`.
  [[nodiscard]] virtual cudaError_t elapsed(std::size_t start, std::size_t stop, float &ms) = 0;
  /// Destroys the instantiated graph and the graph, those that exist.
  virtual void destroy() noexcept = 0;
};

/// Throws for an error seen while measuring. The table of `classify` decides first; an error it
/// calls a candidate failure is still fatal when it turns out to be sticky (the stream reports an
/// error again after it was cleared), so that a code the table does not know cannot let a search
/// go on in a broken context.
[[noreturn]] void fail(device_calls &calls, cudaError_t code, const std::string &context);

/// What the reason of a candidate that could not be captured says after its context.
inline constexpr const char *capture_hint =
    "graph timing needs a function that can be captured in a CUDA graph on the measurer's "
    "stream: no synchronization, allocation, copy to pageable host memory, launch on the legacy "
    "default stream or unjoined fork to another stream while it runs";

/// Times one candidate by graph timing with `launches` runs per graph (at least 1): one eager
/// run, then a capture of `launches` runs (each after `rotate`, when set, and the reset hook),
/// `max(1, policy.warmup)` untimed replays and `policy.runs` timed ones, each sample a replay's
/// time divided by `launches`, with the policy's early stop per sample. Throws as
/// `event_measurer::measure` does; every path ends the capture it began and calls
/// `calls.destroy()`.
[[nodiscard]] std::vector<double> measure_graph(device_calls &calls, const candidate_info &info,
                                                tunekit::detail::function_ref<void()> run,
                                                const measure_policy &policy, int launches,
                                                const std::function<void()> &rotate);

} // namespace tunekit::cuda::graph_detail
