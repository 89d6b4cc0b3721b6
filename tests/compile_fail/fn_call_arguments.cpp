// The tuned function is right, the call passes arguments it does not take.
// expect: tunekit: the tuned function must be callable as fn(Args&..., const tunekit::config&)
#include <tunekit/tunekit.hpp>

void use() {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
      [](int, const tunekit::config &) {});
  tuned("three");
}
