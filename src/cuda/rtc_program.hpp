#pragma once
// The state behind a `kernel_program` (rtc_program.cpp): one build per config, with its key, its
// compile (on the pool or on the launching thread, through the compile cache) and its loaded
// module. Internal to the CUDA backend; rtc.cpp holds the public methods over it.

#include <tunekit/cuda/rtc.hpp>

#include "rtc_compiler.hpp"
#include "rtc_module.hpp"
#include "rtc_pool.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tunekit::cuda {

struct kernel_program::impl {
  /// One compile: shared by every config with the same key.
  struct build {
    std::string key;
    rtc_detail::nvrtc_job job;
    std::mutex mutex;
    std::condition_variable done_cv;
    enum class phase { fresh, queued, running, done } state = phase::fresh;
    compile_status status = compile_status::pending;
    double compile_ms = 0;
    double wait_ms = 0;
    std::string binary;
    std::string lowered_name;
    std::string reason;
    // Loading, under `load_mutex` of the program.
    std::unique_ptr<rtc_detail::loaded_module> loaded;
  };

  impl(kernel_definition d, compile_options o);
  ~impl();
  impl(const impl &) = delete;
  impl &operator=(const impl &) = delete;

  /// The compile target, chosen at the first call (reading the device when no arch is given).
  const std::string &resolve_target();
  /// The build of `c`, made on first sight (its key computed then, once per config).
  std::shared_ptr<build> entry(const config &c);
  /// Reads `b` from the cache or compiles it (then stores it) on this thread; records the
  /// outcome. Never throws.
  void work(build &b);
  /// Compiles `b` now or waits for the thread compiling it; throws when it failed.
  void finish(build &b);
  [[nodiscard]] compile_record record_of(const config &c, build &b) const;
  /// The loaded entry point of a finished build, loaded at its first call.
  rtc_detail::loaded_function &load(build &b);

  kernel_definition definition;
  compile_options options;
  log_sink log;
  std::string nvrtc;
  std::shared_ptr<const kernel_cache> cache;
  std::string digest;
  std::mutex target_mutex;
  std::string target;
  mutable std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<build>> by_config;
  std::unordered_map<std::string, std::shared_ptr<build>> by_key;
  std::vector<std::pair<config, std::shared_ptr<build>>> order;
  std::mutex load_mutex;
  std::unique_ptr<rtc_detail::compiler> compiler;
  // Last: destroyed (joined) first, while everything its jobs use still exists.
  std::optional<rtc_detail::compile_pool> pool;
};

} // namespace tunekit::cuda
