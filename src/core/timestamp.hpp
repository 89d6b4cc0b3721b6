#pragma once
// The time stamps tunekit writes into cache entries and logs (private to the core).

#include <chrono>
#include <ctime>
#include <string>

namespace tunekit::detail {

/// Now, in UTC, as ISO 8601 to the second: `2026-11-29T22:28:28Z`.
inline std::string utc_timestamp() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace tunekit::detail
