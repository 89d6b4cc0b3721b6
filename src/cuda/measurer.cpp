#include "graph_timing.hpp"

#include <tunekit/cuda/error.hpp>
#include <tunekit/cuda/measurer.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tunekit::cuda {

namespace {

constexpr std::size_t fallback_l2_bytes = std::size_t{64} << 20;

std::string run_name(bool timed, int i, int total) {
  return std::string(timed ? "timed" : "warmup") + " run " + std::to_string(i + 1) + "/" +
         std::to_string(total);
}

} // namespace

struct event_measurer::resources {
  std::mutex mutex;
  int device = -1;
  std::vector<cudaEvent_t> events; // start and stop of each timed run
  void *flush = nullptr;
  std::size_t flush_bytes = 0;

  resources() = default;
  resources(const resources &) = delete;
  resources &operator=(const resources &) = delete;
  ~resources() { release(); }

  // Frees what was made on `device`. Errors are ignored: this also runs at exit, when the
  // context may already be gone.
  void release() noexcept {
    if (device < 0) {
      return;
    }
    int current = -1;
    const bool switch_device = cudaGetDevice(&current) == cudaSuccess && current != device;
    if (switch_device) {
      static_cast<void>(cudaSetDevice(device));
    }
    for (cudaEvent_t e : events) {
      static_cast<void>(cudaEventDestroy(e));
    }
    events.clear();
    if (flush != nullptr) {
      static_cast<void>(cudaFree(flush));
      flush = nullptr;
      flush_bytes = 0;
    }
    if (switch_device) {
      static_cast<void>(cudaSetDevice(current));
    }
    static_cast<void>(cudaGetLastError());
  }

  void prepare(int runs, bool want_flush, std::size_t requested_flush_bytes) {
    int current = 0;
    check(cudaGetDevice(&current), "cuda measurer: reading the current device");
    if (current != device) {
      release();
      device = current;
    }
    const auto needed = static_cast<std::size_t>(2 * runs);
    events.reserve(needed);
    while (events.size() < needed) {
      cudaEvent_t e = nullptr;
      check(cudaEventCreate(&e), "cuda measurer: creating a timing event");
      events.push_back(e);
    }
    if (want_flush && flush == nullptr) {
      std::size_t bytes = requested_flush_bytes;
      if (bytes == 0) {
        int l2 = 0;
        check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device),
              "cuda measurer: reading the L2 cache size");
        bytes = l2 > 0 ? 2 * static_cast<std::size_t>(l2) : fallback_l2_bytes;
      }
      check(cudaMalloc(&flush, bytes),
            "cuda measurer: allocating the " + std::to_string(bytes) + "-byte L2 flush buffer");
      flush_bytes = bytes;
    }
  }
};

namespace {

// The CUDA calls of a measurement on `stream`, with the measurer's timing events and flush buffer
// (none: no flush).
class stream_calls final : public graph_detail::device_calls {
public:
  stream_calls(cudaStream_t stream, const std::vector<cudaEvent_t> &events, void *flush_buffer,
               std::size_t flush_bytes)
      : m_stream(stream), m_events(events), m_flush(flush_buffer), m_flush_bytes(flush_bytes) {}
  stream_calls(const stream_calls &) = delete;
  stream_calls &operator=(const stream_calls &) = delete;
  ~stream_calls() override { destroy(); }

  cudaError_t last_error() override { return cudaGetLastError(); }
  cudaError_t synchronize() override { return cudaStreamSynchronize(m_stream); }
  cudaError_t begin_capture() override {
    return cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal);
  }
  cudaError_t end_capture() override {
    cudaGraph_t graph = nullptr;
    const cudaError_t e = cudaStreamEndCapture(m_stream, &graph);
    if (graph != nullptr) {
      if (m_graph != nullptr) {
        static_cast<void>(cudaGraphDestroy(m_graph));
      }
      m_graph = graph;
    }
    return e;
  }
  bool capturing() override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    return cudaStreamIsCapturing(m_stream, &status) != cudaSuccess ||
           status != cudaStreamCaptureStatusNone;
  }
  cudaError_t node_count(std::size_t &count) override {
    count = 0;
    return m_graph == nullptr ? cudaErrorInvalidValue : cudaGraphGetNodes(m_graph, nullptr, &count);
  }
  cudaError_t instantiate() override {
    return m_graph == nullptr ? cudaErrorInvalidValue : cudaGraphInstantiate(&m_exec, m_graph, 0);
  }
  cudaError_t replay() override { return cudaGraphLaunch(m_exec, m_stream); }
  cudaError_t flush(int i) override {
    return m_flush != nullptr ? cudaMemsetAsync(m_flush, i & 0xff, m_flush_bytes, m_stream)
                              : cudaSuccess;
  }
  cudaError_t record(std::size_t e) override { return cudaEventRecord(m_events[e], m_stream); }
  cudaError_t wait(std::size_t e) override { return cudaEventSynchronize(m_events[e]); }
  cudaError_t elapsed(std::size_t start, std::size_t stop, float &ms) override {
    return cudaEventElapsedTime(&ms, m_events[start], m_events[stop]);
  }
  // In-flight replays are not waited for: CUDA frees a launched executable graph when its work
  // is done.
  void destroy() noexcept override {
    if (m_exec != nullptr) {
      static_cast<void>(cudaGraphExecDestroy(m_exec));
      m_exec = nullptr;
    }
    if (m_graph != nullptr) {
      static_cast<void>(cudaGraphDestroy(m_graph));
      m_graph = nullptr;
    }
  }

