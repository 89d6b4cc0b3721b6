#include "test_support.hpp"

#include <tunekit/contextual.hpp>

#include <gtest/gtest.h>

#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tunekit_test::log_capture;
using tunekit_test::temp_dir;

// Launches seen per (kernel, config text), across every run of the outer function.
using launch_counts = std::map<std::string, int>;

tunekit::tuner_options kernel_options(const temp_dir &dir, const log_capture &log,
                                      tunekit::simulated_measurer::cost_function cost) {
  auto o = tunekit_test::options(
      dir.path() / "cache", std::make_shared<tunekit::simulated_measurer>(std::move(cost)), log);
  o.use_disk_cache = false;
  return o;
}

tunekit::contextual_options ctx_options(const temp_dir &dir, const log_capture &log) {
  tunekit::contextual_options o;
  tunekit::environment env;
  env.log_dir = dir.path() / "logs";
  // The launcher as the environment says now (a test below sets RANK and WORLD_SIZE).
  o.process = tunekit::process_context{env, tunekit::launcher_info::from_env(), log.sink()};
  return o;
}

auto n_key() {
  return [](int n, const launch_counts &) { return tunekit::key{n}; };
}

// A kernel whose result is the BLOCK it ran with, so the test sees which config each run used.
auto counting_kernel(const std::string &name) {
  return [name](int /*n*/, launch_counts &counts, const tunekit::config &c) {
    counts[name + ":" + c.to_string()]++;
    return c.get_int("BLOCK");
  };
}

TEST(contextual, two_kernels_with_different_space_sizes_each_keep_their_fastest) {
  temp_dir dir;
  log_capture log;
  // Kernel a: 3 candidates, fastest BLOCK=256. Kernel b: 2 candidates, fastest BLOCK=64.
  auto a = tunekit::make_tunable_kernel(
      "a", tunekit::config_space{{{"BLOCK", 128}}, {{"BLOCK", 256}}, {{"BLOCK", 512}}}, n_key(),
      counting_kernel("a"),
      kernel_options(dir, log, [](const tunekit::config &c, const tunekit::key &) {
        return c.get_int("BLOCK") == 256 ? 1.0 : 2.0;
      }));
  auto b = tunekit::make_tunable_kernel(
      "b", tunekit::config_space{{{"BLOCK", 32}}, {{"BLOCK", 64}}}, n_key(), counting_kernel("b"),
      kernel_options(dir, log, [](const tunekit::config &c, const tunekit::key &) {
        return c.get_int("BLOCK") == 64 ? 1.0 : 5.0;
      }));
  int runs = 0;
  launch_counts counts;
  auto outer = tunekit::contextual_autotune(
      [&](int n) {
        ++runs;
        return std::pair{a(n, counts), b(n, counts)};
      },
      ctx_options(dir, log));

  const auto result = outer(1000);
  EXPECT_EQ(result.first, 256);
  EXPECT_EQ(result.second, 64);
  // 3 candidates x (3 warmup + 5 timed) runs for the larger space (the first run registers the
  // kernels and is their first round), then 1 final run with the winners.
  EXPECT_EQ(runs, 3 * 8 + 1);
  // Kernel a launched each candidate 8 times, and its winner once more in the final run.
  EXPECT_EQ(counts["a:BLOCK=128"], 8);
  EXPECT_EQ(counts["a:BLOCK=512"], 8);
  EXPECT_EQ(counts["a:BLOCK=256"], 8 + 1);
  // Kernel b finished after 16 runs and kept its winner while a went on for 8 more.
  EXPECT_EQ(counts["b:BLOCK=32"], 8);
  EXPECT_EQ(counts["b:BLOCK=64"], 8 + 8 + 1);

  // The winners live in each kernel's in-process cache: a plain launch measures nothing.
  EXPECT_EQ(a.tuner().find(tunekit::key{1000})->get_int("BLOCK"), 256);
  EXPECT_EQ(b(1000, counts), 64);
  EXPECT_EQ(b.tuner().searches(), 0u);
}

