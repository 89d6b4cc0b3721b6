#include "gpu_test.hpp"
#include "test_kernels.hpp"

#include <tunekit/cuda/compare.hpp>
#include <tunekit/cuda/measurer.hpp>
#include <tunekit/cuda/options.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using tunekit::cuda::event_measurer;
using tunekit::cuda::event_measurer_options;
using namespace tunekit::cuda::test;

class event_measurer_test : public gpu_test {};

tunekit::measure_policy policy(int warmup, int runs) {
  tunekit::measure_policy p;
  p.warmup = warmup;
  p.runs = runs;
  return p;
}

// Measures `run` as the only candidate of a tuner called "test".
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

// The message of the exception `f` throws (expected to be E, and not F when F is given).
template <class E, class F> std::string message_of(F f) {
  try {
    f();
  } catch (const E &e) {
    return e.what();
  }
  return "(nothing thrown)";
}

// A block of 2048 threads is refused at launch: CUDA 12 says cudaErrorInvalidConfiguration, CUDA 13
// cudaErrorInvalidValue. Either way the message must name it.
bool names_bad_block_size(const std::string &msg) {
  return msg.find("cudaErrorInvalidConfiguration") != std::string::npos ||
         msg.find("cudaErrorInvalidValue") != std::string::npos;
}

tunekit::tuner_options quiet_options(event_measurer_options o) {
  auto opts = tunekit::cuda::make_tuner_options(std::move(o));
  opts.use_disk_cache = false;
  opts.process = tunekit::process_context{};
  return opts;
}

