#pragma once
/// \file serve.hpp
/// A collective serving worker: rank 0 of a communicator runs an HTTP endpoint, gives each request
/// a sequence number and broadcasts it; every rank runs the application's handler on the same
/// requests in the same order; only rank 0 answers. For models sharded over several ranks (tensor
/// or context parallel) whose every rank must enter inference together. Built as `tunekit::serve`
/// where cpp-httplib is found.
///
/// \code
/// MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
/// {
///   tunekit::mpi::communicator world(MPI_COMM_WORLD, {.timeout = std::chrono::seconds(30)});
///   tunekit::serve::worker w(world, [&](const tunekit::serve::request &r) {
///     return tunekit::serve::response{.body = model.run(r.body)}; // every rank, same order
///   }, {.port = 8000});
///   const tunekit::serve::summary s = w.serve(); // until POST /stop or SIGTERM
/// }
/// MPI_Finalize(); // the application still owns the communicator
/// \endcode

#include <tunekit/communicator.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace tunekit::serve {

/// One request as every rank sees it. The views are valid during the handler's call only.
struct request {
  /// 0, 1, 2, ... in the order every rank executes requests.
  std::uint64_t sequence = 0;
  /// The HTTP path the client posted to (e.g. "/generate").
  std::string_view path;
  /// The request body, byte for byte.
  std::string_view body;
};

/// What rank 0 answers. The other ranks' responses are discarded.
struct response {
  int status = 200;
  std::string body;
  std::string content_type = "application/octet-stream";
};

/// The application's code for one request. Called on every rank, on the thread that called
/// `worker::serve`, one request at a time. It may enter collectives on the worker's communicator
/// (a tuned function tuning a new key does) as long as every rank enters the same ones. If it
/// throws on some ranks, rank 0 answers 500 naming the ranks and their messages, and the worker
/// keeps serving.
using handler = std::function<response(const request &)>;

struct options {
  /// Address and port rank 0 listens on; port 0 picks a free one (see `worker::port`).
  std::string host = "127.0.0.1";
  int port = 0;
  /// Largest request body; a larger one is answered 413 by rank 0 and never broadcast.
  std::size_t max_request_bytes = std::size_t{16} << 20;
  /// Requests waiting on rank 0 for their turn; more are answered 503.
  std::size_t max_queued = 1024;
  /// Threads of rank 0's HTTP server: each open connection holds one.
  int http_threads = 16;
  /// When rank 0 has had no request for this long it broadcasts a heartbeat that every rank
  /// answers with a one-value reduction, so that idle followers' collectives complete within the
  /// communicator's timeout and a lost rank is found while idle. Keep it well below that timeout.
  std::chrono::milliseconds heartbeat{1000};
  /// How long an idle keep-alive connection stays open (httplib waits for idle connections when
  /// the worker stops).
  std::chrono::seconds keep_alive{1};
  /// Accept `POST /stop`.
  bool stop_endpoint = true;
  /// While `serve` runs, SIGTERM on any rank stops every rank (a follower's at the next heartbeat
  /// or request); the previous disposition is restored when `serve` returns.
  bool catch_sigterm = true;
};

/// Why `serve` returned (the same on every rank, except `communicator_failed`, which each rank
/// reaches through its own collective).
enum class stop_reason {
  stop_request,       ///< `POST /stop`
  stop_call,          ///< `worker::stop()` on rank 0
  signal,             ///< SIGTERM on some rank
  communicator_failed ///< a collective failed or timed out: the ranks are out of step
};

[[nodiscard]] const char *to_string(stop_reason r) noexcept;

struct summary {
  stop_reason reason = stop_reason::stop_request;
  /// Requests this rank executed (sequence numbers 0 .. requests-1).
  std::uint64_t requests = 0;
  /// Of those, the ones whose handler threw on some rank.
  std::uint64_t failed = 0;
  /// The communicator's error for `communicator_failed`, else empty.
  std::string error;
};

/// The worker of one rank. Build it and call `serve` on every rank of `comm`.
///
/// Endpoints on rank 0: `POST <any path>` is a request for the handler; `POST /stop` stops every
/// rank after the requests queued before it; `GET /health` answers JSON (ranks, requests served,
/// failed, queued, last error) without involving the other ranks.
///
/// Per request the ranks make one broadcast of a 1 KiB frame (a header, and the request's path and
/// body when they fit; a second broadcast for a request that does not) and one max-reduction of
/// `size()+1` doubles saying on which ranks the handler threw; nothing else (no barrier, no device
/// synchronisation). A collective that fails or times out (a follower died or hangs) makes rank 0
/// answer 503 with the communicator's message, answer everything queued 503, and every rank return
/// `communicator_failed`: the communicator is out of step and the application should not use it
/// again (with NCCL: abort it).
class worker final {
public:
  /// Collective over `comm`: rank 0 binds its port and tells every rank whether it could;
  /// throws `tunekit::error` on every rank if it could not. `comm` must outlive the worker.
  worker(communicator &comm, handler fn, options opts = {});
  ~worker();
  worker(const worker &) = delete;
  worker &operator=(const worker &) = delete;

  /// Serves until a stop; collective, call it on every rank from the thread that makes the
  /// communicator's collectives. Returns once; a worker serves once.
  summary serve();

  /// The port rank 0 listens on (every rank knows it after construction).
  [[nodiscard]] int port() const noexcept;

  /// Thread-safe, on rank 0: queues a stop, as `POST /stop` does. No effect on other ranks.
  void stop();

private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

} // namespace tunekit::serve
