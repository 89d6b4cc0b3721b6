// The C++ of docs/reliability.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`. scripts/check-doc-snippets.py fails when the page and this
// file drift apart. The page's layout is kept, so clang-format is off.
// clang-format off

#include <chrono>
#include <memory>
#include <string>

// page: docs/reliability.md block 1
#include <tunekit/isolation.hpp>
#include <tunekit/tunekit.hpp>

tunekit::tuner_options isolated_tuning(const std::string &worker) {
  tunekit::isolated_options iso;
  iso.command = {worker};                    // the worker program and its arguments
  iso.deadline = std::chrono::seconds(10);   // per candidate: start, warmup and timed runs
  iso.request = [](const tunekit::candidate_info &info) {
    // What the worker needs beside the config: JSON text.
    return R"({"n": )" + std::to_string(info.key[0].as_int()) + "}";
  };
  tunekit::tuner_options options;
  options.measurer = std::make_shared<tunekit::isolated_measurer>(iso);
  return options;
}
// page end
