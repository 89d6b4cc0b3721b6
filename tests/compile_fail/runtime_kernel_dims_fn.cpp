// make_runtime_kernel's dims_fn takes the params, then the kernel's arguments (here one short).
// expect: tunekit: make_runtime_kernel's dims_fn must be callable as dims_fn(const Params&
#include <tunekit/cuda/rtc.hpp>

#include <memory>

void use(std::shared_ptr<tunekit::cuda::kernel_program> program) {
  auto k = tunekit::cuda::make_runtime_kernel<float *, int, cudaStream_t>(
      program, [](const tunekit::config &c) { return static_cast<int>(c.get_int("BLOCK")); },
      [](const int &block, float *, int n) {
        return tunekit::cuda::launch_dims{.grid = dim3(static_cast<unsigned>(n / block))};
      });
  static_cast<void>(k);
}
