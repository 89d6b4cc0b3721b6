// Compile workers (`compile_options::worker`): NVRTC in `tunekit-cuda-worker --compile` processes
// gives the same binaries as NVRTC in this process, failures keep NVRTC's log, a dying worker fails
// its config only, and nothing is left in the temporary directory. No GPU needed.

#include "../core/test_support.hpp"
#include "rtc_nvrtc.hpp"
#include "rtc_test_support.hpp"

#include <tunekit/cuda/rtc.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace tc = tunekit::cuda;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

tc::compile_options options(const std::filesystem::path &cache_dir, const log_capture &log,
                            std::vector<std::string> worker) {
  tc::compile_options o;
  o.arch = "sm_90";
  o.cache = std::make_shared<const tc::kernel_cache>(cache_dir, log.sink());
  o.threads = 2;
  o.log = log.sink();
  o.worker = std::move(worker);
  return o;
}

std::vector<std::string> compile_worker() { return {TUNEKIT_CUDA_WORKER, "--compile"}; }

tunekit::config elems(int e) { return tunekit::config{{"ELEMS", e}}; }

} // namespace

TEST(rtc_worker, workers_make_the_binaries_nvrtc_makes_in_this_process) {
  temp_dir here_dir;
  temp_dir worker_dir;
  log_capture log;
  tc::kernel_program here(tc::test::scale_definition(), options(here_dir.path(), log, {}));
  tc::kernel_program there(tc::test::scale_definition(),
                           options(worker_dir.path(), log, compile_worker()));
  std::vector<tunekit::config> configs;
  for (int e = 1; e <= 6; ++e) {
    configs.push_back(elems(e));
  }
  there.prepare(configs); // two compile threads, each with a worker of its own
  for (const auto &c : configs) {
    const auto a = here.compile(c);
    const auto b = there.compile(c);
    ASSERT_EQ(b.status, tc::compile_status::compiled) << b.reason;
    EXPECT_EQ(a.key, b.key);
    const auto from_here = tc::kernel_cache(here_dir.path()).load(a.key, "sm_90");
    const auto from_worker = tc::kernel_cache(worker_dir.path()).load(b.key, "sm_90");
    ASSERT_TRUE(from_here.found()) << from_here.detail;
    ASSERT_TRUE(from_worker.found()) << from_worker.detail;
    EXPECT_EQ(from_worker.value->binary, from_here.value->binary) << c.to_string();
    EXPECT_EQ(from_worker.value->lowered_name, "scale");
  }
  EXPECT_EQ(there.summary().compiled, 6U);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST(rtc_worker, template_arguments_come_back_with_their_lowered_name) {
  temp_dir dir;
  log_capture log;
  tc::kernel_program program(tc::test::fill_definition(),
                             options(dir.path(), log, compile_worker()));
  const auto r = program.compile(tunekit::config{{"TILE", 64}});
  ASSERT_EQ(r.status, tc::compile_status::compiled) << r.reason;
  const auto stored = tc::kernel_cache(dir.path()).load(r.key, "sm_90");
  ASSERT_TRUE(stored.found()) << stored.detail;
  EXPECT_EQ(stored.value->lowered_name, "_Z4fillILi64EEvPfi"); // fill<64>(float*, int)
}

TEST(rtc_worker, a_compile_error_in_a_worker_keeps_the_nvrtc_log) {
  temp_dir dir;
  log_capture log;
  tc::kernel_program program(tc::test::scale_definition(),
                             options(dir.path(), log, compile_worker()));
  try {
    static_cast<void>(program.compile(elems(32))); // static_assert(ELEMS <= 16)
    FAIL() << "ELEMS=32 compiled";
  } catch (const tunekit::error &e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("scale.cu(", 0), 0U) << what;
    EXPECT_NE(what.find("ELEMS is too large for this kernel"), std::string::npos) << what;
    EXPECT_NE(what.find("ELEMS=32"), std::string::npos) << what;
  }
  // The worker lives on: the next config compiles.
  EXPECT_EQ(program.compile(elems(8)).status, tc::compile_status::compiled);
}

TEST(rtc_worker, a_worker_that_dies_fails_its_config_with_the_reason) {
  temp_dir dir;
  log_capture log;
  tc::kernel_program program(
      tc::test::scale_definition(),
      options(dir.path(), log, {"/bin/sh", "-c", "read line; echo 'out of memory' >&2; exit 3"}));
  const auto r = [&] {
    try {
      static_cast<void>(program.compile(elems(4)));
    } catch (const tunekit::error &) {
    }
    return program.record(elems(4));
  }();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, tc::compile_status::failed);
  EXPECT_NE(r->reason.find("compile worker"), std::string::npos) << r->reason;
  EXPECT_NE(r->reason.find("exit status 3"), std::string::npos) << r->reason;
  EXPECT_NE(r->reason.find("out of memory"), std::string::npos) << r->reason;
  EXPECT_NE(r->reason.find("ELEMS=4"), std::string::npos) << r->reason;
  EXPECT_TRUE(tc::kernel_cache(dir.path()).list().empty());
}

TEST(rtc_worker, nothing_is_left_in_the_temporary_directory) {
  temp_dir dir;
  temp_dir tmp;
  const char *old = std::getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  {
    log_capture log;
    tc::kernel_program program(tc::test::scale_definition(),
                               options(dir.path(), log, compile_worker()));
    EXPECT_EQ(program.compile(elems(2)).status, tc::compile_status::compiled);
    EXPECT_FALSE(std::filesystem::is_empty(tmp.path())); // the workers' directory
  }
  if (old != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(rtc_worker, an_unreadable_request_is_answered_with_an_error_and_the_worker_goes_on) {
  std::istringstream in("not json\n{\"source\": 1}\n");
  std::ostringstream out;
  EXPECT_EQ(tc::rtc_detail::serve_compiles(in, out), 0);
  std::istringstream replies(out.str());
  std::string line;
  int count = 0;
  while (std::getline(replies, line)) {
    ++count;
    EXPECT_EQ(line.rfind("{\"error\":", 0), 0U) << line;
  }
  EXPECT_EQ(count, 2);
}
