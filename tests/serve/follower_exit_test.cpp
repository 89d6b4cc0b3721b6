// A follower process that exits in the middle of a request (run under mpiexec with
// `--mca orte_allowed_exit_without_sync 1`, so that the launcher lets the others run on): rank 0
// answers 503 within the communicator's timeout, and every surviving rank returns
// communicator_failed from serve(). The survivors then exit without MPI_Finalize, which would
// wait for the lost rank. Exit code 0 when every check held on this rank.

#include <tunekit/mpi/communicator.hpp>
#include <tunekit/serve.hpp>

#include <httplib.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

int failures = 0;

void check(bool ok, int rank, const std::string &what) {
  if (!ok) {
    std::fprintf(stderr, "[rank %d] check failed: %s\n", rank, what.c_str());
    ++failures;
  }
}

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int lost = size - 1;
  constexpr auto timeout = std::chrono::milliseconds(500);
  tunekit::mpi::communicator comm(
      MPI_COMM_WORLD, {.timeout = timeout, .max_poll_interval = std::chrono::microseconds(50)});
  tunekit::serve::worker w(comm,
                           [rank, lost](const tunekit::serve::request &r) {
                             if (r.body == "exit" && rank == lost && lost > 0) {
                               _exit(0); // the process is gone
                             }
                             return tunekit::serve::response{.body = "ok"};
                           },
                           {.heartbeat = std::chrono::milliseconds(100)});
  std::thread client;
  int status = 0;
  std::string body;
  std::chrono::milliseconds waited{};
  if (rank == 0) {
    client = std::thread([&] {
      httplib::Client http("127.0.0.1", w.port());
      http.set_read_timeout(30, 0);
      auto fine = http.Post("/m", "fine", "text/plain");
      check(fine && fine->status == 200, 0, "a request before the exit is answered 200");
      const auto start = std::chrono::steady_clock::now();
      auto res = http.Post("/m", "exit", "text/plain");
      waited = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
      status = res ? res->status : -1;
      body = res ? res->body : "no answer";
    });
  }
  const tunekit::serve::summary s = w.serve();
  if (client.joinable()) {
    client.join();
  }
  check(s.reason == tunekit::serve::stop_reason::communicator_failed, rank,
        std::string("serve() returns communicator_failed, not ") +
            tunekit::serve::to_string(s.reason));
  check(s.requests == 1, rank, "one request completed, got " + std::to_string(s.requests));
  if (rank == 0) {
    check(status == 503, 0,
          "the request answered 503, got " + std::to_string(status) + ": " + body);
    check(body.find("out of step") != std::string::npos, 0, "the answer says why: " + body);
    check(waited < 10 * timeout, 0,
          "answered within the timeout, took " + std::to_string(waited.count()) + " ms");
    std::printf("rank 0: %d after %lld ms: %s\n", status, static_cast<long long>(waited.count()),
                body.c_str());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(failures == 0 ? 0 : 1); // no MPI_Finalize: a rank is gone
}
