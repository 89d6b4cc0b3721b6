// Hot path of a runtime-compiled kernel: host time per launch of a tuned runtime_kernel whose key
// is resolved, against a plain cuLaunchKernel of the same loaded function with the same arguments
// (what a hand-written driver-API launcher does), and against the runtime_kernel called with the
// config by hand (no tuner). Batches interleave; the added time is the median over rounds of the
// per-round difference, per call (see paired_timing.hpp).
//
//   ./tunekit_cuda_bench_rtc_hot_path [--out results.json]

#include "device_array.hpp"
#include "paired_timing.hpp"
#include "scale_kernel.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/tunekit.hpp>

#include <cuda.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace {

const char *source = R"(
extern "C" __global__ void scale(const float *x, float *y, float alpha, int n) {
  const int first = (blockIdx.x * blockDim.x + threadIdx.x) * ELEMS;
#pragma unroll
  for (int e = 0; e < ELEMS; ++e) {
    const int i = first + e;
    if (i < n) y[i] = alpha * x[i];
  }
}
)";

constexpr unsigned threads = 128;

unsigned blocks(int n, int elems) {
  const int per_block = static_cast<int>(threads) * elems;
  return static_cast<unsigned>((n + per_block - 1) / per_block);
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
  try {
    const int n = 4096; // launch-bound: the host side is the whole story
    const example::stream owned_stream;
    cudaStream_t stream = owned_stream.get();
    const example::device_array<float> x(static_cast<std::size_t>(n));
    const example::device_array<float> y(static_cast<std::size_t>(n));
    TUNEKIT_CUDA_CHECK(example::fill_uniform(x.get(), n, 1, stream));

    tunekit::cuda::kernel_definition def;
    def.source = tunekit::cuda::kernel_source{"scale.cu", source};
    def.entry = "scale";
    auto program = std::make_shared<tunekit::cuda::kernel_program>(
        def, tunekit::cuda::compile_options{.use_cache = false});
    auto kernel =
        tunekit::cuda::make_runtime_kernel<const float *, float *, float, int, cudaStream_t>(
            program, [](const tunekit::config &c) { return static_cast<int>(c.get_int("ELEMS")); },
            [](const int &elems, const float *, float *, float, int len, cudaStream_t) {
              return tunekit::cuda::launch_dims{.grid = dim3(blocks(len, elems)),
                                                .block = dim3(threads)};
            });
    auto options = tunekit::cuda::make_tuner_options({.stream = stream});
    options.use_disk_cache = false;
    options.process = tunekit::process_context{};
    auto tuned = tunekit::autotune(
        "bench.cuda_rtc_hot_path", tunekit::config_space::product({{"ELEMS", {1, 2, 4}}}),
        [](const float *, float *, float, int len, cudaStream_t) { return tunekit::key{len}; },
        tunekit::keep_all{}, kernel, options);
    tuned(x.get(), y.get(), 2.5f, n, stream); // resolves the key
    const tunekit::config *stored = tuned.tuner().find(tunekit::key{n});
    const tunekit::config winner = *stored;
    const int elems = static_cast<int>(winner.get_int("ELEMS"));

    // The same function through the driver, as a hand-written launcher would call it.
    auto &loaded = program->load(winner);
    auto function = static_cast<CUfunction>(loaded.function);
    void *entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    TUNEKIT_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000,
                                                        cudaEnableDefault, &found));
    const auto launch = reinterpret_cast<decltype(&cuLaunchKernel)>(entry);
    const float *xp = x.get();
    float *yp = y.get();
    float alpha = 2.5f;
    int len = n;
    auto direct = [&] {
      void *params[] = {&xp, &yp, &alpha, &len};
      if (launch(function, blocks(len, elems), 1, 1, threads, 1, 1, 0, stream, params, nullptr) !=
          CUDA_SUCCESS) {
        throw tunekit::error("cuLaunchKernel failed");
      }
    };
    auto by_hand = [&] { kernel(xp, yp, alpha, len, stream, *stored); };
    auto via_tunekit = [&] { tuned(xp, yp, alpha, len, stream); };
    auto drain = [&] { TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream)); };

    constexpr int rounds = 1000;
    constexpr int batch = 100;
    const bool pinned = bench::pin_to_current_cpu();
    static_cast<void>(bench::interleave(drain, 20, batch, direct, by_hand, via_tunekit));
    const auto t = bench::interleave(drain, rounds, batch, direct, by_hand, via_tunekit);
    const auto t2 = bench::interleave(drain, rounds, batch, direct, by_hand, via_tunekit);
    // The tuned launch seven more times, after three discarded: the median and the spread.
    static_cast<void>(bench::repeated_added_us(drain, 3, rounds, batch, direct, via_tunekit));
    const auto each = bench::repeated_added_us(drain, 7, rounds, batch, direct, via_tunekit);

    const nlohmann::json j = {
        {"n", n},
        {"winner", winner.to_string()},
        {"registers", loaded.registers},
        {"rounds", rounds},
        {"batch", batch},
        {"launch_direct_us", bench::median(t[0]) / 1e3},
        {"launch_runtime_kernel_us", bench::median(t[1]) / 1e3},
        {"launch_tuned_us", bench::median(t[2]) / 1e3},
        {"runtime_kernel_added_us", bench::paired_added(t[0], t[1]) / 1e3},
        {"runtime_kernel_added_us_repeat", bench::paired_added(t2[0], t2[1]) / 1e3},
        {"tuned_added_us", bench::paired_added(t[0], t[2]) / 1e3},
        {"tuned_added_us_repeat", bench::paired_added(t2[0], t2[2]) / 1e3},
        {"tuned_added_us_median7", bench::median(each)},
        {"tuned_added_us_min7", *std::min_element(each.begin(), each.end())},
        {"tuned_added_us_max7", *std::max_element(each.begin(), each.end())},
        {"pinned_to_cpu", pinned},
        {"goal_added_us", 0.05},
    };
    std::printf("%s\n", j.dump(2).c_str());
    if (!out_path.empty()) {
      std::ofstream(out_path) << j.dump(2) << "\n";
    }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tunekit_cuda_bench_rtc_hot_path: %s\n", e.what());
    return 1;
  }
}
