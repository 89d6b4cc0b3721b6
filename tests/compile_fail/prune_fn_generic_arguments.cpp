// A generic prune_fn is checked at the call: it takes two arguments, the call passes one.
// expect: tunekit: prune_fn must be callable as prune_fn(const tunekit::config&, const Args&...)
#include <tunekit/tunekit.hpp>

void use() {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](int n) { return tunekit::key{n}; },
      [](const tunekit::config &, const auto &, const auto &) { return true; },
      [](int, const tunekit::config &) {});
  tuned(3);
}