TEST_F(event_measurer_test, returns_one_device_time_per_timed_run) {
  event_measurer m({.stream = stream()});
  int calls = 0;
  auto run = [&] {
    ++calls;
    TUNEKIT_CUDA_CHECK(launch_spin(200'000, stream()));
  };
  const auto samples = measure(m, run, policy(2, 7));
  EXPECT_EQ(calls, 9);
  ASSERT_EQ(samples.size(), 7u);
  for (double ms : samples) {
    EXPECT_GE(ms, 0.19);
    EXPECT_LT(ms, 2.0);
  }
}

TEST_F(event_measurer_test, times_the_device_not_the_launch) {
  event_measurer m({.stream = stream()});
  auto short_run = [&] { TUNEKIT_CUDA_CHECK(launch_spin(50'000, stream())); };
  auto long_run = [&] { TUNEKIT_CUDA_CHECK(launch_spin(400'000, stream())); };
  const double t_short = median(measure(m, short_run, policy(1, 5)));
  const double t_long = median(measure(m, long_run, policy(1, 5)));
  EXPECT_GT(t_long / t_short, 5.0) << t_short << " ms vs " << t_long << " ms";
  EXPECT_NEAR(t_long, 0.4, 0.1);
}

TEST_F(event_measurer_test, early_stop_returns_the_first_runs_of_a_slow_candidate) {
  event_measurer m({.stream = stream()});
  int calls = 0;
  auto run = [&] {
    ++calls;
    TUNEKIT_CUDA_CHECK(launch_spin(200'000, stream())); // 0.2 ms
  };
  auto p = policy(1, 8);
  p.early_stop_factor = 2.0;
  p.early_stop_after = 3;
  const tunekit::key k{1};
  const tunekit::config c{{"x", 1}};
  // 0.2 ms against a best of 0.01 ms: stopped after 3 timed runs.
  const auto slow = m.measure(tunekit::candidate_info{"test", k, c, 0, 1, 0.01}, run, p);
  EXPECT_EQ(slow.size(), 3U);
  EXPECT_EQ(calls, 1 + 3);
  for (double ms : slow) {
    EXPECT_GE(ms, 0.19);
  }
  // Within the factor: every run, and one untimed run after the check refills the stream.
  calls = 0;
  const auto kept = m.measure(tunekit::candidate_info{"test", k, c, 0, 1, 1.0}, run, p);
  EXPECT_EQ(kept.size(), 8U);
  EXPECT_EQ(calls, 1 + 8 + 1);
  EXPECT_NEAR(median(kept), 0.2, 0.05);
  // No best yet: no check, nothing waits before the last run.
  calls = 0;
  EXPECT_EQ(measure(m, run, p).size(), 8U);
  EXPECT_EQ(calls, 1 + 8);
}

TEST_F(event_measurer_test, rotates_inputs_before_every_run) {
  device_buffer a(1024);
  device_buffer b(1024);
  std::vector<float *> sets{a.get(), b.get()};
  std::size_t current = 0;
  int rotations = 0;
  event_measurer m({.stream = stream(), .rotate = [&] {
                      ++rotations;
                      current = (current + 1) % sets.size();
                    }});
  std::vector<float *> seen;
  auto run = [&] {
    seen.push_back(sets[current]);
    TUNEKIT_CUDA_CHECK(launch_fill(sets[current], 1024, 1.0f, 256, stream()));
  };
  static_cast<void>(measure(m, run, policy(3, 4)));
  EXPECT_EQ(rotations, 7);
  ASSERT_EQ(seen.size(), 7u);
  for (std::size_t i = 1; i < seen.size(); ++i) {
    EXPECT_NE(seen[i], seen[i - 1]) << "run " << i << " read the same set as the run before";
  }
}

TEST_F(event_measurer_test, flushes_l2_between_timed_runs) {
  int l2 = 0;
  TUNEKIT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  // A quarter of the L2: resident after one read unless something evicts it.
  const std::size_t n = static_cast<std::size_t>(l2) / 4 / sizeof(float);
  device_buffer in(n);
  device_buffer partial(read_threads);
  TUNEKIT_CUDA_CHECK(cudaMemsetAsync(in.get(), 0, n * sizeof(float), stream()));
  auto run = [&] { TUNEKIT_CUDA_CHECK(launch_read(in.get(), n, partial.get(), stream())); };

  event_measurer warm({.stream = stream()});
  event_measurer cold({.stream = stream(), .flush_l2 = true});
  EXPECT_EQ(cold.flush_bytes(), 0u) << "the flush buffer is made at the first measurement";
  const double t_warm = median(measure(warm, run, policy(3, 21)));
  const double t_cold = median(measure(cold, run, policy(3, 21)));
  EXPECT_EQ(cold.flush_bytes(), 2 * static_cast<std::size_t>(l2));
  EXPECT_EQ(warm.flush_bytes(), 0u);
  EXPECT_GT(t_cold, 1.2 * t_warm) << "warm " << t_warm << " ms, flushed " << t_cold << " ms";
}

TEST_F(event_measurer_test, invalid_launch_configuration_fails_only_the_candidate) {
  device_buffer out(4096);
  event_measurer m({.stream = stream()});
  auto bad = [&] { TUNEKIT_CUDA_CHECK(launch_fill(out.get(), 4096, 1.0f, 2048, stream())); };
  const std::string msg =
      message_of<tunekit::error>([&] { static_cast<void>(measure(m, bad, policy(1, 3))); });
  EXPECT_TRUE(names_bad_block_size(msg)) << msg;
  EXPECT_THROW(static_cast<void>(measure(m, bad, policy(1, 3))), tunekit::error);
  try {
    static_cast<void>(measure(m, bad, policy(1, 3)));
  } catch (const tunekit::fatal_candidate_error &e) {
    ADD_FAILURE() << "a bad launch configuration was treated as fatal: " << e.what();
  } catch (const tunekit::error &) {
  }
  // The context is still usable.
  auto good = [&] { TUNEKIT_CUDA_CHECK(launch_fill(out.get(), 4096, 1.0f, 256, stream())); };
  EXPECT_EQ(measure(m, good, policy(1, 3)).size(), 3u);
}

TEST_F(event_measurer_test, launch_errors_are_caught_even_when_the_function_does_not_check) {
  device_buffer out(4096);
  event_measurer m({.stream = stream()});
  auto unchecked = [&] { launch_fill_unchecked(out.get(), 4096, 1.0f, 4096, stream()); };
  const std::string msg =
      message_of<tunekit::error>([&] { static_cast<void>(measure(m, unchecked, policy(0, 2))); });
  EXPECT_TRUE(names_bad_block_size(msg)) << msg;
  EXPECT_NE(msg.find("timed run 1/2"), std::string::npos) << msg;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the measurer must clear the error it reports";
}

TEST_F(event_measurer_test, too_much_shared_memory_fails_only_the_candidate) {
  event_measurer m({.stream = stream()});
  auto run = [&] { TUNEKIT_CUDA_CHECK(launch_shared(std::size_t{4} << 20, stream())); };
  bool fatal = false;
  std::string msg;
  try {
    static_cast<void>(measure(m, run, policy(0, 2)));
  } catch (const tunekit::fatal_candidate_error &e) {
    fatal = true;
    msg = e.what();
  } catch (const tunekit::error &e) {
    msg = e.what();
  }
  EXPECT_FALSE(fatal) << msg;
  EXPECT_NE(msg.find("cudaError"), std::string::npos) << msg;
  auto ok = [&] { TUNEKIT_CUDA_CHECK(launch_shared(1024, stream())); };
  EXPECT_EQ(measure(m, ok, policy(0, 2)).size(), 2u);
}

TEST_F(event_measurer_test, exceeding_launch_bounds_fails_only_the_candidate) {
  event_measurer m({.stream = stream()});
  auto run = [&] { TUNEKIT_CUDA_CHECK(launch_bounded(1024, stream())); };
  bool fatal = false;
  std::string msg;
  try {
    static_cast<void>(measure(m, run, policy(0, 2)));
  } catch (const tunekit::fatal_candidate_error &e) {
    fatal = true;
    msg = e.what();
  } catch (const tunekit::error &e) {
    msg = e.what();
  }
  EXPECT_FALSE(fatal) << msg;
  EXPECT_NE(msg.find("cudaError"), std::string::npos) << msg;
  auto ok = [&] { TUNEKIT_CUDA_CHECK(launch_bounded(128, stream())); };
  EXPECT_EQ(measure(m, ok, policy(0, 2)).size(), 2u);
}

TEST_F(event_measurer_test, tuner_picks_the_fastest_and_records_failures) {
  device_buffer out(4096);
  // "work" is the spin in microseconds; -1 launches with an invalid block size.
  const auto space = tunekit::config_space::product({{"work", {300, 100, -1, 200}}});
  auto fn = [&](std::int64_t n, const tunekit::config &c) {
    const std::int64_t work = c.get_int("work");
    if (work < 0) {
      TUNEKIT_CUDA_CHECK(launch_fill(out.get(), static_cast<std::size_t>(n), 1.0f, 2048, stream()));
    } else {
      TUNEKIT_CUDA_CHECK(launch_spin(static_cast<std::uint64_t>(work) * 1000, stream()));
    }
  };
  auto tuned = tunekit::autotune(
      "cuda_spin", space, [](std::int64_t n) { return tunekit::key{n}; }, tunekit::keep_all{}, fn,
      quiet_options({.stream = stream()}));
  tuned(std::int64_t{4096});
  const auto record = tuned.tuner().last_search();
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->winner.get_int("work"), 100);
  EXPECT_EQ(record->measurer, "cuda");
  EXPECT_EQ(record->hardware, tunekit::cuda::device_hardware());
  EXPECT_TRUE(record->dependencies.contains("cuda_runtime"));
  ASSERT_EQ(record->candidates.size(), 4u);
  const auto &failed = record->candidates[2];
  EXPECT_EQ(failed.status, tunekit::candidate_status::failed);
  EXPECT_TRUE(names_bad_block_size(failed.reason)) << failed.reason;
  for (std::size_t i : {0u, 1u, 3u}) {
    const auto &r = record->candidates[i];
    const double expected = static_cast<double>(r.config.get_int("work")) / 1000.0;
    EXPECT_EQ(r.status, tunekit::candidate_status::ok);
    EXPECT_NEAR(r.time_ms, expected, 0.05 + 0.1 * expected) << r.config.to_string();
  }
}

TEST_F(event_measurer_test, a_candidate_with_a_wrong_result_is_invalid) {
  constexpr std::size_t n = 1 << 16;
  device_buffer out(n);
  device_buffer ref(n);
  TUNEKIT_CUDA_CHECK(launch_fill(ref.get(), n, 1.0f, 256, stream()));
  // "fast_wrong" writes 2 at once; "slow_right" spins first, then writes 1.
  const tunekit::config_space space{tunekit::config{{"variant", "fast_wrong"}},
                                    tunekit::config{{"variant", "slow_right"}}};
  auto fn = [&](float *y, std::size_t count, const tunekit::config &c) {
    const bool right = c.get_string("variant") == "slow_right";
    if (right) {
      TUNEKIT_CUDA_CHECK(launch_spin(100'000, stream()));
    }
    TUNEKIT_CUDA_CHECK(launch_fill(y, count, right ? 1.0f : 2.0f, 256, stream()));
  };
  auto tuned =
      tunekit::autotune(
          "cuda_checked", space, [](float *, std::size_t count) { return tunekit::key{count}; },
          tunekit::keep_all{}, fn, quiet_options({.stream = stream()}))
          .with_check([&](float *y, std::size_t count, const tunekit::config &) {
            const auto cmp = tunekit::cuda::compare(y, ref.get(), count, stream());
            tunekit::cuda::poison(y, count * sizeof(float), stream());
            return cmp.within(1e-6);
          });
  tuned(out.get(), n);
  const auto record = tuned.tuner().last_search();
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->winner.get_string("variant"), "slow_right");
  EXPECT_EQ(record->candidates[0].status, tunekit::candidate_status::wrong_result);
  // The call itself ran the winner after the search.
  TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream()));
  EXPECT_TRUE(tunekit::cuda::compare(out.get(), ref.get(), n, stream()).within(0.0));
}

} // namespace