TEST(contextual, a_second_call_with_tuned_kernels_runs_the_outer_function_once) {
  temp_dir dir;
  log_capture log;
  auto a = tunekit::make_tunable_kernel(
      "a", tunekit::config_space{{{"BLOCK", 128}}, {{"BLOCK", 256}}}, n_key(), counting_kernel("a"),
      kernel_options(dir, log, [](const tunekit::config &c, const tunekit::key &) {
        return static_cast<double>(c.get_int("BLOCK"));
      }));
  int runs = 0;
  launch_counts counts;
  auto outer = tunekit::contextual_autotune(
      [&](int n) {
        ++runs;
        return a(n, counts);
      },
      ctx_options(dir, log));
  EXPECT_EQ(outer(10), 128);
  const int first = runs;
  EXPECT_EQ(first, 2 * 8 + 1);
  EXPECT_EQ(outer(10), 128);
  EXPECT_EQ(runs, first + 1);
  // A new key is tuned in context on its own.
  EXPECT_EQ(outer(20), 128);
  EXPECT_EQ(runs, first + 1 + 2 * 8 + 1);
}

TEST(contextual, a_failing_candidate_is_skipped_and_the_outer_function_goes_on) {
  temp_dir dir;
  log_capture log;
  auto a = tunekit::make_tunable_kernel(
      "a", tunekit::config_space{{{"BLOCK", 128}}, {{"BLOCK", 256}}, {{"BLOCK", 512}}}, n_key(),
      [](int, launch_counts &, const tunekit::config &c) -> std::int64_t {
        if (c.get_int("BLOCK") == 256) {
          throw std::runtime_error("too many resources requested for launch");
        }
        return c.get_int("BLOCK");
      },
      kernel_options(dir, log, [](const tunekit::config &c, const tunekit::key &) {
        return c.get_int("BLOCK") == 256 ? 0.1 : static_cast<double>(c.get_int("BLOCK"));
      }));
  launch_counts counts;
  std::vector<std::int64_t> seen;
  auto outer = tunekit::contextual_autotune(
      [&](int n) {
        seen.push_back(a(n, counts));
        return seen.back();
      },
      ctx_options(dir, log));
  EXPECT_EQ(outer(7), 128);
  // The failed launch was rerun with a config that works: no run saw 256.
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 256), 0);
  const std::string text = tunekit_test::read_text(dir.path() / "logs" / "rank-0.log");
  EXPECT_NE(text.find("too many resources requested for launch"), std::string::npos) << text;
}

TEST(contextual, no_valid_candidate_raises_cannot_find_valid_config_naming_kernel_and_key) {
  temp_dir dir;
  log_capture log;
  auto a = tunekit::make_tunable_kernel(
      "always_fails", tunekit::config_space{{{"BLOCK", 1}}, {{"BLOCK", 2}}}, n_key(),
      [](int, launch_counts &, const tunekit::config &c) -> int {
        if (tunekit::contextual_tuner::active() != nullptr) {
          throw std::runtime_error("bad launch " + c.to_string());
        }
        return 0;
      },
      kernel_options(dir, log, [](const tunekit::config &, const tunekit::key &) { return 1.0; }));
  launch_counts counts;
  auto outer =
      tunekit::contextual_autotune([&](int n) { return a(n, counts); }, ctx_options(dir, log));
  try {
    (void)outer(3);
    FAIL() << "expected an error";
  } catch (const tunekit::error &e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cannot find valid config for kernel 'always_fails', key (3)", 0), 0U)
        << what;
    EXPECT_NE(what.find("always_fails"), std::string::npos) << what;
    EXPECT_NE(what.find("(3)"), std::string::npos) << what;
    EXPECT_NE(what.find("bad launch BLOCK=2"), std::string::npos) << what;
  }
  EXPECT_EQ(tunekit::contextual_tuner::active(), nullptr);
}

TEST(contextual, nested_contextual_tuners_are_an_error) {
  temp_dir dir;
  log_capture log;
  auto inner = tunekit::contextual_autotune([] { return 1; }, ctx_options(dir, log));
  auto outer = tunekit::contextual_autotune([&] { return inner(); }, ctx_options(dir, log));
  try {
    (void)outer();
    FAIL() << "expected an error";
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("only one"), std::string::npos) << e.what();
  }
  EXPECT_EQ(tunekit::contextual_tuner::active(), nullptr);
  EXPECT_EQ(inner(), 1); // usable again afterwards
}

