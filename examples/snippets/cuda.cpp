// The C++ of docs/cuda.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`, after the declarations the page leaves to the reader.
// scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's layout
// is kept, so clang-format is off.
// clang-format off

// page: docs/cuda.md block 1
#include <tunekit/cuda/cuda.hpp>

// Your kernel's launcher (a .cu file): returns the launch's cudaError_t.
cudaError_t launch_scale(const float* x, float* y, float alpha, std::int64_t n,
                         std::int64_t block, std::int64_t threads, cudaStream_t stream);

// fn(args..., config): launches on `stream`, checks the launch.
void scale(const float* x, float* y, float alpha, std::int64_t n, cudaStream_t stream,
           const tunekit::config& c) {
  tunekit::cuda::check(launch_scale(x, y, alpha, n, c.get_int("BLOCK"), c.get_int("threads"),
                                    stream), "scale");
}

void run(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  static auto tuned = tunekit::autotune(
      "scale", tunekit::config_space::product({{"BLOCK", {1024, 4096}}, {"threads", {128, 256}}}),
      [](const float*, float*, float, std::int64_t len, cudaStream_t) { return tunekit::key{len}; },
      tunekit::keep_all{}, scale,
      tunekit::cuda::make_tuner_options({.stream = stream}));  // measurer, hardware, dependencies
  tuned(x, y, 2.5f, n, stream);
}
// page end

// What the page leaves to the reader: the options of make_tuner_options, a tuned GEMM and the
// reference output of a check.
void make_tuner_options_by_hand(const tunekit::cuda::event_measurer_options& measurer_options, int device) {
// page: docs/cuda.md block 2
tunekit::tuner_options o;
o.measurer = std::make_shared<tunekit::cuda::event_measurer>(measurer_options);
o.hardware = tunekit::cuda::device_hardware(device);     // current device when device < 0
o.dependencies = tunekit::cuda::dependencies();
// page end
  static_cast<void>(o);
}

void launch_gemm(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t s,
                 const tunekit::config& config);

void checked_gemm(const float* c_ref, const tunekit::config_space& space) {
  auto tuned = tunekit::autotune(
      "gemm", space,
      [](const float*, const float*, float*, int m, int n, int k, cudaStream_t) { return tunekit::key{m, n, k}; },
      tunekit::keep_all{}, launch_gemm);
// page: docs/cuda.md block 3
auto checked = tuned.with_check([&](const float*, const float*, float* c, int m, int n, int,
                                    cudaStream_t s, const tunekit::config&) {
  const auto count = std::size_t(m) * n;
  const bool ok = tunekit::cuda::compare(c, c_ref, count, s).within(1e-4);
  tunekit::cuda::poison(c, count * sizeof(float), s);   // the next candidate starts from NaN
  return ok;                                            // false: "wrong result", never the winner
});
// page end
  static_cast<void>(checked);
}
