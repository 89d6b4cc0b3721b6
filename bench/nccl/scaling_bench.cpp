// How tuning scales with GPUs, one process per GPU over NCCL (bench/gpu_scaling.sh runs it on 1
// rank and on N): the runtime-compiled GEMM (CLBlast's Xgemm space, every config compiled by NVRTC
// on this rank's share of the host's cores) in two sections, each timed on every rank:
//
//  1. split search: one shape searched by the default strategy within a fixed budget, batch,
//     lookahead and seed, each batch's candidates shared between the ranks
//     (`tuner_options::parallel_split`), so every rank count runs the same search;
//  2. campaign: 16 shapes, each searched within a smaller budget, the shapes split between the
//     ranks (`tunekit::campaign`), their winners meeting in the winner cache.
//
// Every candidate is checked against cuBLAS. Rank 0 writes the JSON: each section's wall time (the
// slowest rank's), where each rank's time went (waiting for compiles, inside the communicator's
// collectives, the rest: measuring and the strategy), the configs compiled, and whether every rank
// holds the same winners.
//
//   mpirun -np N ./tunekit_nccl_scaling_bench --out scaling-N.json --cache-dir DIR
//       [--size 4096] [--space extended|clblast] [--budget 256] [--batch 16] [--lookahead 16]
//       [--campaign-budget 24] [--threads 0] [--comm nccl|mpi]
//
// --threads 0: the host's cores divided between its ranks. --comm mpi: tunekit::mpi over
// MPI_COMM_WORLD instead of NCCL, so that ranks may share a GPU (a check of the logic on a machine
// with fewer GPUs than ranks; its times say nothing about scaling).

#include "bootstrap.hpp"
#include "device_array.hpp"
#include "gemm_rtc_cublas.hpp"
#include "gemm_rtc_space.hpp"
#include "ranks.hpp"
#include "scale_kernel.hpp"

#include <tunekit/campaign.hpp>
#include <tunekit/cuda/cuda.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/mpi/communicator.hpp>
#include <tunekit/nccl/communicator.hpp>
#include <tunekit/nccl/error.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using json = nlohmann::json;

struct settings {
  std::string out;
  std::filesystem::path cache_dir;
  int size = 4096;
  example::xgemm_space_kind space = example::xgemm_space_kind::extended;
  std::size_t budget = 256;
  std::size_t batch = 16;
  std::size_t lookahead = 16;
  std::size_t campaign_budget = 24;
  unsigned threads = 0;
  bool nccl = true;
};

settings parse(int argc, char **argv) {
  settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const std::string v = argv[i + 1];
    if (a == "--out") {
      s.out = v;
    } else if (a == "--cache-dir") {
      s.cache_dir = v;
    } else if (a == "--size") {
      s.size = std::stoi(v);
    } else if (a == "--space") {
      s.space =
          v == "clblast" ? example::xgemm_space_kind::clblast : example::xgemm_space_kind::extended;
    } else if (a == "--budget") {
      s.budget = std::stoul(v);
    } else if (a == "--batch") {
      s.batch = std::stoul(v);
    } else if (a == "--lookahead") {
      s.lookahead = std::stoul(v);
    } else if (a == "--campaign-budget") {
      s.campaign_budget = std::stoul(v);
    } else if (a == "--threads") {
      s.threads = static_cast<unsigned>(std::stoul(v));
    } else if (a == "--comm") {
      s.nccl = v != "mpi";
    } else {
      throw tunekit::error("unknown option " + a);
    }
  }
  if (s.out.empty() || s.cache_dir.empty() || s.batch == 0) {
    throw tunekit::error("usage: tunekit_nccl_scaling_bench --out FILE --cache-dir DIR [--size N] "
                         "[--space extended|clblast] [--budget N] [--batch N] [--lookahead N] "
                         "[--campaign-budget N] [--threads N] [--comm nccl|mpi]");
  }
  return s;
}

