#include <tunekit/communicator.hpp>

#include <atomic>

namespace tunekit {

namespace {
// The registry: process-wide, set only by the application (never from the environment). The
// core's other process-wide state is the running contextual tuner (contextual.cpp), the console
// lock of default_log_sink (log.cpp) and the temporary-file counter of atomic writes
// (winner_cache.cpp).
std::atomic<communicator *> g_default{nullptr};
std::atomic<communicator_fallback> g_fallback{nullptr};
} // namespace

void set_default_communicator(communicator *comm) noexcept { g_default.store(comm); }

void set_communicator_fallback(communicator_fallback fallback) noexcept {
  g_fallback.store(fallback);
}

communicator *default_communicator() {
  if (communicator *c = g_default.load()) {
    return c;
  }
  const communicator_fallback f = g_fallback.load();
  return f != nullptr ? f() : nullptr;
}

} // namespace tunekit
