// with_check's check must take the config last and return bool.
// expect: tunekit: with_check's check must be callable as check(const Args&...,
#include <tunekit/tunekit.hpp>

void use() {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
      [](int, const tunekit::config &) {});
  auto checked = tuned.with_check([](int) { return true; });
  checked(3);
}
