#include "frame.hpp"
#include "loops.hpp"

#include <tunekit/error.hpp>

#include <exception>
#include <string>

namespace tunekit::serve::detail {

summary follow(step_context &ctx) {
  communicator &comm = ctx.comm;
  summary s;
  std::string payload;
  try {
    for (;;) {
      frame f;
      comm.broadcast(bytes_of(f), 0);
      const header &h = f.h;
      if (h.magic != header_magic) {
        throw error("tunekit::serve: rank " + std::to_string(comm.rank()) +
                    " received a broadcast that is not a worker step (the ranks are out of "
                    "step)");
      }
      if (h.kind == step_kind::stop) {
        s.reason = static_cast<stop_reason>(h.sequence);
        break;
      }
      if (h.kind == step_kind::heartbeat) {
        static_cast<void>(reduce_outcome(ctx, false));
        continue;
      }
      const auto n = static_cast<std::size_t>(h.path_bytes + h.body_bytes);
      if (n <= inline_capacity) {
        payload.assign(f.inline_payload.data(), n);
      } else {
        payload.resize(n);
        comm.broadcast(bytes_of(payload), 0);
      }
      static_cast<void>(
          execute(ctx, h.sequence, payload, static_cast<std::size_t>(h.path_bytes), s));
    }
  } catch (const std::exception &e) {
    s.reason = stop_reason::communicator_failed;
    s.error = e.what();
  }
  return s;
}

} // namespace tunekit::serve::detail
