#include <tunekit/process_context.hpp>

namespace tunekit {

process_context process_context::from_env() {
  return process_context{environment::from_env(), launcher_info::from_env(), default_log_sink()};
}

} // namespace tunekit
