// The scale kernel at 2^26 elements on the GPU: tuning cost per candidate, the tuned kernel's
// bandwidth against a device-to-device copy, its speedup over the space's default config, and a
// reference time for every config (many more runs than tuning uses) to judge the winner by.
//
//   ./tunekit_cuda_bench_scale [--n N] [--out scale.json]   everything above
//   ./tunekit_cuda_bench_scale --tune-only [--out run.json]  one search, for stability runs
//   --no-rerank                                               without the re-rank of the leaders

#include "device_array.hpp"
#include "scale_space.hpp"
#include "time_runs.hpp"

#include <tunekit/cuda/cuda.hpp>
#include <tunekit/tunekit.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct search_result {
  double wall_ms = 0;
  std::size_t measured = 0;
  tunekit::cache_entry entry;
};

// One search in a new tuner (nothing remembered), timed on the host clock from the call to the
// end of the winner's run.
search_result tune_once(const float *x, float *y, std::int64_t n, cudaStream_t stream,
                        bool flush_l2, bool rerank) {
  auto options = tunekit::cuda::make_tuner_options({.stream = stream, .flush_l2 = flush_l2});
  if (!rerank) {
    options.search.rerank.band = 0;
  }
  options.use_disk_cache = false;
  options.process = tunekit::process_context{};
  auto tuned = tunekit::autotune("bench.cuda_scale", example::scale_space(), example::scale_key,
                                 example::scale_prune, example::scale, options);
  const auto t0 = std::chrono::steady_clock::now();
  tuned(x, y, 2.5f, n, stream);
  TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto t1 = std::chrono::steady_clock::now();
  search_result r;
  r.wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  r.entry = *tuned.tuner().last_search();
  for (const auto &c : r.entry.candidates) {
    r.measured += c.status != tunekit::candidate_status::pruned ? 1 : 0;
  }
  return r;
}

nlohmann::json search_json(const search_result &r) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto &c : r.entry.candidates) {
    candidates.push_back(
        {{"config", c.config.to_string()},
         {"status", std::string(tunekit::to_string(c.status))},
         {"time_ms", c.status == tunekit::candidate_status::ok ? nlohmann::json(c.time_ms)
                                                               : nlohmann::json(nullptr)},
         {"reason", c.reason}});
  }
  nlohmann::json rerank = nullptr;
  if (r.entry.rerank) {
    rerank = {
        {"leaders", r.entry.rerank->leaders.size()},
        {"winner_before", r.entry.candidates[r.entry.rerank->winner_before].config.to_string()},
        {"changed", r.entry.rerank->winner_before != r.entry.winner_index}};
  }
  return {{"wall_ms", r.wall_ms},
          {"candidates_measured", r.measured},
          {"rerank", rerank},
          {"per_candidate_ms", r.wall_ms / static_cast<double>(r.measured)},
          {"winner", r.entry.winner.to_string()},
          {"candidates", candidates}};
}

} // namespace

