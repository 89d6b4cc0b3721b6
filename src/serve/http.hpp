#pragma once
// Rank 0's HTTP side (private to tunekit::serve): the endpoints (`POST <path>`, `POST /stop`,
// `GET /health`) over cpp-httplib, each request handed to the queue and answered from it.

#include "queue.hpp"

#include <tunekit/serve.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
} // namespace httplib

namespace tunekit::serve::detail {

class http_endpoint {
public:
  /// Configures the server and its endpoints; `ranks` is what `/health` reports.
  http_endpoint(const options &opts, request_queue &queue, int ranks);
  /// A server that never listened still closes its socket (through httplib).
  ~http_endpoint();
  http_endpoint(const http_endpoint &) = delete;
  http_endpoint &operator=(const http_endpoint &) = delete;

  /// Binds `opts.host` and `opts.port` (a free port for 0); the port, or -1 when it cannot.
  [[nodiscard]] int bind(const options &opts);
  /// Accepts connections on a thread of its own.
  void start();
  /// Stops accepting and waits for httplib's threads.
  void stop();

private:
  std::unique_ptr<httplib::Server> m_server;
  std::thread m_listener;
  std::atomic<bool> m_listener_done{false};
  bool m_started = false;
};

} // namespace tunekit::serve::detail
