// The C++ of README.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`, after the declarations the page leaves to the reader.
// scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's layout
// is kept, so clang-format is off.
// clang-format off

// page: README.md block 1
#include <tunekit/tunekit.hpp>

// The function to tune takes its config as the last argument.
void scale(const float* x, float* y, float alpha, std::int64_t n, const tunekit::config& c);

auto space = tunekit::config_space::product({{"BLOCK", {4096, 1024, 16384}}, {"threads", {1, 2, 4}}});

auto tuned = tunekit::autotune(
    "scale", space,
    // key_fn: everything that can change the winner, nothing unstable (no pointers, no rank)
    [](const float*, float*, float, std::int64_t n) { return tunekit::key{n}; },
    // prune_fn: configs not worth measuring for these arguments
    [](const tunekit::config& c, const float*, float*, float, std::int64_t n) {
      return c.get_int("BLOCK") <= n; },
    scale,
    tunekit::tuner_options{.version = "v1"});   // code identity: a new version retunes

void run(const float* x, float* y, std::int64_t n) {
  tuned(x, y, 2.5f, n);                            // first call for n: measure, pick, run
  tuned(x, y, 2.5f, n);                            // every later call: ~30 ns of lookup
  tuned.with({.verbose = true})(x, y, 2.5f, n);    // say which source answered
  tuned.with({.autotune = false})(x, y, 2.5f, n);  // the space's first config, nothing measured
}
// page end
