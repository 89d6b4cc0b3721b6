// The C++ of docs/runtime_compilation.md, compiled as shown. Each block of the page stands below
// verbatim, between `// page:` and `// page end`, inside a function that declares what the page
// leaves to the reader. scripts/check-doc-snippets.py fails when the page and this file drift
// apart. The page's layout is kept, so clang-format is off.
// clang-format off
// The page's own includes repeat these inside the function, where #pragma once makes them empty.
#include <tunekit/cuda/cuda.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/cuda/rtc_cache.hpp>
#include <tunekit/tunekit.hpp>

#include <cstdio>

namespace {

tunekit::key key_fn(const float *, const float *, float *, int m, int n, int k, cudaStream_t) {
  return tunekit::key{m, n, k};
}
bool prune_fn(const tunekit::config &, const float *, const float *, float *, int, int, int,
              cudaStream_t) {
  return true;
}
void report(const tunekit::cuda::kernel_cache_entry &e) { std::puts(e.key.c_str()); }
void report_bad(const std::filesystem::path &path, tunekit::load_status status,
                const std::string &detail) {
  std::printf("%s (%d): %s\n", path.c_str(), static_cast<int>(status), detail.c_str());
}

} // namespace

void runtime_compilation_page(const tunekit::config_space &space, const float *a, const float *b,
                              float *c, int m, int n, int k, cudaStream_t stream) {
// page: docs/runtime_compilation.md block 1
#include <tunekit/cuda/cuda.hpp>
#include <tunekit/cuda/rtc.hpp>

namespace tc = tunekit::cuda;

// What to compile: a source (file or string), its entry point, headers, options. By default every
// config field becomes -DNAME=VALUE.
auto program = std::make_shared<tc::kernel_program>(tc::kernel_definition{
    .source = tc::kernel_source::from_file("xgemm.cuh"), .entry = "xgemm"});

// How to launch it: what a launch needs from a config (once per config), and the launch
// dimensions from that and the arguments (every call). Arguments that are not a cudaStream_t go
// to the kernel in order; the first cudaStream_t is the stream.
struct tiles { unsigned mwg, nwg, mdimc, ndimc; };
auto xgemm = tc::make_runtime_kernel<const float *, const float *, float *, int, int, int,
                                     cudaStream_t>(
    program,
    [](const tunekit::config &cfg) {
      return tiles{unsigned(cfg.get_int("MWG")), unsigned(cfg.get_int("NWG")),
                   unsigned(cfg.get_int("MDIMC")), unsigned(cfg.get_int("NDIMC"))};
    },
    [](const tiles &t, const float *, const float *, float *, int rows, int cols, int, cudaStream_t) {
      return tc::launch_dims{.grid = dim3(rows / t.mwg, cols / t.nwg), .block = dim3(t.mdimc, t.ndimc)};
    });

// version = program->digest(): editing the kernel or a header retunes;
// preparer = tc::preparer(program): each batch compiled ahead on the pool.
auto options = tc::make_tuner_options(program, {.stream = stream});
auto tuned = tunekit::autotune("xgemm", space, key_fn, prune_fn, xgemm, options);

tuned(a, b, c, m, n, k, stream);
// page end
}

void kernel_cache_page() {
// page: docs/runtime_compilation.md block 2
tunekit::cuda::kernel_cache cache = tunekit::cuda::kernel_cache::from_env();
for (const auto &e : cache.list()) { // path, key, target, description, nvrtc, created, bytes,
  report(e);                         // compile_ms, problem (non-empty: unreadable header)
  if (const auto r = cache.load(e.key, e.target); r.rejected()) {
    report_bad(r.path, r.status, r.detail); // what the tuner would skip, and why
  }
}
std::size_t removed = cache.clear(); // every binary and stale temp file
// page end
  static_cast<void>(removed);
}
