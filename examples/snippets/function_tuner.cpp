// The C++ of docs/function_tuner.md, compiled as shown. Each block of the page stands below
// verbatim, between `// page:` and `// page end`, after the declarations the page leaves to the
// reader. scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's
// layout is kept, so clang-format is off.
// clang-format off

// page: docs/function_tuner.md block 1
#include <tunekit/tunekit.hpp>

template <class KeyFn, class PruneFn, class Fn, class... Args>
auto tune_and_call(std::string name, tunekit::config_space space, KeyFn key_fn, PruneFn prune_fn,
                   Fn fn, tunekit::tuner_options options, Args... args) {
  auto tuned = tunekit::autotune(name, space, key_fn, prune_fn, fn, options);
  auto result = tuned(args...);          // == fn(args..., winner)
  return result;
}
// page end

// Instantiated, so that the template above is compiled for real arguments.
int tune_and_call_example() {
  return tune_and_call(
      "add", tunekit::config_space{{{"step", 1}}, {{"step", 2}}},
      [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
      [](int n, const tunekit::config& c) { return n + static_cast<int>(c.get_int("step")); },
      tunekit::tuner_options{}, 40);
}

namespace config_reads {
// page: docs/function_tuner.md block 2
tunekit::config c{{"BLOCK", 256}, {"num_warps", 4}, {"algo", "tiled"}};
std::int64_t block = c.get_int("BLOCK");  // 256
double wrong = c.get_double("BLOCK");     // throws: config field 'BLOCK': expected a value of type double, got int 256
// page end
} // namespace config_reads

// page: docs/function_tuner.md block 3
auto space = tunekit::config_space::product(
    {{"MWG", {16, 32, 64}}, {"MDIMC", {8, 16}}, {"VWM", {1, 2, 4}}},
    {[](const tunekit::config& c) {
      return c.get_int("MWG") % (c.get_int("MDIMC") * c.get_int("VWM")) == 0; }});
// page end

namespace decoded_configs {
void launch_scale(const float *, float *, std::int64_t, int, int) {}
std::int64_t key_fn(const float *, float *, std::int64_t n) { return n; }
bool prune_fn(const tunekit::config &, const float *, float *, std::int64_t) { return true; }
const tunekit::config_space space = tunekit::config_space::product(
    {{"BLOCK", {256, 512}}, {"threads", {64, 128}}});

// page: docs/function_tuner.md block 4
struct sizes { int block, threads; };

auto tuned = tunekit::autotune("scale", space, key_fn, prune_fn,
    tunekit::decoded{[](const tunekit::config& c) {
                       return sizes{int(c.get_int("BLOCK")), int(c.get_int("threads"))}; },
                     [](const float* x, float* y, std::int64_t n, const sizes& s) {
                       launch_scale(x, y, n, s.block, s.threads); }});
// page end
} // namespace decoded_configs
