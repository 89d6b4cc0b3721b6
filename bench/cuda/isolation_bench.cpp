// Isolated measurement on a GPU: a runtime-compiled saxpy over BLOCK x VEC, plus one candidate that
// writes to an illegal address and one that spins forever. Tuned in a worker process
// (tunekit-cuda-worker), both bad candidates must score +inf with their reasons while the rest is
// tuned; tuned in process (without the bad ones, which would stop or hang it) the winner must be
// the same. Prints per-candidate times both ways and the overhead per candidate of isolation.
// Usage: tunekit_cuda_bench_isolation [path of tunekit-cuda-worker] [deadline ms]

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/isolation.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

const char *const source = R"(
__global__ void saxpy(float *y, const float *x, int n, float a) {
#if MODE == 1
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *(volatile float *)(y - (1ll << 36)) = 1.0f; // far outside any allocation: illegal address
  }
#elif MODE == 2
  // Never finishes: clock64() is an intrinsic with side effects, so the loop cannot be removed
  // (a loop on a local volatile was), and the counter does not wrap for centuries.
  const long long start = clock64();
  while (clock64() >= start) {
  }
#endif
  const long i = ((long)blockIdx.x * BLOCK + threadIdx.x) * VEC;
#pragma unroll
  for (int v = 0; v < VEC; ++v) {
    if (i + v < n) {
      y[i + v] = a * x[i + v] + y[i + v];
    }
  }
}
)";

constexpr int n = 1 << 25; // 128 MiB per vector

unsigned blocks(const tunekit::config &c) {
  const long per_block = c.get_int("BLOCK") * c.get_int("VEC");
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

std::vector<tunekit::config> good_configs() {
  std::vector<tunekit::config> out;
  for (long block : {32, 64, 128, 256, 512, 1024}) {
    for (long vec : {1, 2, 4}) {
      out.push_back({{"BLOCK", block}, {"VEC", vec}, {"MODE", 0}});
    }
  }
  return out;
}

const tunekit::config faulting{{"BLOCK", 256}, {"VEC", 1}, {"MODE", 1}};
const tunekit::config spinning{{"BLOCK", 256}, {"VEC", 2}, {"MODE", 2}};

struct outcome {
  tunekit::cache_entry entry;
  double seconds = 0;
};

template <class Launcher>
outcome tune(const std::string &name, std::vector<tunekit::config> configs, Launcher kernel,
             tunekit::tuner_options options, float *y, const float *x, cudaStream_t stream) {
  options.use_disk_cache = false;
  options.process = tunekit::process_context{};
  auto tuned = tunekit::autotune(
      name, tunekit::config_space(std::move(configs)),
      [](float *, const float *, int len, float, cudaStream_t) { return tunekit::key{len}; },
      tunekit::keep_all{}, kernel, options);
  const auto t0 = std::chrono::steady_clock::now();
  tuned(y, x, n, 2.0F, stream);
  tunekit::cuda::check(cudaStreamSynchronize(stream), "after tuning");
  const auto t1 = std::chrono::steady_clock::now();
  return {*tuned.tuner().last_search(), std::chrono::duration<double>(t1 - t0).count()};
}

} // namespace

