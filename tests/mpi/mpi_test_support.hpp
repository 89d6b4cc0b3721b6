#pragma once
// Helpers of the MPI tests: the world communicator, checks that a value is the same on every
// rank, per-rank temporary directories, a log capture and test tuner options that never read the
// process environment for anything but the launcher.

#include "../core/test_support.hpp"

#include <tunekit/mpi/communicator.hpp>
#include <tunekit/tunekit.hpp>

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit_mpi_test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/// tunekit's communicator over MPI_COMM_WORLD, built on first use (every test runs on every
/// rank, so the collective construction happens everywhere).
inline tunekit::mpi::communicator &world() {
  static tunekit::mpi::communicator w(MPI_COMM_WORLD);
  return w;
}

/// Every rank's `v`, by rank (raw MPI, independent of the code under test).
inline std::vector<std::int64_t> gather(std::int64_t v, MPI_Comm comm = MPI_COMM_WORLD) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  std::vector<std::int64_t> all(static_cast<std::size_t>(n));
  MPI_Allgather(&v, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm);
  return all;
}

/// Element-wise: true where `v[i]` is the same on every rank.
inline std::vector<bool> same_everywhere(const std::vector<std::int64_t> &v) {
  std::vector<std::int64_t> lo = v;
  std::vector<std::int64_t> hi = v;
  MPI_Allreduce(MPI_IN_PLACE, lo.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_MIN,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, hi.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_MAX,
                MPI_COMM_WORLD);
  std::vector<bool> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[i] = lo[i] == hi[i];
  }
  return out;
}

/// True when `text` is the same on every rank.
inline bool same_text_everywhere(const std::string &text) {
  const auto h = static_cast<std::int64_t>(std::hash<std::string>{}(text) >> 1);
  return same_everywhere({h, static_cast<std::int64_t>(text.size())}) ==
         std::vector<bool>{true, true};
}

// A fresh directory (of this rank), removed at scope exit, and a log capture: the core tests' own.
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

/// Six candidates: BLOCK 64 ... 2048 (index i has BLOCK 64 << i).
inline tunekit::config_space six_blocks() {
  return tunekit::config_space::product({{"BLOCK", {64, 128, 256, 512, 1024, 2048}}});
}

/// Index of BLOCK in `six_blocks()`.
inline int block_index(const tunekit::config &c) {
  int i = 0;
  for (std::int64_t b = c.get_int("BLOCK"); b > 64; b /= 2) {
    ++i;
  }
  return i;
}

/// Options of a test tuner: its own cache and log dirs, fixed hardware, one timed run.
inline tunekit::tuner_options options(const std::filesystem::path &dir,
                                      std::shared_ptr<tunekit::measurer> measurer,
                                      const log_capture &log, tunekit::communicator *comm) {
  tunekit::tuner_options o;
  o.version = "v1";
  o.measurer = std::move(measurer);
  tunekit::environment env;
  env.cache_dir = dir / "cache";
  env.log_dir = dir / "logs";
  o.process = tunekit::process_context{env, tunekit::launcher_info::from_env(), log.sink()};
  o.hardware = tunekit::hardware_info{"host", "Test CPU 9000", "x86_64", 8, 1};
  o.comm = comm;
  o.policy = tunekit::measure_policy{0, 1, tunekit::statistic::mean};
  return o;
}

/// A tuned function `f(n) -> index of the chosen BLOCK`, keyed by n.
inline auto block_tuner(std::string name, tunekit::tuner_options o,
                        tunekit::config_space space = six_blocks()) {
  return tunekit::autotune(
      std::move(name), std::move(space), [](std::int64_t n) { return tunekit::key{n}; },
      tunekit::keep_all{}, [](std::int64_t, const tunekit::config &c) { return block_index(c); },
      std::move(o));
}

} // namespace tunekit_mpi_test