// Forwards to another communicator and adds up the wall time spent in its collectives: the
// agreement, and the wait for the slowest rank inside it.
class timed_communicator final : public tunekit::communicator {
public:
  explicit timed_communicator(tunekit::communicator &inner) : m_inner(inner) {}
  [[nodiscard]] int rank() const override { return m_inner.rank(); }
  [[nodiscard]] int size() const override { return m_inner.size(); }
  [[nodiscard]] int local_rank() const override { return m_inner.local_rank(); }
  void all_reduce_max(std::span<double> v) override {
    timed([&] { m_inner.all_reduce_max(v); });
  }
  void all_reduce_min(std::span<double> v) override {
    timed([&] { m_inner.all_reduce_min(v); });
  }
  void broadcast(std::span<std::byte> bytes, int root) override {
    timed([&] { m_inner.broadcast(bytes, root); });
  }
  void barrier() override {
    timed([&] { m_inner.barrier(); });
  }
  [[nodiscard]] double seconds() const noexcept { return m_seconds; }
  void reset() noexcept { m_seconds = 0; }

private:
  template <class F> void timed(F &&f) {
    const auto t0 = clock_type::now();
    f();
    m_seconds += bench::seconds_since(t0);
  }
  tunekit::communicator &m_inner;
  double m_seconds = 0;
};

// What a section did on this rank.
struct section {
  double wall_s = 0;
  double wait_for_compile_s = 0;
  double collectives_s = 0;
  std::size_t compiled = 0;
  double compile_cpu_s = 0;
  std::size_t searched = 0; // keys this rank searched
  std::string winners;      // every winner, in order
};

// The section on every rank: the slowest and fastest rank's times, each rank's compiles and keys
// searched, and whether the winners agree.
json report(tunekit::communicator &comm, const section &sec) {
  double hi[] = {sec.wall_s, sec.wait_for_compile_s, sec.collectives_s,
                 sec.wall_s - sec.wait_for_compile_s - sec.collectives_s, sec.compile_cpu_s};
  double lo[std::size(hi)];
  std::copy(std::begin(hi), std::end(hi), std::begin(lo));
  const auto ranks = static_cast<std::size_t>(comm.size());
  const auto me = static_cast<std::size_t>(comm.rank());
  std::vector<double> compiled(ranks, 0.0);
  std::vector<double> searched(ranks, 0.0);
  compiled[me] = static_cast<double>(sec.compiled);
  searched[me] = static_cast<double>(sec.searched);
  comm.all_reduce_max(hi);
  comm.all_reduce_min(lo);
  comm.all_reduce_max(compiled); // each rank's own entry, zeros elsewhere
  comm.all_reduce_max(searched);
  double total = 0;
  for (const double c : compiled) {
    total += c;
  }
  const auto range = [&](std::size_t i) { return json{{"max", hi[i]}, {"min", lo[i]}}; };
  return {{"wall_s", hi[0]},
          {"wait_for_compile_s", range(1)},
          {"collectives_s", range(2)},
          {"measure_and_strategy_s", range(3)},
          {"compile_cpu_s", range(4)},
          {"compiled_by_rank", compiled},
          {"compiled_total", total},
          {"searched_by_rank", searched},
          {"same_winners", bench::same_everywhere(comm, sec.winners)}};
}

// The operands of the largest shape (every section's shapes fit in them) and cuBLAS's result.
struct gemm_data {
  std::size_t elems;
  example::device_array<float> a;
  example::device_array<float> b;
  example::device_array<float> c;
  example::device_array<float> ref;
  explicit gemm_data(int n)
      : elems(static_cast<std::size_t>(n) * static_cast<std::size_t>(n)), a(elems), b(elems),
        c(elems), ref(elems) {}
};

