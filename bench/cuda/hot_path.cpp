// Hot path on the GPU: host time per call of a tuned kernel launch whose key is already resolved,
// against a direct launch of the same kernel with the winner's config written in by hand, and
// against the same launcher called with the config but without tunekit.
//
// Calls are timed in batches of `batch` launches on the host clock; the stream is drained between
// batches (outside the timed region) so the launch queue never fills and the host never waits for
// the GPU. The variants' batches interleave; the added time is the median over rounds of the
// difference between the two variants' batches of that round, per call.
// A second pair of loops times the dispatch alone (a function that launches nothing), where
// tunekit's own cost is not hidden by the driver's.
//
//   ./tunekit_cuda_bench_hot_path [--out results.json]

#include "device_array.hpp"
#include "paired_timing.hpp"
#include "scale_space.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using bench::interleave;
using bench::keep;
using bench::median;
using bench::paired_added;

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
  options.process = tunekit::process_context{};
  auto tuned = tunekit::autotune("bench.cuda_hot_path", example::scale_space(), example::scale_key,
                                 example::scale_prune, example::scale, options);
  tuned(x.get(), y.get(), 2.5f, n, stream); // resolves the key
  const tunekit::config winner = *tuned.tuner().find(tunekit::key{n});
  const int block = static_cast<int>(winner.get_int("BLOCK"));
  const int threads = static_cast<int>(winner.get_int("threads"));

  // The same kernel with its sizes decoded once into a struct (tunekit::decoded): a resolved call
  // reads no config field by name.
  struct sizes {
    int block;
    int threads;
  };
  auto tuned_decoded =
      tunekit::autotune("bench.cuda_hot_path_decoded", example::scale_space(), example::scale_key,
                        example::scale_prune,
                        tunekit::decoded{[](const tunekit::config &c) {
                                           return sizes{static_cast<int>(c.get_int("BLOCK")),
                                                        static_cast<int>(c.get_int("threads"))};
                                         },
                                         [](const float *xs, float *ys, float a, std::int64_t len,
                                            cudaStream_t s, const sizes &z) {
                                           TUNEKIT_CUDA_CHECK(example::launch_scale(
                                               xs, ys, a, len, z.block, z.threads, s));
                                         }},
                        options);
  tuned_decoded(x.get(), y.get(), 2.5f, n, stream);

  auto drain = [&] { TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream)); };
  // The same kernel launched three ways: with the winner's sizes written in; through the same
  // launcher `example::scale` with the config passed by hand (the config-as-argument design, no
  // tunekit); and through the tuned function (key, lookup, then that launcher).
  auto direct = [&] {
    TUNEKIT_CUDA_CHECK(example::launch_scale(x.get(), y.get(), 2.5f, n, block, threads, stream));
  };
  auto with_config = [&] { example::scale(x.get(), y.get(), 2.5f, n, stream, winner); };
  auto via_tunekit = [&] { tuned(x.get(), y.get(), 2.5f, n, stream); };
  auto via_tunekit_decoded = [&] { tuned_decoded(x.get(), y.get(), 2.5f, n, stream); };
  // Where the added time goes: the same launcher reading the winner from where tunekit keeps it
  // (a heap node, not a stack copy), and the lookup alone followed by the stack copy.
  const tunekit::config *stored = tuned.tuner().find(tunekit::key{n});
  auto with_stored_config = [&] { example::scale(x.get(), y.get(), 2.5f, n, stream, *stored); };
  auto lookup_then_config = [&] {
    // The lookup `tuned_function` does on its hot path (it records the source as memory).
    keep(tunekit::detail::tuner_access::find_winner(tuned.tuner(), tunekit::key{n}, true));
    example::scale(x.get(), y.get(), 2.5f, n, stream, winner);
  };
  constexpr int rounds = 1000;
  constexpr int batch = 100;
  constexpr int repeats = 7;
  const bool pinned = bench::pin_to_current_cpu();
  static_cast<void>(interleave(drain, 20, batch, direct, with_config, via_tunekit)); // warm-up
  const auto launch = interleave(drain, rounds, batch, direct, with_config, via_tunekit);
  // Once more, to show the spread between two identical measurements.
  const auto launch2 = interleave(drain, rounds, batch, direct, with_config, via_tunekit);
  const auto parts =
      interleave(drain, rounds, batch, with_config, with_stored_config, lookup_then_config);
  const auto decoded = interleave(drain, rounds, batch, direct, via_tunekit_decoded);
  // The goal's figure: seven paired measurements, their median and their spread, after three
  // discarded ones (the pair's figure falls over the first seconds of a run).
  static_cast<void>(bench::repeated_added_us(drain, 3, rounds, batch, direct, via_tunekit_decoded));
  const auto decoded_each =
      bench::repeated_added_us(drain, repeats, rounds, batch, direct, via_tunekit_decoded);

  auto tuned_dispatch = tunekit::autotune(
      "bench.cuda_hot_path_dispatch", example::scale_space(), example::scale_key,
      example::scale_prune, dispatch_only,
      tunekit::tuner_options{
          .measurer = {}, .use_disk_cache = false, .process = tunekit::process_context{}});
  tuned_dispatch(x.get(), y.get(), 2.5f, n, stream);
  auto direct_dispatch = [&] { dispatch_only(x.get(), y.get(), 2.5f, n, stream, winner); };
  auto tunekit_dispatch = [&] { tuned_dispatch(x.get(), y.get(), 2.5f, n, stream); };
  auto no_drain = [] {};
  static_cast<void>(interleave(no_drain, 100, 1000, direct_dispatch, tunekit_dispatch));
  const auto dispatch = interleave(no_drain, 2000, 1000, direct_dispatch, tunekit_dispatch);

  const nlohmann::json j = {
      {"n", n},
      {"winner", winner.to_string()},
      {"rounds", rounds},
      {"batch", batch},
      {"launch_direct_us", median(launch[0]) / 1e3},
      {"launch_with_config_us", median(launch[1]) / 1e3},
      {"launch_tuned_us", median(launch[2]) / 1e3},
      {"launch_added_us", paired_added(launch[0], launch[2]) / 1e3},
      {"launch_added_us_repeat", paired_added(launch2[0], launch2[2]) / 1e3},
      {"launch_added_over_config_us", paired_added(launch[1], launch[2]) / 1e3},
      {"launch_added_over_config_us_repeat", paired_added(launch2[1], launch2[2]) / 1e3},
      {"launch_stored_config_over_config_us", paired_added(parts[0], parts[1]) / 1e3},
      {"launch_lookup_over_config_us", paired_added(parts[0], parts[2]) / 1e3},
      {"launch_tuned_decoded_us", median(decoded[1]) / 1e3},
      {"launch_decoded_added_us", median(decoded_each)},
      {"launch_decoded_added_us_min", *std::min_element(decoded_each.begin(), decoded_each.end())},
      {"launch_decoded_added_us_max", *std::max_element(decoded_each.begin(), decoded_each.end())},
      {"launch_decoded_added_us_each", decoded_each},
      {"pinned_to_cpu", pinned},
      {"dispatch_direct_ns", median(dispatch[0])},
      {"dispatch_tuned_ns", median(dispatch[1])},
      {"dispatch_added_us", paired_added(dispatch[0], dispatch[1]) / 1e3},
  };
  std::printf("%s\n", j.dump(2).c_str());
  if (!out_path.empty()) {
    std::ofstream(out_path) << j.dump(2) << "\n";
  }
  return 0;
}
