// make_runtime_kernel's params_fn reads the launch's parameters from the config.
// expect: tunekit: make_runtime_kernel's params_fn must be callable as params_fn(
#include <tunekit/cuda/rtc.hpp>

#include <memory>

void use(std::shared_ptr<tunekit::cuda::kernel_program> program) {
  auto k = tunekit::cuda::make_runtime_kernel<float *, int, cudaStream_t>(
      program, [](int block) { return block; },
      [](const int &block, float *, int n, cudaStream_t) {
        return tunekit::cuda::launch_dims{.grid = dim3(static_cast<unsigned>(n / block))};
      });
  static_cast<void>(k);
}
