// Launcher detection (launcher.hpp): each launcher's variables in isolation, their precedence,
// bad values, and how a tuner takes its launcher. Every test sets the variables it needs for its
// own scope and restores them; tests/mpi/launcher_test.cpp checks what mpirun itself announces.

#include "test_support.hpp"

#include <tunekit/launcher.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using tunekit::launcher_info;
using tunekit::launcher_kind;
using tunekit_test::log_capture;
using tunekit_test::scoped_env;
using tunekit_test::temp_dir;

namespace {

// Every variable launcher_info::from_env reads.
const std::vector<std::string> launcher_vars{"RANK",
                                             "LOCAL_RANK",
                                             "WORLD_SIZE",
                                             "OMPI_COMM_WORLD_RANK",
                                             "OMPI_COMM_WORLD_LOCAL_RANK",
                                             "OMPI_COMM_WORLD_SIZE",
                                             "PMI_RANK",
                                             "PMI_SIZE",
                                             "MPI_LOCALRANKID"};

// Clears every launcher variable, then sets `vars`, for the scope of the result.
scoped_env launcher_env(std::vector<std::pair<std::string, std::string>> vars) {
  return scoped_env(launcher_vars, std::move(vars));
}

} // namespace

TEST(launcher, no_variables_mean_one_process) {
  const auto env = launcher_env({});
  const auto l = launcher_info::from_env();
  EXPECT_EQ(l, launcher_info{});
  EXPECT_FALSE(l.multi_rank());
  EXPECT_EQ(l.to_string(), "single process");
  EXPECT_EQ(l.log_file_name(), "rank-0.log");
}

TEST(launcher, torchrun) {
  const auto env = launcher_env({{"RANK", "5"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}});
  const auto l = launcher_info::from_env();
  EXPECT_EQ(l, (launcher_info{launcher_kind::torchrun, 5, 1, 8}));
  EXPECT_TRUE(l.multi_rank());
  EXPECT_EQ(l.to_string(), "rank 5/8 (local 1, torchrun)");
  EXPECT_EQ(l.log_file_name(), "rank-5.log");
}

TEST(launcher, torchrun_wins_over_open_mpi) {
  const auto env = launcher_env({{"RANK", "1"},
                                 {"WORLD_SIZE", "2"},
                                 {"OMPI_COMM_WORLD_RANK", "3"},
                                 {"OMPI_COMM_WORLD_SIZE", "4"}});
  EXPECT_EQ(launcher_info::from_env(), (launcher_info{launcher_kind::torchrun, 1, 0, 2}));
}

