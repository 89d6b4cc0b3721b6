// Live progress of a search (src/core/progress.hpp): a redrawn line on a terminal, plain periodic
// lines elsewhere, nothing when off; and the search drawing it (verbose or TUNEKIT_PROGRESS, local
// rank 0 only). The clock is a fake one that the tests advance, so nothing depends on real time.

#include "tuner_fixture.hpp"

#include "progress.hpp"
#include "search.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using tunekit::config;
using tunekit::detail::format_duration;
using tunekit::detail::progress_output;
using tunekit::detail::progress_reporter;
using namespace std::chrono_literals;

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();

// A clock that moves only when told (or by `step` at every reading).
struct fake_clock {
  progress_output::clock::time_point t{};
  progress_output::clock::duration step{};
  [[nodiscard]] std::function<progress_output::clock::time_point()> fn() {
    return [this] {
      const auto now = t;
      t += step;
      return now;
    };
  }
};

progress_output output(std::ostringstream &s, bool terminal, fake_clock &clock) {
  progress_output o;
  o.out = &s;
  o.terminal = terminal;
  o.now = clock.fn();
  return o;
}

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    lines.push_back(l);
  }
  return lines;
}

std::size_t count(const std::string &text, const std::string &what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    ++n;
  }
  return n;
}

// Prepared when the test says so.
class fake_preparer final : public tunekit::candidate_preparer {
public:
  void prepare(std::span<const config> configs) override {
    for (const auto &c : configs) {
      m_done.try_emplace(c.to_string(), false);
    }
  }
  [[nodiscard]] std::optional<double> prepare_ms(const config &c) const override {
    const auto it = m_done.find(c.to_string());
    return it != m_done.end() && it->second ? std::optional(5.0) : std::nullopt;
  }
  void finish(const config &c) { m_done[c.to_string()] = true; }

private:
  std::map<std::string, bool> m_done;
};

const config a{{"BLOCK", 256}};
const config b{{"BLOCK", 512}};
const config c3{{"BLOCK", 1024}};
} // namespace

TEST(progress, plain_lines_come_once_per_interval_and_a_closing_line_at_the_end) {
  std::ostringstream s;
  fake_clock clock;
  progress_reporter p(true, output(s, false, clock), "tuner 'k', key (1)", 4, 0, 0, nullptr);
  p.starting(a);
  p.measured(0, 4.0);
  clock.t += 1s;
  p.update();
  EXPECT_EQ(s.str(), "") << "no plain line before the first interval";
  clock.t += 4s;
  p.update();
  p.update(); // within the next interval: nothing more
  ASSERT_EQ(lines_of(s.str()).size(), 1U) << s.str();
  EXPECT_EQ(lines_of(s.str())[0],
            "[tunekit] tuner 'k', key (1): 1/4 candidates, measuring, best 4 ms (1.00x over the "
            "default), 5.0 s elapsed, about 15.0 s left");
  p.measured(1, 1.0);
  p.measured(2, inf);
  clock.t += 1s;
  p.end_batch(std::vector<std::size_t>{0, 1, 2}, std::vector<double>{4.0, 1.0, inf}, 0);
  p.finish();
  const auto lines = lines_of(s.str());
  ASSERT_EQ(lines.size(), 2U) << s.str();
  EXPECT_EQ(lines[1], "[tunekit] tuner 'k', key (1): 3/4 candidates, done, best 1 ms (4.00x over "
                      "the default), 6.0 s elapsed");
  EXPECT_EQ(s.str().find('\r'), std::string::npos);
}

TEST(progress, a_terminal_gets_one_line_redrawn_in_place) {
  std::ostringstream s;
  fake_clock clock;
  auto o = output(s, true, clock);
  o.width = 200;
  progress_reporter p(true, o, "tuner 'k', key (1)", 3, 0, 0, nullptr);
  p.starting(a); // the first draw comes at once
  EXPECT_EQ(s.str(), "\r\033[K[tunekit] 0/3 candidates, measuring, nothing valid yet, 0.0 s "
                     "elapsed | tuner 'k', key (1)");
  p.measured(0, 2.0);
  clock.t += 50ms;
  p.update(); // within 100 ms of the last draw: nothing
  EXPECT_EQ(count(s.str(), "\r\033[K"), 1U);
  clock.t += 50ms;
  p.update();
  EXPECT_EQ(count(s.str(), "\r\033[K"), 2U);
  EXPECT_NE(s.str().find("1/3 candidates, measuring, best 2 ms (1.00x over the default), 0.1 s "
                         "elapsed, about 0.2 s left | tuner 'k'"),
            std::string::npos)
      << s.str();
  EXPECT_EQ(s.str().find('\n'), std::string::npos) << "no newline while the search runs";

  // Another line (a verbose one) erases the progress line, which is redrawn right after.
  p.interrupt();
  EXPECT_TRUE(s.str().ends_with("\r\033[K"));
  p.update();
  EXPECT_EQ(count(s.str(), "\r\033[K"), 4U);

  p.measured(1, 0.5);
  p.end_batch(std::vector<std::size_t>{0, 1}, std::vector<double>{2.0, 0.5}, 0);
  p.finish();
  EXPECT_TRUE(s.str().ends_with("\r\033[K[tunekit] 2/3 candidates, done, best 0.5 ms (4.00x over "
                                "the default), 0.1 s elapsed | tuner 'k', key (1)\n"))
      << s.str();
  EXPECT_EQ(count(s.str(), "\n"), 1U);
}

