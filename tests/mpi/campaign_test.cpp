// Offline campaigns across real ranks (run under mpiexec with 3 ranks, so that the split is not a
// power of two): each rank tunes its share of the calls alone, every rank sees every winner
// through the shared winner cache after the barrier, rank 0 alone writes the artifacts and the
// lookup table of the campaign's keys (bucketed, as stored), every rank gets the same outputs or
// the same error, and a campaign run again resumes with nothing left to tune.

#include "mpi_test_support.hpp"

#include <tunekit/campaign.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace tunekit_mpi_test;
using tunekit::config;
using tunekit::key;
using tunekit::source;
using tunekit_test::error_of;

// A directory every rank uses: rank 0 makes it and tells the others its name.
class shared_dir {
public:
  shared_dir() {
    std::string name;
    if (world_rank() == 0) {
      name = m_own.path().string();
    }
    auto n = static_cast<std::uint64_t>(name.size());
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    name.resize(static_cast<std::size_t>(n));
    MPI_Bcast(name.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
    m_path = name;
  }
  ~shared_dir() {
    MPI_Barrier(MPI_COMM_WORLD); // every rank is done with it before rank 0 removes it
  }
  shared_dir(const shared_dir &) = delete;
  shared_dir &operator=(const shared_dir &) = delete;
  [[nodiscard]] const std::filesystem::path &path() const noexcept { return m_path; }

private:
  temp_dir m_own; // rank 0's is the one used; removed after the barrier above
  std::filesystem::path m_path;
};

std::string read_text(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The best BLOCK is the one nearest to the key's n (its bucket).
std::shared_ptr<tunekit::simulated_measurer> nearest_block() {
  return std::make_shared<tunekit::simulated_measurer>([](const config &c, const key &k) {
    return 1.0 + static_cast<double>(std::llabs(c.get_int("BLOCK") - k[0].as_int())) / 1000.0;
  });
}

// A host tuned function keyed by n in pow2 buckets, with artifacts named "scale".
tunekit::tuner_options campaign_options(const std::filesystem::path &dir, const log_capture &log,
                                        tunekit::communicator *comm) {
  auto o = options(dir, nearest_block(), log, comm);
  o.artifact.name = "scale";
  o.artifact.key_names = {"n"};
  o.shapes.buckets = {tunekit::key_bucket::pow2(0)};
  o.table.op_name = "scale";
  return o;
}

// Seven calls in seven buckets (128 ... 8192), and one (n = 50) that a shipped table answers.
const std::vector<std::tuple<std::int64_t>> calls{{100},  {200},  {300},  {1000},
                                                  {1500}, {3000}, {5000}, {50}};
constexpr std::size_t seeded = 7;

TEST(Campaign, SplitsAcrossRanksWritesOnceOnRankZeroAndResumes) {
  ASSERT_EQ(world_size(), 3) << "run with 3 ranks";
  shared_dir dir;
  const int rank = world_rank();
  log_capture log;
  auto scale = block_tuner("scale", campaign_options(dir.path(), log, &world()));
  // The key n = 50 is taken from a per-shape table on every rank: not searched, so no entry.
  scale.tuner().seed(key{std::int64_t{50}}, config{{"BLOCK", 64}});

  const auto artifacts = dir.path() / "artifacts";
  const auto table = dir.path() / "tables" / "scale.json";
  const tunekit::campaign_result r = tunekit::campaign(scale, calls,
                                                       {.comm = &world(),
                                                        .verbose = true,
                                                        .artifacts = {.dir = artifacts},
                                                        .table = {.path = table}});

  // Each rank made its share only (every third call, starting at its rank), alone.
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(rank); i < calls.size(); i += 3) {
    mine.push_back(i);
  }
  ASSERT_EQ(r.sources.size(), mine.size());
  std::size_t searched = 0;
  for (std::size_t j = 0; j < mine.size(); ++j) {
    EXPECT_EQ(r.sources[j].first, mine[j]);
    EXPECT_EQ(r.sources[j].second, mine[j] == seeded ? source::memory : source::search);
    searched += mine[j] == seeded ? 0 : 1;
  }
  EXPECT_EQ(r.tuned(), searched);
  EXPECT_EQ(scale.tuner().searches(), searched);
  const auto all = gather(static_cast<std::int64_t>(scale.tuner().searches()));
  EXPECT_EQ(all[0] + all[1] + all[2], 7);

  // After the barrier every rank finds every winner in the shared cache: a fresh tuner of each
  // rank serves every call from it, searching nothing.
  {
    tunekit::single_process_communicator alone;
    log_capture quiet;
    auto fresh = block_tuner("scale", campaign_options(dir.path(), quiet, &alone));
    for (std::size_t i = 0; i < seeded; ++i) {
      const std::int64_t n = std::get<0>(calls[i]);
      EXPECT_TRUE(std::filesystem::exists(fresh.tuner().cache_path(key{n}))) << n;
      static_cast<void>(fresh(n));
      EXPECT_EQ(fresh.tuner().last_source(), source::cache) << n;
    }
    EXPECT_EQ(fresh.tuner().searches(), 0U);
  }

  // The outputs: written by rank 0 only, the same list on every rank.
  EXPECT_EQ(r.table, table);
  ASSERT_EQ(r.artifacts.size(), 7U);
  std::string listed = r.table.string();
  for (const auto &p : r.artifacts) {
    listed += "\n" + p.string();
    EXPECT_TRUE(std::filesystem::exists(p)) << p;
  }
  EXPECT_TRUE(same_text_everywhere(listed));
  EXPECT_EQ(log.count(tunekit::log_level::info, {"wrote 7 artifacts to"}), rank == 0 ? 1U : 0U);
  EXPECT_EQ(log.count(tunekit::log_level::info, {"wrote the lookup table", "(7 keys)"}),
            rank == 0 ? 1U : 0U);
  std::size_t files = 0;
  for (const auto &e : std::filesystem::directory_iterator(artifacts)) {
    files += e.path().extension() == ".json" ? 1 : 0;
  }
  EXPECT_EQ(files, 7U);

  // Each artifact serves its bucket's winner, and the table holds exactly the tuned keys.
  const auto dev = tunekit::device_identity::of(scale.tuner().hardware());
  const auto t = tunekit::lookup_table::load(table);
  EXPECT_EQ(t.size(), 7U);
  for (const std::int64_t bucket : {128, 256, 512, 1024, 2048, 4096, 8192}) {
    const auto a = tunekit::load_artifact(artifacts, "scale", key{bucket}, dev);
    ASSERT_TRUE(a.found()) << bucket << ": " << a.detail;
    const std::int64_t best = bucket > 2048 ? 2048 : bucket;
    EXPECT_EQ(a.value->config.get_int("BLOCK"), best) << bucket;
    EXPECT_EQ(a.value->key_names, std::vector<std::string>{"n"});
    const auto *entries =
        t.find(tunekit::table_key(dev.name, key{bucket}, tunekit::table_params({}), "scale"));
    ASSERT_NE(entries, nullptr) << bucket;
    EXPECT_EQ(entries->front().choice.get_int("BLOCK"), best);
  }

  // The key no search answered is named on every rank and warned about on rank 0 only.
  ASSERT_EQ(r.missing.size(), 1U);
  EXPECT_EQ(r.missing[0].key, (key{std::int64_t{64}})); // 50 in its bucket
  EXPECT_EQ(r.missing[0].why, "no winner cache entry");
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"1 of its 8 keys has no usable winner cache"}),
            rank == 0 ? 1U : 0U);

  // Run again (a campaign started again after a kill): every call is answered as before, nothing
  // is searched, and the artifacts come out byte for byte the same.
  const std::string before = read_text(r.artifacts.front());
  MPI_Barrier(MPI_COMM_WORLD);
  log_capture log2;
  auto again = block_tuner("scale", campaign_options(dir.path(), log2, &world()));
  again.tuner().seed(key{std::int64_t{50}}, config{{"BLOCK", 64}});
  const auto resumed = tunekit::campaign(
      again, calls, {.comm = &world(), .artifacts = {.dir = artifacts}, .table = {.path = table}});
  EXPECT_EQ(resumed.tuned(), 0U);
  for (const auto &[i, s] : resumed.sources) {
    EXPECT_EQ(s, i == seeded ? source::memory : source::cache) << i;
  }
  EXPECT_EQ(again.tuner().searches(), 0U);
  EXPECT_EQ(resumed.artifacts, r.artifacts);
  EXPECT_EQ(read_text(resumed.artifacts.front()), before);
}