TEST(launcher, open_mpi) {
  const auto env = launcher_env({{"OMPI_COMM_WORLD_RANK", "3"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                                 {"OMPI_COMM_WORLD_SIZE", "4"}});
  EXPECT_EQ(launcher_info::from_env(), (launcher_info{launcher_kind::open_mpi, 3, 3, 4}));
}

TEST(launcher, open_mpi_wins_over_pmi) {
  const auto env = launcher_env({{"OMPI_COMM_WORLD_RANK", "0"},
                                 {"OMPI_COMM_WORLD_SIZE", "2"},
                                 {"PMI_RANK", "1"},
                                 {"PMI_SIZE", "2"}});
  EXPECT_EQ(launcher_info::from_env().kind, launcher_kind::open_mpi);
}

TEST(launcher, pmi) {
  const auto env = launcher_env({{"PMI_RANK", "2"}, {"PMI_SIZE", "16"}, {"MPI_LOCALRANKID", "2"}});
  EXPECT_EQ(launcher_info::from_env(), (launcher_info{launcher_kind::pmi, 2, 2, 16}));
}

TEST(launcher, rank_without_size_is_ignored) {
  const auto env = launcher_env({{"RANK", "2"}, {"LOCAL_RANK", "0"}});
  EXPECT_EQ(launcher_info::from_env().kind, launcher_kind::none);
}

TEST(launcher, empty_values_read_as_unset) {
  const auto env = launcher_env({{"RANK", ""}, {"WORLD_SIZE", "4"}});
  EXPECT_EQ(launcher_info::from_env().kind, launcher_kind::none);
}

TEST(launcher, bad_values_are_errors_naming_the_variable) {
  {
    const auto env = launcher_env({{"RANK", "two"}, {"WORLD_SIZE", "4"}});
    try {
      static_cast<void>(launcher_info::from_env());
      ADD_FAILURE() << "no error";
    } catch (const tunekit::error &e) {
      EXPECT_NE(std::string(e.what()).find("RANK='two'"), std::string::npos) << e.what();
    }
  }
  {
    const auto env = launcher_env({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
    EXPECT_THROW(static_cast<void>(launcher_info::from_env()), tunekit::error);
  }
  {
    const auto env = launcher_env({{"PMI_RANK", "-1"}, {"PMI_SIZE", "4"}});
    EXPECT_THROW(static_cast<void>(launcher_info::from_env()), tunekit::error);
  }
  {
    const auto env = launcher_env({{"RANK", "0"}, {"LOCAL_RANK", "4"}, {"WORLD_SIZE", "4"}});
    EXPECT_THROW(static_cast<void>(launcher_info::from_env()), tunekit::error);
  }
  {
    const auto env = launcher_env({{"RANK", "0"}, {"WORLD_SIZE", "0"}});
    EXPECT_THROW(static_cast<void>(launcher_info::from_env()), tunekit::error);
  }
}

TEST(launcher, variables_are_restored_after_a_scope) {
  const auto outer = launcher_env({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  {
    const auto inner = launcher_env({});
    EXPECT_EQ(launcher_info::from_env().kind, launcher_kind::none);
  }
  EXPECT_EQ(launcher_info::from_env(), (launcher_info{launcher_kind::torchrun, 1, 0, 2}));
}

TEST(launcher, kind_names) {
  EXPECT_EQ(tunekit::to_string(launcher_kind::none), "none");
  EXPECT_EQ(tunekit::to_string(launcher_kind::torchrun), "torchrun");
  EXPECT_EQ(tunekit::to_string(launcher_kind::open_mpi), "open_mpi");
  EXPECT_EQ(tunekit::to_string(launcher_kind::pmi), "pmi");
}

// The core tests pin a single process through tunekit_test::options, whatever the environment
// says; `process_context::from_env()` reads the launcher from the environment.
TEST(launcher, a_tuner_takes_its_launcher_from_its_options_else_from_the_environment) {
  const auto env = launcher_env({{"RANK", "1"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "2"}});
  temp_dir dir;
  auto run = [&](tunekit::tuner_options o) {
    o.process->env.log_dir = dir.path() / "logs";
    o.use_disk_cache = false;
    auto f = tunekit::autotune(
        "launched", tunekit::config_space{{{"BLOCK", 1}}, {{"BLOCK", 2}}},
        [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
        [](int, const tunekit::config &c) { return c.get_int("BLOCK"); }, std::move(o));
    return f.with({.verbose = true})(0);
  };
  auto meas = std::make_shared<tunekit::simulated_measurer>(
      [](const tunekit::config &c, const tunekit::key &) {
        return static_cast<double>(c.get_int("BLOCK"));
      });

  log_capture pinned;
  EXPECT_EQ(run(tunekit_test::options(dir.path(), meas, pinned)), 1);
  EXPECT_FALSE(pinned.infos().empty()) << "a single process logs its verbose lines";
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "logs")) << "and keeps no rank file";

  log_capture from_env;
  auto o = tunekit_test::options(dir.path(), meas, from_env);
  const auto test_env = o.process->env;
  o.process = tunekit::process_context::from_env(); // rank 1 of 2, local rank 1
  o.process->env = test_env;
  o.process->log = from_env.sink();
  EXPECT_EQ(run(std::move(o)), 1);
  EXPECT_TRUE(from_env.infos().empty()) << "only local rank 0 reaches the console\n"
                                        << from_env.dump();
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "logs" / "rank-1.log"));
}
