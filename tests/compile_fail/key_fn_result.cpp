// key_fn returns something no key is made of; reported where the tuned function is made.
// expect: tunekit: key_fn must be callable as key_fn(const Args&...) and return tunekit::key
#include <tunekit/tunekit.hpp>

#include <vector>

void use() {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](int n) { return std::vector<int>{n}; }, tunekit::keep_all{},
      [](int, const tunekit::config &) {});
  static_cast<void>(tuned);
}
