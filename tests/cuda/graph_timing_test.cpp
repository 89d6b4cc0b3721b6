// Graph timing's orchestration (src/cuda/graph_timing.hpp) driven by a stand-in for the CUDA
// calls, so that it runs without a device: per-launch times, warmup and early stop counted in
// replays, reset hook and rotation captured with each run, the L2 flush once per timed replay,
// and capture failures that fail the candidate with their reason and leave nothing behind.
// tests/cuda/graph_measurer_test.cpp times real kernels on a GPU.

#include "graph_timing.hpp"

#include <tunekit/cuda/error.hpp>
#include <tunekit/cuda/measurer.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tunekit::cuda::graph_detail::device_calls;
using tunekit::cuda::graph_detail::measure_graph;

/// A device that records what it is asked to do. Work put on the stream while it captures becomes
/// a node of the graph; work put on it otherwise runs at once and advances the clock; a replay
/// advances it by the cost of every node.
class fake_device final : public device_calls {
public:
  // What the next calls return.
  cudaError_t begin_error = cudaSuccess;
  cudaError_t end_error = cudaSuccess;
  cudaError_t instantiate_error = cudaSuccess;
  cudaError_t replay_error = cudaSuccess;
  int replay_error_at = -1;          // replay (counted from 0) that returns replay_error; -1: none
  bool sticky = false;               // after replay_error, every synchronize returns it
  cudaError_t pending = cudaSuccess; // what last_error returns once

  // What happened.
  std::vector<std::string> log;
  double clock_ms = 0;
  std::vector<double> nodes;
  bool capture_open = false;
  bool exec = false;
  bool broken = false;
  int begins = 0;
  int ends = 0;
  int replays = 0;
  int syncs = 0;
  int flushes = 0;
  int destroys = 0;
  std::vector<double> stamps = std::vector<double>(64, -1.0);

  /// Puts `cost_ms` of work on the stream, as a kernel launch would.
  void launch(double cost_ms) {
    if (capture_open) {
      nodes.push_back(cost_ms);
    } else {
      clock_ms += cost_ms;
    }
  }

  cudaError_t last_error() override {
    const cudaError_t e = pending;
    pending = cudaSuccess;
    return e;
  }
  cudaError_t synchronize() override {
    ++syncs;
    log.emplace_back("sync");
    return broken ? replay_error : cudaSuccess;
  }
  cudaError_t begin_capture() override {
    log.emplace_back("begin");
    if (begin_error != cudaSuccess) {
      return begin_error;
    }
    ++begins;
    capture_open = true;
    nodes.clear();
    return cudaSuccess;
  }
  cudaError_t end_capture() override {
    log.emplace_back("end");
    ++ends;
    capture_open = false;
    if (end_error != cudaSuccess) {
      nodes.clear();
    }
    return end_error;
  }
  bool capturing() override { return capture_open; }
  cudaError_t node_count(std::size_t &count) override {
    count = nodes.size();
    return cudaSuccess;
  }
  cudaError_t instantiate() override {
    log.emplace_back("instantiate");
    if (instantiate_error != cudaSuccess) {
      return instantiate_error;
    }
    exec = true;
    return cudaSuccess;
  }
  cudaError_t replay() override {
    log.emplace_back("replay");
    const int at = replays++;
    if (at == replay_error_at) {
      broken = sticky;
      return replay_error;
    }
    if (!exec) {
      ADD_FAILURE() << "a replay before the graph was instantiated";
      return cudaErrorInvalidValue;
    }
    clock_ms += std::accumulate(nodes.begin(), nodes.end(), 0.0);
    return cudaSuccess;
  }
  cudaError_t flush(int) override {
    log.emplace_back("flush");
    ++flushes;
    return cudaSuccess;
  }
  cudaError_t record(std::size_t e) override {
    log.push_back("record " + std::to_string(e));
    stamps.at(e) = clock_ms;
    return cudaSuccess;
  }
  cudaError_t wait(std::size_t e) override {
    log.push_back("wait " + std::to_string(e));
    return stamps.at(e) < 0 ? cudaErrorNotReady : cudaSuccess;
  }
  cudaError_t elapsed(std::size_t start, std::size_t stop, float &ms) override {
    ms = static_cast<float>(stamps.at(stop) - stamps.at(start));
    return cudaSuccess;
  }
  void destroy() noexcept override {
    ++destroys;
    exec = false;
    nodes.clear();
  }

