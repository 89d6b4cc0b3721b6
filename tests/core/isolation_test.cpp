// Isolated measurement: a worker process times the candidates; one that crashes the worker or runs
// past the deadline fails alone with its reason, the worker is started again, and the search goes
// on to the same winner as in-process measurement. No worker is left running or unreaped.

#include "os.hpp"
#include "tuner_fixture.hpp"

#include <tunekit/isolation.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using tunekit::candidate_status;
using tunekit::config;
using tunekit::config_space;
using tunekit::key;
using namespace std::chrono_literals;
using namespace tunekit_test;

namespace {

// The tuned function's run, which an isolated measurer never calls.
constexpr auto nothing = [] {};

config candidate(long block, const char *mode) { return config{{"BLOCK", block}, {"mode", mode}}; }

// BLOCK=512 is fastest (as block_cost says); two candidates on the way kill the worker.
config_space space_with_bad_candidates() {
  return config_space({candidate(256, "ok"), candidate(128, "segv"), candidate(512, "ok"),
                       candidate(4096, "spin"), candidate(1024, "ok"), candidate(2048, "ok")});
}

tunekit::isolated_options worker_options(std::chrono::milliseconds deadline = 2000ms) {
  tunekit::isolated_options o;
  o.command = {TUNEKIT_ISOLATION_WORKER};
  o.deadline = deadline;
  return o;
}

// True when this process has no child: every worker has ended and has been reaped.
bool no_children() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD;
}

const tunekit::candidate_record &record_of(const tunekit::cache_entry &e, long block) {
  for (const auto &r : e.candidates) {
    if (r.config.get_int("BLOCK") == block) {
      return r;
    }
  }
  throw std::runtime_error("no candidate with BLOCK=" + std::to_string(block));
}

auto make_tuned(const std::shared_ptr<probe> &p, tunekit::tuner_options o, config_space space) {
  return tunekit::autotune(
      "isolated", std::move(space), [](int n) { return key{n}; }, tunekit::keep_all{},
      [p](int, const config &c) {
        p->calls.push_back(c);
        return c.get_int("BLOCK");
      },
      std::move(o));
}

} // namespace

TEST_F(tuner_test, isolated_crash_and_deadline_fail_alone_and_the_search_goes_on) {
  auto iso = std::make_shared<tunekit::isolated_measurer>(worker_options());
  {
    auto tuned = make_tuned(p, options(dir.path(), iso, log), space_with_bad_candidates());
    EXPECT_EQ(tuned(7), 512);
    EXPECT_EQ(p->calls.size(), 1U); // the worker ran the candidates; only the winner ran here
    const auto e = tuned.tuner().last_search();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->winner, candidate(512, "ok"));
    EXPECT_EQ(e->measurer, "isolated");

    const auto &segv = record_of(*e, 128);
    EXPECT_EQ(segv.status, candidate_status::failed);
    EXPECT_TRUE(std::isinf(segv.time_ms));
    EXPECT_TRUE(has(segv.reason, "worker died: signal SIGSEGV")) << segv.reason;
    EXPECT_TRUE(has(segv.reason, "isolation worker: candidate BLOCK=128 mode segv")) << segv.reason;

    const auto &spin = record_of(*e, 4096);
    EXPECT_EQ(spin.status, candidate_status::failed);
    EXPECT_TRUE(std::isinf(spin.time_ms));
    EXPECT_EQ(spin.reason, "exceeded the deadline of 2000 ms");

    for (long block : {256L, 512L, 1024L, 2048L}) {
      const auto &r = record_of(*e, block);
      EXPECT_EQ(r.status, candidate_status::ok) << block << ": " << r.reason;
      EXPECT_DOUBLE_EQ(r.time_ms, block_cost(r.config, key{7}));
    }
    EXPECT_EQ(iso->worker_starts(), 3U); // the first, then one after each bad candidate

    // In process, without the two bad candidates, the winner is the same.
    temp_dir other;
    auto sim = std::make_shared<tunekit::simulated_measurer>(block_cost);
    auto in_process = make_tuned(std::make_shared<probe>(), options(other.path(), sim, log),
                                 config_space({candidate(256, "ok"), candidate(512, "ok"),
                                               candidate(1024, "ok"), candidate(2048, "ok")}));
    static_cast<void>(in_process(7));
    EXPECT_EQ(in_process.tuner().last_search()->winner, e->winner);
  }
  const int pid = iso->worker_pid();
  ASSERT_GT(pid, 0); // the last worker still runs, ready for the next search
  EXPECT_EQ(::kill(pid, 0), 0);
  iso.reset(); // the tuner held a reference too; it is gone: the destructor stops the worker
  EXPECT_TRUE(no_children());
}