class bench_run {
public:
  bench_run(const settings &s, const bench::job &jb, timed_communicator &comm, cudaStream_t stream)
      : m_s(s), m_comm(comm), m_stream(stream), m_data(s.size), m_cublas(stream),
        m_threads(s.threads > 0 ? s.threads
                                : std::max(1U, std::thread::hardware_concurrency() /
                                                   static_cast<unsigned>(jb.local_size))),
        m_def(example::xgemm_definition(TUNEKIT_GEMM_RTC_SOURCE)),
        m_space(example::xgemm_space(s.space)) {
    const auto n = static_cast<std::int64_t>(m_data.elems);
    TUNEKIT_CUDA_CHECK(example::fill_uniform(m_data.a.get(), n, 5, stream));
    TUNEKIT_CUDA_CHECK(example::fill_uniform(m_data.b.get(), n, 6, stream));
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  [[nodiscard]] unsigned threads() const noexcept { return m_threads; }

private:
  // A compile cache per section, cold at its start, shared by the ranks of this host.
  std::shared_ptr<tunekit::cuda::kernel_program> make_program(const std::string &section) {
    const auto cache =
        std::make_shared<const tunekit::cuda::kernel_cache>(m_s.cache_dir / ("kernels-" + section));
    auto program = std::make_shared<tunekit::cuda::kernel_program>(
        m_def, tunekit::cuda::compile_options{.cache = cache, .threads = m_threads});
    static_cast<void>(program->target());
    return program;
  }

  tunekit::tuner_options options(const tunekit::cuda::kernel_program &program,
                                 const std::string &dir) {
    auto o = tunekit::cuda::make_tuner_options({.stream = m_stream});
    tunekit::environment env;
    env.cache_dir = m_s.cache_dir / dir;
    env.log_dir = m_s.cache_dir / (dir + "-logs");
    o.process = tunekit::process_context{env, tunekit::launcher_info::from_env(), {}};
    o.comm = &m_comm;
    o.version = program.digest();
    o.policy.warmup = 1;
    o.policy.runs = 3;
    o.search.seed = 7;
    o.search.batch_size = m_s.batch;
    o.search.lookahead = m_s.lookahead;
    return o;
  }

  auto make_tuned(const std::string &name,
                  const std::shared_ptr<tunekit::cuda::kernel_program> &program,
                  tunekit::tuner_options o) {
    o.preparer = tunekit::cuda::preparer(program);
    return tunekit::autotune(name, m_space, example::xgemm_key, example::xgemm_prune,
                             example::make_xgemm(program), std::move(o))
        .with_check([this](const float *a, const float *b, float *out, int m, int n, int k,
                           cudaStream_t s, const tunekit::config &) {
          if (m_ref_shape != std::tuple(m, n, k)) { // one reference per shape
            example::xgemm_reference(m_cublas, a, b, m_data.ref.get(), m, n, k);
            m_ref_shape = {m, n, k};
          }
          const auto len = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
          const bool ok = tunekit::cuda::compare(out, m_data.ref.get(), len, s).within(1e-4);
          tunekit::cuda::poison(out, len * sizeof(float), s);
          return ok;
        });
  }

  void start() {
    m_comm.barrier();
    m_comm.reset();
    m_t0 = clock_type::now();
  }

  void stop(section &out, const tunekit::cuda::kernel_program &program) {
    out.wall_s = bench::seconds_since(m_t0);
    out.collectives_s = m_comm.seconds();
    const auto sum = program.summary();
    out.wait_for_compile_s = sum.wait_ms / 1e3;
    out.compiled = sum.compiled;
    out.compile_cpu_s = sum.compile_ms / 1e3;
  }

public:
  section split_search() {
    section out;
    auto program = make_program("split");
    auto o = options(*program, "split");
    o.use_disk_cache = false;
    o.parallel_split = true;
    o.search.budget.max_evaluations = m_s.budget;
    auto tuned = make_tuned("bench.scaling.split", program, o);
    const int n = m_s.size;
    start();
    tuned(m_data.a.get(), m_data.b.get(), m_data.c.get(), n, n, n, m_stream);
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    stop(out, *program);
    out.searched = 1;
    out.winners = tuned.tuner().find(tunekit::key{n, n, n})->to_string();
    return out;
  }

  section campaign() {
    section out;
    auto program = make_program("campaign");
    auto o = options(*program, "campaign");
    o.search.budget.max_evaluations = m_s.campaign_budget;
    auto tuned = make_tuned("bench.scaling.campaign", program, o);
    std::vector<std::tuple<const float *, const float *, float *, int, int, int, cudaStream_t>>
        calls;
    for (const int m : {1024, 2048, 3072, 4096}) {
      for (const int k : {1024, 2048, 3072, 4096}) {
        if (m <= m_s.size && k <= m_s.size) {
          calls.emplace_back(m_data.a.get(), m_data.b.get(), m_data.c.get(), m, m_s.size / 2, k,
                             m_stream);
        }
      }
    }
    start();
    const auto result = tunekit::campaign(tuned, calls, {.comm = &m_comm});
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    stop(out, *program);
    out.searched = result.tuned();
    // Every rank now serves every shape from the winner cache.
    for (const auto &call : calls) {
      const auto k = std::apply(example::xgemm_key, call);
      std::apply(tuned, call);
      out.winners += tuned.tuner().find(k)->to_string() + "\n";
    }
    return out;
  }

private:
  const settings &m_s;
  timed_communicator &m_comm;
  cudaStream_t m_stream;
  gemm_data m_data;
  example::cublas_handle m_cublas;
  unsigned m_threads;
  tunekit::cuda::kernel_definition m_def;
  tunekit::config_space m_space;
  clock_type::time_point m_t0{};
  std::tuple<int, int, int> m_ref_shape{0, 0, 0};
};

} // namespace