  [[nodiscard]] int count(const std::string &entry) const {
    return static_cast<int>(std::count(log.begin(), log.end(), entry));
  }
};

tunekit::measure_policy policy(int warmup, int runs) {
  tunekit::measure_policy p;
  p.warmup = warmup;
  p.runs = runs;
  return p;
}

const tunekit::key the_key{1};
const tunekit::config the_config{{"x", 1}};

tunekit::candidate_info info(double best_ms = std::numeric_limits<double>::infinity(),
                             const tunekit::detail::function_ref<void()> *reset = nullptr) {
  return tunekit::candidate_info{"test", the_key, the_config, 0, 1, best_ms, reset};
}

// The message of the tunekit::error `f` throws; fails the test when it is fatal.
template <class F> std::string candidate_failure(F f) {
  try {
    f();
  } catch (const tunekit::fatal_candidate_error &e) {
    ADD_FAILURE() << "fatal where only the candidate should fail: " << e.what();
    return e.what();
  } catch (const tunekit::error &e) {
    return e.what();
  }
  ADD_FAILURE() << "nothing thrown";
  return {};
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

const std::function<void()> no_rotate;

// ---- times ---------------------------------------------------------------------------------

TEST(graph_timing, each_sample_is_a_replay_divided_by_the_launches_per_graph) {
  fake_device d;
  int runs = 0;
  // Runs of 3, 5, 3, 5, ... us: a replay of 8 costs 32 us, 4 us per launch.
  auto run = [&] {
    d.launch(runs % 2 == 0 ? 0.003 : 0.005);
    ++runs;
  };
  const auto samples = measure_graph(d, info(), run, policy(2, 6), 8, no_rotate);
  ASSERT_EQ(samples.size(), 6U);
  for (double ms : samples) {
    EXPECT_NEAR(ms, 0.004, 1e-7);
  }
  EXPECT_EQ(runs, 1 + 8) << "one eager run, then eight captured ones";
  EXPECT_EQ(d.begins, 1);
  EXPECT_EQ(d.ends, 1);
  EXPECT_FALSE(d.capture_open);
  EXPECT_GE(d.destroys, 1);
}

TEST(graph_timing,
     the_eager_run_is_waited_for_before_the_capture_and_nothing_runs_while_capturing) {
  fake_device d;
  std::vector<bool> capturing_at_run;
  auto run = [&] {
    capturing_at_run.push_back(d.capture_open);
    d.launch(0.001);
  };
  static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 4, no_rotate));
  EXPECT_EQ(capturing_at_run, (std::vector<bool>{false, true, true, true, true}));
  // The eager run, its wait, then the capture.
  ASSERT_GE(d.log.size(), 2U);
  EXPECT_EQ(d.log[0], "sync");
  EXPECT_EQ(d.log[1], "begin");
}

TEST(graph_timing, warmup_is_counted_in_replays_and_at_least_one) {
  for (const int warmup : {0, 1, 3, 5}) {
    fake_device d;
    int runs = 0;
    auto run = [&] {
      ++runs;
      d.launch(0.002);
    };
    static_cast<void>(measure_graph(d, info(), run, policy(warmup, 4), 10, no_rotate));
    EXPECT_EQ(d.replays, std::max(1, warmup) + 4) << "warmup " << warmup;
    EXPECT_EQ(runs, 1 + 10) << "warmup replays call no function";
    // The warmup replays come before the first start event.
    const auto first_record = std::find(d.log.begin(), d.log.end(), "record 0");
    EXPECT_EQ(std::count(d.log.begin(), first_record, "replay"), std::max(1, warmup));
  }
}

