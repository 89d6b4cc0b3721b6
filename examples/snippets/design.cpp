// The C++ of docs/design.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`, after the declarations the page leaves to the reader.
// scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's layout
// is kept, so clang-format is off.
// clang-format off

// page: docs/design.md block 1
#include <tunekit/tunekit.hpp>

// The seed's scale example, in C++: a host launcher whose config is injected as the last argument.
void launch_scale(const float* x, float* y, float alpha, std::int64_t n, const tunekit::config& c);

auto space = tunekit::config_space::product({{"BLOCK", {256, 512, 1024, 2048}},
                                             {"num_warps", {4, 8}}});

auto scale = tunekit::autotune(
    "scale", space,
    /*key_fn*/   [](const float*, float*, float, std::int64_t n) { return tunekit::key{n}; },
    /*prune_fn*/ [](const tunekit::config& c, const float*, float*, float, std::int64_t n) {
                   return c.get_int("BLOCK") <= n; },
    launch_scale);

void run(const float* x, float* y, std::int64_t n) {
  scale(x, y, 2.5f, n);                            // first call for this n: measure, pick, run
  scale.with({.autotune = false})(x, y, 2.5f, n);  // config_space[0], nothing measured
}
// page end
