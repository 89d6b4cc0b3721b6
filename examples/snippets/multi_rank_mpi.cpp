// The C++ of docs/multi_rank.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`, after the declarations the page leaves to the reader.
// scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's layout
// is kept, so clang-format is off.
// clang-format off

#include <tunekit/mpi/communicator.hpp>
#include <tunekit/tunekit.hpp>

#include <chrono>
#include <memory>

// What the page leaves to the reader (in a namespace: tunekit's lambdas name their parameters c).
namespace app {
void launch_gemm(const float* a, const float* b, float* c, int n, const tunekit::config& config);
const tunekit::config_space space = tunekit::config_space::product({{"BLOCK", {128, 256}}});
inline tunekit::key key_fn(const float*, const float*, float*, int n) { return tunekit::key{n}; }
inline bool prune_fn(const tunekit::config&, const float*, const float*, float*, int) { return true; }
const std::shared_ptr<tunekit::measurer> measurer;
const float* a = nullptr;
const float* b = nullptr;
float* c = nullptr;
int n = 1024;
} // namespace app
using namespace app;

// page: docs/multi_rank.md block 1
#include <tunekit/mpi/communicator.hpp>
#include <tunekit/tunekit.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    // Collective: build it on every rank. The timeout is optional (see "Timeouts").
    tunekit::mpi::communicator world(MPI_COMM_WORLD, {.timeout = std::chrono::seconds(300)});
    auto gemm = tunekit::autotune("gemm", space, key_fn, prune_fn, launch_gemm,
                                  {.measurer = measurer, .comm = &world});
    gemm(a, b, c, n);   // same config on every rank
  }
  MPI_Finalize();
}
// page end

namespace deferred {
struct Batch { int size; };
void launch(const Batch& batch, const tunekit::config& config);
inline tunekit::key key_fn(const Batch& batch) { return tunekit::key{batch.size}; }
inline bool prune_fn(const tunekit::config&, const Batch&) { return true; }

// page: docs/multi_rank.md block 2
void train(tunekit::communicator& world, const Batch& batch) {
  auto opts = tunekit::tuner_options{.comm = &world, .mode = tunekit::tuning_mode::deferred};
  auto step = tunekit::autotune("step", space, key_fn, prune_fn, launch, opts);
  step(batch);            // default config, no synchronisation
  step.tuner().arm();     // every rank
  step(batch);            // tunes, together
}
// page end
} // namespace deferred
