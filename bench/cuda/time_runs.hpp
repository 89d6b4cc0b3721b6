#pragma once
// Shared by the CUDA benchmarks: times a callable with the CUDA event measurer.

#include <tunekit/cuda/measurer.hpp>
#include <tunekit/tunekit.hpp>

#include <cuda_runtime_api.h>

namespace bench {

/// Times `run` on `stream`: `warmup` untimed runs, then `runs` timed ones; their statistics in ms.
template <class F>
tunekit::sample_stats time_runs(cudaStream_t stream, F &run, int warmup, int runs) {
  tunekit::cuda::event_measurer m({.stream = stream});
  tunekit::measure_policy p;
  p.warmup = warmup;
  p.runs = runs;
  const tunekit::key k{0};
  const tunekit::config c;
  return tunekit::summarize(m.measure(tunekit::candidate_info{"bench", k, c, 0, 1}, run, p));
}

} // namespace bench
