// tunekit::nccl on two GPUs, one process per GPU: the example scale kernel (2^26 elements) and the
// tiled GEMM (4096^3) tuned over an NCCL communicator. Records every rank's winners (they must be
// identical), the tuning wall time with tuner_options::parallel_split off and on, the time a cache
// hit takes to agree (the agreement collectives on the proposal path) and the latency of each
// collective.
//
//   mpirun -np 2 ./tunekit_nccl_bench --out nccl.json --cache-dir DIR
//
// Without MPI (built without it): start one process per GPU with RANK, LOCAL_RANK and WORLD_SIZE
// set and TUNEKIT_NCCL_ID_FILE naming a file the ranks share for the ncclUniqueId.

#include "bootstrap.hpp"
#include "device_array.hpp"
#include "gemm_space.hpp"
#include "scale_space.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/nccl/communicator.hpp>
#include <tunekit/nccl/error.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#if defined(TUNEKIT_BENCH_WITH_MPI)
#include <mpi.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using json = nlohmann::json;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

json stats_us(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  const auto at = [&](double q) {
    return us[std::min(us.size() - 1,
                       static_cast<std::size_t>(q * static_cast<double>(us.size())))];
  };
  return {{"median_us", at(0.5)},
          {"p10_us", at(0.1)},
          {"p90_us", at(0.9)},
          {"min_us", us.front()},
          {"samples", us.size()}};
}

template <class F> json time_us(int warmup, int iters, F &&f) {
  for (int i = 0; i < warmup; ++i) {
    f();
  }
  std::vector<double> us;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = clock_type::now();
    f();
    us.push_back(ms_since(t0) * 1e3);
  }
  return stats_us(std::move(us));
}

// Rank `root`'s string on every rank, over the NCCL communicator.
std::string share(tunekit::communicator &c, const std::string &mine, int root) {
  double len[1] = {c.rank() == root ? static_cast<double>(mine.size()) : 0.0};
  c.all_reduce_max(len);
  std::vector<std::byte> bytes(static_cast<std::size_t>(len[0]));
  if (c.rank() == root) {
    std::memcpy(bytes.data(), mine.data(), mine.size());
  }
  c.broadcast(bytes, root);
  return {reinterpret_cast<const char *>(bytes.data()), bytes.size()};
}

struct outcome {
  std::string winner;
  std::string source;
  std::size_t measured = 0; // candidates this rank timed
};

// One kernel: tunes it in a new tuner with `options`, returns what this rank chose.
using tune_fn = std::function<outcome(tunekit::tuner_options)>;

outcome outcome_of(const tunekit::tuner &t, const tunekit::config &chosen) {
  outcome o;
  o.winner = chosen.to_string();
  o.source = std::string(tunekit::to_string(t.last_source()));
  if (const auto e = t.last_search()) {
    for (std::size_t i = 0; i < e->candidates.size(); ++i) {
      const auto &c = e->candidates[i];
      o.measured += c.status != tunekit::candidate_status::pruned &&
                            c.reason.rfind("measured on rank", 0) != 0 &&
                            c.reason.rfind("failed on rank", 0) != 0
                        ? 1
                        : 0;
    }
  }
  return o;
}

