#pragma once
// The compile pool alone, for the benchmarks that time it: a list of configs compiled by one
// kernel_program's threads while the calling thread only waits.

#include <tunekit/cuda/rtc.hpp>
#include <tunekit/error.hpp>

#include <chrono>
#include <thread>
#include <vector>

namespace bench {

struct pool_compile_result {
  tunekit::cuda::compile_summary summary; // compile_ms: the sum of each config's own compile time
  double wall_s = 0;                      // from `prepare` until every config is compiled
};

/// Compiles `configs` with the `options.threads` compile threads of a new kernel_program (no
/// compile cache). The calling thread waits for the pool before asking for the results: a config
/// asked for before its turn would be compiled on the caller's thread too (as a launch does), one
/// compile more at a time than the pool has threads.
inline pool_compile_result compile_with_pool(const tunekit::cuda::kernel_definition &def,
                                             tunekit::cuda::compile_options options,
                                             const std::vector<tunekit::config> &configs) {
  options.use_cache = false;
  tunekit::cuda::kernel_program p(def, options);
  static_cast<void>(p.target()); // the device query (without `arch`) is not compile time
  const auto t0 = std::chrono::steady_clock::now();
  p.prepare(configs);
  while (p.summary().pending > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (const auto &c : configs) {
    try {
      static_cast<void>(p.compile(c));
    } catch (const tunekit::error &) {
      // counted as failed in the summary
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {p.summary(), wall};
}

} // namespace bench
