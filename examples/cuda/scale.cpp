// The seed's `scale` kernel, y = alpha * x, tuned over BLOCK (elements per block) and threads per
// block on the GPU. Each candidate is timed with CUDA events and its output checked against a
// reference; the winner is stored in the winner cache and served from there on the next run.
//
//   ./cuda_scale [n]     first run: tunes (source "search"); second run: source "cache"

#include "device_array.hpp"
#include "scale_space.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/tunekit.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char **argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : std::int64_t{1} << 26;
  if (!tunekit::cuda::device_available()) {
    std::puts("cuda_scale: no CUDA device visible; nothing to tune");
    return 0;
  }
  try {
    const example::stream owned_stream;
    cudaStream_t stream = owned_stream.get();
    const auto count = static_cast<std::size_t>(n);
    const auto bytes = count * sizeof(float);
    const example::device_array<float> x_buf(count);
    const example::device_array<float> y_buf(count);
    const example::device_array<float> ref_buf(count);
    float *x = x_buf.get();
    float *y = y_buf.get();
    float *ref = ref_buf.get();
    TUNEKIT_CUDA_CHECK(example::fill_uniform(x, n, 1, stream));
    const float alpha = 2.5f;
    // The reference: the space's default config, checked by hand below.
    example::scale(x, ref, alpha, n, stream, example::scale_space()[0]);

    // Events on our stream; the version is a hash of the kernel's source, so editing the kernel
    // retunes.
    auto options = tunekit::cuda::make_tuner_options({.stream = stream});
    options.version = SCALE_KERNEL_HASH;
    auto scale =
        tunekit::autotune("example.cuda_scale", example::scale_space(), example::scale_key,
                          example::scale_prune, example::scale, options)
            .with_check([&](const float *, float *out, float, std::int64_t len, cudaStream_t s,
                            const tunekit::config &) {
              const bool ok =
                  tunekit::cuda::compare(out, ref, static_cast<std::size_t>(len), s).within(0.0);
              // The next candidate starts from NaN, so an element it skips cannot pass.
              tunekit::cuda::poison(out, static_cast<std::size_t>(len) * sizeof(float), s);
              return ok;
            });

    scale.with({.verbose = true})(x, y, alpha, n, stream);
    const auto &t = scale.tuner();
    std::printf("cuda_scale: n=%lld on %s, source: %s\n", static_cast<long long>(n),
                t.options().hardware->to_string().c_str(),
                std::string(tunekit::to_string(t.last_source())).c_str());
    if (const auto e = t.last_search()) {
      const auto &w = e->candidates[e->winner_index];
      const double gbps = 2.0 * static_cast<double>(bytes) / (w.time_ms * 1e-3) / 1e9;
      std::printf("  winner [%s]: %.4f ms, %.0f GB/s\n", w.config.to_string().c_str(), w.time_ms,
                  gbps);
    }

    // The result of the call is the winner's output: check it on the host too.
    float sample[2] = {};
    float input[2] = {};
    TUNEKIT_CUDA_CHECK(
        cudaMemcpyAsync(sample, y + n / 3, sizeof sample, cudaMemcpyDeviceToHost, stream));
    TUNEKIT_CUDA_CHECK(
        cudaMemcpyAsync(input, x + n / 3, sizeof input, cudaMemcpyDeviceToHost, stream));
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    const bool ok =
        tunekit::cuda::compare(y, ref, static_cast<std::size_t>(n), stream).within(0.0) &&
        sample[0] == alpha * input[0];
    std::printf("  output %s\n", ok ? "matches alpha * x" : "WRONG");
    return ok ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "cuda_scale: %s\n", e.what());
    return 1;
  }
}
