// The tuner across ranks: agreement on the winner when per-rank timings disagree, cache hits on
// some ranks only, a corrupt entry on one rank, mismatched keys, sub-communicators, the default
// communicator, deferred tuning, the parallel split, timeouts and per-rank logs.

#include "mpi_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace tunekit_mpi_test;
using tunekit::config;
using tunekit::key;
using tunekit::source;

std::shared_ptr<tunekit::simulated_measurer> simulated(tunekit::simulated_measurer::cost_function f,
                                                       double noise = 0.0, std::uint64_t seed = 0) {
  return std::make_shared<tunekit::simulated_measurer>(std::move(f), noise, seed);
}

// A cost that depends on the rank, so that each rank alone would often pick another winner.
double rank_cost(int rank, int i, std::int64_t n) {
  return 1.0 + 0.1 * static_cast<double>((i * 7 + n % 11 + rank * 3 + (n / 11) * i) % 6);
}

// A cost that favours index `best` on every rank.
tunekit::simulated_measurer::cost_function favour(int best) {
  return [best](const config &c, const key &) { return block_index(c) == best ? 1.0 : 2.0; };
}

std::string what_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const std::exception &e) {
    return e.what();
  }
  return "no exception";
}

bool contains(const std::string &text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(MultiRankTuner, EveryRankPicksTheSameWinnerOverAThousandKeys) {
  temp_dir dir;
  log_capture log;
  const int r = world_rank();
  auto meas = simulated(
      [r](const config &c, const key &k) { return rank_cost(r, block_index(c), k[0].as_int()); },
      0.02, 1000 + static_cast<std::uint64_t>(r));
  auto o = options(dir.path(), meas, log, &world());
  o.use_disk_cache = false;
  auto f = block_tuner("agree", o);

  constexpr std::int64_t keys = 1000;
  std::vector<std::int64_t> chosen(keys);
  std::vector<std::int64_t> alone(keys); // what this rank would pick by itself (no noise)
  for (std::int64_t n = 0; n < keys; ++n) {
    chosen[static_cast<std::size_t>(n)] = f(n);
    int best = 0;
    for (int i = 1; i < 6; ++i) {
      best = rank_cost(r, i, n) < rank_cost(r, best, n) ? i : best;
    }
    alone[static_cast<std::size_t>(n)] = best;
  }
  const auto agreed = same_everywhere(chosen);
  EXPECT_EQ(std::count(agreed.begin(), agreed.end(), true), keys) << "keys with one winner";
  EXPECT_EQ(f.tuner().searches(), static_cast<std::size_t>(keys));
  if (world_size() > 1) {
    const auto would_agree = same_everywhere(alone);
    EXPECT_GT(std::count(would_agree.begin(), would_agree.end(), false), keys / 4)
        << "the test needs per-rank timings that disagree";
  }
  EXPECT_TRUE(log.warnings().empty());
}

TEST(MultiRankTuner, WorstRankCountsWithoutNoise) {
  temp_dir dir;
  log_capture log;
  const int r = world_rank();
  auto meas = simulated(
      [r](const config &c, const key &k) { return rank_cost(r, block_index(c), k[0].as_int()); });
  auto o = options(dir.path(), meas, log, &world());
  o.use_disk_cache = false;
  auto f = block_tuner("worst", o);
  for (std::int64_t n = 0; n < 50; ++n) {
    int want = 0;
    double want_cost = 1e9;
    for (int i = 0; i < 6; ++i) {
      double worst = 0;
      for (int q = 0; q < world_size(); ++q) {
        worst = std::max(worst, rank_cost(q, i, n));
      }
      if (worst < want_cost) {
        want = i;
        want_cost = worst;
      }
    }
    EXPECT_EQ(f(n), want) << "key " << n;
  }
}

TEST(MultiRankTuner, AHitOnOnlyOneRankMakesEveryRankSearch) {
  for (int k = 0; k < world_size(); ++k) {
    temp_dir dir;
    log_capture log;
    if (world_rank() == k) {
      // A winner (index 5) stored in rank k's cache only, by a single-process tuner.
      tunekit::single_process_communicator single;
      auto o = options(dir.path(), simulated(favour(5)), log, &single);
      o.process->launcher = tunekit::launcher_info{};
      auto seed = block_tuner("hit_on_k", o);
      EXPECT_EQ(seed(42), 5);
    }
    auto meas = simulated(favour(2));
    auto f = block_tuner("hit_on_k", options(dir.path(), meas, log, &world()));
    const std::int64_t got = f(42);
    EXPECT_EQ(got, 2) << "k = " << k;
    EXPECT_EQ(f.tuner().last_source(), source::search) << "k = " << k;
    EXPECT_EQ(meas->candidates_measured(), 6u);
    EXPECT_TRUE(same_everywhere({got, static_cast<std::int64_t>(f.tuner().last_source())})[0]);
    // Only local rank 0 (here: rank 0) wrote the search's winner; rank k kept its own entry.
    const bool has_entry = std::filesystem::exists(f.tuner().cache_path(key{42}));
    EXPECT_EQ(has_entry, world_rank() == 0 || world_rank() == k) << "k = " << k;
    if (world_rank() == 0) {
      const auto e = f.tuner().last_search();
      ASSERT_TRUE(e.has_value());
      EXPECT_EQ(e->world_size, world_size());
    }
    EXPECT_TRUE(log.warnings().empty());
  }
}

TEST(MultiRankTuner, TheSameHitOnEveryRankNeedsNoSearch) {
  temp_dir dir;
  log_capture log;
  {
    tunekit::single_process_communicator single;
    auto o = options(dir.path(), simulated(favour(4)), log, &single);
    o.process->launcher = tunekit::launcher_info{};
    auto seed = block_tuner("hit_everywhere", o);
    EXPECT_EQ(seed(7), 4);
  }
  auto meas = simulated(favour(1));
  auto f = block_tuner("hit_everywhere", options(dir.path(), meas, log, &world()));
  EXPECT_EQ(f(7), 4);
  EXPECT_EQ(f.tuner().last_source(), source::cache);
  EXPECT_EQ(meas->candidates_measured(), 0u);
}

TEST(MultiRankTuner, OneRanksCorruptEntryMakesEveryRankSearch) {
  temp_dir dir;
  log_capture log;
  const int bad = world_size() - 1;
  {
    tunekit::single_process_communicator single;
    auto o = options(dir.path(), simulated(favour(4)), log, &single);
    o.process->launcher = tunekit::launcher_info{};
    auto seed = block_tuner("corrupt", o);
    EXPECT_EQ(seed(9), 4);
    if (world_rank() == bad) {
      std::ofstream(seed.tuner().cache_path(key{9}), std::ios::trunc) << "{\"schema\": \"tunek";
    }
  }
  auto meas = simulated(favour(1));
  auto f = block_tuner("corrupt", options(dir.path(), meas, log, &world()));
  const std::int64_t got = f(9);
  EXPECT_EQ(got, 1);
  EXPECT_EQ(f.tuner().last_source(), source::search);
  EXPECT_TRUE(same_everywhere({got})[0]);
  const auto warnings = log.warnings();
  if (world_rank() == bad) {
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_TRUE(contains(warnings[0], "skipping winner cache entry")) << warnings[0];
    EXPECT_TRUE(contains(warnings[0], "rank " + std::to_string(bad))) << warnings[0];
  } else {
    EXPECT_TRUE(warnings.empty());
  }
}

TEST(MultiRankTuner, MismatchedKeysGiveTheSameErrorOnEveryRank) {
  if (world_size() < 2) {
    GTEST_SKIP() << "needs two ranks";
  }
  temp_dir dir;
  log_capture log;
  auto f = block_tuner("mismatch", options(dir.path(), simulated(favour(3)), log, &world()));
  const std::int64_t n = world_rank() == 1 ? 8 : 7;
  const std::string msg = what_of([&] { f(n); });
  EXPECT_TRUE(contains(msg, "do not agree on the key or the candidate list")) << msg;
  EXPECT_TRUE(same_text_everywhere(msg)) << msg;

  // A candidate list that depends on the rank fails the same way.
  auto g = tunekit::autotune(
      "mismatch_prune", six_blocks(), [](std::int64_t m) { return key{m}; },
      [](const config &c, std::int64_t) {
        return block_index(c) != world_rank() % 2; // ranks of each parity prune another config
      },
      [](std::int64_t, const config &c) { return block_index(c); },
      options(dir.path(), simulated(favour(3)), log, &world()));
  const std::string msg2 = what_of([&] { g(5); });
  EXPECT_TRUE(contains(msg2, "do not agree")) << msg2;
  EXPECT_TRUE(same_text_everywhere(msg2)) << msg2;

  // The ranks are still in step: the next agreeing call tunes together.
  EXPECT_EQ(f(100), 3);
  EXPECT_EQ(f.tuner().last_source(), source::search);
}

TEST(MultiRankTuner, ASubCommunicatorReducesOnlyItsRanks) {
  if (world_size() != 4) {
    GTEST_SKIP() << "the costs are chosen for four ranks";
  }
  // Per-rank costs whose worst case picks index 1 on ranks {0, 2}, 2 on {1, 3}, 0 on all four.
  const int r = world_rank();
  auto cost = [r](const config &c, const key &) {
    const int i = block_index(c);
    return 1.0 + 0.1 * static_cast<double>((i * (r + 1) + r) % 5);
  };
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
  {
    tunekit::mpi::communicator sub(half);
    temp_dir dir;
    log_capture log;
    auto f = block_tuner("sub", options(dir.path(), simulated(cost), log, &sub));
    EXPECT_EQ(f(1), r % 2 == 0 ? 1 : 2);
    auto g = block_tuner("sub_world", options(dir.path(), simulated(cost), log, &world()));
    EXPECT_EQ(g(1), 0);

    // The registered default communicator serves tuners that name none.
    tunekit::set_default_communicator(&sub);
    auto d = block_tuner("sub_default", options(dir.path(), simulated(cost), log, nullptr));
    EXPECT_EQ(d(1), r % 2 == 0 ? 1 : 2);
    tunekit::set_default_communicator(nullptr);
  }
  MPI_Comm_free(&half);
}

TEST(MultiRankTuner, WithoutADefaultTheWorldServesOnceRegistered) {
  const int r = world_rank();
  auto cost = [r](const config &c, const key &) {
    const int i = block_index(c);
    return 1.0 + 0.1 * static_cast<double>((i * (r + 1) + r) % 5);
  };
  temp_dir dir;
  log_capture log;
  tunekit::mpi::use_world_by_default();
  auto f = block_tuner("world_default", options(dir.path(), simulated(cost), log, nullptr));
  const std::int64_t got = f(3);
  EXPECT_TRUE(same_everywhere({got})[0]);
  if (world_size() == 4) {
    EXPECT_EQ(got, 0);
  }
  // Without the fallback a tuner that names no communicator is a single process: each rank
  // picks its own fastest.
  tunekit::set_communicator_fallback(nullptr);
  EXPECT_EQ(tunekit::default_communicator(), nullptr);
  const auto space = six_blocks();
  int best = 0;
  for (int i = 1; i < 6; ++i) {
    best = cost(space[static_cast<std::size_t>(i)], key{}) <
                   cost(space[static_cast<std::size_t>(best)], key{})
               ? i
               : best;
  }
  auto o = options(dir.path(), simulated(cost), log, nullptr);
  o.use_disk_cache = false;
  auto single = block_tuner("world_default_single", o);
  EXPECT_EQ(single(3), best);
}

TEST(MultiRankTuner, DeferredModeRunsTheDefaultUntilArmed) {
  temp_dir dir;
  log_capture log;
  const int r = world_rank();
  auto meas = simulated(
      [r](const config &c, const key &k) { return rank_cost(r, block_index(c), k[0].as_int()); });
  auto o = options(dir.path(), meas, log, &world());
  o.mode = tunekit::tuning_mode::deferred;
  auto f = block_tuner("deferred", o);
  EXPECT_FALSE(f.tuner().armed());
  // Ranks make different numbers of calls before arming: no collective runs, so nothing hangs.
  for (std::int64_t n = 0; n <= r; ++n) {
    EXPECT_EQ(f(n), 0);
    EXPECT_EQ(f(n), 0);
    EXPECT_EQ(f.tuner().last_source(), source::default_config);
  }
  EXPECT_EQ(meas->candidates_measured(), 0u);
  EXPECT_EQ(f.tuner().recorded_keys().size(), static_cast<std::size_t>(r + 1));
  EXPECT_FALSE(std::filesystem::exists(f.tuner().cache_path(key{0})));

  f.tuner().arm();
  EXPECT_TRUE(f.tuner().armed());
  const std::int64_t got = f(0);
  EXPECT_EQ(f.tuner().last_source(), source::search);
  EXPECT_EQ(meas->candidates_measured(), 6u);
  EXPECT_TRUE(same_everywhere({got})[0]);
  EXPECT_EQ(f(0), got);
  EXPECT_EQ(meas->candidates_measured(), 6u); // the winner in memory answered
}

// Rank-local work for the split tests: the same cost on every rank, over 6 blocks x 3 warps.
double split_cost(const config &c, const key &k) {
  return rank_cost(0, block_index(c), k[0].as_int()) + 0.01 * block_index(c);
}

tunekit::config_space blocks_and_warps() {
  return tunekit::config_space::product(
      {{"BLOCK", {64, 128, 256, 512, 1024, 2048}}, {"WARPS", {1, 2, 4}}});
}

TEST(MultiRankTuner, ParallelSplitPicksWhatTheFullSearchPicks) {
  temp_dir dir;
  log_capture log;
  const auto space = blocks_and_warps();
  auto full_meas = simulated(split_cost);
  auto split_meas = simulated(split_cost);
  auto o = options(dir.path(), full_meas, log, &world());
  o.use_disk_cache = false;
  auto full = block_tuner("full", o, space);
  o.measurer = split_meas;
  o.parallel_split = true;
  auto split = block_tuner("split", o, space);

  constexpr std::int64_t keys = 100;
  std::vector<std::int64_t> a(keys);
  std::vector<std::int64_t> b(keys);
  for (std::int64_t n = 0; n < keys; ++n) {
    a[static_cast<std::size_t>(n)] = full(n);
    b[static_cast<std::size_t>(n)] = split(n);
  }
  EXPECT_EQ(a, b);
  const auto agreed = same_everywhere(b);
  EXPECT_EQ(std::count(agreed.begin(), agreed.end(), true), keys);
  // Rank q measures kept candidates q, q + size, ...: 18 candidates per key.
  const std::size_t size = static_cast<std::size_t>(world_size());
  const std::size_t mine = (18 + size - 1 - static_cast<std::size_t>(world_rank())) / size;
  EXPECT_EQ(split_meas->candidates_measured(), mine * keys);
  EXPECT_EQ(full_meas->candidates_measured(), 18u * keys);
}

// A time limit makes a search of a space that fits the evaluation budget; under the split its
// batches take at least one candidate per rank, so that every rank measures its share, as when
// the space is measured whole.
TEST(MultiRankTuner, ParallelSplitWithATimeLimitKeepsEveryRankMeasuring) {
  if (world_size() < 2) {
    GTEST_SKIP() << "needs two ranks";
  }
  temp_dir dir;
  log_capture log;
  auto meas = simulated(split_cost);
  auto o = options(dir.path(), meas, log, &world());
  o.use_disk_cache = false;
  o.parallel_split = true;
  o.search.budget.max_time = std::chrono::minutes(10);
  auto f = block_tuner("split_limited", o, blocks_and_warps());
  const std::int64_t got = f(3);
  EXPECT_TRUE(same_everywhere({got})[0]);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  ASSERT_TRUE(e->search.has_value());
  EXPECT_EQ(e->search->stop, "exhausted");
  EXPECT_EQ(e->candidates.size(), 18u);
  const auto size = static_cast<std::size_t>(world_size());
  EXPECT_EQ(e->search->batch_size, size);
  // Each rank measured a share; with batches of one, rank 0 would measure all 18 and the others
  // none.
  EXPECT_GT(meas->candidates_measured(), 0u);
  EXPECT_LT(meas->candidates_measured(), 18u);
}

TEST(MultiRankTuner, ParallelSplitFailureOnItsRankIsAFailureEverywhere) {
  if (world_size() < 2) {
    GTEST_SKIP() << "needs two ranks";
  }
  temp_dir dir;
  log_capture log;
  // Index 1 would win but fails on the rank that measures it (rank 1 of the split).
  auto cost = [](const config &c, const key &) -> double {
    const int i = block_index(c);
    if (i == 1) {
      throw std::runtime_error("out of shared memory");
    }
    return 1.0 + 0.1 * i;
  };
  auto o = options(dir.path(), simulated(cost), log, &world());
  o.parallel_split = true;
  o.use_disk_cache = false;
  auto f = block_tuner("split_fail", o);
  EXPECT_EQ(f(1), 0);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->candidates[1].status, tunekit::candidate_status::failed);
  if (world_rank() != 1) {
    EXPECT_EQ(e->candidates[1].reason, "failed on rank 1");
  } else {
    EXPECT_TRUE(contains(e->candidates[1].reason, "out of shared memory"))
        << e->candidates[1].reason;
  }
}

