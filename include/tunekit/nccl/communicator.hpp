#pragma once
/// \file nccl/communicator.hpp
/// tunekit's communicator over an `ncclComm_t` and a CUDA stream the application owns. tunekit
/// never creates, aborts or destroys the NCCL communicator and never creates or destroys the
/// stream. The reductions run on the device: the values are copied to a device buffer, reduced
/// with `ncclAllReduce` on the stream and copied back.
///
/// \code
/// ncclComm_t comm;   // the application's: ncclCommInitRank(&comm, size, id, rank)
/// cudaStream_t stream;
/// {
///   tunekit::nccl::communicator ranks(comm, stream, {.timeout = std::chrono::seconds(300)});
///   auto gemm = tunekit::autotune("gemm", space, key_fn, prune_fn, launch,
///                                 {.measurer = measurer, .comm = &ranks});
///   gemm(a, b, c, n, stream); // every rank runs the same config
/// }
/// ncclCommDestroy(comm);
/// \endcode

#include <tunekit/communicator.hpp>
#include <tunekit/launcher.hpp>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>

namespace tunekit::nccl {

struct communicator_options {
  /// Longest a collective waits for the other ranks before it throws `communicator_timeout`
  /// (the stream and `ncclCommGetAsyncError` are polled). Zero: no limit. After a timeout the
  /// NCCL communicator is stuck in a collective the other ranks never entered: this object refuses
  /// every further collective, and the application should `ncclCommAbort` the `ncclComm_t`.
  std::chrono::milliseconds timeout{0};
  /// Rank among this communicator's ranks on the same node (local rank 0 writes the node's winner
  /// cache). Set it for a communicator over a subset of the job's ranks. Unset: `launcher`'s local
  /// rank when the launcher's world is this communicator (same rank, same size), else `rank()`,
  /// so that only rank 0 writes.
  std::optional<int> local_rank{};
  /// The launcher that started this process. The default reads the launcher's variables
  /// (`LOCAL_RANK`, ...) where these options are built, by the caller; the communicator's
  /// constructor reads no environment. Pass `tunekit::launcher_info{}` to read nothing (then only
  /// rank 0 writes unless `local_rank` is set).
  launcher_info launcher = launcher_info::from_env();
};

/// A `tunekit::communicator` over `comm`, with its collectives on `stream`. Building one is not
/// collective and touches no device memory; the buffers (one device, one pinned host) are
/// allocated by the first collective on the communicator's device and grown as needed.
///
/// - `all_reduce_max`/`all_reduce_min`: `ncclAllReduce` of `ncclFloat64` with `ncclMax`/`ncclMin`;
/// - `broadcast`: `ncclBroadcast` of bytes (`ncclUint8`);
/// - `barrier`: an all-reduce of one element.
///
/// Each collective is ordered after the work already on `stream` and returns once it has
/// completed. A communicator created non-blocking (`ncclConfig_t::blocking = 0`) is supported:
/// with it the timeout also bounds NCCL's connection setup. Not thread-safe: one thread at a time
/// (a tuner resolves one key at a time). Every NCCL and CUDA error throws `tunekit::error` naming
/// the call; an asynchronous NCCL error (a peer failed) makes the communicator unusable, as a
/// timeout does.
class communicator final : public tunekit::communicator {
public:
  communicator(ncclComm_t comm, cudaStream_t stream, communicator_options options = {});
  /// Frees the buffers; after a timeout or an asynchronous error they are leaked instead (work the
  /// application must abort may still use them).
  ~communicator() override;

  [[nodiscard]] int rank() const override { return m_rank; }
  [[nodiscard]] int size() const override { return m_size; }
  [[nodiscard]] int local_rank() const override { return m_local_rank; }
  void all_reduce_max(std::span<double> values) override;
  void all_reduce_min(std::span<double> values) override;
  void broadcast(std::span<std::byte> bytes, int root) override;
  void barrier() override;

  [[nodiscard]] ncclComm_t handle() const noexcept { return m_comm; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return m_stream; }
  /// The CUDA device of the NCCL communicator (`ncclCommCuDevice`).
  [[nodiscard]] int device() const noexcept { return m_device; }
  [[nodiscard]] const communicator_options &options() const noexcept { return m_options; }
  /// True after a timeout or an asynchronous NCCL error: every collective throws.
  [[nodiscard]] bool broken() const noexcept { return m_broken; }

private:
  void all_reduce(std::span<double> values, ncclRedOp_t op, const char *what);
  void reserve(std::size_t bytes);
  void refuse_if_broken() const;
  // Completes what was enqueued on the stream (and a non-blocking communicator's pending call)
  // within the timeout; throws naming `what` otherwise.
  void wait(const char *what, bool comm_only);
  [[noreturn]] void fail_timeout(const char *what);

  ncclComm_t m_comm;
  cudaStream_t m_stream;
  communicator_options m_options;
  int m_rank = 0;
  int m_size = 1;
  int m_local_rank = 0;
  int m_device = 0;
  bool m_broken = false;
  void *m_device_buffer = nullptr;
  void *m_host_buffer = nullptr; // pinned, so that copies to it stay asynchronous
  std::size_t m_capacity = 0;
};

} // namespace tunekit::nccl