TEST(progress, a_terminal_line_is_cut_to_the_width) {
  std::ostringstream s;
  fake_clock clock;
  auto o = output(s, true, clock);
  o.width = 30;
  progress_reporter p(true, o, "tuner 'k', key (\xc3\xa9\xc3\xa9\xc3\xa9)", 3, 0, 0, nullptr);
  p.update();
  EXPECT_EQ(s.str(), "\r\033[K[tunekit] 0/3 candidates, mea");
  std::ostringstream s2;
  o.out = &s2;
  o.width = 92; // 91 bytes would end inside the second two-byte character
  progress_reporter q(true, o, "tuner 'k', key (\xc3\xa9\xc3\xa9\xc3\xa9)", 3, 0, 0, nullptr);
  q.update();
  EXPECT_EQ(s2.str(), "\r\033[K[tunekit] 0/3 candidates, measuring, nothing valid yet, 0.0 s "
                      "elapsed | tuner 'k', key (\xc3\xa9");
}

TEST(progress, a_line_left_open_is_ended_when_the_search_throws) {
  std::ostringstream s;
  fake_clock clock;
  {
    progress_reporter p(true, output(s, true, clock), "k", 3, 0, 0, nullptr);
    p.update();
  }
  EXPECT_TRUE(s.str().ends_with("\n"));
}

TEST(progress, off_writes_nothing) {
  std::ostringstream s;
  fake_clock clock;
  for (bool terminal : {true, false}) {
    progress_reporter p(false, output(s, terminal, clock), "k", 3, 0, 0, nullptr);
    p.starting(a);
    p.measured(0, 1.0);
    clock.t += 10s;
    p.update();
    p.interrupt();
    p.end_batch(std::vector<std::size_t>{0}, std::vector<double>{1.0}, 0);
    p.finish();
  }
  EXPECT_EQ(s.str(), "");
}

TEST(progress, the_compile_phase_and_the_compiled_part_of_the_batch) {
  std::ostringstream s;
  fake_clock clock;
  fake_preparer prep;
  auto o = output(s, true, clock);
  o.width = 200;
  progress_reporter p(true, o, "k", 3, 0, 0, &prep);
  const std::vector<config> batch{a, b, c3};
  prep.prepare(batch);
  p.begin_batch(batch);
  p.starting(a); // not compiled yet: the line says so at once
  EXPECT_NE(s.str().find("0/3 candidates, compiling (0/3 of the batch compiled)"),
            std::string::npos)
      << s.str();
  prep.finish(a);
  prep.finish(c3);
  p.starting(a); // compiled now: the phase changes and the line is redrawn at once
  EXPECT_TRUE(s.str().ends_with("0/3 candidates, measuring (2/3 of the batch compiled), nothing "
                                "valid yet, 0.0 s elapsed | k"))
      << s.str();
}

TEST(progress, worst_rank_times_replace_this_ranks_own_and_other_ranks_candidates_count) {
  std::ostringstream s;
  fake_clock clock;
  progress_reporter p(true, output(s, false, clock), "k", 4, 0, 0, nullptr);
  p.measured(0, 2.0);
  p.measured(2, 1.0);
  EXPECT_NE(p.text().find("2/4 candidates, measuring, best 1 ms (2.00x"), std::string::npos)
      << p.text();
  // Candidate 2 was slower on another rank; candidates 1 and 3 were measured there.
  p.end_batch(std::vector<std::size_t>{0, 1, 2, 3}, std::vector<double>{2.5, inf, 3.0, 2.0}, 2);
  EXPECT_NE(p.text().find("4/4 candidates, measuring, best 2 ms (1.25x over the default)"),
            std::string::npos)
      << p.text();
}

TEST(progress, the_estimate_is_capped_by_the_time_budget) {
  std::ostringstream s;
  fake_clock clock;
  progress_reporter p(true, output(s, false, clock), "k", 100, 12.0, 0, nullptr);
  p.measured(0, 1.0);
  clock.t += 10s;
  EXPECT_NE(p.text().find("10.0 s elapsed, about 2.0 s left"), std::string::npos) << p.text();
}

TEST(progress, durations) {
  EXPECT_EQ(format_duration(0.04), "0.0 s");
  EXPECT_EQ(format_duration(59.9), "59.9 s");
  EXPECT_EQ(format_duration(245), "4m05s");
  EXPECT_EQ(format_duration(3725), "1h02m");
  EXPECT_EQ(format_duration(-1), "0.0 s");
}