int main(int argc, char **argv) {
  std::int64_t n = std::int64_t{1} << 26;
  std::string out_path;
  bool tune_only = false;
  bool rerank = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      n = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_path = argv[++i];
    } else if (std::strcmp(argv[i], "--tune-only") == 0) {
      tune_only = true;
    } else if (std::strcmp(argv[i], "--no-rerank") == 0) {
      rerank = false;
    }
  }
  if (!tunekit::cuda::device_available()) {
    std::puts("no CUDA device visible");
    return 0;
  }
  try {
    const example::stream owned_stream;
    cudaStream_t stream = owned_stream.get();
    const auto count = static_cast<std::size_t>(n);
    const auto bytes = count * sizeof(float);
    const example::device_array<float> x(count);
    const example::device_array<float> y(count);
    const example::device_array<float> ref(count);
    TUNEKIT_CUDA_CHECK(example::fill_uniform(x.get(), n, 7, stream));
    // Creates the context and the first kernel's module outside any timing.
    example::scale(x.get(), ref.get(), 2.5f, n, stream, example::scale_space()[0]);
    TUNEKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto hw = tunekit::cuda::device_hardware();

    nlohmann::json j;
    j["n"] = n;
    j["hardware"] = hw.to_string();
    j["dependencies"] = tunekit::cuda::dependencies();
    const search_result first = tune_once(x.get(), y.get(), n, stream, false, rerank);
    j["tuning"] = search_json(first);
    const bool winner_ok = tunekit::cuda::compare(y.get(), ref.get(), count, stream).within(0.0);
    j["winner_output_correct"] = winner_ok;
    if (tune_only) {
      std::printf("%s\n", j.dump(2).c_str());
      if (!out_path.empty()) {
        std::ofstream(out_path) << j.dump(2) << "\n";
      }
      return winner_ok ? 0 : 1;
    }

    // Tuning cost again in the same process (kernels loaded), and with the L2 flush on.
    j["tuning_again"] = search_json(tune_once(x.get(), y.get(), n, stream, false, rerank));
    j["tuning_flush_l2"] = search_json(tune_once(x.get(), y.get(), n, stream, true, rerank));

    // The copy ceiling: a device-to-device copy of the same bytes (read n, write n).
    auto copy = [&] {
      TUNEKIT_CUDA_CHECK(
          cudaMemcpyAsync(y.get(), x.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    };
    const auto copy_stats = bench::time_runs(stream, copy, 20, 200);
    const double copy_gbps = 2.0 * static_cast<double>(bytes) / (copy_stats.median * 1e-3) / 1e9;
    j["copy"] = {{"median_ms", copy_stats.median},
                 {"mean_ms", copy_stats.mean},
                 {"stddev_ms", copy_stats.stddev},
                 {"gbps", copy_gbps}};

    // Reference time of every config: 20 warmup and 200 timed runs, median.
    nlohmann::json reference = nlohmann::json::array();
    const auto space = example::scale_space();
    double best_ms = 1e300;
    std::string best;
    double default_ms = 0;
    double winner_ms = 0;
    bool all_correct = true;
    for (std::size_t i = 0; i < space.size(); ++i) {
      const tunekit::config &c = space[i];
      auto run = [&] { example::scale(x.get(), y.get(), 2.5f, n, stream, c); };
      tunekit::cuda::poison(y.get(), bytes, stream);
      run();
      all_correct =
          all_correct && tunekit::cuda::compare(y.get(), ref.get(), count, stream).within(0.0);
      const auto s = bench::time_runs(stream, run, 20, 200);
      const double gbps = 2.0 * static_cast<double>(bytes) / (s.median * 1e-3) / 1e9;
      reference.push_back({{"config", c.to_string()},
                           {"median_ms", s.median},
                           {"mean_ms", s.mean},
                           {"stddev_ms", s.stddev},
                           {"gbps", gbps}});
      if (s.median < best_ms) {
        best_ms = s.median;
        best = c.to_string();
      }
      if (i == 0) {
        default_ms = s.median;
      }
      if (c == first.entry.winner) {
        winner_ms = s.median;
      }
    }
    j["reference"] = reference;
    j["reference_all_correct"] = all_correct;
    j["best"] = {{"config", best}, {"median_ms", best_ms}};
    j["default"] = {{"config", space[0].to_string()}, {"median_ms", default_ms}};
    const double winner_gbps = 2.0 * static_cast<double>(bytes) / (winner_ms * 1e-3) / 1e9;
    j["winner"] = {{"config", first.entry.winner.to_string()},
                   {"median_ms", winner_ms},
                   {"gbps", winner_gbps},
                   {"fraction_of_copy", winner_gbps / copy_gbps},
                   {"regret", winner_ms / best_ms - 1.0},
                   {"speedup_over_default", default_ms / winner_ms}};
    std::printf("%s\n", j.dump(2).c_str());
    if (!out_path.empty()) {
      std::ofstream(out_path) << j.dump(2) << "\n";
    }
    return winner_ok && all_correct ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tunekit_cuda_bench_scale: %s\n", e.what());
    return 1;
  }
}