TEST(Campaign, AfterTheSplitEveryRankServesEveryKeyTogether) {
  ASSERT_EQ(world_size(), 3) << "run with 3 ranks";
  shared_dir dir;
  log_capture log;
  auto scale = block_tuner("scale", campaign_options(dir.path(), log, &world()));
  const std::vector<std::tuple<std::int64_t>> keys{{100}, {200}, {300}, {1000}, {1500}, {3000}};
  const auto r = tunekit::campaign(scale, keys, {.comm = &world()});
  ASSERT_EQ(r.tuned(), 2U);
  // Each rank holds only the winners of its own share in memory after the campaign. Calling every
  // key on every rank, on the world communicator, must then take the same path on every rank:
  // the keys a rank tuned alone were dropped from its memory, so every rank agrees on each key
  // from the shared cache, in step, and holds the same winners.
  std::vector<std::int64_t> winners;
  for (const auto &[n] : keys) {
    winners.push_back(scale(n));
    EXPECT_EQ(scale.tuner().last_source(), source::cache) << n;
  }
  EXPECT_EQ(scale.tuner().searches(), 2U); // nothing searched again
  for (std::size_t i = 0; i < winners.size(); ++i) {
    const auto all = gather(winners[i]);
    EXPECT_EQ(all[0], all[1]);
    EXPECT_EQ(all[1], all[2]);
  }
  // From then on every key is in every rank's memory.
  for (const auto &[n] : keys) {
    static_cast<void>(scale(n));
    EXPECT_EQ(scale.tuner().last_source(), source::memory) << n;
  }
}