namespace {
// One exhaustive search of the scale space through `detail::search`, its progress in
// `s` (plain lines, one per candidate: the clock moves 1 s per reading and the interval is 0).
void search_with_progress(std::ostringstream &s, tunekit::communicator &comm, bool verbose,
                          bool progress, tunekit::launcher_info launcher = {},
                          std::size_t budget = 1000) {
  using namespace tunekit_test;
  fake_clock clock;
  clock.step = 1s;
  progress_output out;
  out.out = &s;
  out.now = clock.fn();
  out.plain_interval = 0ms;
  const tunekit::config_space space = block_space();
  const std::vector<config> cands(space.begin(), space.end());
  const std::vector<bool> kept(cands.size(), true);
  const tunekit::key k{4096};
  tunekit::simulated_measurer meas(block_cost);
  const tunekit::measure_policy policy{.warmup = 0, .runs = 1};
  log_capture log;
  temp_dir dir;
  const tunekit::detail::rank_log rlog(log.sink(), launcher, dir.path(), "tuner 'scale'");
  tunekit::search_settings settings;
  settings.budget.max_evaluations = budget;
  const std::string what = "tuner 'scale', key (4096)";
  auto run = [](const config &) {};
  auto check = [](const config &) { return true; };
  const tunekit::winner_cache cache(dir.path());
  const tunekit::hardware_info hw;
  const auto found = tunekit::detail::search(
      {.tuner = "scale",
       .what = what,
       .k = k,
       .candidates = cands,
       .kept = kept,
       .comm = comm,
       .settings = settings,
       .measure = {meas, policy, run, check},
       .transfer = {cache, false, {"scale", ""}, hw},
       .output = {.log = rlog, .verbose = verbose, .progress = progress, .progress_out = &out}});
  if (budget >= cands.size()) {
    EXPECT_EQ(found.records[found.winner].config, tunekit_test::fastest);
  }
}
} // namespace

TEST(progress, a_search_draws_progress_with_verbose_or_the_progress_flag) {
  tunekit::single_process_communicator comm;
  std::ostringstream quiet;
  search_with_progress(quiet, comm, false, false);
  EXPECT_EQ(quiet.str(), "");

  for (const bool verbose : {true, false}) {
    std::ostringstream s;
    search_with_progress(s, comm, verbose, !verbose);
    const auto lines = lines_of(s.str());
    // A line after each of the 8 candidates (the interval is 0), one after the batch's reduction,
    // and the closing line.
    ASSERT_EQ(lines.size(), 10U) << s.str();
    for (std::size_t i = 0; i < 8; ++i) {
      EXPECT_NE(lines[i].find(": " + std::to_string(i + 1) + "/8 candidates, measuring"),
                std::string::npos)
          << lines[i];
    }
    EXPECT_TRUE(lines[0].starts_with("[tunekit] tuner 'scale', key (4096): 1/8 candidates, "
                                     "measuring, best 3 ms (1.00x over the default)"))
        << lines[0];
    // The default (BLOCK=256, num_warps=4) takes 3 ms, the winner (BLOCK=512, num_warps=4) 1 ms.
    EXPECT_TRUE(lines[9].starts_with("[tunekit] tuner 'scale', key (4096): 8/8 candidates, done, "
                                     "best 1 ms (3.00x over the default), "))
        << lines[9];
  }
}

TEST(progress, a_strategy_search_counts_against_its_budget) {
  tunekit::single_process_communicator comm;
  std::ostringstream s;
  search_with_progress(s, comm, false, true, {}, 4);
  const auto lines = lines_of(s.str());
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find(": 1/4 candidates"), std::string::npos) << lines.front();
  EXPECT_NE(lines.back().find(": 4/4 candidates, done"), std::string::npos) << lines.back();
}

TEST(progress, only_local_rank_zero_draws) {
  // Rank 1 of two (the other rank's times are all 0, so the worst rank is this one).
  tunekit_test::two_rank_communicator rank1(1, std::vector<double>(8, 0.0));
  std::ostringstream s;
  search_with_progress(s, rank1, true, true);
  EXPECT_EQ(s.str(), "");

  // Rank 0 of the communicator, but the launcher says local rank 1 on this node.
  tunekit_test::two_rank_communicator rank0(0, std::vector<double>(8, 0.0));
  std::ostringstream s2;
  search_with_progress(s2, rank0, false, true,
                       tunekit::launcher_info{tunekit::launcher_kind::torchrun, 3, 1, 4});
  EXPECT_EQ(s2.str(), "");

  std::ostringstream s3;
  search_with_progress(s3, rank0, false, true);
  EXPECT_NE(s3.str().find("8/8 candidates, done"), std::string::npos) << s3.str();
}
