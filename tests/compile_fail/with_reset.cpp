// with_reset's reset takes the arguments the function writes, then the config.
// expect: tunekit: with_reset's reset must be callable as reset(Args&..., const tunekit::config&)
#include <tunekit/tunekit.hpp>

void use(float *y) {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](float *, int n) { return tunekit::key{n}; }, tunekit::keep_all{},
      [](float *, int, const tunekit::config &) {});
  auto with_reset = tuned.with_reset([](float *, const tunekit::config &) {});
  with_reset(y, 3);
}
