// The seed's `scale` example as a host function: y = alpha * x, processed in blocks of BLOCK
// elements by `threads` worker threads. tunekit measures every config the prune function keeps,
// picks the fastest, remembers it on disk, and serves it from the cache on the next run.
//
//   ./scale            first run: tunes, prints the winner, source "search"
//   ./scale            second run: source "cache", nothing measured
//   ./scale --verbose  every candidate's time as it is measured

#include <tunekit/tunekit.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

namespace {

// The function being tuned: its config arrives as the last argument.
void scale(const float *x, float *y, float alpha, std::int64_t n, const tunekit::config &cfg) {
  const std::int64_t block = cfg.get_int("BLOCK");
  const auto threads = cfg.get_int("threads");
  auto work = [&](std::int64_t first_block, std::int64_t stride) {
    for (std::int64_t start = first_block * block; start < n; start += stride * block) {
      const std::int64_t end = std::min(start + block, n);
      for (std::int64_t i = start; i < end; ++i) {
        y[i] = alpha * x[i];
      }
    }
  };
  std::vector<std::jthread> pool;
  for (std::int64_t t = 1; t < threads; ++t) {
    pool.emplace_back(work, t, threads);
  }
  work(0, threads);
}

} // namespace

int main(int argc, char **argv) {
  const bool verbose = argc > 1 && std::strcmp(argv[1], "--verbose") == 0;

  const std::int64_t n = std::int64_t{1} << 24;
  std::vector<float> x(static_cast<std::size_t>(n));
  std::vector<float> y(static_cast<std::size_t>(n));
  std::iota(x.begin(), x.end(), 0.0f);

  // The first config is the stable default (used by `autotune = false`).
  const auto space = tunekit::config_space::product(
      {{"BLOCK", {4096, 1024, 16384, 65536}}, {"threads", {1, 2, 4}}},
      {[](const tunekit::config &c) {
        return c.get_int("threads") <= std::max(1u, std::thread::hardware_concurrency());
      }});

  auto tuned = tunekit::autotune(
      "example.scale", space,
      // The key: everything that can change the winner (here the length).
      [](const float *, float *, float, std::int64_t len) { return tunekit::key{len}; },
      // Prune: a block larger than the input makes no sense.
      [](const tunekit::config &c, const float *, float *, float, std::int64_t len) {
        return c.get_int("BLOCK") <= len;
      },
      scale, tunekit::tuner_options{.version = SCALE_SOURCE_HASH});

  tuned.with({.verbose = verbose})(x.data(), y.data(), 2.5f, n);

  const auto &t = tuned.tuner();
  const tunekit::key k{n};
  const tunekit::config *winner = t.find(k);
  std::printf("scale: n=%lld, winner [%s], source: %s\n", static_cast<long long>(n),
              winner != nullptr ? winner->to_string().c_str() : "?",
              std::string(tunekit::to_string(t.last_source())).c_str());
  if (auto e = t.last_search()) {
    std::printf("  measured %zu candidates; winner took %.3f ms\n", e->candidates.size(),
                e->candidates[e->winner_index].time_ms);
  } else {
    std::printf("  nothing measured: the winner came from %s\n",
                tunekit::winner_cache(t.env().cache_dir)
                    .entry_path(t.identity(), tunekit::host_hardware(), k)
                    .c_str());
  }
  std::printf("  y[12345] = %g (expected %g)\n", static_cast<double>(y[12345]), 2.5 * 12345);
  return y[12345] == 2.5f * 12345.0f ? 0 : 1;
}
