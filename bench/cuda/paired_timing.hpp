#pragma once
// Shared by the hot-path benchmarks: interleaved batches of calls timed on the host clock, and the
// paired per-round difference between two variants.

#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <vector>

namespace bench {

using clock_type = std::chrono::steady_clock;

template <class T> void keep(const T &v) { asm volatile("" : : "g"(&v) : "memory"); }

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times batches of `batch` calls of each function in turn (the first one of a round moves along
// each round), draining with `drain` after every batch, outside the timed region; returns the ns
// per call of every batch, by function and round.
template <class D, class... F>
std::array<std::vector<double>, sizeof...(F)> interleave(D &&drain, int rounds, int batch,
                                                         F &...fns) {
  constexpr std::size_t count = sizeof...(F);
  std::array<std::vector<double>, count> times;
  auto time = [&](auto &f) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < batch; ++i) {
      f();
    }
    const auto t1 = clock_type::now();
    drain();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / batch;
  };
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t slot = 0; slot < count; ++slot) {
      const std::size_t which = (slot + static_cast<std::size_t>(r)) % count;
      std::size_t i = 0;
      ((i++ == which ? times[which].push_back(time(fns)) : void()), ...);
    }
  }
  return times;
}

// Median of the per-round differences b - a: drift over the run (clocks, other load) cancels.
inline double paired_added(const std::vector<double> &a, const std::vector<double> &b) {
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    d[i] = b[i] - a[i];
  }
  return median(d);
}

// Keeps the calling thread on the CPU it runs on now, so that a migration between the variants'
// batches does not land in one of them. Returns false when the affinity could not be set.
inline bool pin_to_current_cpu() {
  const int cpu = sched_getcpu();
  if (cpu < 0) {
    return false;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

// `repeats` independent paired measurements of b over a, in microseconds per call (each the
// median over `rounds` rounds of `batch` calls): the spread between them is the run-to-run noise;
// their median is the figure.
template <class D, class A, class B>
std::vector<double> repeated_added_us(D &&drain, int repeats, int rounds, int batch, A &a, B &b) {
  std::vector<double> out;
  for (int i = 0; i < repeats; ++i) {
    const auto t = interleave(drain, rounds, batch, a, b);
    out.push_back(paired_added(t[0], t[1]) / 1e3);
  }
  return out;
}

} // namespace bench