TEST(MultiRankTuner, AFatalCandidateOnOneRankStopsEveryRank) {
  if (world_size() < 2) {
    GTEST_SKIP() << "needs two ranks";
  }
  temp_dir dir;
  log_capture log;
  const int r = world_rank();
  auto cost = [r](const config &c, const key &) -> double {
    if (r == 1 && block_index(c) == 2) {
      throw tunekit::fatal_candidate_error("illegal address");
    }
    return 1.0;
  };
  auto o = options(dir.path(), simulated(cost), log, &world());
  o.use_disk_cache = false;
  auto f = block_tuner("fatal", o);
  std::string msg;
  bool fatal = false;
  try {
    f(1);
  } catch (const tunekit::fatal_candidate_error &e) {
    fatal = true;
    msg = e.what();
  } catch (const tunekit::error &e) {
    msg = e.what();
  }
  // The failing rank stops; the others find every candidate invalid instead of waiting for it.
  EXPECT_EQ(fatal, r == 1) << msg;
  EXPECT_TRUE(contains(msg, r == 1 ? "illegal address" : "failed on another rank")) << msg;
  EXPECT_TRUE(r == 1 || contains(msg, "cannot find valid config")) << msg;
}

TEST(MultiRankTuner, ARankThatNeverArrivesFailsTheOthersWithStepAndKey) {
  if (world_size() < 2) {
    GTEST_SKIP() << "needs two ranks";
  }
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  {
    tunekit::mpi::communicator c(dup, {.timeout = std::chrono::milliseconds(300)});
    temp_dir dir;
    log_capture log;
    auto f = block_tuner("late", options(dir.path(), simulated(favour(2)), log, &c));
    if (world_rank() != 0) {
      std::string msg;
      try {
        f(77);
      } catch (const tunekit::communicator_timeout &e) {
        msg = e.what();
      }
      EXPECT_TRUE(contains(msg, "tuner 'late'")) << msg;
      EXPECT_TRUE(contains(msg, "key (77)")) << msg;
      EXPECT_TRUE(contains(msg, "agreement on the key")) << msg;
      EXPECT_TRUE(contains(msg, "timed out")) << msg;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
      // Complete the agreement reduction the others gave up on (the first: a MIN all-reduce of
      // four values), so that their communicators can be destroyed cleanly.
      std::array<double, 4> v{};
      MPI_Request req = MPI_REQUEST_NULL;
      MPI_Iallreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MIN, dup,
                     &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
  }
  MPI_Comm_free(&dup);

  // The arm rendezvous times out the same way.
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  {
    tunekit::mpi::communicator c(dup, {.timeout = std::chrono::milliseconds(300)});
    temp_dir dir;
    log_capture log;
    auto o = options(dir.path(), simulated(favour(2)), log, &c);
    o.mode = tunekit::tuning_mode::deferred;
    auto f = block_tuner("late_arm", o);
    if (world_rank() != 0) {
      const std::string msg = what_of([&] { f.tuner().arm(); });
      EXPECT_TRUE(contains(msg, "tuner 'late_arm': deferred arm rendezvous timed out")) << msg;
      EXPECT_FALSE(f.tuner().armed());
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
      MPI_Request req = MPI_REQUEST_NULL;
      MPI_Ibarrier(dup, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
  }
  MPI_Comm_free(&dup);
}

// A rank whose measurement stalls past the timeout completes the reduction the others gave up
// on (their contributions are still posted), but then fails too instead of storing a winner: the
// same config on every rank, or an error on every rank.
TEST(MultiRankTuner, ARankLateForTheLastReductionFailsToo) {
  if (world_size() < 2) {
    GTEST_SKIP() << "needs two ranks";
  }
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  {
    tunekit::mpi::communicator c(dup, {.timeout = std::chrono::milliseconds(300)});
    temp_dir dir;
    log_capture log;
    const bool late = world_rank() == 0;
    bool stalled = false;
    auto cost = [&](const config &cfg, const key &) {
      if (late && !stalled) {
        stalled = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(900));
      }
      return block_index(cfg) == 2 ? 1.0 : 2.0;
    };
    auto f = block_tuner("late_reduction", options(dir.path(), simulated(cost), log, &c));
    std::string msg;
    bool returned = false;
    try {
      static_cast<void>(f(77));
      returned = true;
    } catch (const tunekit::communicator_timeout &e) {
      msg = e.what();
    }
    EXPECT_FALSE(returned) << "rank " << world_rank() << " reported success";
    EXPECT_TRUE(contains(msg, late ? "confirmation that every rank finished the search"
                                   : "reduction of the candidate timings"))
        << msg;
    EXPECT_FALSE(std::filesystem::exists(f.tuner().cache_path(key{std::int64_t{77}})));
    EXPECT_EQ(f.tuner().find(key{std::int64_t{77}}), nullptr);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!late) {
      // Complete the confirmation the late rank gave up on, so that the communicators can be
      // destroyed cleanly.
      MPI_Request req = MPI_REQUEST_NULL;
      MPI_Ibarrier(dup, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Comm_free(&dup);
}

// prune_fn or key_fn throwing on one rank only: that rank still votes ("I failed"), so every rank
// raises at once with the same error naming it, even without a communicator timeout.
TEST(MultiRankTuner, AFailingPruneOrKeyFunctionOnOneRankFailsEveryRankAtOnce) {
  if (world_size() < 2) {
    GTEST_SKIP() << "needs two ranks";
  }
  temp_dir dir;
  log_capture log;
  const bool failing = world_rank() == 1;
  auto f = tunekit::autotune(
      "one_rank_fails", six_blocks(),
      [failing](std::int64_t n) {
        if (failing && n == 6) {
          throw std::runtime_error("no key for six");
        }
        return tunekit::key{n};
      },
      [failing](const config &c, std::int64_t n) {
        if (failing && n == 5 && block_index(c) == 3) {
          throw std::runtime_error("cannot judge 512");
        }
        return true;
      },
      [](std::int64_t, const config &c) { return block_index(c); },
      options(dir.path(), simulated(favour(2)), log, &world()));
  for (const std::int64_t n : {5, 6}) {
    const std::string msg = what_of([&] { f(n); });
    EXPECT_TRUE(same_text_everywhere(msg)) << msg;
    EXPECT_TRUE(contains(msg, "rank 1 of " + std::to_string(world_size()) + " failed")) << msg;
    EXPECT_TRUE(contains(msg, n == 5 ? "prune_fn threw for [BLOCK=512]: cannot judge 512"
                                     : "key_fn threw: no key for six"))
        << msg;
  }
  // The communicator is still in step: the next key tunes on every rank.
  EXPECT_EQ(f(7), 2);
}

// A candidate that fails on one rank only is invalid everywhere, and the entry rank 0 stores
// records it without a time, so a later process can read it.
TEST(MultiRankTuner, ACandidateFailingOnOneRankLeavesAReadableEntry) {
  if (world_size() < 2) {
    GTEST_SKIP() << "needs two ranks";
  }
  temp_dir dir;
  log_capture log;
  const bool failing = world_rank() == 1;
  auto f = tunekit::autotune(
      "fails_on_one", six_blocks(), [](std::int64_t n) { return tunekit::key{n}; },
      tunekit::keep_all{},
      [failing](std::int64_t, const config &c) {
        if (failing && block_index(c) == 2) {
          throw std::runtime_error("not on this rank");
        }
        return block_index(c);
      },
      options(dir.path(), simulated(favour(2)), log, &world()));
  const int winner = f(9);
  EXPECT_TRUE(same_everywhere({winner})[0]);
  EXPECT_NE(winner, 2);
  if (world_rank() == 0) {
    const auto entry = tunekit::winner_cache::read(f.tuner().cache_path(key{std::int64_t{9}}));
    ASSERT_TRUE(entry.found()) << entry.detail;
    const auto &failed = entry.value->candidates[2];
    EXPECT_EQ(failed.status, tunekit::candidate_status::failed);
    EXPECT_TRUE(std::isinf(failed.time_ms));
    EXPECT_TRUE(contains(failed.reason, "failed on another rank")) << failed.reason;
  }
}

TEST(MultiRankTuner, VerboseLinesReachTheConsoleFromLocalRankZeroOnly) {
  temp_dir dir;
  log_capture log;
  auto o = options(dir.path(), simulated(favour(2)), log, &world());
  o.process->launcher = tunekit::launcher_info{tunekit::launcher_kind::open_mpi, world_rank(),
                                               world_rank(), world_size()};
  auto f = block_tuner("verbose", o);
  EXPECT_EQ(f.with({.verbose = true})(5), 2);
  if (world_rank() == 0 || world_size() == 1) {
    EXPECT_FALSE(log.infos().empty());
  } else {
    EXPECT_TRUE(log.infos().empty());
  }
  // Every rank keeps its full log.
  if (world_size() > 1) {
    std::ifstream in(dir.path() / "logs" / ("rank-" + std::to_string(world_rank()) + ".log"));
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    EXPECT_TRUE(contains(text, "searching 6 of 6 configs")) << text;
    EXPECT_TRUE(contains(text, "winner #2")) << text;
  }
}

} // namespace

namespace {

// 16^3 = 4096 configs searched by a strategy within 260 evaluations (past 200, where the default
// strategy starts polishing its best): each rank sees its own noisy timings, yet every rank
// proposes the same candidates (same seed, same MAX-reduced times), so all measure the same ones
// and pick the same winner; with the split, the ranks share each batch; with a lookahead, the
// proposals made ahead agree too.
TEST(MultiRankTuner, StrategySearchesAgreeAcrossRanks) {
  constexpr std::size_t budget = 260;
  for (const auto &[split, ahead] :
       {std::pair{false, 0}, std::pair{true, 0}, std::pair{false, 6}, std::pair{true, 6}}) {
    temp_dir dir;
    log_capture log;
    const int r = world_rank();
    std::vector<tunekit::value> v;
    for (int i = 0; i < 16; ++i) {
      v.emplace_back(i);
    }
    auto meas = simulated(
        [](const config &c, const key &) {
          const auto d = [&](const char *name, std::int64_t at) {
            const auto x = static_cast<double>(c.get_int(name) - at);
            return x * x;
          };
          return 1.0 + d("x", 11) + d("y", 3) + 0.5 * d("z", 7);
        },
        0.05, 77 + static_cast<std::uint64_t>(r));
    auto o = options(dir.path(), meas, log, &world());
    o.search.budget.max_evaluations = budget;
    o.search.batch_size = 4;
    o.search.seed = 3;
    o.search.lookahead = static_cast<std::size_t>(ahead); // proposals made ahead of each batch
    o.parallel_split = split;
    o.search.transfer_from_cache = true; // rank 0's (empty here) list for everyone
    auto f = tunekit::autotune(
        "strategy", tunekit::config_space::product({{"x", v}, {"y", v}, {"z", v}}),
        [](int n) { return key{n}; }, tunekit::keep_all{},
        [](int, const config &c) {
          return c.get_int("x") * 256 + c.get_int("y") * 16 + c.get_int("z");
        },
        o);
    const std::int64_t winner = f(1);
    const auto e = f.tuner().last_search();
    ASSERT_TRUE(e.has_value());
    ASSERT_TRUE(e->search.has_value());
    std::vector<std::int64_t> mine{winner, static_cast<std::int64_t>(e->search->evaluations)};
    for (const auto &c : e->candidates) {
      mine.push_back(c.config.get_int("x") * 256 + c.config.get_int("y") * 16 +
                     c.config.get_int("z"));
    }
    mine.resize(budget + 2, -1);
    const auto same = same_everywhere(mine);
    EXPECT_EQ(static_cast<std::size_t>(std::count(same.begin(), same.end(), true)), budget + 2)
        << "split " << split << ", lookahead " << ahead;
    EXPECT_EQ(e->search->evaluations, budget); // the polish took part
    if (split && world_size() > 1) {
      EXPECT_LT(meas->candidates_measured(), e->search->evaluations);
    }
  }
}

// Records the configs it is handed, call by call.
class recording_preparer final : public tunekit::candidate_preparer {
public:
  void prepare(std::span<const config> configs) override {
    calls.emplace_back(configs.begin(), configs.end());
  }
  [[nodiscard]] std::optional<double> prepare_ms(const config & /*c*/) const override {
    return 1.0;
  }
  std::vector<std::vector<config>> calls;
};

// With the split and a lookahead, each rank is handed the proposals it will measure as they are
// made, ahead of their batch (a compile overlaps the measurement, as on one rank), and no other
// rank's: the first call already holds its share of a batch and of the lookahead, which the split
// multiplies by the ranks so that each rank keeps as many of its own ahead as one rank alone.
TEST(MultiRankTuner, SplitRanksPrepareTheirOwnShareAhead) {
  temp_dir dir;
  log_capture log;
  std::vector<tunekit::value> v;
  for (int i = 0; i < 16; ++i) {
    v.emplace_back(i);
  }
  auto meas = simulated([](const config &c, const key &) {
    return 1.0 + std::abs(static_cast<double>(c.get_int("x") - 9)) +
           std::abs(static_cast<double>(c.get_int("y") - 4));
  });
  auto prep = std::make_shared<recording_preparer>();
  auto o = options(dir.path(), meas, log, &world());
  o.use_disk_cache = false;
  o.search.budget.max_evaluations = 64;
  o.search.batch_size = 4;
  o.search.lookahead = 8;
  o.search.seed = 5;
  o.parallel_split = true;
  o.preparer = prep;
  auto f = tunekit::autotune(
      "split_prepare", tunekit::config_space::product({{"x", v}, {"y", v}}),
      [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &c) { return c.get_int("x") * 16 + c.get_int("y"); }, o);
  static_cast<void>(f(1));
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  ASSERT_TRUE(e->search.has_value());
  std::vector<std::string> measured; // by this rank
  for (const auto &c : e->candidates) {
    if (!c.measured_on.has_value() || *c.measured_on == world_rank()) {
      measured.push_back(c.config.to_string());
    }
  }
  std::vector<std::string> handed;
  for (const auto &call : prep->calls) {
    for (const auto &c : call) {
      handed.push_back(c.to_string());
    }
  }
  std::sort(measured.begin(), measured.end());
  std::sort(handed.begin(), handed.end());
  EXPECT_EQ(handed, measured); // each of its own once, nothing of another rank's
  ASSERT_FALSE(prep->calls.empty());
  // The first proposals: a batch and the lookahead of each rank, 4 + 8 x ranks candidates, this
  // rank's share of them.
  const auto size = static_cast<std::size_t>(world_size());
  const auto rank = static_cast<std::size_t>(world_rank());
  std::size_t share = 0;
  for (std::size_t j = 0; j < 4 + 8 * size; ++j) {
    share += (j % 4) % size == rank ? 1 : 0;
  }
  EXPECT_EQ(prep->calls.front().size(), share);
  EXPECT_EQ(e->search->lookahead, 8 * size); // as the search ran it
}

// With the split, a rank holds the runs of its own share only. The re-rank's leaders (the
// candidates within the band, where runs varied) are agreed, so every rank re-measures the same
// leaders, reduces them in one reduction of the same size and picks the same winner.
TEST(MultiRankTuner, SplitRanksAgreeOnTheReRanksLeaders) {
  if (world_size() < 2) {
    GTEST_SKIP() << "needs two ranks";
  }
  temp_dir dir;
  log_capture log;
  auto meas = simulated(
      [](const config &c, const key &) { return 1.0 + 0.01 * static_cast<double>(block_index(c)); },
      0.02, 11 + static_cast<std::uint64_t>(world_rank()));
  auto o = options(dir.path(), meas, log, &world());
  o.policy = tunekit::measure_policy{0, 3, tunekit::statistic::mean};
  o.use_disk_cache = false;
  o.parallel_split = true;
  o.search.rerank.band = 0.5; // all six within it
  auto f = block_tuner("split_rerank", o);
  const std::int64_t got = f(3);
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e.has_value());
  ASSERT_TRUE(e->rerank.has_value());
  std::vector<std::int64_t> mine{got};
  for (const auto l : e->rerank->leaders) {
    mine.push_back(static_cast<std::int64_t>(l));
  }
  EXPECT_EQ(e->rerank->leaders.size(), 4U); // every one noisy somewhere: the four fastest
  mine.resize(5, -1);
  const auto same = same_everywhere(mine);
  EXPECT_EQ(std::count(same.begin(), same.end(), true), 5);
}

// Measurements made before on some ranks only: a config is taken when every rank holds it, so
// every rank measures the same configs, and every rank picks the same winner.
class held_before final : public tunekit::prior_measurements {
public:
  explicit held_before(std::vector<int> blocks) : m_blocks(std::move(blocks)) {}
  [[nodiscard]] std::string name() const override { return "the test's file"; }
  [[nodiscard]] std::vector<tunekit::candidate_record> find(const key & /*k*/) const override {
    std::vector<tunekit::candidate_record> out;
    for (int i : m_blocks) {
      tunekit::candidate_record r;
      r.config = config{{"BLOCK", std::int64_t{64} << i}};
      r.time_ms = i == 3 ? 0.5 : 5.0; // index 3 the fastest, when taken
      out.push_back(r);
    }
    return out;
  }

private:
  std::vector<int> m_blocks;
};

TEST(MultiRankTuner, MeasurementsMadeBeforeAreTakenWhereEveryRankHoldsThem) {
  temp_dir dir;
  log_capture log;
  // Every rank holds 0, 1 and 3; the last rank lacks 2, which every rank then measures.
  std::vector<int> held{0, 1, 3};
  if (world_rank() != world_size() - 1) {
    held.push_back(2);
  }
  auto meas = simulated(favour(5));
  auto o = options(dir.path(), meas, log, &world());
  o.prior = std::make_shared<held_before>(held);
  auto f = block_tuner("prior_everywhere", o);
  const std::int64_t got = f(11);
  EXPECT_EQ(got, 3); // 0.5 ms from before beats everything measured (1 or 2 ms)
  EXPECT_TRUE(same_everywhere({got})[0]);
  EXPECT_EQ(meas->candidates_measured(), 3u); // 2, 4 and 5 (six blocks, 0, 1 and 3 taken)
  const auto e = f.tuner().last_search();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->candidates.size(), 6u);
}

} // namespace