TEST(graph_timing, the_l2_flush_comes_once_before_each_timed_replay_outside_its_events) {
  fake_device d;
  auto run = [&] { d.launch(0.001); };
  static_cast<void>(measure_graph(d, info(), run, policy(2, 3), 4, no_rotate));
  EXPECT_EQ(d.flushes, 3);
  for (int i = 0; i < 3; ++i) {
    const auto start = std::find(d.log.begin(), d.log.end(), "record " + std::to_string(2 * i));
    ASSERT_NE(start, d.log.end());
    ASSERT_NE(start, d.log.begin());
    EXPECT_EQ(*(start - 1), "flush");
    EXPECT_EQ(*(start + 1), "replay");
  }
}

// ---- early stop ----------------------------------------------------------------------------

TEST(graph_timing, early_stop_returns_the_first_samples_of_a_slow_candidate) {
  auto p = policy(1, 8);
  p.early_stop_factor = 2.0;
  p.early_stop_after = 3;
  {
    // 4 us per launch against a best of 1 us: stopped after 3 samples.
    fake_device d;
    auto run = [&] { d.launch(0.004); };
    const auto samples = measure_graph(d, info(0.001), run, p, 5, no_rotate);
    ASSERT_EQ(samples.size(), 3U);
    EXPECT_NEAR(samples[0], 0.004, 1e-7);
    EXPECT_EQ(d.replays, 1 + 3);
    EXPECT_EQ(d.count("wait 5"), 1);
  }
  {
    // Within the factor: every sample, and one untimed replay after the check.
    fake_device d;
    auto run = [&] { d.launch(0.004); };
    EXPECT_EQ(measure_graph(d, info(0.003), run, p, 5, no_rotate).size(), 8U);
    EXPECT_EQ(d.replays, 1 + 8 + 1);
  }
  {
    // No best yet: no check, nothing waits before the last replay.
    fake_device d;
    auto run = [&] { d.launch(0.004); };
    EXPECT_EQ(measure_graph(d, info(), run, p, 5, no_rotate).size(), 8U);
    EXPECT_EQ(d.replays, 1 + 8);
    EXPECT_EQ(d.count("wait 15"), 1);
    EXPECT_EQ(d.count("wait 5"), 0);
  }
}

// ---- the reset hook and rotation -----------------------------------------------------------

TEST(graph_timing, every_captured_run_follows_a_captured_reset_and_the_time_includes_it) {
  fake_device d;
  std::vector<std::string> events;
  auto reset_fn = [&] {
    events.emplace_back("reset");
    d.launch(0.001); // a copy on the stream: captured too
  };
  const tunekit::detail::function_ref<void()> reset(reset_fn);
  auto run = [&] {
    events.emplace_back(d.capture_open ? "captured run" : "eager run");
    d.launch(0.004);
  };
  const auto samples = measure_graph(d, info(std::numeric_limits<double>::infinity(), &reset), run,
                                     policy(1, 3), 4, no_rotate);
  std::vector<std::string> expected{"reset", "eager run"};
  for (int i = 0; i < 4; ++i) {
    expected.emplace_back("reset");
    expected.emplace_back("captured run");
  }
  EXPECT_EQ(events, expected) << "replays call no host code";
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_NEAR(samples[0], 0.005, 1e-7) << "a sample is one reset + run pair";
}

TEST(graph_timing, rotation_happens_before_each_captured_run) {
  fake_device d;
  int set = 0;
  const std::function<void()> rotate = [&] { set = (set + 1) % 3; };
  std::vector<int> seen;
  auto run = [&] {
    seen.push_back(set);
    d.launch(0.001);
  };
  static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 6, rotate));
  // Eager run on set 1, then the graph's six launches cycle through the sets.
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 0, 1, 2, 0, 1}));
}

// ---- failures ------------------------------------------------------------------------------

