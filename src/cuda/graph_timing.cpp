#include "graph_timing.hpp"

#include <tunekit/cuda/error.hpp>

#include <algorithm>
#include <exception>
#include <string>

namespace tunekit::cuda::graph_detail {

void fail(device_calls &calls, cudaError_t code, const std::string &context) {
  if (classify(code) == error_class::candidate) {
    static_cast<void>(calls.last_error());
    const cudaError_t after = calls.synchronize();
    if (after != cudaSuccess && (after == code || classify(after) == error_class::fatal)) {
      throw fatal_candidate_error(context + ": " + describe(code) +
                                  " (the error is sticky: the CUDA context is no longer usable)");
    }
    static_cast<void>(calls.last_error());
  }
  throw_error(code, context);
}

namespace {

std::string step(const char *what, int i, int total) {
  std::string out = "graph timing: ";
  out += what;
  out += ' ';
  out += std::to_string(i + 1);
  out += '/';
  out += std::to_string(total);
  return out;
}

std::string with_hint(std::string context) {
  context += " (";
  context += capture_hint;
  context += ')';
  return context;
}

// Owns what one measurement makes: the capture it began (ended on every path, so that the
// stream never stays capturing) and the graph (destroyed on every path).
class capture_scope {
public:
  explicit capture_scope(device_calls &calls) : m_calls(calls) {}
  capture_scope(const capture_scope &) = delete;
  capture_scope &operator=(const capture_scope &) = delete;
  ~capture_scope() { close(); }

  void began() noexcept { m_capturing = true; }
  void ended() noexcept { m_capturing = false; }

  // Ends a capture still open (its graph is discarded), clears the error that leaves behind and
  // destroys the graph. Idempotent.
  void close() noexcept {
    if (m_capturing) {
      m_capturing = false;
      if (m_calls.capturing()) {
        static_cast<void>(m_calls.end_capture());
        static_cast<void>(m_calls.last_error());
      }
    }
    m_calls.destroy();
  }

private:
  device_calls &m_calls;
  bool m_capturing = false;
};

} // namespace

std::vector<double> measure_graph(device_calls &calls, const candidate_info &info,
                                  tunekit::detail::function_ref<void()> run,
                                  const measure_policy &policy, int launches,
                                  const std::function<void()> &rotate) {
  if (launches < 1) {
    throw error("cuda measurer: graph timing needs at least one launch per graph, not " +
                std::to_string(launches));
  }
  const auto before_run = [&] {
    if (rotate) {
      rotate();
    }
    reset_before_run(info);
  };

  // 1. One eager run, waited for: what the first run of a candidate initialises lazily (a module,
  // a workspace) is made outside the capture, and a failure unrelated to capturing (a bad launch
  // configuration, a fault) is reported as eager timing reports it.
  before_run();
  run();
  const std::string eager = "graph timing: the eager run before the capture";
  if (const cudaError_t e = calls.last_error(); e != cudaSuccess) {
    fail(calls, e, eager);
  }
  if (const cudaError_t e = calls.synchronize(); e != cudaSuccess) {
    fail(calls, e, eager);
  }

  // 2. The capture: `launches` reset + run pairs recorded, none executed.
  capture_scope scope(calls);
  if (const cudaError_t e = calls.begin_capture(); e != cudaSuccess) {
    // Not `fail`: waiting for the stream would break a capture someone else has open on it.
    static_cast<void>(calls.last_error());
    throw_error(e, with_hint("graph timing: beginning a capture on the measurer's stream"));
  }
  scope.began();
  for (int i = 0; i < launches; ++i) {
    const std::string context = with_hint(step("captured run", i, launches));
    before_run();
    try {
      run();
    } catch (const fatal_candidate_error &) {
      scope.close();
      throw;
    } catch (const std::exception &e) {
      scope.close();
      throw error(context + ": " + e.what());
    } catch (...) {
      scope.close();
      throw;
    }
    if (const cudaError_t e = calls.last_error(); e != cudaSuccess) {
      scope.close();
      fail(calls, e, context);
    }
  }
  const cudaError_t ended = calls.end_capture();
  scope.ended();
  if (ended != cudaSuccess) {
    scope.close();
    fail(calls, ended, with_hint("graph timing: ending the capture"));
  }
  std::size_t nodes = 0;
  if (const cudaError_t e = calls.node_count(nodes); e != cudaSuccess) {
    scope.close();
    fail(calls, e, "graph timing: reading the captured graph");
  }
  if (nodes == 0) {
    scope.close();
    throw error("graph timing: the capture of " + std::to_string(launches) +
                " runs holds no work on the measurer's stream (the function launches on another "
                "stream, whose work ran untimed while capturing, or launches nothing)");
  }
  if (const cudaError_t e = calls.instantiate(); e != cudaSuccess) {
    scope.close();
    fail(calls, e, with_hint("graph timing: instantiating the captured graph"));
  }

  // 3. Untimed replays (at least one: the first uploads the graph), then the timed ones, queued
  // back to back.
  const int warmup = std::max(1, policy.warmup);
  for (int i = 0; i < warmup; ++i) {
    if (const cudaError_t e = calls.replay(); e != cudaSuccess) {
      fail(calls, e, step("warmup replay", i, warmup));
    }
  }
  const double per_launch = 1.0 / static_cast<double>(launches);
  // Waits for the first `n` timed replays and reads their times, per launch.
  const auto read = [&](int n) {
    const auto last = static_cast<std::size_t>(2 * n - 1);
    if (const cudaError_t e = calls.wait(last); e != cudaSuccess) {
      fail(calls, e, "graph timing: waiting for the timed replays");
    }
    std::vector<double> samples(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < samples.size(); ++i) {
      float ms = 0;
      check(calls.elapsed(2 * i, 2 * i + 1, ms), "graph timing: reading a timed replay");
      samples[i] = static_cast<double>(ms) * per_launch;
    }
    return samples;
  };
  for (int i = 0; i < policy.runs; ++i) {
    check(calls.flush(i), "cuda measurer: flushing the L2 cache");
    const auto s = static_cast<std::size_t>(2 * i);
    check(calls.record(s), "cuda measurer: recording a start event");
    if (const cudaError_t e = calls.replay(); e != cudaSuccess) {
      fail(calls, e, step("timed replay", i, policy.runs));
    }
    check(calls.record(s + 1), "cuda measurer: recording a stop event");
    if (early_stop_due(policy, info.best_ms, static_cast<std::size_t>(i + 1))) {
      auto done = read(i + 1);
      if (stop_early(policy, info.best_ms, done)) {
        return done;
      }
      // The replay that fills the stream again, as after eager timing's check.
      if (const cudaError_t e = calls.replay(); e != cudaSuccess) {
        fail(calls, e, "graph timing: the replay after the early-stop check");
      }
    }
  }
  return read(policy.runs);
}

} // namespace tunekit::cuda::graph_detail
