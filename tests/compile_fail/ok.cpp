// The positive control: every callable of the public templates, right, in the forms users write
// them (functions, lambdas, generic lambdas, std::function, functors). It must compile, so that a
// compile-fail test cannot pass because of a wrong include path or flag.
// expect: compiles
#include <tunekit/tunekit.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

namespace {

void scale(const float *, float *, float, std::int64_t, const tunekit::config &) noexcept {}
tunekit::key scale_key(const float *, float *, float, std::int64_t n) { return tunekit::key{n}; }

struct prune_by_block {
  bool operator()(const tunekit::config &c, const float *, float *, float, std::int64_t n) const {
    return c.get_int("BLOCK") <= n;
  }
};

struct sizes {
  int block;
};

int &pick(int &slot, const tunekit::config &c) {
  slot = static_cast<int>(c.get_int("BLOCK"));
  return slot;
}

} // namespace

void use(const float *x, float *y, std::int64_t n) {
  const auto space = tunekit::config_space::product({{"BLOCK", {256, 1024}}});

  auto a = tunekit::autotune("a", space, scale_key, prune_by_block{}, scale);
  a(x, y, 2.5F, n);
  a.with({.verbose = true})(x, y, 2.5F, n);
  static_cast<void>(a.key_of(x, y, 2.5F, n));

  // Generic lambdas, a key of one plain value, a mutable prune_fn.
  auto b = tunekit::autotune(
      "b", space, [](const auto &...) { return 1; },
      [count = 0](const tunekit::config &, const auto &...) mutable { return ++count > 0; },
      [](const auto &, const tunekit::config &c) { return c.get_int("BLOCK"); });
  static_cast<void>(b(std::string("text")));

  // std::function, a function returning a reference, the optional callables.
  const std::function<tunekit::key(const int &)> key_fn = [](const int &v) {
    return tunekit::key{v};
  };
  auto c = tunekit::autotune("c", space, key_fn, tunekit::keep_all{}, pick)
               .with_check([](const int &, const tunekit::config &) { return true; })
               .with_default([](const int &) {
                 return tunekit::config{{"BLOCK", 256}};
               })
               .with_reset([](int &slot, const tunekit::config &) { slot = 0; });
  int slot = 0;
  int &picked = c(slot);
  static_cast<void>(picked);

  // A decoded function taking its struct by value.
  auto d = tunekit::autotune(
      "d", space, [](int v) { return tunekit::key{v}; }, tunekit::keep_all{},
      tunekit::decoded{
          [](const tunekit::config &cfg) { return sizes{static_cast<int>(cfg.get_int("BLOCK"))}; },
          [](int, sizes s) { return s.block; }});
  static_cast<void>(d(3));

  // Contextual tuning and a campaign.
  auto kernel = tunekit::make_tunable_kernel(
      "kernel", space, [](int v) { return tunekit::key{v}; }, [](int, const tunekit::config &) {});
  auto step = tunekit::contextual_autotune([&](int v) {
    kernel(v);
    return v;
  });
  static_cast<void>(step(4));
  const std::vector<std::tuple<int>> calls{{1}, {2}};
  static_cast<void>(tunekit::campaign(d, calls));
}
