// campaign drives a tuned function, not any callable.
// expect: tunekit: campaign takes the tunekit::tuned_function that tunekit::autotune returns
#include <tunekit/tunekit.hpp>

#include <tuple>
#include <vector>

void use() {
  auto plain = [](int) {};
  const std::vector<std::tuple<int>> calls{{1}, {2}};
  static_cast<void>(tunekit::campaign(plain, calls));
}