TEST(graph_timing, a_function_that_cannot_be_captured_fails_the_candidate_and_ends_the_capture) {
  fake_device d;
  int runs = 0;
  auto run = [&] {
    ++runs;
    if (d.capture_open && runs == 3) {
      // What TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(s)) throws while the stream captures.
      throw tunekit::error("cudaStreamSynchronize(s): cudaErrorStreamCaptureUnsupported (900): "
                           "operation not permitted when stream is capturing");
    }
    d.launch(0.001);
  };
  const std::string msg = candidate_failure(
      [&] { static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 8, no_rotate)); });
  EXPECT_TRUE(contains(msg, "captured run 2/8")) << msg;
  EXPECT_TRUE(contains(msg, "graph timing needs a function that can be captured")) << msg;
  EXPECT_TRUE(contains(msg, "cudaErrorStreamCaptureUnsupported")) << msg;
  EXPECT_EQ(runs, 3) << "the capture stops at the failing run";
  EXPECT_FALSE(d.capture_open);
  EXPECT_EQ(d.ends, 1);
  EXPECT_GE(d.destroys, 1);
  EXPECT_EQ(d.replays, 0);
}

TEST(graph_timing, an_unchecked_capture_error_is_caught_after_the_run) {
  fake_device d;
  bool first_captured = true;
  auto run = [&] {
    if (d.capture_open && first_captured) {
      first_captured = false;
      d.pending = cudaErrorStreamCaptureImplicit; // a launch on the legacy default stream
    }
    d.launch(0.001);
  };
  const std::string msg = candidate_failure(
      [&] { static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 4, no_rotate)); });
  EXPECT_TRUE(contains(msg, "captured run 1/4")) << msg;
  EXPECT_TRUE(contains(msg, "cudaErrorStreamCaptureImplicit")) << msg;
  EXPECT_TRUE(contains(msg, "graph timing needs a function that can be captured")) << msg;
  EXPECT_FALSE(d.capture_open);
  EXPECT_GE(d.destroys, 1);
  // The capture is ended before the stream is waited for (waiting would be an error while it
  // captures).
  const auto end = std::find(d.log.begin(), d.log.end(), "end");
  ASSERT_NE(end, d.log.end());
  EXPECT_EQ(std::count(end, d.log.end(), "sync"), 1);
}

TEST(graph_timing, an_invalidated_or_unjoined_capture_fails_at_its_end) {
  for (const cudaError_t code :
       {cudaErrorStreamCaptureInvalidated, cudaErrorStreamCaptureUnjoined}) {
    fake_device d;
    d.end_error = code;
    auto run = [&] { d.launch(0.001); };
    const std::string msg = candidate_failure(
        [&] { static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 4, no_rotate)); });
    EXPECT_TRUE(contains(msg, "ending the capture")) << msg;
    EXPECT_TRUE(contains(msg, tunekit::cuda::describe(code))) << msg;
    EXPECT_TRUE(contains(msg, "graph timing needs a function that can be captured")) << msg;
    EXPECT_FALSE(d.capture_open);
    EXPECT_EQ(d.ends, 1) << "ended once";
    EXPECT_GE(d.destroys, 1);
    EXPECT_EQ(d.replays, 0);
  }
}

TEST(graph_timing, a_capture_that_holds_no_work_fails) {
  fake_device d;
  auto run = [&] {
    if (!d.capture_open) {
      d.launch(0.001);
    } // while capturing, its work goes to another stream
  };
  const std::string msg = candidate_failure(
      [&] { static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 4, no_rotate)); });
  EXPECT_TRUE(contains(msg, "holds no work on the measurer's stream")) << msg;
  EXPECT_GE(d.destroys, 1);
  EXPECT_EQ(d.replays, 0);
}

TEST(graph_timing, a_capture_that_cannot_begin_fails_without_ending_anything) {
  fake_device d;
  d.begin_error = cudaErrorStreamCaptureUnsupported;
  int runs = 0;
  auto run = [&] {
    ++runs;
    d.launch(0.001);
  };
  const std::string msg = candidate_failure(
      [&] { static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 4, no_rotate)); });
  EXPECT_TRUE(contains(msg, "beginning a capture")) << msg;
  EXPECT_EQ(runs, 1) << "the eager run only";
  EXPECT_EQ(d.ends, 0) << "a capture it did not begin (the caller's) is left alone";
  EXPECT_EQ(d.count("sync"), 1) << "nor is the stream waited for";
}

