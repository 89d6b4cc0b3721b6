// The C++ of docs/artifacts.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`, after the declarations the page leaves to the reader.
// scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's layout
// is kept, so clang-format is off.
// clang-format off

// page: docs/artifacts.md block 1
#include <tunekit/tunekit.hpp>

void launch_scale(const float* x, float* y, std::int64_t n, const tunekit::config& c);

auto make_scale() {
  tunekit::tuner_options o;
  o.artifact.name = "scale_f32";  // 1-64 of [A-Za-z0-9._-]; anything else is refused at build
  o.artifact.key_names = {"n"};   // optional: recorded in the file; an artifact may not set them

  return tunekit::autotune(
             "scale", tunekit::config_space::product({{"BLOCK", {256, 512, 1024}}}),
             [](const float*, float*, std::int64_t n) { return tunekit::key{n}; },
             tunekit::keep_all{}, launch_scale, o)
      .with_default([](const float*, float*, std::int64_t) {
        return tunekit::config{{"BLOCK", 256}};  // must be a config of the space
      });
}
// page end
