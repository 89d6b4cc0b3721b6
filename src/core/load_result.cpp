#include <tunekit/load_result.hpp>

namespace tunekit {

std::string_view to_string(load_status s) noexcept {
  switch (s) {
  case load_status::found:
    return "found";
  case load_status::missing:
    return "missing";
  case load_status::unreadable:
    return "unreadable";
  case load_status::invalid:
    return "invalid";
  case load_status::identity_mismatch:
    return "identity_mismatch";
  }
  return "unknown";
}

} // namespace tunekit
