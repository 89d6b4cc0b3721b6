// tunekit::mpi::communicator: identity, collectives over the world and over a sub-communicator,
// timeouts, misuse.

#include "mpi_test_support.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <string>

namespace {

using namespace tunekit_mpi_test;
using std::chrono::milliseconds;

TEST(MpiCommunicator, IdentityMatchesMpi) {
  auto &w = world();
  EXPECT_EQ(w.rank(), world_rank());
  EXPECT_EQ(w.size(), world_size());
  EXPECT_EQ(w.handle(), MPI_COMM_WORLD);
  // One node under mpirun: the local rank is the launcher's.
  if (const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) {
    EXPECT_EQ(w.local_rank(), std::stoi(local));
  }
}

class MpiCollectives : public ::testing::TestWithParam<int> {}; // timeout in ms (0: blocking)

TEST_P(MpiCollectives, ReduceBroadcastBarrier) {
  tunekit::mpi::communicator c(MPI_COMM_WORLD, {.timeout = milliseconds(GetParam())});
  const double r = c.rank();
  const double n = c.size();
  std::array<double, 3> v{r, -r, r == 1 ? 7.0 : 1.0};
  c.all_reduce_max(v);
  EXPECT_EQ(v[0], n - 1);
  EXPECT_EQ(v[1], 0.0);
  EXPECT_EQ(v[2], n > 1 ? 7.0 : 1.0);
  std::array<double, 2> u{r, r + 10};
  c.all_reduce_min(u);
  EXPECT_EQ(u[0], 0.0);
  EXPECT_EQ(u[1], 10.0);
  c.all_reduce_max({}); // empty spans are fine

  for (int root = 0; root < c.size(); ++root) {
    std::string text = "from rank " + std::to_string(c.rank());
    text.resize(16, '.');
    c.broadcast(std::as_writable_bytes(std::span(text)), root);
    std::string want = "from rank " + std::to_string(root);
    want.resize(16, '.');
    EXPECT_EQ(text, want);
  }
  c.barrier();
}

INSTANTIATE_TEST_SUITE_P(Blocking, MpiCollectives, ::testing::Values(0));
INSTANTIATE_TEST_SUITE_P(WithTimeout, MpiCollectives, ::testing::Values(5000));

TEST(MpiCommunicator, SubCommunicatorReducesOnlyItsRanks) {
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() % 2, world_rank(), &half);
  {
    tunekit::mpi::communicator c(half);
    EXPECT_EQ(c.size(), (world_size() + 1 - world_rank() % 2) / 2);
    std::array<double, 1> v{static_cast<double>(world_rank())};
    c.all_reduce_max(v);
    // The largest world rank of my parity.
    const int top = world_size() - 1;
    EXPECT_EQ(v[0], top % 2 == world_rank() % 2 ? top : top - 1);
  }
  MPI_Comm_free(&half);
}

TEST(MpiCommunicator, RefusesMisuse) {
  EXPECT_THROW(tunekit::mpi::communicator(MPI_COMM_NULL), tunekit::error);
  EXPECT_THROW(tunekit::mpi::communicator(MPI_COMM_WORLD, {.timeout = milliseconds(-1)}),
               tunekit::error);
  std::array<std::byte, 1> b{};
  EXPECT_THROW(world().broadcast(b, world_size()), tunekit::error);
  EXPECT_THROW(world().broadcast(b, -1), tunekit::error);
}

TEST(MpiCommunicator, ATimedOutCollectiveThrowsAndLeavesTheCommunicatorUnusable) {
  if (world_size() < 2) {
    GTEST_SKIP() << "needs two ranks";
  }
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  {
    tunekit::mpi::communicator c(dup, {.timeout = milliseconds(200)});
    std::array<double, 2> v{1, 2};
    if (c.rank() != 0) {
      // Rank 0 is late: the others give up.
      try {
        c.all_reduce_max(v);
        ADD_FAILURE() << "no timeout";
      } catch (const tunekit::communicator_timeout &e) {
        EXPECT_NE(std::string(e.what()).find("all-reduce (max)"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("200 ms"), std::string::npos) << e.what();
      }
      EXPECT_THROW(c.barrier(), tunekit::communicator_timeout);
      EXPECT_THROW(c.all_reduce_min(v), tunekit::communicator_timeout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (c.rank() == 0) {
      // Arrives late and completes what the others abandoned.
      // tunekit's collectives are nonblocking ones, which only nonblocking ones match.
      MPI_Request req = MPI_REQUEST_NULL;
      MPI_Iallreduce(MPI_IN_PLACE, v.data(), 2, MPI_DOUBLE, MPI_MAX, dup, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      EXPECT_EQ(v[0], 1);
    }
  } // the others' destructors see their abandoned reduction complete
  MPI_Comm_free(&dup);
}

} // namespace
