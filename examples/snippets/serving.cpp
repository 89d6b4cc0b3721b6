// The C++ of docs/serving.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`, after the declarations the page leaves to the reader.
// scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's layout
// is kept, so clang-format is off.
// clang-format off

#include <tunekit/mpi/communicator.hpp>
#include <tunekit/serve.hpp>
#include <tunekit/tunekit.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

// What the page leaves to the reader (in a namespace: tunekit's lambdas name their parameters c).
namespace app {
std::string run_model(std::string_view path, std::string_view body);
void launch_gemm(const float* a, const float* b, float* c, int n, const tunekit::config& config);
const tunekit::config_space space = tunekit::config_space::product({{"BLOCK", {128, 256}}});
inline tunekit::key key_fn(const float*, const float*, float*, int n) { return tunekit::key{n}; }
inline bool prune_fn(const tunekit::config&, const float*, const float*, float*, int) { return true; }
const std::shared_ptr<tunekit::measurer> measurer;
const float* a = nullptr;
const float* b = nullptr;
float* c = nullptr;
} // namespace app
using namespace app;

// page: docs/serving.md block 1
#include <tunekit/mpi/communicator.hpp>
#include <tunekit/serve.hpp>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);  // rank 0 has HTTP threads
  {
    tunekit::mpi::communicator world(MPI_COMM_WORLD,
                                     {.timeout = std::chrono::seconds(30),
                                      .max_poll_interval = std::chrono::microseconds(50)});
    tunekit::serve::worker worker(world, [&](const tunekit::serve::request& r) {
      // every rank, same requests, same order; r.sequence is 0, 1, 2, ...
      return tunekit::serve::response{.body = run_model(r.path, r.body)};
    }, {.host = "0.0.0.0", .port = 8000});
    const tunekit::serve::summary s = worker.serve();  // returns on every rank after a stop
    if (s.reason == tunekit::serve::stop_reason::communicator_failed) {
      std::fprintf(stderr, "rank %d: %s\n", world.rank(), s.error.c_str());
    }
  }
  MPI_Finalize();  // the communicator stays the application's
}
// page end

void tuned_handler(tunekit::mpi::communicator& world) {
// page: docs/serving.md block 2
auto gemm = tunekit::autotune("gemm", space, key_fn, prune_fn, launch_gemm,
                              {.measurer = measurer, .comm = &world});
tunekit::serve::worker worker(world, [&](const tunekit::serve::request& r) {
  const int n = std::stoi(std::string(r.body));
  gemm(a, b, c, n);  // a new n tunes here, on every rank together
  return tunekit::serve::response{.body = "ok"};
});
// page end
  static_cast<void>(worker.serve());
}
