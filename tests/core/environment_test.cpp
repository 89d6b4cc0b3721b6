// TUNEKIT_* variables read by environment::from_env(): each test saves the variables it sets and
// restores them, so the rest of the suite never depends on the order tests run in (as
// launcher_test.cpp does for the launcher's variables).

#include "test_support.hpp"

#include <tunekit/environment.hpp>
#include <tunekit/process_context.hpp>
#include <tunekit/tuner.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace {

const char *const variables[] = {
    "TUNEKIT_CACHE_DIR",     "TUNEKIT_ALWAYS_TUNE",
    "TUNEKIT_VERSION_CHECK", "TUNEKIT_VERBOSE",
    "TUNEKIT_ARTIFACT_DIR",  "TUNEKIT_LOOKUP_TABLE",
    "TUNEKIT_LOG_DIR",       "TUNEKIT_PROGRESS",
    "XDG_CACHE_HOME",        "HOME",
};

class environment_test : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *name : variables) {
      const char *v = std::getenv(name);
      m_saved[name] = v == nullptr ? std::nullopt : std::optional<std::string>(v);
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto &[name, v] : m_saved) {
      if (v) {
        ::setenv(name.c_str(), v->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  static void set(const char *name, const char *v) { ::setenv(name, v, 1); }

private:
  std::map<std::string, std::optional<std::string>> m_saved;
};

} // namespace

TEST_F(environment_test, defaults_when_nothing_is_set) {
  set("HOME", "/home/someone");
  const auto e = tunekit::environment::from_env();
  EXPECT_EQ(e.cache_dir, std::filesystem::path("/home/someone/.cache/tunekit"));
  EXPECT_FALSE(e.always_tune);
  EXPECT_FALSE(e.version_check);
  EXPECT_FALSE(e.verbose);
  EXPECT_FALSE(e.progress);
  EXPECT_TRUE(e.artifact_dir.empty());
  EXPECT_TRUE(e.lookup_table.empty());
  EXPECT_EQ(e.log_dir, std::filesystem::path(".autotune_logs"));
}

TEST_F(environment_test, cache_dir_precedence) {
  set("HOME", "/home/someone");
  set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(tunekit::environment::from_env().cache_dir, std::filesystem::path("/xdg/tunekit"));
  set("TUNEKIT_CACHE_DIR", "/explicit/cache");
  EXPECT_EQ(tunekit::environment::from_env().cache_dir, std::filesystem::path("/explicit/cache"));
}

TEST_F(environment_test, cache_dir_without_home_falls_back_to_temp) {
  const auto e = tunekit::environment::from_env();
  EXPECT_FALSE(e.cache_dir.empty());
  EXPECT_EQ(e.cache_dir.filename(), "tunekit-cache");
}

TEST_F(environment_test, flags_accept_the_usual_spellings) {
  for (const char *on : {"1", "true", "TRUE", "Yes", "on", "ON"}) {
    set("TUNEKIT_ALWAYS_TUNE", on);
    set("TUNEKIT_VERSION_CHECK", on);
    set("TUNEKIT_VERBOSE", on);
    set("TUNEKIT_PROGRESS", on);
    const auto e = tunekit::environment::from_env();
    EXPECT_TRUE(e.always_tune) << on;
    EXPECT_TRUE(e.version_check) << on;
    EXPECT_TRUE(e.verbose) << on;
    EXPECT_TRUE(e.progress) << on;
  }
  for (const char *off : {"0", "false", "no", "off", "", "2", "enabled"}) {
    set("TUNEKIT_ALWAYS_TUNE", off);
    set("TUNEKIT_VERSION_CHECK", off);
    set("TUNEKIT_VERBOSE", off);
    set("TUNEKIT_PROGRESS", off);
    const auto e = tunekit::environment::from_env();
    EXPECT_FALSE(e.always_tune) << off;
    EXPECT_FALSE(e.version_check) << off;
    EXPECT_FALSE(e.verbose) << off;
    EXPECT_FALSE(e.progress) << off;
  }
}

TEST_F(environment_test, flags_are_independent) {
  set("TUNEKIT_VERSION_CHECK", "1");
  const auto e = tunekit::environment::from_env();
  EXPECT_FALSE(e.always_tune);
  EXPECT_TRUE(e.version_check);
  EXPECT_FALSE(e.verbose);
}

TEST_F(environment_test, paths) {
  set("TUNEKIT_ARTIFACT_DIR", "/artifacts");
  set("TUNEKIT_LOOKUP_TABLE", "/tables/gemm.json");
  set("TUNEKIT_LOG_DIR", "/logs");
  const auto e = tunekit::environment::from_env();
  EXPECT_EQ(e.artifact_dir, std::filesystem::path("/artifacts"));
  EXPECT_EQ(e.lookup_table, std::filesystem::path("/tables/gemm.json"));
  EXPECT_EQ(e.log_dir, std::filesystem::path("/logs"));
}

TEST_F(environment_test, read_once_not_live) {
  set("TUNEKIT_CACHE_DIR", "/first");
  const auto e = tunekit::environment::from_env();
  set("TUNEKIT_CACHE_DIR", "/second");
  EXPECT_EQ(e.cache_dir, std::filesystem::path("/first"));
  EXPECT_EQ(tunekit::environment::from_env().cache_dir, std::filesystem::path("/second"));
}

// A tuner and a contextual tuner without a process context read one (environment, launcher, log
// sink) once, when they are built; later changes of the variables do not reach them.
TEST_F(environment_test, a_tuner_without_a_process_context_reads_one_when_built) {
  const tunekit_test::scoped_env launcher(
      {"RANK", "LOCAL_RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
       "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
      {{"RANK", "2"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "4"}});
  set("TUNEKIT_CACHE_DIR", "/first");
  const auto p = tunekit::process_context::from_env();
  EXPECT_EQ(p.env.cache_dir, std::filesystem::path("/first"));
  EXPECT_EQ(p.launcher.rank, 2);
  EXPECT_EQ(p.launcher.world_size, 4);
  EXPECT_TRUE(static_cast<bool>(p.log));

  tunekit::tuner t("process_context", tunekit::config_space{{{"BLOCK", 1}}, {{"BLOCK", 2}}},
                   tunekit::tuner_options{.use_disk_cache = false});
  set("TUNEKIT_CACHE_DIR", "/second");
  ASSERT_TRUE(t.options().process.has_value());
  EXPECT_EQ(t.options().process->env.cache_dir, std::filesystem::path("/first"));
  EXPECT_EQ(t.env().cache_dir, std::filesystem::path("/first"));
  EXPECT_EQ(t.options().process->launcher.rank, 2);
  EXPECT_TRUE(static_cast<bool>(t.options().process->log));
}