int main(int argc, char **argv) {
  ::setenv("CUDA_CACHE_DISABLE", "1", 1); // cold compiles: no driver compute cache
  ncclUniqueId id{};
  bench::job jb;
  int rc = 0;
  try {
    jb = bench::bootstrap(argc, argv, id);
    const settings s = parse(argc, argv);
    const int devices = tunekit::cuda::device_count();
    if (devices < 1) {
      throw tunekit::error("no CUDA device visible");
    }
    if (s.nccl && jb.local_size > devices) {
      throw tunekit::error(std::to_string(jb.local_size) + " ranks on this host and " +
                           std::to_string(devices) +
                           " GPUs: NCCL needs a GPU per rank (--comm mpi shares them)");
    }
    TUNEKIT_CUDA_CHECK(cudaSetDevice(jb.local_rank % devices));
    if (jb.rank == 0) {
      std::filesystem::remove_all(s.cache_dir); // every run tunes and compiles from scratch
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const example::stream owned_stream;
    cudaStream_t stream = owned_stream.get();
    ncclComm_t nc = nullptr;
    std::unique_ptr<tunekit::communicator> inner;
    if (s.nccl) {
      tunekit::nccl::check(ncclCommInitRank(&nc, jb.size, id, jb.rank), "ncclCommInitRank");
      inner = std::make_unique<tunekit::nccl::communicator>(
          nc, stream,
          tunekit::nccl::communicator_options{.timeout = std::chrono::seconds(300),
                                              .local_rank = jb.local_rank,
                                              .launcher = jb.launcher});
    } else {
      inner = std::make_unique<tunekit::mpi::communicator>(
          MPI_COMM_WORLD, tunekit::mpi::communicator_options{.timeout = std::chrono::seconds(300)});
    }
    {
      timed_communicator comm(*inner);
      bench_run run(s, jb, comm, stream);
      const section search = run.split_search();
      const section camp = run.campaign();
      json out = {{"ranks", comm.size()},
                  {"communicator", s.nccl ? "nccl" : "mpi"},
                  {"gpus_visible", devices},
                  {"hardware", tunekit::cuda::device_hardware().to_string()},
                  {"nvrtc", tunekit::cuda::nvrtc_version()},
                  {"size", s.size},
                  {"space", s.space == example::xgemm_space_kind::clblast ? "clblast" : "extended"},
                  {"budget", s.budget},
                  {"batch", s.batch},
                  {"lookahead", s.lookahead},
                  {"campaign_budget", s.campaign_budget},
                  {"compile_threads_per_rank", run.threads()},
                  {"split_search", report(comm, search)},
                  {"campaign", report(comm, camp)}};
      out["split_search"]["winner"] = search.winners;
      out["campaign"]["shapes"] = std::count(camp.winners.begin(), camp.winners.end(), '\n');
      if (comm.rank() == 0) {
        std::ofstream(s.out) << out.dump(2) << "\n";
        std::printf("%s\n", out.dump().c_str());
      }
      if (!out["split_search"]["same_winners"].get<bool>() ||
          !out["campaign"]["same_winners"].get<bool>()) {
        std::fprintf(stderr, "tunekit_nccl_scaling_bench: the ranks hold different winners\n");
        rc = 1;
      }
    }
    inner.reset();
    if (nc != nullptr) {
      tunekit::nccl::check(ncclCommDestroy(nc), "ncclCommDestroy");
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tunekit_nccl_scaling_bench rank %d: %s\n", jb.rank, e.what());
    rc = 1;
  }
  if (rc != 0) {
    MPI_Abort(MPI_COMM_WORLD, rc);
  }
  MPI_Finalize();
  return rc;
}
