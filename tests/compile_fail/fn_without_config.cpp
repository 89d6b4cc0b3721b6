// The tuned function does not take the config as its last parameter.
// expect: tunekit: the tuned function must be callable as fn(Args&..., const tunekit::config&)
#include <tunekit/tunekit.hpp>

void scale(const tunekit::config &, float *, int) {}

void use(float *y) {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](const float *, int n) { return tunekit::key{n}; }, tunekit::keep_all{}, scale);
  tuned(y, 3);
}
