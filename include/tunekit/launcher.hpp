#pragma once
/// \file launcher.hpp
/// Which process of a multi-process job this is, as the launcher (torchrun, mpirun, a PMI
/// launcher) announced it in the environment. tunekit uses it for file names, log prefixes and
/// console output (verbose lines only from local rank 0); the agreement between ranks itself goes
/// through a `communicator`, never through these variables.

#include <string>
#include <string_view>

namespace tunekit {

/// The launcher that set the variables.
enum class launcher_kind {
  none,     ///< no launcher variables: a single process
  torchrun, ///< `RANK`, `LOCAL_RANK`, `WORLD_SIZE`
  open_mpi, ///< `OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_LOCAL_RANK`, `OMPI_COMM_WORLD_SIZE`
  pmi,      ///< `PMI_RANK`, `PMI_SIZE` (MPICH/Hydra, Slurm), local rank from `MPI_LOCALRANKID`
};
[[nodiscard]] std::string_view to_string(launcher_kind k) noexcept;

/// Rank, local rank and world size of this process.
struct launcher_info {
  launcher_kind kind{launcher_kind::none};
  int rank{0};       ///< rank in the job
  int local_rank{0}; ///< rank among the job's processes on this node
  int world_size{1}; ///< processes in the job

  /// Reads the variables of the first launcher whose rank and size are both set, in the order
  /// torchrun, Open MPI, PMI (a missing local rank reads as 0). Throws `tunekit::error` naming the
  /// variable when a value is not a number or out of range (rank >= size).
  [[nodiscard]] static launcher_info from_env();

  [[nodiscard]] bool multi_rank() const noexcept { return world_size > 1; }
  /// `rank 3/8 (local 1, open_mpi)`; `single process` without a launcher.
  [[nodiscard]] std::string to_string() const;
  /// A file name for per-rank output: `rank-3.log` (`rank-0.log` for a single process).
  [[nodiscard]] std::string log_file_name() const;

  friend bool operator==(const launcher_info &, const launcher_info &) = default;
};

} // namespace tunekit
