// prune_fn forgot the config, its first parameter.
// expect: tunekit: prune_fn must be callable as prune_fn(const tunekit::config&, const Args&...)
#include <tunekit/tunekit.hpp>

void use() {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](int n) { return tunekit::key{n}; }, [](int n) { return n > 0; },
      [](int, const tunekit::config &) {});
  tuned(3);
}
