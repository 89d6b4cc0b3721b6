// A decoded function must take what decode returns, not the config.
// expect: tunekit: a decoded function must be callable as fn(Args&..., const P&)
#include <tunekit/tunekit.hpp>

struct sizes {
  int block;
};

void use() {
  auto tuned = tunekit::autotune(
      "k", tunekit::config_space::product({{"BLOCK", {1, 2}}}),
      [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
      tunekit::decoded{
          [](const tunekit::config &c) { return sizes{static_cast<int>(c.get_int("BLOCK"))}; },
          [](int, const tunekit::config &) {}});
  tuned(3);
}
