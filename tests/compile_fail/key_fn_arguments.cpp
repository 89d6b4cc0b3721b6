// key_fn takes a string, but the tuned function's arguments are an int.
// expect: tunekit: key_fn must be callable as key_fn(const Args&...)
#include <tunekit/tunekit.hpp>

#include <string>

void use() {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](const std::string &s) { return tunekit::key{s}; }, tunekit::keep_all{},
      [](int, const tunekit::config &) {});
  tuned(3);
}
