// Launcher detection: what mpirun announces, and each launcher's variables in isolation.

#include "mpi_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace tunekit_mpi_test;
using tunekit::launcher_info;
using tunekit::launcher_kind;

constexpr const char *all_vars[] = {"RANK",
                                    "LOCAL_RANK",
                                    "WORLD_SIZE",
                                    "OMPI_COMM_WORLD_RANK",
                                    "OMPI_COMM_WORLD_LOCAL_RANK",
                                    "OMPI_COMM_WORLD_SIZE",
                                    "PMI_RANK",
                                    "PMI_SIZE",
                                    "MPI_LOCALRANKID"};

// Clears the launcher variables, sets the given ones, and restores everything at scope exit.
class scoped_env {
public:
  explicit scoped_env(std::vector<std::pair<const char *, const char *>> vars) {
    for (const char *name : all_vars) {
      const char *v = std::getenv(name);
      m_saved.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(name);
    }
    for (const auto &[name, value] : vars) {
      ::setenv(name, value, 1);
    }
  }
  ~scoped_env() {
    for (const auto &[name, value] : m_saved) {
      if (value) {
        ::setenv(name, value->c_str(), 1);
      } else {
        ::unsetenv(name);
      }
    }
  }
  scoped_env(const scoped_env &) = delete;
  scoped_env &operator=(const scoped_env &) = delete;

private:
  std::vector<std::pair<const char *, std::optional<std::string>>> m_saved;
};

TEST(Launcher, MpirunIsDetected) {
  const auto l = launcher_info::from_env();
  EXPECT_EQ(l.kind, launcher_kind::open_mpi);
  EXPECT_EQ(l.rank, world_rank());
  EXPECT_EQ(l.world_size, world_size());
  EXPECT_EQ(l.local_rank, world().local_rank()); // one node
  EXPECT_EQ(l.log_file_name(), "rank-" + std::to_string(world_rank()) + ".log");
}

TEST(Launcher, NoVariablesMeanOneProcess) {
  const scoped_env env({});
  const auto l = launcher_info::from_env();
  EXPECT_EQ(l, launcher_info{});
  EXPECT_FALSE(l.multi_rank());
  EXPECT_EQ(l.to_string(), "single process");
  EXPECT_EQ(l.log_file_name(), "rank-0.log");
}

TEST(Launcher, Torchrun) {
  const scoped_env env({{"RANK", "5"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}});
  const auto l = launcher_info::from_env();
  EXPECT_EQ(l, (launcher_info{launcher_kind::torchrun, 5, 1, 8}));
  EXPECT_EQ(l.to_string(), "rank 5/8 (local 1, torchrun)");
}

TEST(Launcher, TorchrunWinsOverOpenMpi) {
  const scoped_env env({{"RANK", "1"},
                        {"WORLD_SIZE", "2"},
                        {"OMPI_COMM_WORLD_RANK", "3"},
                        {"OMPI_COMM_WORLD_SIZE", "4"}});
  const auto l = launcher_info::from_env();
  EXPECT_EQ(l, (launcher_info{launcher_kind::torchrun, 1, 0, 2}));
}

TEST(Launcher, OpenMpi) {
  const scoped_env env({{"OMPI_COMM_WORLD_RANK", "3"},
                        {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                        {"OMPI_COMM_WORLD_SIZE", "4"}});
  EXPECT_EQ(launcher_info::from_env(), (launcher_info{launcher_kind::open_mpi, 3, 3, 4}));
}

TEST(Launcher, Pmi) {
  const scoped_env env({{"PMI_RANK", "2"}, {"PMI_SIZE", "16"}, {"MPI_LOCALRANKID", "2"}});
  EXPECT_EQ(launcher_info::from_env(), (launcher_info{launcher_kind::pmi, 2, 2, 16}));
}

TEST(Launcher, RankWithoutSizeIsIgnored) {
  const scoped_env env({{"RANK", "2"}, {"LOCAL_RANK", "0"}});
  EXPECT_EQ(launcher_info::from_env().kind, launcher_kind::none);
}

TEST(Launcher, BadValuesAreErrorsNamingTheVariable) {
  {
    const scoped_env env({{"RANK", "two"}, {"WORLD_SIZE", "4"}});
    try {
      static_cast<void>(launcher_info::from_env());
      ADD_FAILURE() << "no error";
    } catch (const tunekit::error &e) {
      EXPECT_NE(std::string(e.what()).find("RANK='two'"), std::string::npos) << e.what();
    }
  }
  {
    const scoped_env env({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
    EXPECT_THROW(static_cast<void>(launcher_info::from_env()), tunekit::error);
  }
  {
    const scoped_env env({{"PMI_RANK", "-1"}, {"PMI_SIZE", "4"}});
    EXPECT_THROW(static_cast<void>(launcher_info::from_env()), tunekit::error);
  }
}

} // namespace
