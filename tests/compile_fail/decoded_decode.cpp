// decoded's decode takes something other than the config.
// expect: tunekit: decoded's decode must be callable as decode(const tunekit::config&)
#include <tunekit/tunekit.hpp>

struct sizes {
  int block;
};

void use() {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
      tunekit::decoded{[](int block) { return sizes{block}; }, [](int, const sizes &) {}});
  tuned(3);
}
