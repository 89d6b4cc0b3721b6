// The function-level tuner: a first call searches, later calls and keys are answered from memory
// or the winner cache, and what a search records. Per-call options, failures, concurrency and the
// winner rule have their own files (tuner_options_test, tuner_failure_test,
// tuner_concurrency_test, search_test).

#include "tuner_fixture.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using tunekit::candidate_status;
using tunekit::config;
using tunekit::key;
using tunekit::source;
using namespace tunekit_test;

TEST_F(tuner_test, first_call_measures_every_unpruned_config_then_runs_the_winner) {
  auto scale = make_scale(p, opts());
  const long result = scale(1024);

  // 6 of 8 configs survive the prune (BLOCK=2048 is larger than n), each 5 warmup + 10 timed runs.
  EXPECT_EQ(meas->candidates_measured(), 6U);
  EXPECT_EQ(meas->runs(), 6U * 15U);
  ASSERT_EQ(p->calls.size(), 6U * 15U + 1U);
  EXPECT_EQ(p->calls.back(), fastest);
  // The caller gets the result of that last call with the winner.
  EXPECT_EQ(result, static_cast<long>(p->calls.size()) * 100000L + 1024);
  EXPECT_EQ(p->key_calls, 1);
  EXPECT_EQ(p->prune_calls, 8);
  for (const auto &c : p->calls) {
    EXPECT_LE(c.get_int("BLOCK"), 1024) << "a pruned config ran: " << c.to_string();
  }

  const auto &t = scale.tuner();
  EXPECT_EQ(t.last_source(), source::search);
  EXPECT_EQ(t.searches(), 1U);
  ASSERT_NE(t.find(key{1024}), nullptr);
  EXPECT_EQ(*t.find(key{1024}), fastest);

  const auto e = t.last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, key{1024});
  ASSERT_EQ(e->candidates.size(), 6U); // the kept ones; the pruned are counted
  ASSERT_TRUE(e->space.has_value());
  EXPECT_EQ(e->space->size, 8U);
  EXPECT_EQ(e->space->pruned, 2U);
  EXPECT_EQ(e->space->winner, 2U);
  EXPECT_EQ(e->winner_index, 2U);
  EXPECT_EQ(e->winner, fastest);
  std::size_t ok = 0;
  std::size_t other = 0;
  for (const auto &r : e->candidates) {
    if (r.status == candidate_status::ok) {
      ++ok;
      EXPECT_TRUE(std::isfinite(r.time_ms));
      EXPECT_NEAR(r.time_ms, tunekit_test::block_cost(r.config, e->key), 0.1);
    } else {
      ++other;
    }
  }
  EXPECT_EQ(ok, 6U);
  EXPECT_EQ(other, 0U);
  EXPECT_EQ(e->policy, tunekit::measure_policy{});
  EXPECT_EQ(e->measurer, "simulated");
  EXPECT_EQ(e->world_size, 1);
}

TEST_F(tuner_test, second_call_with_the_same_key_is_served_from_memory) {
  auto scale = make_scale(p, opts());
  static_cast<void>(scale(1024));
  const auto calls_before = p->calls.size();
  const auto prunes_before = p->prune_calls;

  const long result = scale(1024);
  EXPECT_EQ(meas->candidates_measured(), 6U); // nothing new measured
  ASSERT_EQ(p->calls.size(), calls_before + 1);
  EXPECT_EQ(p->calls.back(), fastest);
  EXPECT_EQ(result, static_cast<long>(p->calls.size()) * 100000L + 1024);
  EXPECT_EQ(p->key_calls, 2);
  EXPECT_EQ(p->prune_calls, prunes_before);
  EXPECT_EQ(scale.tuner().searches(), 1U);
  EXPECT_EQ(scale.tuner().last_source(), source::memory);
}

TEST_F(tuner_test, a_different_key_searches_again) {
  auto scale = make_scale(p, opts());
  static_cast<void>(scale(1024));
  static_cast<void>(scale(256));
  // Only BLOCK=256 fits n=256: two more candidates.
  EXPECT_EQ(meas->candidates_measured(), 8U);
  EXPECT_EQ(scale.tuner().searches(), 2U);
  EXPECT_EQ(scale.tuner().last_source(), source::search);
  EXPECT_EQ(p->calls.back(), (config{{"BLOCK", 256}, {"num_warps", 4}}));
  // The first key's winner is still remembered.
  static_cast<void>(scale(1024));
  EXPECT_EQ(p->calls.back(), fastest);
  EXPECT_EQ(scale.tuner().searches(), 2U);
  EXPECT_EQ(json_files(), 2U);
}

TEST_F(tuner_test, without_disk_cache_nothing_is_written_or_read) {
  auto o = opts();
  o.use_disk_cache = false;
  static_cast<void>(make_scale(p, o)(1024));
  EXPECT_TRUE(tunekit_test::files_below(dir.path()).empty());
  auto again = make_scale(p, o);
  static_cast<void>(again(1024));
  EXPECT_EQ(again.tuner().last_source(), source::search);
  EXPECT_EQ(meas->candidates_measured(), 12U);
}

TEST_F(tuner_test, forget_drops_memory_and_the_cache_answers) {
  auto scale = make_scale(p, opts());
  static_cast<void>(scale(1024));
  scale.tuner().forget();
  EXPECT_EQ(scale.tuner().find(key{1024}), nullptr);
  static_cast<void>(scale(1024));
  EXPECT_EQ(scale.tuner().last_source(), source::cache);
  EXPECT_EQ(meas->candidates_measured(), 6U);
  EXPECT_EQ(p->calls.back(), fastest);
}

