// Launcher detection under mpirun: what Open MPI announces matches the world communicator. Each
// launcher's variables in isolation are tested in tests/core/launcher_test.cpp.

#include "mpi_test_support.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace tunekit_mpi_test;
using tunekit::launcher_info;
using tunekit::launcher_kind;

TEST(Launcher, MpirunIsDetected) {
  const auto l = launcher_info::from_env();
  EXPECT_EQ(l.kind, launcher_kind::open_mpi);
  EXPECT_EQ(l.rank, world_rank());
  EXPECT_EQ(l.world_size, world_size());
  EXPECT_EQ(l.local_rank, world().local_rank()); // one node
  EXPECT_EQ(l.log_file_name(), "rank-" + std::to_string(world_rank()) + ".log");
}

} // namespace
