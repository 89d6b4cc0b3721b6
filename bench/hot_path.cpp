// Hot path: the cost tunekit adds to a call whose key is already resolved, against a direct call
// of the same function with the same config. The key has three fields (like M, N, K of a GEMM).
//
//   ./tunekit_bench_hot_path            (added ns per call = tuned - direct)

#include <tunekit/tunekit.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

namespace {

// A function with a realistic signature whose body costs almost nothing, so the difference is
// tunekit's own work: key_fn, hashing, the lookup and the forwarding.
[[gnu::noinline]] std::int64_t launch(const float *x, std::int64_t m, std::int64_t n,
                                      std::int64_t k, const tunekit::config &cfg) {
  benchmark::DoNotOptimize(x);
  return m + n + k + cfg.fields().front().value.as_int();
}

tunekit::config_space space() {
  return tunekit::config_space::product(
      {{"BLOCK_M", {64, 128}}, {"BLOCK_N", {64, 128}}, {"num_warps", {4, 8}}});
}

auto make_tuned() {
  tunekit::environment env;
  env.cache_dir = "";
  return tunekit::autotune(
      "bench.hot_path", space(),
      [](const float *, std::int64_t m, std::int64_t n, std::int64_t k) {
        return tunekit::key{m, n, k};
      },
      tunekit::keep_all{}, launch,
      tunekit::tuner_options{.measurer = std::make_shared<tunekit::simulated_measurer>(
                                 [](const tunekit::config &c, const tunekit::key &) {
                                   return 1.0 + static_cast<double>(c.get_int("BLOCK_M") % 7);
                                 }),
                             .policy = {.warmup = 0, .runs = 1},
                             .use_disk_cache = false,
                             .process = tunekit::process_context{.env = env}});
}

void direct(benchmark::State &state) {
  const tunekit::config cfg = space()[0];
  float x = 1;
  std::int64_t m = 4096;
  for (auto _ : state) {
    benchmark::DoNotOptimize(m);
    benchmark::DoNotOptimize(launch(&x, m, 4096, 4096, cfg));
  }
}
BENCHMARK(direct);

void tuned_resolved_key(benchmark::State &state) {
  auto tuned = make_tuned();
  float x = 1;
  std::int64_t m = 4096;
  benchmark::DoNotOptimize(tuned(&x, m, 4096, 4096)); // resolves the key once
  for (auto _ : state) {
    benchmark::DoNotOptimize(m);
    benchmark::DoNotOptimize(tuned(&x, m, 4096, 4096));
  }
}
BENCHMARK(tuned_resolved_key);

// Several resolved keys in rotation: the lookup is a hash map, not a one-entry memo.
void tuned_resolved_key_rotating(benchmark::State &state) {
  auto tuned = make_tuned();
  float x = 1;
  const std::int64_t sizes[8] = {512, 1024, 2048, 4096, 8192, 16384, 3072, 6144};
  for (auto s : sizes) {
    benchmark::DoNotOptimize(tuned(&x, s, s, s));
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const std::int64_t s = sizes[i++ & 7];
    benchmark::DoNotOptimize(tuned(&x, s, s, s));
  }
}
BENCHMARK(tuned_resolved_key_rotating);

void direct_rotating(benchmark::State &state) {
  const tunekit::config cfg = space()[0];
  float x = 1;
  const std::int64_t sizes[8] = {512, 1024, 2048, 4096, 8192, 16384, 3072, 6144};
  std::size_t i = 0;
  for (auto _ : state) {
    const std::int64_t s = sizes[i++ & 7];
    benchmark::DoNotOptimize(launch(&x, s, s, s, cfg));
  }
}
BENCHMARK(direct_rotating);

} // namespace

BENCHMARK_MAIN();
