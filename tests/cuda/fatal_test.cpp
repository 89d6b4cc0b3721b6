// Errors that poison the CUDA context. Each scenario runs in a child process of its own (a death
// test re-executing this binary), since after it no CUDA work in that process can succeed.
#include "gpu_test.hpp"
#include "test_kernels.hpp"

#include <tunekit/cuda/measurer.hpp>
#include <tunekit/cuda/options.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using namespace tunekit::cuda::test;

class fatal_error_test : public gpu_test {
protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    gpu_test::SetUp();
  }
};

// Ends the child: exit code 0 and "PASS" when `problem` is empty, else 1 and the problem.
[[noreturn]] void finish(const std::string &problem) {
  std::fprintf(stderr, "%s\n", problem.empty() ? "PASS" : problem.c_str());
  std::_Exit(problem.empty() ? 0 : 1);
}

std::string expect_contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos ? "" : "'" + part + "' not in: " + text;
}

// Measures `run` once with an event measurer and reports what it threw.
template <class F> void measure_expecting_fatal(cudaStream_t stream, F run, const char *code) {
  tunekit::cuda::event_measurer m({.stream = stream});
  const tunekit::key k{1};
  const tunekit::config c{{"x", 1}};
  tunekit::measure_policy p;
  p.warmup = 1;
  p.runs = 3;
  try {
    static_cast<void>(m.measure(tunekit::candidate_info{"test", k, c, 0, 1}, run, p));
  } catch (const tunekit::fatal_candidate_error &e) {
    finish(expect_contains(e.what(), code));
  } catch (const std::exception &e) {
    finish(std::string("not fatal: ") + e.what());
  }
  finish("nothing thrown");
}

TEST_F(fatal_error_test, illegal_address_is_fatal) {
  EXPECT_EXIT(measure_expecting_fatal(
                  stream(), [&] { static_cast<void>(launch_illegal_write(stream())); },
                  "cudaErrorIllegalAddress"),
              ::testing::ExitedWithCode(0), "PASS");
}

TEST_F(fatal_error_test, misaligned_address_is_fatal) {
  device_buffer buf(64);
  EXPECT_EXIT(
      measure_expecting_fatal(
          stream(),
          [&] { static_cast<void>(launch_misaligned_read(buf.get(), buf.get() + 32, stream())); },
          "cudaErrorMisalignedAddress"),
      ::testing::ExitedWithCode(0), "PASS");
}

// A search whose second candidate faults stops there, names that candidate, and never runs the
// third.
void tune_with_a_faulting_candidate(cudaStream_t stream) {
  int third_runs = 0;
  const auto space = tunekit::config_space::product({{"variant", {"ok", "faulty", "never"}}});
  auto fn = [&](int, const tunekit::config &c) {
    const std::string &v = c.get_string("variant");
    if (v == "faulty") {
      TUNEKIT_CUDA_CHECK(launch_illegal_write(stream));
      return;
    }
    third_runs += v == "never" ? 1 : 0;
    TUNEKIT_CUDA_CHECK(launch_spin(10'000, stream));
  };
  auto opts = tunekit::cuda::make_tuner_options({.stream = stream});
  opts.use_disk_cache = false;
  opts.process = tunekit::process_context{};
  auto tuned = tunekit::autotune(
      "cuda_faulty", space, [](int n) { return tunekit::key{n}; }, tunekit::keep_all{}, fn, opts);
  try {
    tuned(7);
  } catch (const tunekit::fatal_candidate_error &e) {
    std::string problem = expect_contains(e.what(), "cudaErrorIllegalAddress");
    if (problem.empty()) {
      problem = expect_contains(e.what(), "variant=\"faulty\"");
    }
    if (problem.empty() && third_runs != 0) {
      problem = "the candidate after the fault was run";
    }
    finish(problem);
  } catch (const std::exception &e) {
    finish(std::string("not fatal: ") + e.what());
  }
  finish("tuning went on after an illegal address");
}

TEST_F(fatal_error_test, tuner_stops_at_a_fatal_candidate_and_names_it) {
  EXPECT_EXIT(tune_with_a_faulting_candidate(stream()), ::testing::ExitedWithCode(0), "PASS");
}

} // namespace