private:
  cudaStream_t m_stream;
  const std::vector<cudaEvent_t> &m_events;
  void *m_flush;
  std::size_t m_flush_bytes;
  cudaGraph_t m_graph = nullptr;
  cudaGraphExec_t m_exec = nullptr;
};

} // namespace

event_measurer::event_measurer(event_measurer_options options)
    : m_options(std::move(options)), m_resources(std::make_unique<resources>()) {
  if (m_options.graph_launches < 0) {
    throw error("cuda measurer: graph_launches must be 0 (eager timing) or the number of launches "
                "per graph, not " +
                std::to_string(m_options.graph_launches));
  }
  if (m_options.graph_launches > 0 &&
      (m_options.stream == nullptr || m_options.stream == cudaStreamLegacy)) {
    throw error("cuda measurer: graph timing (graph_launches = " +
                std::to_string(m_options.graph_launches) +
                ") captures on event_measurer_options::stream, and the legacy default stream "
                "cannot be captured: pass a stream made with cudaStreamCreate (or "
                "cudaStreamPerThread) and launch on it");
  }
}

event_measurer::event_measurer(cudaStream_t stream)
    : event_measurer(event_measurer_options{.stream = stream}) {}

event_measurer::~event_measurer() = default;

std::size_t event_measurer::flush_bytes() const noexcept {
  const std::lock_guard lock(m_resources->mutex);
  return m_resources->flush_bytes;
}

std::vector<double> event_measurer::measure(const candidate_info &info,
                                            detail::function_ref<void()> run,
                                            const measure_policy &policy) {
  if (policy.runs < 1 || policy.warmup < 0) {
    throw error("cuda measurer: the policy needs at least one timed run and no negative warmup");
  }
  resources &r = *m_resources;
  const std::lock_guard lock(r.mutex);
  r.prepare(policy.runs, m_options.flush_l2, m_options.flush_bytes);
  cudaStream_t stream = m_options.stream;

  // An error left over from before this candidate is not its fault; a sticky one still ends the
  // search, since nothing measured now could be trusted.
  const cudaError_t stale = cudaGetLastError();
  if (stale != cudaSuccess && classify(stale) == error_class::fatal) {
    throw_error(stale, "cuda measurer: before the first run");
  }
  stream_calls calls(stream, r.events, m_options.flush_l2 ? r.flush : nullptr, r.flush_bytes);
  if (m_options.graph_launches > 0) {
    return graph_detail::measure_graph(calls, info, run, policy, m_options.graph_launches,
                                       m_options.rotate);
  }

  // One untimed run: a warmup run, and after the early-stop check the run that fills the stream
  // again, so that the next timed run starts behind queued work as the others did.
  const auto untimed = [&](const std::string &name) {
    if (m_options.rotate) {
      m_options.rotate();
    }
    reset_before_run(info);
    run();
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
      graph_detail::fail(calls, e, name);
    }
  };
  // Waits for the first `n` timed runs and reads their times.
  const auto read = [&](int n) {
    const auto last = static_cast<std::size_t>(2 * n - 1);
    if (const cudaError_t e = cudaEventSynchronize(r.events[last]); e != cudaSuccess) {
      graph_detail::fail(calls, e, "cuda measurer: waiting for the timed runs");
    }
    std::vector<double> samples(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < samples.size(); ++i) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, r.events[2 * i], r.events[2 * i + 1]),
            "cuda measurer: reading a timed run");
      samples[i] = static_cast<double>(ms);
    }
    return samples;
  };

  for (int i = 0; i < policy.warmup; ++i) {
    untimed(run_name(false, i, policy.warmup));
  }
  for (int i = 0; i < policy.runs; ++i) {
    if (m_options.rotate) {
      m_options.rotate();
    }
    // Before the start event: the reset's queued work (a copy on the stream) is not timed.
    reset_before_run(info);
    if (r.flush != nullptr && m_options.flush_l2) {
      check(cudaMemsetAsync(r.flush, i & 0xff, r.flush_bytes, stream),
            "cuda measurer: flushing the L2 cache");
    }
    const auto s = static_cast<std::size_t>(2 * i);
    check(cudaEventRecord(r.events[s], stream), "cuda measurer: recording a start event");
    run();
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
      graph_detail::fail(calls, e, run_name(true, i, policy.runs));
    }
    check(cudaEventRecord(r.events[s + 1], stream), "cuda measurer: recording a stop event");
    // The policy's early stop: the only wait before the last run, and only when it is due.
    if (early_stop_due(policy, info.best_ms, static_cast<std::size_t>(i + 1))) {
      auto done = read(i + 1);
      if (stop_early(policy, info.best_ms, done)) {
        return done;
      }
      untimed("the run after the early-stop check");
    }
  }
  return read(policy.runs);
}

} // namespace tunekit::cuda
