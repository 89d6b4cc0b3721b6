#pragma once
// What the scaling benchmarks (bench/scaling, bench/nccl) share: wall time, and whether every rank
// holds the same text (its winners).

#include <tunekit/communicator.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace bench {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Whether `text` is the same on every rank of `comm` (a collective): the MIN and MAX of its hash.
inline bool same_everywhere(tunekit::communicator &comm, const std::string &text) {
  // 52 bits of the hash: a double holds them exactly.
  const auto h = static_cast<double>(std::hash<std::string>{}(text) & ((1ULL << 52) - 1));
  double lo = h;
  double hi = h;
  comm.all_reduce_min(std::span(&lo, 1));
  comm.all_reduce_max(std::span(&hi, 1));
  return lo == hi;
}

} // namespace bench
