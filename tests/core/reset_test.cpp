// A tuned function that writes its arguments (`tuned_function::with_reset`): every run of a
// candidate starts from the caller's data, tunekit's measurers reset outside their timed region, a
// measurer that ignores the hook still gets it, and the winner's call after a search makes what one
// call with the winner makes.

#include "tuner_fixture.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tunekit_test {
namespace {

/// The caller's buffers: `out` accumulates `in * BLOCK`, so a run on data another run wrote gives
/// another result.
struct buffers {
  std::vector<double> in{1.0, 2.0, 3.0};
  std::vector<double> out{0.0, 0.0, 0.0};
};

/// What happened, in order: "reset" and "run BLOCK" events.
struct trace {
  std::vector<std::string> events;
  int resets = 0;
  int runs = 0;
};

auto make_accumulate(const std::shared_ptr<trace> &t, tunekit::tuner_options o) {
  return tunekit::autotune(
             "accumulate", block_space(),
             [](const buffers &b) { return tunekit::key{static_cast<std::int64_t>(b.in.size())}; },
             [](const tunekit::config &, const buffers &) { return true; },
             [t](buffers &b, const tunekit::config &c) {
               ++t->runs;
               t->events.push_back("run " + std::to_string(c.get_int("BLOCK")));
               for (std::size_t i = 0; i < b.in.size(); ++i) {
                 b.out[i] += b.in[i] * static_cast<double>(c.get_int("BLOCK"));
               }
             },
             std::move(o))
      .with_reset([t](buffers &b, const tunekit::config &) {
        ++t->resets;
        t->events.emplace_back("reset");
        std::fill(b.out.begin(), b.out.end(), 0.0);
      });
}

/// Calls `run` for every warmup and timed run and ignores `info.reset`, as a measurer written
/// before the hook existed does.
class reset_blind_measurer final : public tunekit::measurer {
public:
  std::vector<double> measure(const tunekit::candidate_info &info,
                              tunekit::detail::function_ref<void()> run,
                              const tunekit::measure_policy &policy) override {
    for (int i = 0; i < policy.warmup + policy.runs; ++i) {
      run();
    }
    return std::vector<double>(static_cast<std::size_t>(policy.runs),
                               block_cost(info.config, info.key));
  }
  [[nodiscard]] std::string name() const override { return "blind"; }
};

/// Whether every run in `events` is directly preceded by a reset.
bool every_run_after_a_reset(const std::vector<std::string> &events) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].starts_with("run") && (i == 0 || events[i - 1] != "reset")) {
      return false;
    }
  }
  return true;
}

class reset_test : public tuner_test {};

TEST_F(reset_test, the_winner_call_after_a_search_makes_what_one_call_with_the_winner_makes) {
  auto t = std::make_shared<trace>();
  auto tuned = make_accumulate(t, opts());
  buffers b;
  tuned(b);
  EXPECT_EQ(tuned.tuner().last_source(), tunekit::source::search);
  // BLOCK=512 wins; one call of it on the caller's data: out = in * 512.
  EXPECT_EQ(b.out, (std::vector<double>{512.0, 1024.0, 1536.0}));
  // 8 candidates x (5 warmup + 10 timed) runs, each after a reset, then the reset after the search
  // and the winner's call.
  EXPECT_EQ(t->runs, 8 * 15 + 1);
  EXPECT_EQ(t->resets, 8 * 15 + 1);
  EXPECT_TRUE(every_run_after_a_reset(t->events));
  EXPECT_EQ(t->events.back(), "run 512");
}

TEST_F(reset_test, a_resolved_call_never_resets) {
  auto t = std::make_shared<trace>();
  auto tuned = make_accumulate(t, opts());
  buffers b;
  tuned(b);
  const int resets = t->resets;
  tuned(b); // memory
  EXPECT_EQ(tuned.tuner().last_source(), tunekit::source::memory);
  EXPECT_EQ(t->resets, resets);
  EXPECT_EQ(b.out, (std::vector<double>{1024.0, 2048.0, 3072.0}));

  // A second process: served from the winner cache, nothing measured, nothing reset.
  auto t2 = std::make_shared<trace>();
  auto again = make_accumulate(t2, opts());
  buffers b2;
  again(b2);
  EXPECT_EQ(again.tuner().last_source(), tunekit::source::cache);
  EXPECT_EQ(t2->resets, 0);
  EXPECT_EQ(b2.out, (std::vector<double>{512.0, 1024.0, 1536.0}));
}

TEST_F(reset_test,
       a_measurer_that_ignores_the_hook_still_runs_every_candidate_on_the_callers_data) {
  auto t = std::make_shared<trace>();
  auto o = opts();
  o.measurer = std::make_shared<reset_blind_measurer>();
  auto tuned = make_accumulate(t, o);
  buffers b;
  tuned(b);
  EXPECT_TRUE(every_run_after_a_reset(t->events));
  EXPECT_EQ(t->resets, t->runs);
  EXPECT_EQ(b.out, (std::vector<double>{512.0, 1024.0, 1536.0}));
}

TEST_F(reset_test, the_host_measurer_resets_before_every_warmup_and_timed_run) {
  auto t = std::make_shared<trace>();
  auto o = opts();
  o.measurer = std::make_shared<tunekit::host_measurer>();
  o.policy.warmup = 2;
  o.policy.runs = 3;
  auto tuned = make_accumulate(t, o);
  buffers b;
  tuned(b);
  // The search's runs, the winner's call, and the re-rank's (each leader one untimed and `runs`
  // timed runs per round) when host noise put several candidates within its band.
  const auto e = tuned.tuner().last_search();
  ASSERT_TRUE(e);
  const int reranked = e->rerank ? static_cast<int>(e->rerank->leaders.size()) * e->rerank->rounds *
                                       (1 + e->rerank->runs)
                                 : 0;
  EXPECT_EQ(t->runs, 8 * 5 + 1 + reranked);
  EXPECT_EQ(t->resets, 8 * 5 + 1 + reranked);
  EXPECT_TRUE(every_run_after_a_reset(t->events));
  const auto w = tuned.tuner().find(tunekit::key{std::int64_t{3}});
  ASSERT_NE(w, nullptr);
  const double block = static_cast<double>(w->get_int("BLOCK"));
  EXPECT_EQ(b.out, (std::vector<double>{block, 2 * block, 3 * block}));
}

TEST_F(reset_test, without_the_hook_the_runs_of_the_search_pile_up_in_the_callers_buffer) {
  // What the hook prevents: the same function without it leaves every run's output behind.
  auto t = std::make_shared<trace>();
  auto tuned = tunekit::autotune(
      "accumulate", block_space(),
      [](const buffers &b) { return tunekit::key{static_cast<std::int64_t>(b.in.size())}; },
      [](const tunekit::config &, const buffers &) { return true; },
      [t](buffers &b, const tunekit::config &c) {
        ++t->runs;
        b.out[0] += b.in[0] * static_cast<double>(c.get_int("BLOCK"));
      },
      opts());
  buffers b;
  tuned(b);
  EXPECT_GT(b.out[0], 512.0 * 2);
}

} // namespace
} // namespace tunekit_test