// Searches with the split off and on, `repeats` times each (interleaved), then the cache-hit
// agreement; every rank's winners are gathered.
json bench_kernel(const char *name, tunekit::nccl::communicator &comm, cudaStream_t stream,
                  const tunekit::tuner_options &base, const tune_fn &tune, int repeats,
                  int hit_iters, const std::filesystem::path &cache_dir) {
  json j;
  json runs = json::array();
  bool identical = true;
  std::vector<double> wall_off;
  std::vector<double> wall_on;
  for (int rep = 0; rep < repeats; ++rep) {
    for (const bool split : {false, true}) {
      auto o = base;
      o.use_disk_cache = false;
      o.parallel_split = split;
      comm.barrier();
      const auto t0 = clock_type::now();
      const outcome got = tune(o);
      TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
      double wall[1] = {ms_since(t0)};
      const double mine = wall[0];
      comm.all_reduce_max(wall); // the slowest rank's time is the job's
      json by_rank = json::array();
      for (int r = 0; r < comm.size(); ++r) {
        const std::string w = share(comm, got.winner, r);
        by_rank.push_back(w);
        identical = identical && w == got.winner;
      }
      double measured[1] = {static_cast<double>(got.measured)};
      comm.all_reduce_max(measured);
      runs.push_back({{"parallel_split", split},
                      {"wall_ms_max_over_ranks", wall[0]},
                      {"wall_ms_this_rank", mine},
                      {"winner_by_rank", by_rank},
                      {"source", got.source},
                      {"max_candidates_measured_by_one_rank", measured[0]}});
      (split ? wall_on : wall_off).push_back(wall[0]);
    }
  }
  // Every rank must have seen every rank's winners equal to its own.
  double same[1] = {identical ? 1.0 : 0.0};
  comm.all_reduce_min(same);
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  j["searches"] = runs;
  j["identical_winners_on_all_ranks"] = same[0] == 1.0;
  j["tuning_wall_ms_split_off_median"] = median(wall_off);
  j["tuning_wall_ms_split_on_median"] = median(wall_on);
  j["split_speedup"] = median(wall_off) / median(wall_on);

  // Cache hits: local rank 0 writes the winner, then new tuners find it on every rank and agree
  // on the proposal (one MIN and one MAX all-reduce), against the same hit with no agreement.
  const auto dir = cache_dir / name;
  if (comm.rank() == 0) {
    std::filesystem::remove_all(dir);
  }
  comm.barrier();
  auto o = base;
  o.use_disk_cache = true;
  o.process->env.cache_dir = dir;
  o.parallel_split = true;
  const outcome written = tune(o);
  comm.barrier();
  tunekit::single_process_communicator alone;
  json hit;
  for (const bool agree : {true, false}) {
    auto h = o;
    h.comm = agree ? static_cast<tunekit::communicator *>(&comm) : &alone;
    std::vector<double> us;
    std::string sources;
    bool all_cache = true;
    for (int i = 0; i < hit_iters; ++i) {
      comm.barrier();
      const auto t0 = clock_type::now();
      const outcome got = tune(h);
      TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
      us.push_back(ms_since(t0) * 1e3);
      all_cache = all_cache && got.source == "cache" && got.winner == written.winner;
    }
    hit[agree ? "with_agreement" : "without_agreement"] = stats_us(us);
    hit[agree ? "with_agreement" : "without_agreement"]["all_cache_hits_on_winner"] = all_cache;
  }
  hit["agreement_cost_us"] = hit["with_agreement"]["median_us"].get<double>() -
                             hit["without_agreement"]["median_us"].get<double>();
  j["cache_hit"] = hit;
  j["cached_winner"] = written.winner;
  return j;
}

} // namespace