int main(int argc, char **argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device visible");
    return 0;
  }
  const std::string worker = argc > 1 ? argv[1] : TUNEKIT_CUDA_WORKER;
  const long deadline_ms = argc > 2 ? std::atol(argv[2]) : 5000;
  try {
    cudaStream_t stream = nullptr;
    tunekit::cuda::check(cudaStreamCreate(&stream), "stream");
    void *xv = nullptr;
    void *yv = nullptr;
    tunekit::cuda::check(cudaMalloc(&xv, sizeof(float) * n), "x");
    tunekit::cuda::check(cudaMalloc(&yv, sizeof(float) * n), "y");
    const auto *x = static_cast<const float *>(xv);
    auto *y = static_cast<float *>(yv);
    tunekit::cuda::check(cudaMemset(xv, 0, sizeof(float) * n), "x");
    tunekit::cuda::check(cudaMemset(yv, 0, sizeof(float) * n), "y");

    auto program = std::make_shared<tunekit::cuda::kernel_program>(
        tunekit::cuda::kernel_definition{.source = {"saxpy.cu", source}, .entry = "saxpy"});
    auto kernel =
        tunekit::cuda::make_runtime_kernel<float *, const float *, int, float, cudaStream_t>(
            program, [](const tunekit::config &c) { return c; },
            [](const tunekit::config &c, float *, const float *, int, float, cudaStream_t) {
              return tunekit::cuda::launch_dims{
                  .grid = dim3(blocks(c)),
                  .block = dim3(static_cast<unsigned>(c.get_int("BLOCK")))};
            });
    auto in_process_options = [&] {
      auto o = tunekit::cuda::make_tuner_options({.stream = stream});
      o.version = program->digest();
      o.preparer = tunekit::cuda::preparer(program);
      return o;
    };
    auto isolated_options = [&](std::shared_ptr<tunekit::isolated_measurer> m) {
      auto o = tunekit::cuda::make_tuner_options({.stream = stream});
      o.version = program->digest();
      o.measurer = std::move(m);
      return o;
    };
    auto make_isolated = [&] {
      tunekit::isolated_options o;
      o.command = {worker};
      o.deadline = std::chrono::milliseconds(deadline_ms);
      o.request = [](const tunekit::candidate_info &info) {
        const auto bytes = static_cast<std::uint64_t>(n) * sizeof(float);
        return nlohmann::json{
            {"program", {{"source", source}, {"name", "saxpy.cu"}, {"entry", "saxpy"}}},
            {"grid", {blocks(info.config)}},
            {"block", {info.config.get_int("BLOCK")}},
            {"args",
             {{{"buffer", bytes}, {"fill", 0}},
              {{"buffer", bytes}, {"fill", 0}},
              {{"i32", n}},
              {{"f32", 2.0}}}}}
            .dump();
      };
      return std::make_shared<tunekit::isolated_measurer>(o);
    };

    // In process (the first run fills the compile cache, the second is timed warm), then isolated
    // over the same candidates (warm cache: the worker reads the binaries the first run wrote),
    // then isolated with the two bad candidates in the middle of the space.
    const auto good = good_configs();
    static_cast<void>(
        tune("bench.isolation.warmup", good, kernel, in_process_options(), y, x, stream));
    const outcome in_process =
        tune("bench.isolation.in_process", good, kernel, in_process_options(), y, x, stream);
    auto iso_good = make_isolated();
    const outcome isolated_good =
        tune("bench.isolation.isolated", good, kernel, isolated_options(iso_good), y, x, stream);
    auto with_bad = good;
    with_bad.insert(with_bad.begin() + 4, faulting);
    with_bad.insert(with_bad.begin() + 9, spinning);
    auto iso_bad = make_isolated();
    const outcome isolated_bad = tune("bench.isolation.isolated_bad", with_bad, kernel,
                                      isolated_options(iso_bad), y, x, stream);

    std::map<std::string, double> in_ms;
    for (const auto &r : in_process.entry.candidates) {
      in_ms[r.config.to_string()] = r.time_ms;
    }
    std::printf("%-28s %12s %12s %8s  %s\n", "config", "in-process", "isolated", "ratio",
                "status (space with the bad candidates)");
    bool bad_ok = true;
    for (const auto &r : isolated_bad.entry.candidates) {
      const std::string c = r.config.to_string();
      const double in = in_ms.count(c) != 0 ? in_ms[c] : NAN;
      std::printf("%-28s %12.4f %12.4f %8.3f  %s%s%s\n", c.c_str(), in, r.time_ms, r.time_ms / in,
                  std::string(tunekit::to_string(r.status)).c_str(), r.reason.empty() ? "" : ": ",
                  r.reason.c_str());
      if (r.config == faulting) {
        bad_ok = bad_ok && std::isinf(r.time_ms) && r.reason.find("illegal") != std::string::npos;
      } else if (r.config == spinning) {
        bad_ok = bad_ok && std::isinf(r.time_ms) && r.reason.find("deadline") != std::string::npos;
      } else {
        bad_ok = bad_ok && r.status == tunekit::candidate_status::ok;
      }
    }
    const auto &w_in = in_process.entry.winner;
    const auto &w_iso = isolated_bad.entry.winner;
    const bool same = w_in == w_iso && isolated_good.entry.winner == w_in;
    std::printf("\nwinner in process:                %s (%.4f ms)\n", w_in.to_string().c_str(),
                in_ms[w_in.to_string()]);
    std::printf("winner isolated, good space:      %s\n",
                isolated_good.entry.winner.to_string().c_str());
    std::printf("winner isolated, with bad ones:   %s (in-process time %.4f ms, %.3fx the best)\n",
                w_iso.to_string().c_str(), in_ms[w_iso.to_string()],
                in_ms[w_iso.to_string()] / in_ms[w_in.to_string()]);
    const double per_in = in_process.seconds / static_cast<double>(good.size()) * 1e3;
    const double per_iso = isolated_good.seconds / static_cast<double>(good.size()) * 1e3;
    std::printf("tuning time per candidate:        in process %.2f ms, isolated %.2f ms "
                "(overhead %.2f ms per candidate, worker start included once)\n",
                per_in, per_iso, per_iso - per_in);
    std::printf("with the bad candidates:          %.2f s for %zu candidates, %zu worker starts "
                "(deadline %ld ms)\n",
                isolated_bad.seconds, with_bad.size(), iso_bad->worker_starts(), deadline_ms);
    // Configs within noise of each other may swap places between two tunings; the isolated
    // winner's in-process time says whether a different winner is such a tie.
    const double gap = in_ms[w_iso.to_string()] / in_ms[w_in.to_string()] - 1;
    std::printf("\nbad candidates inf with reasons, the rest ok: %s\nsame winner: %s\n",
                bad_ok ? "yes" : "NO",
                same         ? "yes"
                : gap < 0.01 ? "no, a tie within 1% by the in-process times"
                             : "NO");
    return bad_ok ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "isolation bench: %s\n", e.what());
    return 1;
  }
}
