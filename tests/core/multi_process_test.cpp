// Two processes sharing one cache directory: the first searches and stores the winner, the
// second is served from the cache without measuring anything. The helper process is
// tests/core/cache_process_main.cpp; its path comes from the build (TUNEKIT_CACHE_PROCESS).

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace {

struct result {
  int status = -1;
  std::string out;
};

std::string quoted(const std::string &s) {
  std::string q = "'";
  for (char c : s) {
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return q + "'";
}

result run(const std::string &command) {
  result r;
  FILE *pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return r;
  }
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe) != nullptr) {
    r.out += buf.data();
  }
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string helper(const std::filesystem::path &cache, const std::string &n = "1024") {
  return quoted(TUNEKIT_CACHE_PROCESS) + " " + quoted(cache.string()) + " " + n;
}

} // namespace

TEST(multi_process, second_process_is_served_from_the_cache_without_measuring) {
  tunekit_test::temp_dir dir;
  const auto first = run(helper(dir.path()));
  ASSERT_EQ(first.status, 0) << first.out;
  EXPECT_EQ(first.out, "source=search measured=6 winner=[BLOCK=512, num_warps=4]\n");

  const auto second = run(helper(dir.path()));
  ASSERT_EQ(second.status, 0) << second.out;
  EXPECT_EQ(second.out, "source=cache measured=0 winner=[BLOCK=512, num_warps=4]\n");

  // Another key in a third process is a miss; the first key still hits afterwards.
  const auto other = run(helper(dir.path(), "256"));
  ASSERT_EQ(other.status, 0) << other.out;
  EXPECT_EQ(other.out, "source=search measured=2 winner=[BLOCK=256, num_warps=4]\n");
  EXPECT_EQ(run(helper(dir.path())).out,
            "source=cache measured=0 winner=[BLOCK=512, num_warps=4]\n");
}

TEST(multi_process, concurrent_writers_leave_one_valid_entry) {
  tunekit_test::temp_dir dir;
  // Four processes tune the same key at once; whatever the interleaving, every rename is atomic.
  std::string all;
  for (int i = 0; i < 4; ++i) {
    all += helper(dir.path()) + " & ";
  }
  const auto together = run("{ " + all + "wait; } 2>/dev/null");
  ASSERT_EQ(together.status, 0) << together.out;
  EXPECT_NE(together.out.find("winner=[BLOCK=512, num_warps=4]"), std::string::npos)
      << together.out;

  const auto after = run(helper(dir.path()));
  EXPECT_EQ(after.out, "source=cache measured=0 winner=[BLOCK=512, num_warps=4]\n");
  const auto files = tunekit_test::files_below(dir.path());
  EXPECT_EQ(files.size(), 2U); // one entry and its log, no temp files
  for (const auto &f : files) {
    EXPECT_NE(f.filename().string().front(), '.') << f;
  }
}

TEST(multi_process, helper_reports_usage_errors) {
  EXPECT_EQ(run(quoted(TUNEKIT_CACHE_PROCESS) + " 2>/dev/null").status, 2);
}

TEST(multi_process, a_key_string_that_is_not_utf8_is_stored_and_read_back_by_another_process) {
  tunekit_test::temp_dir dir;
  // The key holds "caf\xe9" (Latin-1, not UTF-8): the first process searches and stores it, the
  // second is served the same winner from the cache.
  const auto first = run(helper(dir.path()) + " 636166e9");
  ASSERT_EQ(first.status, 0) << first.out;
  EXPECT_EQ(first.out, "source=search measured=6 winner=[BLOCK=512, num_warps=4]\n");

  const auto second = run(helper(dir.path()) + " 636166e9");
  ASSERT_EQ(second.status, 0) << second.out;
  EXPECT_EQ(second.out, "source=cache measured=0 winner=[BLOCK=512, num_warps=4]\n");

  // The UTF-8 key "café" is another key: searched, not served the Latin-1 entry.
  const auto other = run(helper(dir.path()) + " 636166c3a9");
  ASSERT_EQ(other.status, 0) << other.out;
  EXPECT_EQ(other.out, "source=search measured=6 winner=[BLOCK=512, num_warps=4]\n");
}
