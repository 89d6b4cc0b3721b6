// The temporary files of write_file_atomically: names no other writer can pick (a random suffix,
// created with O_EXCL), so a file left by a killed writer, or one of a process with the same PID in
// another PID namespace, never blocks a store; and stale ones (older than 10 minutes, named by the
// exact pattern of the same target) are removed when that target is written again. Beside them,
// the rest of the OS layer (os.hpp): the whole-file reader and run_and_wait.

#include "os.hpp"
#include "test_support.hpp"

#include <tunekit/winner_cache.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using tunekit_test::temp_dir;

namespace {

std::set<std::string> names_in(const std::filesystem::path &dir) {
  std::set<std::string> out;
  for (const auto &e : std::filesystem::directory_iterator(dir)) {
    out.insert(e.path().filename().string());
  }
  return out;
}

void age(const std::filesystem::path &p, std::chrono::minutes by) {
  std::filesystem::last_write_time(p, std::filesystem::file_time_type::clock::now() - by);
}

} // namespace

TEST(temp_file, a_leftover_with_the_name_the_old_scheme_would_pick_does_not_stop_a_store) {
  temp_dir dir;
  const auto target = dir.path() / "entry.json";
  // What a killed writer with this PID (PID 1 in every container) left: `.<file>.tmp.<pid>.<n>`.
  for (int n = 0; n < 64; ++n) {
    tunekit_test::write_text(
        dir.path() / (".entry.json.tmp." + std::to_string(::getpid()) + "." + std::to_string(n)),
        "partial");
  }
  for (int i = 0; i < 8; ++i) {
    ASSERT_NO_THROW(
        tunekit::detail::write_file_atomically(target, "{\"round\": " + std::to_string(i) + "}"));
    EXPECT_EQ(tunekit_test::read_text(target), "{\"round\": " + std::to_string(i) + "}");
  }
  // Fresh leftovers (another writer may still be writing them) are kept; no new ones are left.
  EXPECT_EQ(names_in(dir.path()).size(), 65U);
}

TEST(temp_file, stale_temp_files_of_every_target_are_removed_and_fresh_ones_kept) {
  temp_dir dir;
  const auto target = dir.path() / "entry.json";
  // Leftovers of this target and of others in the folder (entries a dead writer was storing,
  // the log beside an entry): the first write into the folder removes them all.
  const std::vector<std::string> stale{".entry.json.tmp.1.0",
                                       ".entry.json.tmp.1.17",
                                       ".entry.json.tmp.0123456789abcdef",
                                       ".other.json.tmp.1.0",
                                       ".f00d.json.tmp.fedcba9876543210",
                                       ".entry.json.log.tmp.1.0"};
  const std::vector<std::string> kept_old{
      ".entry.json.tmp.",         // not the pattern: no suffix
      ".entry.json.tmp.1.0.keep", // not the pattern
      ".entry.json.tmp.XYZ",      // not the pattern
      "entry.json.tmp.1.0",       // not hidden
      "..tmp.1.0",                // no target
      ".tmp.1.0",                 // no target
  };
  for (const auto &n : stale) {
    tunekit_test::write_text(dir.path() / n, "partial");
    age(dir.path() / n, std::chrono::minutes(11));
  }
  for (const auto &n : kept_old) {
    tunekit_test::write_text(dir.path() / n, "other");
    age(dir.path() / n, std::chrono::minutes(60));
  }
  const std::string fresh = ".entry.json.tmp.fedcba9876543210";
  tunekit_test::write_text(dir.path() / fresh, "being written");
  age(dir.path() / fresh, std::chrono::minutes(5));

  tunekit::detail::write_file_atomically(target, "{}");

  const auto names = names_in(dir.path());
  for (const auto &n : stale) {
    EXPECT_EQ(names.count(n), 0U) << n;
  }
  for (const auto &n : kept_old) {
    EXPECT_EQ(names.count(n), 1U) << n;
  }
  EXPECT_EQ(names.count(fresh), 1U);
  EXPECT_EQ(names.count("entry.json"), 1U);
  EXPECT_EQ(names.size(), kept_old.size() + 2);
}

TEST(temp_file, many_threads_storing_the_same_file_all_succeed) {
  temp_dir dir;
  const auto target = dir.path() / "entry.json";
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        try {
          tunekit::detail::write_file_atomically(target, "{\"writer\": " + std::to_string(t) + "}");
        } catch (const std::exception &) {
          ++failures;
        }
      }
    });
  }
  for (auto &t : threads) {
    t.join();
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"entry.json"});
  EXPECT_TRUE(tunekit_test::read_text(target).starts_with("{\"writer\": "));
}

TEST(temp_file, many_processes_storing_the_same_file_all_succeed) {
  temp_dir dir;
  const auto target = dir.path() / "entry.json";
  std::vector<pid_t> children;
  for (int p = 0; p < 16; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failed = 0;
      for (int i = 0; i < 25; ++i) {
        try {
          tunekit::detail::write_file_atomically(target, "{\"writer\": " + std::to_string(p) + "}");
        } catch (...) {
          ++failed;
        }
      }
      ::_exit(failed == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (const pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    failed += WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"entry.json"});
}

TEST(os, read_file_gives_the_bytes_or_nothing) {
  temp_dir dir;
  const auto target = dir.path() / "bytes.bin";
  const std::string bytes("a\0b\n\xff", 5);
  tunekit::detail::write_file_atomically(target, bytes);
  EXPECT_EQ(tunekit::detail::read_file(target), bytes);
  tunekit::detail::write_file_atomically(target, "");
  EXPECT_EQ(tunekit::detail::read_file(target), std::string());
  EXPECT_EQ(tunekit::detail::read_file(dir.path() / "missing"), std::nullopt);
  EXPECT_EQ(tunekit::detail::read_file(dir.path()), std::nullopt) << "a directory";
}

TEST(os, run_and_wait_returns_the_exit_status) {
  using tunekit::detail::run_and_wait;
  EXPECT_EQ(run_and_wait({"true"}), 0);
  EXPECT_EQ(run_and_wait({"sh", "-c", "exit 3"}), 3);
  EXPECT_EQ(run_and_wait({"sh", "-c", "kill -9 $$"}), 128 + 9);
  EXPECT_EQ(run_and_wait({"/nonexistent/tunekit-program"}), -1);
  EXPECT_EQ(run_and_wait({}), -1);
}