/// `inner`'s timings under another name (how a measurer records itself in an entry).
class renamed_measurer final : public tunekit::measurer {
public:
  renamed_measurer(std::shared_ptr<tunekit::measurer> inner, std::string name)
      : m_inner(std::move(inner)), m_name(std::move(name)) {}
  std::vector<double> measure(const tunekit::candidate_info &info,
                              tunekit::detail::function_ref<void()> run,
                              const tunekit::measure_policy &policy) override {
    return m_inner->measure(info, run, policy);
  }
  [[nodiscard]] std::string name() const override { return m_name; }

private:
  std::shared_ptr<tunekit::measurer> m_inner;
  std::string m_name;
};

TEST_F(tuner_test, an_entry_timed_the_other_way_is_retuned_and_says_why) {
  static_cast<void>(make_scale(p, opts())(1024)); // timed eagerly, by the simulated measurer
  auto graph = opts();
  graph.measurer = std::make_shared<renamed_measurer>(meas, "cuda-graph");
  auto other = make_scale(p, graph);
  static_cast<void>(other(1024));
  EXPECT_EQ(other.tuner().last_source(), source::search);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"timed by the measurer 'simulated'",
                                                    "this tuner's is 'cuda-graph'", "retuning"}),
            1U);
  // The entry is now graph-timed, and serves a process timing so.
  auto again = make_scale(p, graph);
  static_cast<void>(again(1024));
  EXPECT_EQ(again.tuner().last_source(), source::cache);
  // An eager tuner retunes in turn: three searches of 6 candidates.
  static_cast<void>(make_scale(p, opts())(1024));
  EXPECT_EQ(meas->candidates_measured(), 18U);
  // Another eager measurer is served what the simulated one timed: no search.
  auto fixed = opts();
  fixed.measurer = std::make_shared<fixed_measurer>();
  auto served = make_scale(p, fixed);
  static_cast<void>(served(1024));
  EXPECT_EQ(served.tuner().last_source(), source::cache);
}

TEST_F(tuner_test, an_entry_imported_from_kernel_tuner_is_served_whatever_the_measurer) {
  static_cast<void>(make_scale(p, opts())(1024));
  const tunekit::winner_cache cache(dir.path());
  const auto files = cache.list("scale");
  ASSERT_EQ(files.size(), 1U);
  auto e = tunekit::winner_cache::read(files[0]).value;
  ASSERT_TRUE(e.has_value());
  e->measurer = "kernel_tuner"; // what `tunekit cache import-kernel-tuner` records
  static_cast<void>(cache.store(*e, "imported\n"));
  log.clear();
  auto graph = opts(); // even a tuner with graph timing is served the imported pick
  graph.measurer = std::make_shared<renamed_measurer>(meas, "cuda-graph");
  auto served = make_scale(p, graph);
  static_cast<void>(served(1024));
  EXPECT_EQ(served.tuner().last_source(), source::cache);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"measurer"}), 0U) << log.dump();
}

TEST_F(tuner_test, many_keys_are_remembered) {
  auto o = opts();
  o.use_disk_cache = false;
  auto scale = make_scale(p, o);
  for (int n = 256; n < 256 + 40; ++n) {
    static_cast<void>(scale(n));
  }
  EXPECT_EQ(scale.tuner().searches(), 40U);
  for (int n = 256; n < 256 + 40; ++n) {
    const config *c = scale.tuner().find(key{n});
    ASSERT_NE(c, nullptr) << n;
    EXPECT_EQ(*c, (config{{"BLOCK", 256}, {"num_warps", 4}}));
  }
  const auto measured = meas->candidates_measured();
  for (int n = 256; n < 256 + 40; ++n) {
    static_cast<void>(scale(n));
  }
  EXPECT_EQ(meas->candidates_measured(), measured);
}

TEST_F(tuner_test, void_function_writing_through_a_reference_argument) {
  // A launcher's shape: no result, an output argument, a key built as a vector of values.
  auto f = tunekit::autotune(
      "fill", block_space(),
      [](const std::vector<int> &out, int value) {
        return std::vector<tunekit::value>{static_cast<std::int64_t>(out.size()), value > 0};
      },
      tunekit::keep_all{},
      [](std::vector<int> &out, int value, const config &c) {
        for (auto &x : out) {
          x = value + static_cast<int>(c.get_int("BLOCK"));
        }
      },
      opts());
  std::vector<int> out(8, 0);
  int value = 1;
  f(out, value);
  EXPECT_EQ(out, std::vector<int>(8, 513)); // the last call ran the winner, BLOCK=512
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, (key{8, true}));
  value = 2;
  f(out, value);
  EXPECT_EQ(out, std::vector<int>(8, 514));
  EXPECT_EQ(f.tuner().last_source(), source::memory);
}

TEST_F(tuner_test, source_names) {
  EXPECT_EQ(tunekit::to_string(source::memory), "memory");
  EXPECT_EQ(tunekit::to_string(source::cache), "cache");
  EXPECT_EQ(tunekit::to_string(source::artifact), "artifact");
  EXPECT_EQ(tunekit::to_string(source::table), "table");
  EXPECT_EQ(tunekit::to_string(source::default_config), "default");
  EXPECT_EQ(tunekit::to_string(source::search), "search");
  EXPECT_EQ(tunekit::to_string(source::disabled), "disabled");
}
