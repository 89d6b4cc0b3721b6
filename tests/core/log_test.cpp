#include "test_support.hpp"

#include <tunekit/log.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>

using tunekit_test::temp_dir;

TEST(log, default_sink_prints_info_on_stdout_and_warnings_on_stderr) {
  const auto sink = tunekit::default_log_sink();
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  sink(tunekit::log_level::info, "searching 6 of 8 configs");
  sink(tunekit::log_level::warning, "skipping winner cache entry");
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "[tunekit] INFO searching 6 of 8 configs\n");
  EXPECT_EQ(err, "[tunekit] WARNING skipping winner cache entry\n");
}

TEST(log, a_verbose_call_without_a_sink_reports_on_stdout) {
  temp_dir dir;
  tunekit::tuner_options o;
  o.version = "v1";
  o.process = tunekit::process_context{.env = tunekit_test::test_env(dir.path())}; // no sink
  o.hardware = tunekit_test::test_hardware();
  o.measurer = std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
  auto f = tunekit::autotune(
      "stdout_scale", tunekit::config_space::product({{"BLOCK", {256, 512}}}),
      [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
      [](int, const tunekit::config &c) { return c.get_int("BLOCK"); }, o);

  ::testing::internal::CaptureStdout();
  const auto quiet = f(64);
  const std::string nothing = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(quiet, 512);
  EXPECT_EQ(nothing, "");

  ::testing::internal::CaptureStdout();
  static_cast<void>(f.with({.verbose = true})(128));
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("[tunekit] INFO tuner 'stdout_scale', key (128): searching 2 of 2 configs"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("candidate 2/2 [BLOCK=512]"), std::string::npos) << out;
  EXPECT_NE(out.find("winner [BLOCK=512]"), std::string::npos) << out;
}