TEST_F(tuner_test, isolated_rank_whose_worker_died_still_agrees) {
  // This rank's worker dies on BLOCK=128; the other rank timed it (0.1 ms, the best there). The
  // MAX reduction makes it invalid everywhere, and both ranks agree on BLOCK=512.
  two_rank_communicator comm(0, {0.5, 0.1, 0.5, 0.5});
  auto iso = std::make_shared<tunekit::isolated_measurer>(worker_options());
  auto tuned = make_tuned(p, options(dir.path(), iso, log),
                          config_space({candidate(256, "ok"), candidate(128, "abort"),
                                        candidate(512, "ok"), candidate(1024, "ok")}));
  EXPECT_EQ(tuned.with({.comm = &comm})(7), 512);
  const auto e = tuned.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->world_size, 2);
  EXPECT_EQ(e->winner, candidate(512, "ok"));
  EXPECT_EQ(e->candidates[1].status, candidate_status::failed);
  EXPECT_TRUE(has(e->candidates[1].reason, "signal SIGABRT")) << e->candidates[1].reason;
}

TEST(isolation, worker_errors_fail_the_candidate_with_their_text) {
  tunekit::isolated_measurer iso(worker_options());
  const key k{1};
  const tunekit::measure_policy policy{.warmup = 1, .runs = 3};
  auto measure = [&](const config &c) {
    return iso.measure(tunekit::candidate_info{"t", k, c, 0, 1}, nothing, policy);
  };
  EXPECT_EQ(measure(candidate(512, "ok")), (std::vector<double>{1.0, 1.0, 1.0}));
  EXPECT_EQ(error_of([&] { static_cast<void>(measure(candidate(64, "error"))); }),
            "the kernel rejected BLOCK=64");
  EXPECT_EQ(iso.worker_starts(), 1U); // a plain error keeps the worker
  EXPECT_EQ(error_of([&] { static_cast<void>(measure(candidate(64, "fatal"))); }),
            "the kernel rejected BLOCK=64");
  EXPECT_EQ(iso.worker_pid(), 0); // a fatal error ends it
  EXPECT_EQ(measure(candidate(1024, "ok")), (std::vector<double>{2.0, 2.0, 2.0}));
  EXPECT_EQ(iso.worker_starts(), 2U);

  const auto garbage = error_of([&] { static_cast<void>(measure(candidate(64, "garbage"))); });
  EXPECT_EQ(garbage, "the worker's reply is not a JSON object: 'this is not json'");
  EXPECT_EQ(iso.worker_pid(), 0); // out of step: started afresh for the next candidate
  EXPECT_EQ(measure(candidate(256, "ok")), (std::vector<double>{3.0, 3.0, 3.0}));

  const auto exited = error_of([&] { static_cast<void>(measure(candidate(64, "exit"))); });
  EXPECT_TRUE(has(exited, "worker died: exit status 3; its stderr ended with: ")) << exited;
  EXPECT_EQ(iso.worker_starts(), 3U); // after the fatal error and after the garbage
  iso.stop_worker();
  EXPECT_TRUE(no_children());
}

TEST(isolation, the_request_function_reaches_the_worker) {
  auto o = worker_options();
  o.request = [](const tunekit::candidate_info &info) {
    return R"({"scale": )" + std::to_string(info.key[0].as_int()) + "}";
  };
  tunekit::isolated_measurer iso(o);
  const key k{4};
  const config c = candidate(512, "ok");
  EXPECT_EQ(
      iso.measure(tunekit::candidate_info{"t", k, c, 0, 1}, nothing, {.warmup = 0, .runs = 2}),
      (std::vector<double>{4.0, 4.0}));
  o.request = [](const tunekit::candidate_info &) { return std::string("{not json"); };
  tunekit::isolated_measurer bad(o);
  EXPECT_EQ(error_of([&] {
              static_cast<void>(bad.measure(tunekit::candidate_info{"t", k, c, 0, 1}, nothing, {}));
            }),
            "isolated_options::request gave text that is not JSON: '{not json'");
}

TEST(isolation, bad_options_and_commands_are_clear_errors) {
  EXPECT_EQ(error_of([] { tunekit::isolated_measurer m(tunekit::isolated_options{}); }),
            "a worker process needs a command (the worker program and its arguments)");
  auto o = worker_options(0ms);
  EXPECT_EQ(error_of([&] { tunekit::isolated_measurer m(o); }),
            "isolated_measurer: the deadline must be positive, not 0 ms");
  tunekit::detail::child_process missing({"/nonexistent/tunekit-worker"});
  EXPECT_EQ(error_of([&] { static_cast<void>(missing.request("{}", 1s)); }),
            "cannot start the worker '/nonexistent/tunekit-worker': No such file or directory");
  tunekit::detail::child_process w({TUNEKIT_ISOLATION_WORKER});
  EXPECT_EQ(error_of([&] { static_cast<void>(w.request("a\nb", 1s)); }),
            "a request to a worker process must not contain a newline");
  EXPECT_EQ(w.starts(), 0U);
}

TEST(isolation, a_worker_that_never_replies_is_killed_and_reaped) {
  // `sleep` reads nothing and writes nothing: the deadline passes.
  tunekit::detail::child_process w({"sleep", "60"});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { static_cast<void>(w.request("{}", 200ms)); }),
            "exceeded the deadline of 200 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_FALSE(w.running());
  EXPECT_TRUE(no_children());
  // A worker that ends at once without a word.
  tunekit::detail::child_process t({"true"});
  EXPECT_EQ(error_of([&] { static_cast<void>(t.request("{}", 5s)); }),
            "worker died: exit status 0");
  EXPECT_TRUE(no_children());
}
