#include <tunekit/log.hpp>

#include <cstdio>
#include <mutex>

namespace tunekit {

log_sink default_log_sink() {
  return [](log_level level, std::string_view msg) {
    static std::mutex io; // one line at a time across threads
    const std::lock_guard lock(io);
    FILE *out = level == log_level::info ? stdout : stderr;
    std::fprintf(out, "[tunekit] %s %.*s\n", level == log_level::info ? "INFO" : "WARNING",
                 static_cast<int>(msg.size()), msg.data());
    std::fflush(out);
  };
}

} // namespace tunekit
