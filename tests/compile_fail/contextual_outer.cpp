// contextual_autotune's outer function is called with the call's arguments.
// expect: tunekit: contextual_autotune's outer function must be callable as outer(Args&...)
#include <tunekit/tunekit.hpp>

void use() {
  auto step = tunekit::contextual_autotune([](int n) { return n; });
  step(1, 2);
}
