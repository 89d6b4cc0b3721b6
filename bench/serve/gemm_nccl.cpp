// The serving worker on GPUs: a tuned GEMM sharded over the ranks (one GPU each) behind rank 0's
// endpoint, with tunekit::nccl as the worker's communicator. Run by bench/serve/gpu.sh under
// mpirun (one process per GPU; MPI only carries the ncclUniqueId).
//
// A request's body is m: every rank multiplies its m/size rows of A (m x m) by B (m x m) with the
// tuned GEMM, the shards of C are gathered on every rank (ncclAllGather), and rank 0 answers a
// checksum of C. The first request for an m tunes the GEMM on every rank together. Measured on
// rank 0 for each m: the handler called directly on every rank (no HTTP, no worker), one client
// posting requests one after the other, and --clients clients at once.
//
//   mpirun -np 2 tunekit_bench_serve_gemm_nccl [--sizes 1024,2048,4096] [--requests 200]
//          [--clients 4] [--json FILE]

#include "device_array.hpp"
#include "gemm_space.hpp"
#include "load_client.hpp"
#include "scale_kernel.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/nccl/communicator.hpp>
#include <tunekit/nccl/error.hpp>
#include <tunekit/serve.hpp>
#include <tunekit/tunekit.hpp>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct args {
  std::vector<int> sizes{1024, 2048, 4096};
  int requests = 200;
  int clients = 4;
  std::string json;
};

