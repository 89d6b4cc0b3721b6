#pragma once
/// \file communicator.hpp
/// The collectives a tuner needs to make every rank of a job agree on one config. tunekit only
/// uses communicators the application created; it never initialises or finalises MPI, NCCL or any
/// process group.

#include <tunekit/error.hpp>

#include <cstddef>
#include <span>

namespace tunekit {

/// Thrown by a communicator whose collective waited longer than its limit for the other ranks
/// (only backends that can bound the wait: see `tunekit::mpi::communicator_options::timeout`).
/// The tuner rethrows it naming the step and the key. The communicator cannot be used afterwards:
/// the ranks no longer agree on how many collectives they entered.
class communicator_timeout : public error {
public:
  using error::error;
};

/// Rank identity and the collectives of a job. All ranks must call the collectives in the same
/// order; a tuner calls them only while resolving a key that is not yet in memory.
class communicator {
public:
  communicator() = default;
  communicator(const communicator &) = delete;
  communicator &operator=(const communicator &) = delete;
  virtual ~communicator() = default;

  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  /// Rank among this communicator's ranks on the same node. Local rank 0 writes the node's
  /// winner cache. Default: `rank()` (only rank 0 writes), for backends that cannot tell nodes
  /// apart.
  [[nodiscard]] virtual int local_rank() const { return rank(); }
  /// Element-wise maximum (minimum) over all ranks, in place.
  virtual void all_reduce_max(std::span<double> values) = 0;
  virtual void all_reduce_min(std::span<double> values) = 0;
  /// Copies `bytes` of rank `root` to every rank.
  virtual void broadcast(std::span<std::byte> bytes, int root) = 0;
  virtual void barrier() = 0;
};

/// The communicator of a job with one rank: every collective is the identity.
class single_process_communicator final : public communicator {
public:
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 1; }
  [[nodiscard]] int local_rank() const override { return 0; }
  void all_reduce_max(std::span<double> /*values*/) override {}
  void all_reduce_min(std::span<double> /*values*/) override {}
  void broadcast(std::span<std::byte> /*bytes*/, int /*root*/) override {}
  void barrier() override {}
};

/// Registers the communicator tuners use when neither the call nor the tuner names one (null
/// unregisters). The application keeps it alive while tuners may use it; tunekit never owns it.
void set_default_communicator(communicator *comm) noexcept;

/// A function returning the communicator to use when none is registered as default, or null for
/// a single process. `tunekit::mpi::use_world_by_default()` installs one that returns MPI's world
/// once MPI is initialised (the core never sees MPI).
using communicator_fallback = communicator *(*)();
void set_communicator_fallback(communicator_fallback fallback) noexcept;

/// The registered default, else what the fallback returns, else null (a single process).
[[nodiscard]] communicator *default_communicator();

} // namespace tunekit
