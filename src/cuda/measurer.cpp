#include <tunekit/cuda/error.hpp>
#include <tunekit/cuda/measurer.hpp>

#include <cuda_runtime_api.h>

#include <mutex>
#include <string>
#include <utility>

namespace tunekit::cuda {

namespace {

constexpr std::size_t fallback_l2_bytes = std::size_t{64} << 20;

std::string run_name(bool timed, int i, int total) {
  return std::string(timed ? "timed" : "warmup") + " run " + std::to_string(i + 1) + "/" +
         std::to_string(total);
}

// Throws for an error seen while measuring. The table in `classify` decides first; an error it
// calls a candidate failure is still fatal when it turns out to be sticky (the stream keeps
// reporting an error after it was cleared), so that a code the table does not know cannot let a
// search go on in a broken context.
[[noreturn]] void fail(cudaError_t code, cudaStream_t stream, const std::string &context) {
  if (classify(code) == error_class::candidate) {
    static_cast<void>(cudaGetLastError());
    const cudaError_t after = cudaStreamSynchronize(stream);
    if (after != cudaSuccess && (after == code || classify(after) == error_class::fatal)) {
      throw fatal_candidate_error(context + ": " + describe(code) +
                                  " (the error is sticky: the CUDA context is no longer usable)");
    }
    static_cast<void>(cudaGetLastError());
  }
  throw_error(code, context);
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

event_measurer::event_measurer(event_measurer_options options)
    : m_options(std::move(options)), m_resources(std::make_unique<resources>()) {}

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

  // One untimed run: a warmup run, and after the early-stop check the run that fills the stream
  // again, so that the next timed run starts behind queued work as the others did.
  const auto untimed = [&](const std::string &name) {
    if (m_options.rotate) {
      m_options.rotate();
    }
    reset_before_run(info);
    run();
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
      fail(e, stream, name);
    }
  };
  // Waits for the first `n` timed runs and reads their times.
  const auto read = [&](int n) {
    const auto last = static_cast<std::size_t>(2 * n - 1);
    if (const cudaError_t e = cudaEventSynchronize(r.events[last]); e != cudaSuccess) {
      fail(e, stream, "cuda measurer: waiting for the timed runs");
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
      fail(e, stream, run_name(true, i, policy.runs));
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
