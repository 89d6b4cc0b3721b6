#include <tunekit/cuda/error.hpp>
#include <tunekit/launcher.hpp>
#include <tunekit/nccl/communicator.hpp>
#include <tunekit/nccl/error.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

namespace tunekit::nccl {

namespace {

// Makes the communicator's device current for the scope of a collective and restores the
// caller's afterwards.
class device_guard {
public:
  explicit device_guard(int device) {
    tunekit::cuda::check(cudaGetDevice(&m_previous), "tunekit::nccl: cudaGetDevice");
    if (m_previous != device) {
      tunekit::cuda::check(cudaSetDevice(device), "tunekit::nccl: cudaSetDevice");
    }
    m_device = device;
  }
  device_guard(const device_guard &) = delete;
  device_guard &operator=(const device_guard &) = delete;
  ~device_guard() {
    if (m_previous != m_device) {
      static_cast<void>(cudaSetDevice(m_previous));
    }
  }

private:
  int m_previous = 0;
  int m_device = 0;
};

void cuda_check(cudaError_t code, const char *call) {
  if (code != cudaSuccess) {
    tunekit::cuda::throw_error(code, std::string("tunekit::nccl: ") + call);
  }
}

constexpr const char *out_of_step = "tunekit::nccl: an earlier collective timed out or failed; the "
                                    "ranks are out of step and this communicator cannot be used "
                                    "any more (abort the ncclComm_t)";

} // namespace

communicator::communicator(ncclComm_t comm, cudaStream_t stream, communicator_options options)
    : m_comm(comm), m_stream(stream), m_options(options) {
  if (m_options.timeout.count() < 0) {
    throw error("tunekit::nccl::communicator: the timeout must not be negative");
  }
  if (comm == nullptr) {
    throw error("tunekit::nccl::communicator: a null ncclComm_t is not a communicator; the "
                "application creates it (ncclCommInitRank), tunekit never does");
  }
  check(ncclCommUserRank(comm, &m_rank), "ncclCommUserRank", comm);
  check(ncclCommCount(comm, &m_size), "ncclCommCount", comm);
  check(ncclCommCuDevice(comm, &m_device), "ncclCommCuDevice", comm);
  if (m_options.local_rank) {
    if (*m_options.local_rank < 0 || *m_options.local_rank >= m_size) {
      throw error("tunekit::nccl::communicator: local rank " +
                  std::to_string(*m_options.local_rank) + " is not a rank of a " +
                  std::to_string(m_size) + "-rank communicator");
    }
    m_local_rank = *m_options.local_rank;
  } else {
    const launcher_info &l = m_options.launcher;
    const bool same_world =
        l.world_size == m_size && l.rank == m_rank && l.local_rank >= 0 && l.local_rank < m_size;
    m_local_rank = same_world ? l.local_rank : m_rank;
  }
}

communicator::~communicator() {
  if (m_broken || m_capacity == 0) {
    return; // after a timeout the stream may still write the buffers: leak them
  }
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) {
    return;
  }
  static_cast<void>(cudaSetDevice(m_device));
  static_cast<void>(cudaFree(m_device_buffer));
  static_cast<void>(cudaFreeHost(m_host_buffer));
  static_cast<void>(cudaSetDevice(previous));
}

void communicator::refuse_if_broken() const {
  if (m_broken) {
    throw communicator_timeout(out_of_step);
  }
}

void communicator::reserve(std::size_t bytes) {
  if (bytes <= m_capacity) {
    return;
  }
  const std::size_t capacity = std::max({bytes, 2 * m_capacity, std::size_t{256}});
  if (m_capacity != 0) {
    // Nothing is in flight: every collective completed before returning.
    cuda_check(cudaFree(m_device_buffer), "cudaFree");
    cuda_check(cudaFreeHost(m_host_buffer), "cudaFreeHost");
    m_device_buffer = nullptr;
    m_host_buffer = nullptr;
    m_capacity = 0;
  }
  cuda_check(cudaMalloc(&m_device_buffer, capacity), "cudaMalloc");
  if (const cudaError_t e = cudaMallocHost(&m_host_buffer, capacity); e != cudaSuccess) {
    static_cast<void>(cudaFree(m_device_buffer));
    m_device_buffer = nullptr;
    cuda_check(e, "cudaMallocHost");
  }
  m_capacity = capacity;
}

