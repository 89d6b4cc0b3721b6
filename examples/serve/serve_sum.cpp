// A collective serving worker over MPI: every rank holds one shard of a vector; a request
// `POST /sum` with a count n scales the first n elements of every shard by 2 with a tuned
// function, on every rank, and rank 0 answers the total. The first request for a new n tunes the
// scale function on every rank together.
//
//   mpiexec -n 4 ./build/examples/serve/serve_sum 8000 &
//   curl -d 100000 localhost:8000/sum     # -> 400000 ... (the sum over every rank's shard)
//   curl localhost:8000/health
//   curl -X POST localhost:8000/stop

#include <tunekit/mpi/communicator.hpp>
#include <tunekit/serve.hpp>
#include <tunekit/tunekit.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

// y = alpha * x over [0, n), in blocks of BLOCK elements on `threads` threads.
void scale(const float *x, float *y, float alpha, std::int64_t n, const tunekit::config &c) {
  const std::int64_t block = c.get_int("BLOCK");
  const auto threads = static_cast<int>(c.get_int("threads"));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([=] {
      for (std::int64_t b = t * block; b < n; b += threads * block) {
        for (std::int64_t i = b; i < std::min(n, b + block); ++i) {
          y[i] = alpha * x[i];
        }
      }
    });
  }
  for (auto &p : pool) {
    p.join();
  }
}

// The request body is a count; anything else is the client's mistake.
std::int64_t count_of(std::string_view body, std::int64_t limit) {
  const std::string text(body);
  char *end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n <= 0 || n > limit) {
    throw std::invalid_argument("the body must be a count from 1 to " + std::to_string(limit));
  }
  return n;
}

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided); // rank 0 has HTTP threads
  const int port = argc > 1 ? std::atoi(argv[1]) : 8000;
  int status = 0;
  {
    tunekit::mpi::communicator world(
        MPI_COMM_WORLD,
        {.timeout = std::chrono::seconds(30), .max_poll_interval = std::chrono::microseconds(50)});
    constexpr std::int64_t shard = 1 << 22;
    std::vector<float> x(shard, static_cast<float>(world.rank() + 1));
    std::vector<float> y(shard);
    auto tuned_scale = tunekit::autotune(
        "serve_sum.scale",
        tunekit::config_space::product({{"BLOCK", {4096, 16384}}, {"threads", {1, 2}}}),
        [](const float *, float *, float, std::int64_t n) { return tunekit::key{n}; },
        tunekit::keep_all{}, scale, tunekit::tuner_options{.version = "v1", .comm = &world});

    tunekit::serve::worker worker(
        world,
        [&](const tunekit::serve::request &r) {
          const std::int64_t n = count_of(r.body, shard); // throws on every rank alike
          tuned_scale(x.data(), y.data(), 2.0f, n);       // the same tuning step on every rank
          double part = 0;
          for (std::int64_t i = 0; i < n; ++i) {
            part += y[static_cast<std::size_t>(i)];
          }
          double total = 0; // the application's own collective, in the same order everywhere
          MPI_Allreduce(&part, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
          return tunekit::serve::response{.body = std::to_string(total) + "\n",
                                          .content_type = "text/plain"};
        },
        {.host = "0.0.0.0", .port = port});
    if (world.rank() == 0) {
      std::printf("rank 0 of %d listening on port %d\n", world.size(), worker.port());
      std::fflush(stdout);
    }
    const tunekit::serve::summary s = worker.serve();
    std::printf("rank %d: %s after %llu requests%s%s\n", world.rank(),
                tunekit::serve::to_string(s.reason), static_cast<unsigned long long>(s.requests),
                s.error.empty() ? "" : ": ", s.error.c_str());
    status = s.reason == tunekit::serve::stop_reason::communicator_failed ? 1 : 0;
  }
  MPI_Finalize();
  return status;
}
