// with_default's default_fn must return a config.
// expect: tunekit: with_default's default_fn must be callable as default_fn(const Args&...)
#include <tunekit/tunekit.hpp>

void use() {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
      [](int, const tunekit::config &) {});
  auto with_default = tuned.with_default([](int) { return 256; });
  with_default(3);
}
