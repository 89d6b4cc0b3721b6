// The C++ of docs/multi_rank.md, compiled as shown. Each block of the page stands below verbatim,
// between `// page:` and `// page end`, after the declarations the page leaves to the reader.
// scripts/check-doc-snippets.py fails when the page and this file drift apart. The page's layout
// is kept, so clang-format is off.
// clang-format off

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/nccl/communicator.hpp>
#include <tunekit/tunekit.hpp>

#include <chrono>

// What the page leaves to the reader (in a namespace: tunekit's lambdas name their parameters c).
namespace app {
void launch_gemm(const float* a, const float* b, float* c, int n, cudaStream_t stream,
                 const tunekit::config& config);
const tunekit::config_space space = tunekit::config_space::product({{"BLOCK", {128, 256}}});
inline tunekit::key key_fn(const float*, const float*, float*, int n, cudaStream_t) { return tunekit::key{n}; }
inline bool prune_fn(const tunekit::config&, const float*, const float*, float*, int, cudaStream_t) { return true; }
const float* a = nullptr;
const float* b = nullptr;
float* c = nullptr;
int n = 1024;
} // namespace app
using namespace app;

// page: docs/multi_rank.md block 3
// comm and stream are yours: ncclCommInitRank(&comm, world, id, rank), cudaStreamCreate(&stream)
void tune_on_every_rank(ncclComm_t comm, cudaStream_t stream) {
  tunekit::nccl::communicator ranks(comm, stream, {.timeout = std::chrono::seconds(300)});
  auto opts = tunekit::cuda::make_tuner_options({.stream = stream});
  opts.comm = &ranks;
  auto gemm = tunekit::autotune("gemm", space, key_fn, prune_fn, launch_gemm, opts);
  gemm(a, b, c, n, stream);            // same config on every rank
}
// page end