TEST(Campaign, EveryRankFailsWhenRankZeroCannotWrite) {
  shared_dir dir;
  log_capture log;
  auto scale = block_tuner("scale", campaign_options(dir.path(), log, &world()));
  // The artifact folder lies under a regular file: rank 0 cannot make it.
  const auto blocker = dir.path() / "not-a-folder";
  if (world_rank() == 0) {
    std::ofstream(blocker) << "x";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string what = error_of([&] {
    static_cast<void>(
        tunekit::campaign(scale, calls, {.comm = &world(), .artifacts = {.dir = blocker / "a"}}));
  });
  EXPECT_NE(what.find("not-a-folder"), std::string::npos) << what;
  if (world_rank() != 0) {
    EXPECT_NE(what.find("rank 0 could not write the campaign's outputs"), std::string::npos)
        << what;
  }
}

TEST(Campaign, WithoutTheSplitEveryRankMakesEveryCallTogether) {
  shared_dir dir;
  log_capture log;
  auto scale = block_tuner("scale", campaign_options(dir.path(), log, &world()));
  const std::vector<std::tuple<std::int64_t>> three{{100}, {1000}, {5000}};
  const auto table = dir.path() / "scale.json";
  const auto r =
      tunekit::campaign(scale, three, {.comm = &world(), .split = false, .table = {.path = table}});
  EXPECT_EQ(r.sources.size(), 3U);
  EXPECT_EQ(r.tuned(), 3U);
  EXPECT_EQ(r.table, table);
  EXPECT_TRUE(r.missing.empty());
  EXPECT_EQ(tunekit::lookup_table::load(table).size(), 3U);
}

} // namespace