void communicator::fail_timeout(const char *what) {
  m_broken = true;
  throw communicator_timeout(
      "NCCL " + std::string(what) + " waited " + std::to_string(m_options.timeout.count()) +
      " ms on rank " + std::to_string(m_rank) + " of " + std::to_string(m_size) +
      " without the other ranks (did every rank make the same tuner calls in the same order?); "
      "this communicator cannot be used any more: abort the ncclComm_t (ncclCommAbort)");
}

void communicator::wait(const char *what, bool comm_only) {
  const auto start = std::chrono::steady_clock::now();
  const auto spin = std::chrono::microseconds(200);
  auto nap = std::chrono::microseconds(20);
  for (;;) {
    ncclResult_t async = ncclSuccess;
    check(ncclCommGetAsyncError(m_comm, &async), "ncclCommGetAsyncError", m_comm);
    if (async != ncclSuccess && async != ncclInProgress) {
      m_broken = true;
      throw_error(async, std::string(what) + " (asynchronous error)", m_comm);
    }
    if (comm_only) {
      if (async == ncclSuccess) {
        return;
      }
    } else if (async == ncclSuccess) {
      const cudaError_t q = cudaStreamQuery(m_stream);
      if (q == cudaSuccess) {
        return;
      }
      if (q != cudaErrorNotReady) {
        m_broken = true;
        cuda_check(q, "cudaStreamQuery");
      }
    }
    const auto waited = std::chrono::steady_clock::now() - start;
    if (m_options.timeout.count() > 0 && waited >= m_options.timeout) {
      fail_timeout(what);
    }
    // Spin briefly (a collective between idle ranks takes tens of microseconds), then sleep.
    if (waited < spin) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(1000));
    }
  }
}

void communicator::all_reduce(std::span<double> values, ncclRedOp_t op, const char *what) {
  refuse_if_broken();
  if (values.empty()) {
    return; // every rank passes the same count: nothing to exchange anywhere
  }
  const device_guard guard(m_device);
  const std::size_t bytes = values.size_bytes();
  reserve(bytes);
  std::memcpy(m_host_buffer, values.data(), bytes);
  cuda_check(
      cudaMemcpyAsync(m_device_buffer, m_host_buffer, bytes, cudaMemcpyHostToDevice, m_stream),
      "cudaMemcpyAsync (to the device)");
  const ncclResult_t r = ncclAllReduce(m_device_buffer, m_device_buffer, values.size(), ncclFloat64,
                                       op, m_comm, m_stream);
  if (r == ncclInProgress) {
    wait(what, true); // a non-blocking communicator is still enqueueing
  } else {
    check(r, "ncclAllReduce", m_comm);
  }
  cuda_check(
      cudaMemcpyAsync(m_host_buffer, m_device_buffer, bytes, cudaMemcpyDeviceToHost, m_stream),
      "cudaMemcpyAsync (to the host)");
  wait(what, false);
  std::memcpy(values.data(), m_host_buffer, bytes);
}

void communicator::all_reduce_max(std::span<double> values) {
  all_reduce(values, ncclMax, "all-reduce (max)");
}

void communicator::all_reduce_min(std::span<double> values) {
  all_reduce(values, ncclMin, "all-reduce (min)");
}

void communicator::broadcast(std::span<std::byte> bytes, int root) {
  refuse_if_broken();
  if (root < 0 || root >= m_size) {
    throw error("tunekit::nccl: broadcast root " + std::to_string(root) + " is not a rank of a " +
                std::to_string(m_size) + "-rank communicator");
  }
  if (bytes.empty()) {
    return;
  }
  const device_guard guard(m_device);
  reserve(bytes.size());
  if (m_rank == root) {
    std::memcpy(m_host_buffer, bytes.data(), bytes.size());
    cuda_check(cudaMemcpyAsync(m_device_buffer, m_host_buffer, bytes.size(), cudaMemcpyHostToDevice,
                               m_stream),
               "cudaMemcpyAsync (to the device)");
  }
  const ncclResult_t r = ncclBroadcast(m_device_buffer, m_device_buffer, bytes.size(), ncclUint8,
                                       root, m_comm, m_stream);
  if (r == ncclInProgress) {
    wait("broadcast", true);
  } else {
    check(r, "ncclBroadcast", m_comm);
  }
  cuda_check(cudaMemcpyAsync(m_host_buffer, m_device_buffer, bytes.size(), cudaMemcpyDeviceToHost,
                             m_stream),
             "cudaMemcpyAsync (to the host)");
  wait("broadcast", false);
  std::memcpy(bytes.data(), m_host_buffer, bytes.size());
}

void communicator::barrier() {
  double one[1] = {0.0};
  all_reduce(one, ncclMax, "barrier");
}

} // namespace tunekit::nccl
