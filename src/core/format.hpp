#pragma once
// How tunekit prints a time in messages, logs and the command-line tool (private to the core).

#include <cmath>
#include <sstream>
#include <string>

namespace tunekit::detail {

/// `1.234 ms` (4 significant digits); `inf` for a failed candidate's +infinity.
inline std::string format_ms(double ms) {
  if (!std::isfinite(ms)) {
    return "inf";
  }
  std::ostringstream s;
  s.precision(4);
  s << ms << " ms";
  return s.str();
}

} // namespace tunekit::detail
