#pragma once
// SIGTERM while a worker serves (private to tunekit::serve): a handler sets a flag that the
// serving thread reads at each step.

#include <csignal>

namespace tunekit::serve::detail {

/// Whether SIGTERM arrived since the last `sigterm_catcher` was installed.
[[nodiscard]] bool sigterm_received() noexcept;

/// While it lives, SIGTERM sets the flag instead of ending the process (when `enabled`); the
/// previous disposition comes back when it is destroyed.
class sigterm_catcher {
public:
  explicit sigterm_catcher(bool enabled);
  ~sigterm_catcher();
  sigterm_catcher(const sigterm_catcher &) = delete;
  sigterm_catcher &operator=(const sigterm_catcher &) = delete;

private:
  bool m_enabled;
  struct sigaction m_previous {};
};

} // namespace tunekit::serve::detail
