#pragma once
// The serving loops (private to tunekit::serve): rank 0 leads the ranks through its queue, every
// other rank follows the broadcasts. Each returns when a stop arrives or a collective fails.

#include "http.hpp"
#include "queue.hpp"
#include "step.hpp"

#include <tunekit/serve.hpp>

namespace tunekit::serve::detail {

/// Rank 0: starts the HTTP server, takes each queued job in turn (a request is broadcast and
/// executed, a stop broadcast), sends heartbeats while idle, and at the end answers what is still
/// queued and stops the server (leader.cpp).
[[nodiscard]] summary lead(step_context &ctx, request_queue &queue, http_endpoint &http,
                           const options &opts);

/// Every other rank: receives each step's frame and executes its requests (follower.cpp).
[[nodiscard]] summary follow(step_context &ctx);

} // namespace tunekit::serve::detail