int main(int argc, char **argv) {
  std::string out_path;
  std::filesystem::path cache_dir = std::filesystem::temp_directory_path() / "tunekit-nccl-bench";
  std::int64_t n = std::int64_t{1} << 26;
  int gemm_n = 4096;
  int repeats = 3;
  int hit_iters = 30;
  for (int i = 1; i < argc; ++i) {
    const auto arg = [&](const char *flag) {
      return std::strcmp(argv[i], flag) == 0 && i + 1 < argc;
    };
    if (arg("--out")) {
      out_path = argv[++i];
    } else if (arg("--cache-dir")) {
      cache_dir = argv[++i];
    } else if (arg("--n")) {
      n = std::atoll(argv[++i]);
    } else if (arg("--gemm")) {
      gemm_n = std::atoi(argv[++i]);
    } else if (arg("--repeats")) {
      repeats = std::atoi(argv[++i]);
    }
  }
  ncclUniqueId id{};
  bench::job jb;
  int rc = 0;
  try {
    jb = bench::bootstrap(argc, argv, id);
    const int devices = tunekit::cuda::device_count();
    if (devices < 1) {
      throw tunekit::error("no CUDA device visible");
    }
    TUNEKIT_CUDA_CHECK(cudaSetDevice(jb.local_rank % devices));
    const example::stream owned_stream;
    cudaStream_t stream = owned_stream.get();
    ncclComm_t nc = nullptr;
    const auto t_init = clock_type::now();
    tunekit::nccl::check(ncclCommInitRank(&nc, jb.size, id, jb.rank), "ncclCommInitRank");
    const double init_ms = ms_since(t_init);
    json mine;
    {
      tunekit::nccl::communicator comm(nc, stream,
                                       {.timeout = std::chrono::seconds(120),
                                        .local_rank = jb.local_rank,
                                        .launcher = jb.launcher});
      mine["rank"] = comm.rank();
      mine["local_rank"] = comm.local_rank();
      mine["device"] = comm.device();
      mine["hardware"] = tunekit::cuda::device_hardware().to_string();
      mine["nccl_comm_init_ms"] = init_ms;

      // Latency of each collective (host wall time of the call, which waits for completion).
      json lat;
      std::vector<double> three{1.0, 2.0, 3.0};
      lat["all_reduce_max_3_doubles"] = time_us(20, 300, [&] { comm.all_reduce_max(three); });
      lat["agreement_min_and_max_3_doubles"] = time_us(20, 300, [&] {
        comm.all_reduce_min(three);
        comm.all_reduce_max(three);
      });
      std::vector<double> timings(64, 1.0);
      lat["all_reduce_max_64_doubles"] = time_us(20, 300, [&] { comm.all_reduce_max(timings); });
      std::vector<std::byte> bytes(64);
      lat["broadcast_64_bytes"] = time_us(20, 300, [&] { comm.broadcast(bytes, 0); });
      lat["barrier"] = time_us(20, 300, [&] { comm.barrier(); });
#if defined(TUNEKIT_BENCH_WITH_MPI)
      lat["mpi_allreduce_max_3_doubles_reference"] = time_us(20, 300, [&] {
        MPI_Allreduce(MPI_IN_PLACE, three.data(), 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      });
#endif
      mine["collective_latency"] = lat;

      auto base = tunekit::cuda::make_tuner_options({.stream = stream});
      base.process = tunekit::process_context{}; // a single process: no per-rank log files
      base.comm = &comm;

      // The scale kernel at n elements, checked against the default config's output.
      {
        const auto count = static_cast<std::size_t>(n);
        const example::device_array<float> x(count);
        const example::device_array<float> y(count);
        const example::device_array<float> ref(count);
        TUNEKIT_CUDA_CHECK(example::fill_uniform(x.get(), n, 7, stream));
        example::scale(x.get(), ref.get(), 2.5f, n, stream, example::scale_space()[0]);
        TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
        const tune_fn tune = [&](tunekit::tuner_options o) {
          o.version = "nccl-bench";
          auto f =
              tunekit::autotune("bench.nccl_scale", example::scale_space(), example::scale_key,
                                example::scale_prune, example::scale, o)
                  .with_check([&](const float *, float *out, float, std::int64_t len,
                                  cudaStream_t s, const tunekit::config &) {
                    const bool ok =
                        tunekit::cuda::compare(out, ref.get(), static_cast<std::size_t>(len), s)
                            .within(0.0);
                    tunekit::cuda::poison(out, static_cast<std::size_t>(len) * sizeof(float), s);
                    return ok;
                  });
          f(x.get(), y.get(), 2.5f, n, stream);
          const auto k = tunekit::key{n};
          return outcome_of(f.tuner(), *f.tuner().find(k));
        };
        mine["scale"] = bench_kernel("scale", comm, stream, base, tune, std::max(repeats, 5),
                                     hit_iters, cache_dir);
        mine["scale"]["n"] = n;
      }
      // The tiled GEMM at gemm_n^3, checked against the default instantiation.
      {
        const int m = gemm_n;
        const auto count = static_cast<std::size_t>(m) * static_cast<std::size_t>(m);
        const example::device_array<float> a(count);
        const example::device_array<float> b(count);
        const example::device_array<float> c(count);
        const example::device_array<float> ref(count);
        TUNEKIT_CUDA_CHECK(
            example::fill_uniform(a.get(), static_cast<std::int64_t>(count), 1, stream));
        TUNEKIT_CUDA_CHECK(
            example::fill_uniform(b.get(), static_cast<std::int64_t>(count), 2, stream));
        example::gemm(a.get(), b.get(), ref.get(), m, m, m, stream, example::gemm_space()[0]);
        TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
        const tune_fn tune = [&](tunekit::tuner_options o) {
          o.version = "nccl-bench";
          o.policy.warmup = 2;
          o.policy.runs = 5;
          auto f =
              tunekit::autotune("bench.nccl_gemm", example::gemm_space(), example::gemm_key,
                                example::gemm_prune, example::gemm, o)
                  .with_check([&](const float *, const float *, float *out, int mm, int nn, int,
                                  cudaStream_t s, const tunekit::config &) {
                    const auto len = static_cast<std::size_t>(mm) * static_cast<std::size_t>(nn);
                    const bool ok = tunekit::cuda::compare(out, ref.get(), len, s).within(1e-4);
                    tunekit::cuda::poison(out, len * sizeof(float), s);
                    return ok;
                  });
          f(a.get(), b.get(), c.get(), m, m, m, stream);
          return outcome_of(f.tuner(), *f.tuner().find(tunekit::key{m, m, m}));
        };
        mine["gemm"] =
            bench_kernel("gemm", comm, stream, base, tune, repeats, hit_iters / 3, cache_dir);
        mine["gemm"]["m_n_k"] = gemm_n;
      }

      // Every rank's record on rank 0.
      json all;
      all["nccl_version"] = tunekit::nccl::version();
      all["dependencies"] = tunekit::cuda::dependencies();
      all["ranks"] = json::array();
      for (int r = 0; r < comm.size(); ++r) {
        all["ranks"].push_back(json::parse(share(comm, mine.dump(), r)));
      }
      if (comm.rank() == 0) {
        std::printf("%s\n", all.dump(2).c_str());
        if (!out_path.empty()) {
          std::ofstream(out_path) << all.dump(2) << "\n";
        }
      }
      const bool ok = mine["scale"]["identical_winners_on_all_ranks"].get<bool>() &&
                      mine["gemm"]["identical_winners_on_all_ranks"].get<bool>();
      rc = ok ? 0 : 1;
    }
    tunekit::nccl::check(ncclCommDestroy(nc), "ncclCommDestroy");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tunekit_nccl_bench rank %d: %s\n", jb.rank, e.what());
    rc = 1;
  }
#if defined(TUNEKIT_BENCH_WITH_MPI)
  if (rc != 0) {
    MPI_Abort(MPI_COMM_WORLD, rc);
  }
  MPI_Finalize();
#endif
  return rc;
}
