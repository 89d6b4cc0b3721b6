#include "sigterm.hpp"

namespace tunekit::serve::detail {

namespace {

// Set by the handler, read by the serving thread.
volatile std::sig_atomic_t g_sigterm = 0;

extern "C" void on_sigterm(int /*signal*/) { g_sigterm = 1; }

} // namespace

bool sigterm_received() noexcept { return g_sigterm != 0; }

sigterm_catcher::sigterm_catcher(bool enabled) : m_enabled(enabled) {
  if (!m_enabled) {
    return;
  }
  g_sigterm = 0;
  struct sigaction action {};
  action.sa_handler = on_sigterm;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, &m_previous);
}

sigterm_catcher::~sigterm_catcher() {
  if (m_enabled) {
    sigaction(SIGTERM, &m_previous, nullptr);
  }
}

} // namespace tunekit::serve::detail