TEST(graph_timing, an_instantiation_failure_fails_the_candidate) {
  fake_device d;
  d.instantiate_error = cudaErrorNotSupported;
  auto run = [&] { d.launch(0.001); };
  const std::string msg = candidate_failure(
      [&] { static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 4, no_rotate)); });
  EXPECT_TRUE(contains(msg, "instantiating the captured graph")) << msg;
  EXPECT_TRUE(contains(msg, "cudaErrorNotSupported")) << msg;
  EXPECT_GE(d.destroys, 1);
  EXPECT_EQ(d.replays, 0);
}

TEST(graph_timing, a_failure_of_the_eager_run_is_reported_before_any_capture) {
  fake_device d;
  auto run = [&] {
    if (!d.capture_open) {
      d.pending = cudaErrorInvalidConfiguration; // a block too large
    }
  };
  const std::string msg = candidate_failure(
      [&] { static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 4, no_rotate)); });
  EXPECT_TRUE(contains(msg, "the eager run before the capture")) << msg;
  EXPECT_TRUE(contains(msg, "cudaErrorInvalidConfiguration")) << msg;
  EXPECT_FALSE(contains(msg, "graph timing needs")) << "not a capture problem: " << msg;
  EXPECT_EQ(d.begins, 0);
}

TEST(graph_timing, a_fatal_error_stops_tuning_and_still_ends_the_capture) {
  {
    fake_device d;
    auto run = [&] {
      if (d.capture_open) {
        throw tunekit::fatal_candidate_error("the device is gone");
      }
      d.launch(0.001);
    };
    EXPECT_THROW(static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 4, no_rotate)),
                 tunekit::fatal_candidate_error);
    EXPECT_FALSE(d.capture_open);
    EXPECT_EQ(d.ends, 1);
    EXPECT_GE(d.destroys, 1);
  }
  {
    // A replay that faults: sticky, so the search stops.
    fake_device d;
    d.replay_error = cudaErrorIllegalAddress;
    d.replay_error_at = 2;
    auto run = [&] { d.launch(0.001); };
    EXPECT_THROW(static_cast<void>(measure_graph(d, info(), run, policy(1, 4), 4, no_rotate)),
                 tunekit::fatal_candidate_error);
    EXPECT_GE(d.destroys, 1);
  }
  for (const bool sticky : {false, true}) {
    // A replay error the table calls a candidate failure: the candidate's, unless the stream
    // reports it again once it was cleared (sticky after all).
    fake_device d;
    d.replay_error = cudaErrorInvalidValue;
    d.replay_error_at = 1; // the first timed replay
    d.sticky = sticky;
    auto run = [&] { d.launch(0.001); };
    try {
      static_cast<void>(measure_graph(d, info(), run, policy(1, 4), 4, no_rotate));
      ADD_FAILURE() << "nothing thrown";
    } catch (const tunekit::fatal_candidate_error &e) {
      EXPECT_TRUE(sticky) << "a replay error that is not sticky was fatal: " << e.what();
      EXPECT_TRUE(contains(e.what(), "sticky")) << e.what();
    } catch (const tunekit::error &e) {
      EXPECT_FALSE(sticky) << "a sticky error only failed the candidate: " << e.what();
      EXPECT_TRUE(contains(e.what(), "timed replay 1/4")) << e.what();
    }
    EXPECT_GE(d.destroys, 1);
  }
}

TEST(graph_timing, needs_at_least_one_launch_per_graph) {
  fake_device d;
  int runs = 0;
  auto run = [&] { ++runs; };
  EXPECT_THROW(static_cast<void>(measure_graph(d, info(), run, policy(1, 2), 0, no_rotate)),
               tunekit::error);
  EXPECT_EQ(runs, 0);
}

