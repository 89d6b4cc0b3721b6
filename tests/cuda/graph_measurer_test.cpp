// Graph timing on a GPU (event_measurer_options::graph_launches): real kernels timed both ways,
// functions that cannot be captured, and a search recorded as "cuda-graph".
// tests/cuda/graph_timing_test.cpp checks the orchestration without a device.

#include "gpu_test.hpp"
#include "test_kernels.hpp"

#include <tunekit/cuda/measurer.hpp>
#include <tunekit/cuda/options.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

namespace {

using tunekit::cuda::event_measurer;
using tunekit::cuda::event_measurer_options;
using namespace tunekit::cuda::test;

class graph_measurer_test : public gpu_test {};

tunekit::measure_policy policy(int warmup, int runs) {
  tunekit::measure_policy p;
  p.warmup = warmup;
  p.runs = runs;
  return p;
}

template <class F>
std::vector<double> measure(event_measurer &m, F &run, const tunekit::measure_policy &p) {
  const tunekit::key k{1};
  const tunekit::config c{{"x", 1}};
  return m.measure(tunekit::candidate_info{"test", k, c, 0, 1}, run, p);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The message of the candidate failure `f` throws (a tunekit::error that is not fatal).
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

bool capturing(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  TUNEKIT_CUDA_CHECK(cudaStreamIsCapturing(s, &status));
  return status != cudaStreamCaptureStatusNone;
}

bool names_the_rule(const std::string &msg) {
  return msg.find("graph timing needs a function that can be captured") != std::string::npos;
}

TEST_F(graph_measurer_test, times_a_kernel_of_known_duration_per_launch) {
  event_measurer m({.stream = stream(), .graph_launches = 10});
  EXPECT_EQ(m.name(), "cuda-graph");
  int calls = 0;
  auto run = [&] {
    ++calls;
    TUNEKIT_CUDA_CHECK(launch_spin(50'000, stream())); // 50 us
  };
  const auto samples = measure(m, run, policy(2, 5));
  EXPECT_EQ(calls, 1 + 10) << "one eager run and ten captured runs; replays call nothing";
  ASSERT_EQ(samples.size(), 5U);
  for (double ms : samples) {
    EXPECT_NEAR(ms, 0.05, 0.01);
  }
}

TEST_F(graph_measurer_test, times_a_microsecond_kernel_without_the_launch_cost) {
  constexpr std::size_t n = 4096;
  device_buffer out(n);
  auto run = [&] { TUNEKIT_CUDA_CHECK(launch_fill(out.get(), n, 1.0f, 256, stream())); };
  event_measurer eager({.stream = stream()});
  event_measurer graph({.stream = stream(), .graph_launches = 100});
  // Interleaved, so that clocks and other work affect both alike.
  std::vector<double> t_eager;
  std::vector<double> t_graph;
  for (int rep = 0; rep < 5; ++rep) {
    t_eager.push_back(median(measure(eager, run, policy(5, 20))));
    t_graph.push_back(median(measure(graph, run, policy(5, 20))));
  }
  const double e = median(t_eager);
  const double g = median(t_graph);
  std::cout << "fill of " << n << " floats: eager " << e * 1000 << " us, in a graph " << g * 1000
            << " us per launch\n";
  EXPECT_GT(g, 0.0);
  EXPECT_LT(g, 0.05) << "a 16 KB fill takes microseconds";
  EXPECT_LE(g, 1.1 * e) << "a launch inside a graph is not slower than one launched alone";
}

TEST_F(graph_measurer_test, a_function_that_synchronizes_fails_and_leaves_the_stream_usable) {
  event_measurer m({.stream = stream(), .graph_launches = 8});
  auto syncing = [&] {
    TUNEKIT_CUDA_CHECK(launch_spin(1'000, stream()));
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream()));
  };
  const std::string msg =
      candidate_failure([&] { static_cast<void>(measure(m, syncing, policy(1, 3))); });
  EXPECT_TRUE(names_the_rule(msg)) << msg;
  EXPECT_NE(msg.find("captured run 1/8"), std::string::npos) << msg;
  EXPECT_FALSE(capturing(stream()));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  auto fine = [&] { TUNEKIT_CUDA_CHECK(launch_spin(1'000, stream())); };
  EXPECT_EQ(measure(m, fine, policy(1, 3)).size(), 3U);
}

TEST_F(graph_measurer_test, a_function_that_allocates_fails) {
  event_measurer m({.stream = stream(), .graph_launches = 4});
  auto allocating = [&] {
    void *p = nullptr;
    TUNEKIT_CUDA_CHECK(cudaMalloc(&p, 1024));
    TUNEKIT_CUDA_CHECK(launch_spin(1'000, stream()));
    TUNEKIT_CUDA_CHECK(cudaFree(p));
  };
  const std::string msg =
      candidate_failure([&] { static_cast<void>(measure(m, allocating, policy(1, 3))); });
  EXPECT_TRUE(names_the_rule(msg)) << msg;
  EXPECT_FALSE(capturing(stream()));
  auto fine = [&] { TUNEKIT_CUDA_CHECK(launch_spin(1'000, stream())); };
  EXPECT_EQ(measure(m, fine, policy(1, 3)).size(), 3U);
}

TEST_F(graph_measurer_test, a_function_that_launches_elsewhere_captures_nothing_and_fails) {
  cudaStream_t other = nullptr;
  TUNEKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  event_measurer m({.stream = stream(), .graph_launches = 4});
  auto elsewhere = [&] { TUNEKIT_CUDA_CHECK(launch_spin(1'000, other)); };
  const std::string msg =
      candidate_failure([&] { static_cast<void>(measure(m, elsewhere, policy(1, 3))); });
  EXPECT_NE(msg.find("holds no work on the measurer's stream"), std::string::npos) << msg;
  EXPECT_FALSE(capturing(stream()));
  TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(other));
  TUNEKIT_CUDA_CHECK(cudaStreamDestroy(other));
}

TEST_F(graph_measurer_test, a_bad_launch_configuration_fails_in_the_eager_run) {
  device_buffer out(4096);
  event_measurer m({.stream = stream(), .graph_launches = 4});
  auto bad = [&] { launch_fill_unchecked(out.get(), 4096, 1.0f, 4096, stream()); };
  const std::string msg =
      candidate_failure([&] { static_cast<void>(measure(m, bad, policy(1, 3))); });
  EXPECT_NE(msg.find("the eager run before the capture"), std::string::npos) << msg;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_FALSE(capturing(stream()));
}

TEST_F(graph_measurer_test, flushes_l2_before_each_timed_replay) {
  event_measurer m({.stream = stream(), .flush_l2 = true, .graph_launches = 4});
  auto run = [&] { TUNEKIT_CUDA_CHECK(launch_spin(5'000, stream())); };
  EXPECT_EQ(measure(m, run, policy(1, 3)).size(), 3U);
  EXPECT_GT(m.flush_bytes(), 0U);
}

TEST_F(graph_measurer_test, tuner_picks_the_fastest_records_cuda_graph_and_captures_the_reset) {
  device_buffer scratch(1024);
  // "work" is the spin in microseconds; 0 synchronizes the stream (cannot be captured).
  const auto space = tunekit::config_space::product({{"work", {30, 10, 0, 20}}});
  auto fn = [&](std::int64_t, const tunekit::config &c) {
    const std::int64_t work = c.get_int("work");
    TUNEKIT_CUDA_CHECK(
        launch_spin(static_cast<std::uint64_t>(std::max<std::int64_t>(work, 1)) * 1000, stream()));
    if (work == 0) {
      TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream()));
    }
  };
  auto opts = tunekit::cuda::make_tuner_options({.stream = stream(), .graph_launches = 20});
  opts.use_disk_cache = false;
  opts.process = tunekit::process_context{};
  int resets = 0;
  auto tuned =
      tunekit::autotune(
          "cuda_graph_spin", space, [](std::int64_t n) { return tunekit::key{n}; },
          tunekit::keep_all{}, fn, opts)
          .with_reset([&](std::int64_t, const tunekit::config &) {
            ++resets;
            TUNEKIT_CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, 1024 * sizeof(float), stream()));
          });
  tuned(std::int64_t{1});
  const auto record = tuned.tuner().last_search();
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->measurer, "cuda-graph");
  EXPECT_EQ(record->winner.get_int("work"), 10);
  ASSERT_EQ(record->candidates.size(), 4U);
  const auto &failed = record->candidates[2];
  EXPECT_EQ(failed.status, tunekit::candidate_status::failed);
  EXPECT_TRUE(names_the_rule(failed.reason)) << failed.reason;
  for (std::size_t i : {0U, 1U, 3U}) {
    const auto &r = record->candidates[i];
    const double expected = static_cast<double>(r.config.get_int("work")) / 1000.0;
    EXPECT_EQ(r.status, tunekit::candidate_status::ok);
    // Each launch's time includes its captured reset (a 4 KB memset: about a microsecond).
    EXPECT_NEAR(r.time_ms, expected, 0.005 + 0.1 * expected) << r.config.to_string();
  }
  EXPECT_GT(resets, 3 * 21);
  EXPECT_FALSE(capturing(stream()));
}

} // namespace