args parse(int argc, char **argv) {
  args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--sizes") {
      a.sizes.clear();
      std::stringstream ss(v);
      for (std::string s; std::getline(ss, s, ',');) {
        a.sizes.push_back(std::stoi(s));
      }
    } else if (k == "--requests") {
      a.requests = std::stoi(v);
    } else if (k == "--clients") {
      a.clients = std::stoi(v);
    } else if (k == "--json") {
      a.json = v;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

nlohmann::json to_json(const bench_serve::latency_stats &s) {
  return {{"requests", s.requests}, {"failed", s.failed}, {"per_s", s.per_s},
          {"mean_us", s.mean_us},   {"p50_us", s.p50_us}, {"p99_us", s.p99_us}};
}

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  const args a = parse(argc, argv);
  int rank = 0;
  int size = 1;
  int local = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  int rc = 0;
  try {
    TUNEKIT_CUDA_CHECK(cudaSetDevice(local % tunekit::cuda::device_count()));
    ncclUniqueId id{};
    if (rank == 0) {
      tunekit::nccl::check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    }
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    const example::stream owned_stream;
    cudaStream_t stream = owned_stream.get();
    ncclComm_t nc = nullptr;
    tunekit::nccl::check(ncclCommInitRank(&nc, size, id, rank), "ncclCommInitRank");
    nlohmann::json out;
    {
      tunekit::nccl::communicator comm(nc, stream,
                                       {.timeout = std::chrono::seconds(120), .local_rank = local});
      const int max_m = *std::max_element(a.sizes.begin(), a.sizes.end());
      const auto full = static_cast<std::size_t>(max_m) * static_cast<std::size_t>(max_m);
      const example::device_array<float> a_rows(full / static_cast<std::size_t>(size));
      const example::device_array<float> b(full);
      const example::device_array<float> c_rows(full / static_cast<std::size_t>(size));
      const example::device_array<float> c(full);
      TUNEKIT_CUDA_CHECK(example::fill_uniform(
          a_rows.get(), static_cast<std::int64_t>(a_rows.size()), 1 + rank, stream));
      TUNEKIT_CUDA_CHECK(
          example::fill_uniform(b.get(), static_cast<std::int64_t>(b.size()), 99, stream));
      auto o = tunekit::cuda::make_tuner_options({.stream = stream});
      o.process = tunekit::process_context{}; // nothing from the environment: tune every run
      o.comm = &comm;
      o.version = "serve-bench";
      o.policy.warmup = 2;
      o.policy.runs = 5;
      auto gemm = tunekit::autotune("bench.serve_gemm", example::gemm_space(), example::gemm_key,
                                    example::gemm_prune, example::gemm, o);
      float corners[2] = {0, 0};
      // The application's handler: every rank, same order.
      const auto handler = [&](const tunekit::serve::request &r) {
        const int m = std::stoi(std::string(r.body));
        if (m <= 0 || m > max_m || m % (size * 128) != 0) {
          throw std::invalid_argument("m must be a multiple of " + std::to_string(size * 128) +
                                      " up to " + std::to_string(max_m));
        }
        const int rows = m / size;
        gemm(a_rows.get(), b.get(), c_rows.get(), rows, m, m, stream); // new m: tunes here
        const auto shard = static_cast<std::size_t>(rows) * static_cast<std::size_t>(m);
        tunekit::nccl::check(ncclAllGather(c_rows.get(), c.get(), shard, ncclFloat, nc, stream),
                             "ncclAllGather", nc);
        TUNEKIT_CUDA_CHECK(
            cudaMemcpyAsync(&corners[0], c.get(), sizeof(float), cudaMemcpyDeviceToHost, stream));
        TUNEKIT_CUDA_CHECK(cudaMemcpyAsync(&corners[1], c.get() + shard * size - 1, sizeof(float),
                                           cudaMemcpyDeviceToHost, stream));
        TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream)); // the answer needs C
        return tunekit::serve::response{.body = std::to_string(corners[0]) + " " +
                                                std::to_string(corners[1])};
      };

      tunekit::serve::worker w(comm, handler, {.heartbeat = std::chrono::milliseconds(500)});
      nlohmann::json served = nlohmann::json::object();
      std::thread load;
      if (rank == 0) {
        load = std::thread([&] {
          for (const int m : a.sizes) {
            const std::string body = std::to_string(m);
            const auto make = [&](int, int) { return body; };
            nlohmann::json row;
            row["first_request_with_tuning"] =
                to_json(bench_serve::run_clients(w.port(), 1, 1, "/gemm", make));
            row["one_client"] =
                to_json(bench_serve::run_clients(w.port(), 1, a.requests, "/gemm", make));
            row["concurrent"] =
                to_json(bench_serve::run_clients(w.port(), a.clients, a.requests, "/gemm", make));
            served[body] = row;
          }
          bench_serve::stop_worker(w.port());
        });
      }
      const tunekit::serve::summary s = w.serve();
      if (load.joinable()) {
        load.join();
      }
      // The same handler called directly on every rank, keys already tuned.
      nlohmann::json direct = nlohmann::json::object();
      for (const int m : a.sizes) {
        const std::string body = std::to_string(m);
        const auto stats = bench_serve::time_direct(static_cast<std::size_t>(a.requests), [&] {
          static_cast<void>(handler({0, "/gemm", body}));
        });
        direct[body] = to_json(stats);
      }
      if (rank == 0) {
        out = {{"ranks", size},
               {"hardware", tunekit::cuda::device_hardware().to_string()},
               {"clients", a.clients},
               {"stop", tunekit::serve::to_string(s.reason)},
               {"served_requests", s.requests},
               {"failed", s.failed},
               {"served", served},
               {"direct", direct}};
        std::printf("| m | direct (us) | one client: mean (us) | added (us) | %d clients: "
                    "requests/s | first request (tunes, ms) |\n| --- | --- | --- | --- | --- | "
                    "--- |\n",
                    a.clients);
        for (const int m : a.sizes) {
          const std::string k = std::to_string(m);
          const double d = direct[k]["mean_us"];
          const double one = served[k]["one_client"]["mean_us"];
          std::printf("| %d | %.1f | %.1f | %.1f | %.0f | %.1f |\n", m, d, one, one - d,
                      served[k]["concurrent"]["per_s"].get<double>(),
                      served[k]["first_request_with_tuning"]["mean_us"].get<double>() / 1000);
        }
        if (!a.json.empty()) {
          std::ofstream(a.json) << out.dump(2) << "\n";
        }
      }
    }
    tunekit::nccl::check(ncclCommDestroy(nc), "ncclCommDestroy");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