// ---- through a tuner -----------------------------------------------------------------------

/// The graph-timing orchestration over a fresh stand-in per candidate, as `event_measurer` with
/// `graph_launches` does over the real calls.
class fake_graph_measurer final : public tunekit::measurer {
public:
  explicit fake_graph_measurer(int launches) : m_launches(launches) {}
  std::vector<double> measure(const tunekit::candidate_info &c,
                              tunekit::detail::function_ref<void()> run,
                              const tunekit::measure_policy &p) override {
    device = std::make_unique<fake_device>();
    return measure_graph(*device, c, run, p, m_launches, no_rotate);
  }
  [[nodiscard]] std::string name() const override { return "cuda-graph"; }
  std::unique_ptr<fake_device> device;

private:
  int m_launches;
};

TEST(graph_timing, a_tuner_records_a_capture_failure_as_the_candidates_reason) {
  auto meas = std::make_shared<fake_graph_measurer>(4);
  tunekit::tuner_options o;
  o.measurer = meas;
  o.use_disk_cache = false;
  o.process = tunekit::process_context{};
  int resets = 0;
  // "us" is the kernel's cost in microseconds; 0 synchronizes while capturing.
  const auto space = tunekit::config_space::product({{"us", {6, 0, 4}}});
  auto tuned = tunekit::autotune(
                   "graph_fake", space, [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
                   [&](int, const tunekit::config &c) {
                     const auto us = c.get_int("us");
                     if (us == 0 && meas->device->capture_open) {
                       throw tunekit::error("cudaErrorStreamCaptureUnsupported (900): operation "
                                            "not permitted when stream is capturing");
                     }
                     meas->device->launch(static_cast<double>(us) / 1000.0);
                   },
                   o)
                   .with_reset([&](int, const tunekit::config &) { ++resets; });
  tuned(1);
  const auto record = tuned.tuner().last_search();
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->measurer, "cuda-graph");
  EXPECT_EQ(record->winner.get_int("us"), 4);
  ASSERT_EQ(record->candidates.size(), 3U);
  EXPECT_NEAR(record->candidates[0].time_ms, 0.006, 1e-6);
  EXPECT_NEAR(record->candidates[2].time_ms, 0.004, 1e-6);
  const auto &failed = record->candidates[1];
  EXPECT_EQ(failed.status, tunekit::candidate_status::failed);
  EXPECT_TRUE(contains(failed.reason, "graph timing needs a function that can be captured"))
      << failed.reason;
  // Reset before the eager run and each captured run (4), per candidate; the one that failed at
  // its first captured run got 2; the core's own reset after the search adds 1.
  EXPECT_EQ(resets, 5 + 2 + 5 + 1);
}

// ---- the measurer's options ----------------------------------------------------------------

TEST(graph_timing, the_measurer_is_named_after_its_timing_and_refuses_what_cannot_be_captured) {
  // Handles that were never created: fine as long as nothing is measured.
  auto *stream = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x1000});
  const tunekit::cuda::event_measurer eager(stream);
  EXPECT_EQ(eager.name(), "cuda");
  EXPECT_EQ(eager.options().graph_launches, 0);
  const tunekit::cuda::event_measurer graph({.stream = stream, .graph_launches = 100});
  EXPECT_EQ(graph.name(), "cuda-graph");
  EXPECT_THROW(tunekit::cuda::event_measurer({.stream = stream, .graph_launches = -1}),
               tunekit::error);
  for (cudaStream_t legacy : {static_cast<cudaStream_t>(nullptr), cudaStreamLegacy}) {
    try {
      const tunekit::cuda::event_measurer m({.stream = legacy, .graph_launches = 10});
      ADD_FAILURE() << "graph timing on the legacy default stream was accepted";
    } catch (const tunekit::error &e) {
      EXPECT_TRUE(contains(e.what(), "legacy default stream")) << e.what();
    }
  }
  EXPECT_NO_THROW(
      tunekit::cuda::event_measurer({.stream = cudaStreamPerThread, .graph_launches = 10}));
}

} // namespace
