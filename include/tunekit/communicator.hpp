#pragma once
/// \file communicator.hpp
/// The collectives a tuner needs to make every rank of a job agree on one config. tunekit only
/// uses communicators the application created; it never initialises or finalises MPI, NCCL or any
/// process group.

#include <cstddef>
#include <span>

namespace tunekit {

class communicator {
public:
  communicator() = default;
  communicator(const communicator &) = delete;
  communicator &operator=(const communicator &) = delete;
  virtual ~communicator() = default;

  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
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
  void all_reduce_max(std::span<double> /*values*/) override {}
  void all_reduce_min(std::span<double> /*values*/) override {}
  void broadcast(std::span<std::byte> /*bytes*/, int /*root*/) override {}
  void barrier() override {}
};

} // namespace tunekit
