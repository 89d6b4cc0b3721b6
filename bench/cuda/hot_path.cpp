// Hot path on the GPU: host time per call of a tuned kernel launch whose key is already resolved,
// against a direct launch of the same kernel with the winner's config written in by hand.
//
// Calls are timed in batches of `batch` launches on the host clock; the stream is drained between
// batches (outside the timed region) so the launch queue never fills and the host never waits for
// the GPU. Direct and tuned batches alternate; the figure is the median batch, per call.
// A second pair of loops times the dispatch alone (a function that launches nothing), where
// tunekit's own cost is not hidden by the driver's.
//
//   ./tunekit_cuda_bench_hot_path [--out results.json]

#include "device_array.hpp"
#include "scale_space.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

template <class T> void keep(const T &v) { asm volatile("" : : "g"(&v) : "memory"); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Alternates batches of `a` and `b` (each `batch` calls), draining with `drain` between batches;
// returns the median ns per call of each.
template <class A, class B, class D>
std::pair<double, double> alternate(A &&a, B &&b, D &&drain, int batches, int batch) {
  std::vector<double> ta;
  std::vector<double> tb;
  auto time = [&](auto &f) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < batch; ++i) {
      f();
    }
    const auto t1 = clock_type::now();
    drain();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / batch;
  };
  for (int i = 0; i < batches; ++i) {
    if (i % 2 == 0) {
      ta.push_back(time(a));
      tb.push_back(time(b));
    } else {
      tb.push_back(time(b));
      ta.push_back(time(a));
    }
  }
  return {median(ta), median(tb)};
}

[[gnu::noinline]] void dispatch_only(const float *x, float *y, float alpha, std::int64_t n,
                                     cudaStream_t stream, const tunekit::config &c) {
  keep(x);
  keep(y);
  keep(alpha);
  keep(n);
  keep(stream);
  keep(c);
}

} // namespace

int main(int argc, char **argv) {
  std::string out_path;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0) {
      out_path = argv[i + 1];
    }
  }
  if (!tunekit::cuda::device_available()) {
    std::puts("no CUDA device visible");
    return 0;
  }
  const std::int64_t n = 4096; // a launch-bound kernel: the host side is the whole story
  const example::stream owned_stream;
  cudaStream_t stream = owned_stream.get();
  const example::device_array<float> x(static_cast<std::size_t>(n));
  const example::device_array<float> y(static_cast<std::size_t>(n));
  TUNEKIT_CUDA_CHECK(example::fill_uniform(x.get(), n, 1, stream));

  auto options = tunekit::cuda::make_tuner_options({.stream = stream});
  options.use_disk_cache = false;
  options.env = tunekit::environment{};
  auto tuned = tunekit::autotune("bench.cuda_hot_path", example::scale_space(), example::scale_key,
                                 example::scale_prune, example::scale, options);
  tuned(x.get(), y.get(), 2.5f, n, stream); // resolves the key
  const tunekit::config winner = *tuned.tuner().find(tunekit::key{n});
  const int block = static_cast<int>(winner.get_int("BLOCK"));
  const int threads = static_cast<int>(winner.get_int("threads"));

  auto drain = [&] { TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream)); };
  auto direct = [&] {
    TUNEKIT_CUDA_CHECK(example::launch_scale(x.get(), y.get(), 2.5f, n, block, threads, stream));
  };
  auto via_tunekit = [&] { tuned(x.get(), y.get(), 2.5f, n, stream); };
  constexpr int batches = 400;
  constexpr int batch = 100;
  // Warm both paths up.
  static_cast<void>(alternate(direct, via_tunekit, drain, 20, batch));
  const auto [launch_direct, launch_tuned] = alternate(direct, via_tunekit, drain, batches, batch);
  // And once more, to show the spread between two identical measurements.
  const auto [launch_direct2, launch_tuned2] =
      alternate(direct, via_tunekit, drain, batches, batch);

  auto tuned_dispatch = tunekit::autotune("bench.cuda_hot_path_dispatch", example::scale_space(),
                                          example::scale_key, example::scale_prune, dispatch_only,
                                          tunekit::tuner_options{.measurer = {},
                                                                 .env = tunekit::environment{},
                                                                 .use_disk_cache = false});
  tuned_dispatch(x.get(), y.get(), 2.5f, n, stream);
  const tunekit::config fixed = winner;
  auto direct_dispatch = [&] { dispatch_only(x.get(), y.get(), 2.5f, n, stream, fixed); };
  auto tunekit_dispatch = [&] { tuned_dispatch(x.get(), y.get(), 2.5f, n, stream); };
  auto no_drain = [] {};
  static_cast<void>(alternate(direct_dispatch, tunekit_dispatch, no_drain, 100, 1000));
  const auto [dispatch_direct, dispatch_tuned] =
      alternate(direct_dispatch, tunekit_dispatch, no_drain, 2000, 1000);

  const nlohmann::json j = {
      {"n", n},
      {"winner", winner.to_string()},
      {"batches", batches},
      {"batch", batch},
      {"launch_direct_us", launch_direct / 1e3},
      {"launch_tuned_us", launch_tuned / 1e3},
      {"launch_added_us", (launch_tuned - launch_direct) / 1e3},
      {"launch_added_us_repeat", (launch_tuned2 - launch_direct2) / 1e3},
      {"dispatch_direct_ns", dispatch_direct},
      {"dispatch_tuned_ns", dispatch_tuned},
      {"dispatch_added_us", (dispatch_tuned - dispatch_direct) / 1e3},
  };
  std::printf("%s\n", j.dump(2).c_str());
  if (!out_path.empty()) {
    std::ofstream(out_path) << j.dump(2) << "\n";
  }
  return 0;
}
