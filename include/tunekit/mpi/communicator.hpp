#pragma once
/// \file mpi/communicator.hpp
/// tunekit's communicator over an `MPI_Comm` the application owns. tunekit never initialises or
/// finalises MPI and never frees the communicator it is given; a sub-communicator (from
/// `MPI_Comm_split`) agrees over its own ranks only.
///
/// \code
/// MPI_Init(&argc, &argv);
/// {
///   tunekit::mpi::communicator world(MPI_COMM_WORLD, {.timeout = std::chrono::seconds(120)});
///   auto gemm = tunekit::autotune("gemm", space, key_fn, prune_fn, launch, {.comm = &world});
///   gemm(a, b, c, n); // every rank runs the same config
/// }
/// MPI_Finalize();
/// \endcode

#include <tunekit/communicator.hpp>

#include <mpi.h>

#include <chrono>
#include <memory>
#include <span>
#include <vector>

namespace tunekit::mpi {

struct communicator_options {
  /// Longest a collective waits for the other ranks before it throws `communicator_timeout`
  /// (the nonblocking collective is polled). Zero: no limit (`MPI_Wait`).
  std::chrono::milliseconds timeout{0};
  /// With a timeout: the longest sleep between two polls of a pending collective (each sleep is
  /// an eighth of the wait so far, from 20 us up to this, so a collective is seen done at most
  /// about 12% late). Lower it where a collective's latency matters more than the CPU an idle
  /// rank uses (a serving worker: `tunekit/serve.hpp`).
  std::chrono::microseconds max_poll_interval{2000};
};

/// A `tunekit::communicator` over `comm`. Building one is collective over `comm` (it finds the
/// ranks that share this node with `MPI_Comm_split_type`), so build it on every rank. MPI must be
/// initialised; `MPI_THREAD_SINGLE` suffices when tuned functions are called from the thread that
/// calls MPI. Collectives are nonblocking MPI collectives (`MPI_Iallreduce`, `MPI_Ibcast`,
/// `MPI_Ibarrier`) completed before returning; MPI never matches them with blocking ones, so
/// the application must not enter collectives on `comm` from another thread while a tuner runs.
class communicator final : public tunekit::communicator {
public:
  explicit communicator(MPI_Comm comm, communicator_options options = {});
  ~communicator() override;

  [[nodiscard]] int rank() const override { return m_rank; }
  [[nodiscard]] int size() const override { return m_size; }
  /// Rank among this communicator's ranks on the same node (shared-memory domain).
  [[nodiscard]] int local_rank() const override { return m_local_rank; }
  void all_reduce_max(std::span<double> values) override;
  void all_reduce_min(std::span<double> values) override;
  void broadcast(std::span<std::byte> bytes, int root) override;
  void barrier() override;

  [[nodiscard]] MPI_Comm handle() const noexcept { return m_comm; }
  [[nodiscard]] const communicator_options &options() const noexcept { return m_options; }

private:
  struct pending;
  void all_reduce(std::span<double> values, MPI_Op op, const char *what);
  // Waits for `req` within the timeout; on timeout takes `buffer` over (MPI may still write it)
  // and throws.
  void wait(MPI_Request &req, std::vector<std::byte> &buffer, const char *what);

  MPI_Comm m_comm;
  communicator_options m_options;
  int m_rank = 0;
  int m_size = 1;
  int m_local_rank = 0;
  bool m_broken = false; // a collective timed out: the ranks are out of step
  std::vector<std::unique_ptr<pending>> m_abandoned;
};

/// Makes tuners that are given no communicator, when the application registered no default with
/// `tunekit::set_default_communicator`, agree over `MPI_COMM_WORLD` while MPI is initialised and
/// not finalised (a single process otherwise). Call it once, e.g. right after `MPI_Init`. The
/// world communicator is built on first use, inside a tuner call, which every rank makes.
void use_world_by_default();

} // namespace tunekit::mpi
