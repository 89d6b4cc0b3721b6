#pragma once
/// \file process_context.hpp
/// What tunekit takes from the process: the environment variables, the launcher's rank variables
/// and the log sink. Read once, in one place (`process_context::from_env`); a tuner and a
/// contextual tuner take it in their options (`process`), so that nothing else reads the process
/// environment lazily. Tests pass their own.

#include <tunekit/environment.hpp>
#include <tunekit/launcher.hpp>
#include <tunekit/log.hpp>

namespace tunekit {

struct process_context {
  /// The `TUNEKIT_*` settings (cache, artifact and log directories, lookup table, flags).
  environment env{};
  /// Which process of a multi-process job this is; default: a single process.
  launcher_info launcher{};
  /// Where INFO lines and warnings go; empty: `default_log_sink()`.
  log_sink log{};

  /// `environment::from_env()`, `launcher_info::from_env()` and `default_log_sink()`, each read
  /// once. Throws `tunekit::error` when a launcher variable is malformed.
  [[nodiscard]] static process_context from_env();
};

} // namespace tunekit
