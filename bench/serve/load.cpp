// Load benchmark of the serving worker on CPU ranks (run under mpiexec): requests per second and
// latency per request through rank 0's HTTP endpoint, against calling the handler directly.
//
//   mpiexec -n 4 tunekit_bench_serve_load [--clients 8] [--requests 500] [--work-us 0]
//            [--timeout-ms 10000] [--poll-us 50] [--label TEXT] [--json FILE]
//
// The handler spins for --work-us microseconds and answers a checksum of the body. Three runs on
// rank 0: the handler called directly; one client posting requests one after the other (the
// latency the worker adds); --clients clients at once (throughput). --timeout-ms 0 makes the
// communicator wait with MPI_Wait (no limit); otherwise it polls, sleeping at most --poll-us.

#include "load_client.hpp"

#include <tunekit/mpi/communicator.hpp>
#include <tunekit/serve.hpp>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace {

struct args {
  int clients = 8;
  int requests = 500;
  int work_us = 0;
  int timeout_ms = 10000;
  int poll_us = 50;
  std::string label = "cpu";
  std::string json;
};

args parse(int argc, char **argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--clients") {
      a.clients = std::stoi(next());
    } else if (k == "--requests") {
      a.requests = std::stoi(next());
    } else if (k == "--work-us") {
      a.work_us = std::stoi(next());
    } else if (k == "--timeout-ms") {
      a.timeout_ms = std::stoi(next());
    } else if (k == "--poll-us") {
      a.poll_us = std::stoi(next());
    } else if (k == "--label") {
      a.label = next();
    } else if (k == "--json") {
      a.json = next();
    } else {
      std::fprintf(stderr, "unknown argument %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

// Spins for `us` microseconds, then a checksum of the body, so that the work is not optimised away.
std::string work(std::string_view body, int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : body) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  return std::to_string(h);
}

nlohmann::json to_json(const bench_serve::latency_stats &s) {
  return {{"requests", s.requests}, {"failed", s.failed},   {"seconds", s.seconds},
          {"per_s", s.per_s},       {"mean_us", s.mean_us}, {"p50_us", s.p50_us},
          {"p99_us", s.p99_us}};
}

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  const args a = parse(argc, argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  nlohmann::json out;
  {
    tunekit::mpi::communicator comm(MPI_COMM_WORLD,
                                    {.timeout = std::chrono::milliseconds(a.timeout_ms),
                                     .max_poll_interval = std::chrono::microseconds(a.poll_us)});
    const auto handler = [&a](const tunekit::serve::request &r) {
      return tunekit::serve::response{.body = work(r.body, a.work_us)};
    };
    const auto body = [](int c, int i) {
      return "client " + std::to_string(c) + " request " + std::to_string(i);
    };
    bench_serve::latency_stats direct;
    if (rank == 0) {
      const std::size_t n = static_cast<std::size_t>(a.requests) * 2;
      direct = bench_serve::time_direct(n, [&] {
        static_cast<void>(handler({0, "/run", "client 0 request 0"}));
      });
    }
    tunekit::serve::worker w(comm, handler, {.heartbeat = std::chrono::milliseconds(200)});
    bench_serve::latency_stats one;
    bench_serve::latency_stats many;
    std::thread load;
    if (rank == 0) {
      load = std::thread([&] {
        one = bench_serve::run_clients(w.port(), 1, a.requests * 2, "/run", body);
        many = bench_serve::run_clients(w.port(), a.clients, a.requests, "/run", body);
        bench_serve::stop_worker(w.port());
      });
    }
    const tunekit::serve::summary s = w.serve();
    if (load.joinable()) {
      load.join();
    }
    if (rank == 0) {
      out = {{"label", a.label},
             {"ranks", size},
             {"work_us", a.work_us},
             {"timeout_ms", a.timeout_ms},
             {"poll_us", a.poll_us},
             {"clients", a.clients},
             {"stop", tunekit::serve::to_string(s.reason)},
             {"served", s.requests},
             {"direct", to_json(direct)},
             {"one_client", to_json(one)},
             {"concurrent", to_json(many)},
             {"added_latency_us", one.mean_us - direct.mean_us}};
      std::printf("| %s | %d | %d | %s | %.1f | %.1f | %.1f | %.1f | %.0f | %.1f | %zu |\n",
                  a.label.c_str(), size, a.work_us,
                  a.timeout_ms == 0 ? "none (MPI_Wait)"
                                    : (std::to_string(a.timeout_ms) +
                                       " ms, poll <= " + std::to_string(a.poll_us) + " us")
                                          .c_str(),
                  direct.mean_us, one.mean_us, one.p99_us, one.mean_us - direct.mean_us, many.per_s,
                  many.p99_us, one.failed + many.failed);
      if (!a.json.empty()) {
        std::ofstream(a.json, std::ios::app) << out.dump() << "\n";
      }
    }
  }
  MPI_Finalize();
  return 0;
}
