#include <tunekit/error.hpp>
#include <tunekit/mpi/communicator.hpp>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <thread>

namespace tunekit::mpi {

namespace {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) {
    return "MPI error " + std::to_string(code);
  }
  return std::string(text, static_cast<std::size_t>(len));
}

void check(int code, const char *call) {
  if (code != MPI_SUCCESS) {
    throw error(std::string("tunekit::mpi: ") + call + " failed: " + mpi_error_text(code));
  }
}

bool mpi_usable() {
  int init = 0;
  int fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init != 0 && fin == 0;
}

int count_of(std::size_t n, const char *what) {
  if (n > static_cast<std::size_t>(INT_MAX)) {
    throw error(std::string("tunekit::mpi: ") + what + " of " + std::to_string(n) +
                " elements is larger than MPI's int count");
  }
  return static_cast<int>(n);
}

} // namespace

// A nonblocking collective given up on after a timeout: MPI may still complete it and write into
// its buffer, so both outlive the throw.
struct communicator::pending {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<std::byte> buffer;
};

communicator::communicator(MPI_Comm comm, communicator_options options)
    : m_comm(comm), m_options(options) {
  if (!mpi_usable()) {
    throw error("tunekit::mpi::communicator: MPI is not initialised (or already finalised); "
                "the application initialises MPI, tunekit never does");
  }
  if (comm == MPI_COMM_NULL) {
    throw error("tunekit::mpi::communicator: MPI_COMM_NULL is not a communicator");
  }
  if (m_options.timeout.count() < 0) {
    throw error("tunekit::mpi::communicator: the timeout must not be negative");
  }
  if (m_options.max_poll_interval.count() <= 0) {
    throw error("tunekit::mpi::communicator: max_poll_interval must be positive");
  }
  check(MPI_Comm_rank(comm, &m_rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &m_size), "MPI_Comm_size");
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  check(MPI_Comm_rank(node, &m_local_rank), "MPI_Comm_rank");
  check(MPI_Comm_free(&node), "MPI_Comm_free");
}

communicator::~communicator() {
  if (m_abandoned.empty() || !mpi_usable()) {
    for (auto &p : m_abandoned) {
      static_cast<void>(p.release()); // MPI may still own the buffer: leak it rather than free
    }
    return;
  }
  // Give late ranks a moment to complete what was abandoned; what stays pending is leaked.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (auto &p : m_abandoned) {
    int done = 0;
    while (MPI_Test(&p->request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done == 0 &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (done == 0) {
      static_cast<void>(p.release());
    }
  }
}

void communicator::wait(MPI_Request &req, std::vector<std::byte> &buffer, const char *what) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    int done = 0;
    check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) {
      return;
    }
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited >= m_options.timeout) {
      break;
    }
    // An eighth of the wait so far (from 20 us, at most max_poll_interval): the collective is
    // seen done at most about 12% after it completes, and a long wait polls rarely.
    const auto nap = std::clamp(std::chrono::duration_cast<std::chrono::microseconds>(waited / 8),
                                std::chrono::microseconds(20), m_options.max_poll_interval);
    std::this_thread::sleep_for(nap);
  }
  auto p = std::make_unique<pending>();
  p->request = req;
  p->buffer = std::move(buffer);
  m_abandoned.push_back(std::move(p));
  m_broken = true;
  throw communicator_timeout("MPI " + std::string(what) + " waited " +
                             std::to_string(m_options.timeout.count()) + " ms on rank " +
                             std::to_string(m_rank) + " of " + std::to_string(m_size) +
                             " without the other ranks (did every rank make the same tuner "
                             "calls in the same order?)");
}

void communicator::all_reduce(std::span<double> values, MPI_Op op, const char *what) {
  if (m_broken) {
    throw communicator_timeout("tunekit::mpi: an earlier collective timed out; the ranks are out "
                               "of step and this communicator cannot be used any more");
  }
  const int n = count_of(values.size(), what);
  if (m_options.timeout.count() == 0) {
    MPI_Request req = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(MPI_IN_PLACE, values.data(), n, MPI_DOUBLE, op, m_comm, &req),
          "MPI_Iallreduce");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
    return;
  }
  // The buffer must outlive a timeout, so the reduction works on a copy.
  std::vector<std::byte> buffer(values.size_bytes());
  if (!values.empty()) {
    std::memcpy(buffer.data(), values.data(), values.size_bytes());
  }
  MPI_Request req = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(MPI_IN_PLACE, buffer.data(), n, MPI_DOUBLE, op, m_comm, &req),
        "MPI_Iallreduce");
  wait(req, buffer, what);
  if (!values.empty()) {
    std::memcpy(values.data(), buffer.data(), values.size_bytes());
  }
}

void communicator::all_reduce_max(std::span<double> values) {
  all_reduce(values, MPI_MAX, "all-reduce (max)");
}

void communicator::all_reduce_min(std::span<double> values) {
  all_reduce(values, MPI_MIN, "all-reduce (min)");
}

void communicator::broadcast(std::span<std::byte> bytes, int root) {
  if (m_broken) {
    throw communicator_timeout("tunekit::mpi: an earlier collective timed out; the ranks are out "
                               "of step and this communicator cannot be used any more");
  }
  if (root < 0 || root >= m_size) {
    throw error("tunekit::mpi: broadcast root " + std::to_string(root) + " is not a rank of a " +
                std::to_string(m_size) + "-rank communicator");
  }
  const int n = count_of(bytes.size(), "broadcast");
  if (m_options.timeout.count() == 0) {
    MPI_Request req = MPI_REQUEST_NULL;
    check(MPI_Ibcast(bytes.data(), n, MPI_BYTE, root, m_comm, &req), "MPI_Ibcast");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
    return;
  }
  std::vector<std::byte> buffer(bytes.begin(), bytes.end());
  MPI_Request req = MPI_REQUEST_NULL;
  check(MPI_Ibcast(buffer.data(), n, MPI_BYTE, root, m_comm, &req), "MPI_Ibcast");
  wait(req, buffer, "broadcast");
  std::copy(buffer.begin(), buffer.end(), bytes.begin());
}

void communicator::barrier() {
  if (m_broken) {
    throw communicator_timeout("tunekit::mpi: an earlier collective timed out; the ranks are out "
                               "of step and this communicator cannot be used any more");
  }
  MPI_Request req = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(m_comm, &req), "MPI_Ibarrier");
  if (m_options.timeout.count() == 0) {
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
    return;
  }
  std::vector<std::byte> none;
  wait(req, none, "barrier");
}

namespace {
tunekit::communicator *world_when_initialized() {
  if (!mpi_usable()) {
    return nullptr;
  }
  static communicator world(MPI_COMM_WORLD);
  return &world;
}
} // namespace

void use_world_by_default() { set_communicator_fallback(&world_when_initialized); }

} // namespace tunekit::mpi
