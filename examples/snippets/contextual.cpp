// The C++ of docs/contextual.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`, after the declarations the page leaves to the reader.
// scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's layout
// is kept, so clang-format is off.
// clang-format off

// page: docs/contextual.md block 1
#include <tunekit/contextual.hpp>
#include <tunekit/cuda/measurer.hpp>  // tunekit::cuda::event_measurer (link tunekit::cuda)

// The application's own work: a batch, the GEMM launcher, what runs around it.
struct Batch { const float* a; const float* b; float* c; int m, n, k; };
void launch_gemm(const float* a, const float* b, float* c, int m, int n, int k,
                 const tunekit::config& config);
void launch_copy_on_other_stream(const Batch& b);
float finish(const Batch& b);

// Built once; every call of the returned step runs the real work, tuning while it has to.
auto make_step(const tunekit::config_space& gemm_space, cudaStream_t stream) {
  // A tunable kernel: a named launcher with its own config space and key.
  auto gemm = tunekit::make_tunable_kernel(
      "gemm", gemm_space,
      [](const float*, const float*, float*, int m, int n, int k) { return tunekit::key{m, n, k}; },
      launch_gemm,
      tunekit::tuner_options{.measurer = std::make_shared<tunekit::cuda::event_measurer>(stream)});

  // The outer function: whatever surrounds the kernel in the real program.
  return tunekit::contextual_autotune(
      [gemm = std::move(gemm)](const Batch& b) mutable {
        launch_copy_on_other_stream(b);           // memory-bound work running concurrently
        gemm(b.a, b.b, b.c, b.m, b.n, b.k);
        return finish(b);
      },
      tunekit::contextual_options{.n_repeat = 5, .n_warmup = 3});
}

float run(const Batch& batch, const tunekit::config_space& gemm_space, cudaStream_t stream) {
  auto step = make_step(gemm_space, stream);
  return step(batch);                             // tunes gemm in place, then returns the result
}
// page end
