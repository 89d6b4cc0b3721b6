// The positive control of the CUDA launcher: a runtime kernel made and tuned as documented.
// expect: compiles
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/tunekit.hpp>

#include <memory>

void use(std::shared_ptr<tunekit::cuda::kernel_program> program, float *y, int n,
         cudaStream_t stream) {
  auto k = tunekit::cuda::make_runtime_kernel<float *, int, cudaStream_t>(
      program, [](const tunekit::config &c) { return static_cast<int>(c.get_int("BLOCK")); },
      [](const int &block, float *, int size, cudaStream_t) {
        return tunekit::cuda::launch_dims{.grid = dim3(static_cast<unsigned>(size / block)),
                                          .block = dim3(static_cast<unsigned>(block))};
      });
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {256, 1024}}}),
      [](float *, int size, cudaStream_t) { return tunekit::key{size}; }, tunekit::keep_all{}, k);
  tuned(y, n, stream);
}
