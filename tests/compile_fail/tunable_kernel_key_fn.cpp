// make_tunable_kernel's key_fn is checked as autotune's is.
// expect: tunekit: key_fn must be callable as key_fn(const Args&...)
#include <tunekit/tunekit.hpp>

void use(float *y) {
  auto kernel = tunekit::make_tunable_kernel(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](int n) { return tunekit::key{n}; }, [](float *, int, const tunekit::config &) {});
  kernel(y, 3);
}