TEST(contextual, the_log_names_kernel_key_config_round_and_best) {
  temp_dir dir;
  log_capture log;
  auto a = tunekit::make_tunable_kernel(
      "logged", tunekit::config_space{{{"BLOCK", 8}}, {{"BLOCK", 16}}}, n_key(),
      counting_kernel("logged"),
      kernel_options(dir, log, [](const tunekit::config &c, const tunekit::key &) {
        return c.get_int("BLOCK") == 16 ? 1.0 : 2.0;
      }));
  launch_counts counts;
  auto opts = ctx_options(dir, log);
  opts.n_warmup = 1;
  opts.n_repeat = 2;
  auto outer = tunekit::contextual_autotune([&](int n) { return a(n, counts); }, opts);
  EXPECT_EQ(outer(5), 16);
  EXPECT_EQ(counts["logged:BLOCK=8"], 3);
  const std::string text = tunekit_test::read_text(dir.path() / "logs" / "rank-0.log");
  EXPECT_NE(text.find("kernel 'logged', key (5): config #1 [BLOCK=16] round 3 timed"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("config #0 mean 2"), std::string::npos) << text;
  EXPECT_NE(text.find("best config #1 [BLOCK=16]"), std::string::npos) << text;
}

// Two ranks in one process: the "other" rank's means are fixed, and MAX-reduced element-wise.
class fake_two_ranks final : public tunekit::communicator {
public:
  explicit fake_two_ranks(std::vector<double> other) : m_other(std::move(other)) {}
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 2; }
  void all_reduce_max(std::span<double> v) override {
    if (v.size() == m_other.size()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = std::max(v[i], m_other[i]);
      }
    }
  }
  void all_reduce_min(std::span<double> /*v*/) override {}
  void broadcast(std::span<std::byte> /*b*/, int /*root*/) override {}
  void barrier() override {}

private:
  std::vector<double> m_other;
};

TEST(contextual, distributed_selection_uses_the_worst_rank_per_candidate) {
  temp_dir dir;
  log_capture log;
  // Locally BLOCK=1 is fastest (1 ms), but on the other rank it takes 10 ms; BLOCK=2 is 2 ms on
  // both, BLOCK=3 failed on the other rank (+inf) although it is 0.5 ms here.
  auto a = tunekit::make_tunable_kernel(
      "dist", tunekit::config_space{{{"BLOCK", 1}}, {{"BLOCK", 2}}, {{"BLOCK", 3}}}, n_key(),
      counting_kernel("dist"),
      kernel_options(dir, log, [](const tunekit::config &c, const tunekit::key &) {
        const auto b = c.get_int("BLOCK");
        return b == 1 ? 1.0 : b == 2 ? 2.0 : 0.5;
      }));
  fake_two_ranks comm({10.0, 2.0, std::numeric_limits<double>::infinity()});
  auto opts = ctx_options(dir, log);
  opts.is_dist = true;
  opts.comm = &comm;
  launch_counts counts;
  auto outer = tunekit::contextual_autotune([&](int n) { return a(n, counts); }, opts);
  EXPECT_EQ(outer(9), 2);
}

} // namespace

namespace {

TEST(contextual, without_a_communicator_the_log_is_named_by_the_launchers_rank) {
  temp_dir dir;
  log_capture log;
  auto a = tunekit::make_tunable_kernel(
      "ranked", tunekit::config_space{{{"BLOCK", 8}}, {{"BLOCK", 16}}}, n_key(),
      counting_kernel("ranked"),
      kernel_options(dir, log, [](const tunekit::config &, const tunekit::key &) { return 1.0; }));
  launch_counts counts;
  ::setenv("RANK", "3", 1);
  ::setenv("WORLD_SIZE", "4", 1);
  auto outer =
      tunekit::contextual_autotune([&](int n) { return a(n, counts); }, ctx_options(dir, log));
  const auto result = outer(2);
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  EXPECT_EQ(result, 8);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "logs" / "rank-3.log"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "logs" / "rank-0.log"));
}

} // namespace
