// The communicator interface (communicator.hpp): the single-process communicator, the base
// class's local rank, and the process-wide registry (`set_default_communicator`,
// `set_communicator_fallback`, `default_communicator`) with the order in which a tuner picks its
// communicator: the call's, the tuner's, the registered default, the fallback's, else a single
// process. tests/mpi/tuner_test.cpp checks the same registry with MPI's world and a
// sub-communicator.

#include "test_support.hpp"

#include <tunekit/communicator.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

using tunekit::communicator;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

namespace {

// A rank of a job of `size` ranks whose collectives only count their calls (every rank holds the
// same values, so the identity is the right reduction).
class counting_communicator final : public communicator {
public:
  explicit counting_communicator(int rank = 0, int size = 2) : m_rank(rank), m_size(size) {}
  [[nodiscard]] int rank() const override { return m_rank; }
  [[nodiscard]] int size() const override { return m_size; }
  void all_reduce_max(std::span<double> /*values*/) override { ++calls; }
  void all_reduce_min(std::span<double> /*values*/) override { ++calls; }
  void broadcast(std::span<std::byte> /*bytes*/, int /*root*/) override { ++calls; }
  void barrier() override { ++calls; }
  int calls = 0;

private:
  int m_rank;
  int m_size;
};

counting_communicator *g_fallback_target = nullptr;
communicator *fallback() { return g_fallback_target; }

// Leaves the registry empty before and after each test.
class communicator_registry : public ::testing::Test {
protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    tunekit::set_default_communicator(nullptr);
    tunekit::set_communicator_fallback(nullptr);
    g_fallback_target = nullptr;
  }

  // A tuner of two configs without a disk cache; its searches are counted by the measurer.
  [[nodiscard]] auto make(communicator *comm) {
    auto o = tunekit_test::options(dir.path(), meas, log);
    o.use_disk_cache = false;
    o.comm = comm;
    return tunekit::autotune(
        "registry", tunekit::config_space{{{"BLOCK", 1}}, {{"BLOCK", 2}}},
        [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
        [](int, const tunekit::config &c) { return c.get_int("BLOCK"); }, std::move(o));
  }

  temp_dir dir;
  log_capture log;
  std::shared_ptr<tunekit::simulated_measurer> meas = std::make_shared<tunekit::simulated_measurer>(
      [](const tunekit::config &c, const tunekit::key &) {
        return static_cast<double>(c.get_int("BLOCK"));
      });
};

} // namespace

TEST(communicator, single_process_is_rank_zero_of_one) {
  tunekit::single_process_communicator c;
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  EXPECT_EQ(c.local_rank(), 0);
  std::vector<double> v{1.0, -2.0};
  c.all_reduce_max(v);
  c.all_reduce_min(v);
  EXPECT_EQ(v, (std::vector<double>{1.0, -2.0}));
  std::vector<std::byte> bytes{std::byte{7}};
  c.broadcast(bytes, 0);
  c.barrier();
  EXPECT_EQ(bytes[0], std::byte{7});
}

TEST(communicator, the_local_rank_defaults_to_the_rank) {
  const counting_communicator first(0, 4);
  const counting_communicator third(2, 4);
  EXPECT_EQ(first.local_rank(), 0);
  EXPECT_EQ(third.local_rank(), 2); // only rank 0 writes when a backend cannot tell nodes apart
}

TEST_F(communicator_registry, nothing_registered_is_a_single_process) {
  EXPECT_EQ(tunekit::default_communicator(), nullptr);
}

TEST_F(communicator_registry, the_registered_default_wins_over_the_fallback) {
  counting_communicator registered;
  counting_communicator from_fallback;
  g_fallback_target = &from_fallback;
  tunekit::set_communicator_fallback(&fallback);
  EXPECT_EQ(tunekit::default_communicator(), &from_fallback);
  tunekit::set_default_communicator(&registered);
  EXPECT_EQ(tunekit::default_communicator(), &registered);
  tunekit::set_default_communicator(nullptr); // null unregisters
  EXPECT_EQ(tunekit::default_communicator(), &from_fallback);
  g_fallback_target = nullptr; // a fallback may answer null: a single process
  EXPECT_EQ(tunekit::default_communicator(), nullptr);
  tunekit::set_communicator_fallback(nullptr);
  EXPECT_EQ(tunekit::default_communicator(), nullptr);
}

TEST_F(communicator_registry, a_tuner_that_names_none_uses_the_registered_default) {
  counting_communicator registered;
  tunekit::set_default_communicator(&registered);
  auto f = make(nullptr);
  EXPECT_EQ(f(1), 1);
  EXPECT_GT(registered.calls, 0);
  EXPECT_EQ(f.tuner().last_search()->world_size, 2);
}

TEST_F(communicator_registry, a_tuner_that_names_none_uses_the_fallback) {
  counting_communicator from_fallback;
  g_fallback_target = &from_fallback;
  tunekit::set_communicator_fallback(&fallback);
  auto f = make(nullptr);
  EXPECT_EQ(f(1), 1);
  EXPECT_GT(from_fallback.calls, 0);
  EXPECT_EQ(f.tuner().last_search()->world_size, 2);
}

TEST_F(communicator_registry, the_calls_communicator_then_the_tuners_win_over_the_default) {
  counting_communicator registered;
  counting_communicator tuners;
  counting_communicator calls;
  tunekit::set_default_communicator(&registered);
  auto f = make(&tuners);
  EXPECT_EQ(f(1), 1);
  EXPECT_GT(tuners.calls, 0);
  EXPECT_EQ(registered.calls, 0);
  const int before = tuners.calls;
  EXPECT_EQ(f.with({.comm = &calls})(2), 1);
  EXPECT_GT(calls.calls, 0);
  EXPECT_EQ(tuners.calls, before);
  EXPECT_EQ(registered.calls, 0);
}

TEST_F(communicator_registry, without_any_communicator_a_search_is_single_process) {
  auto f = make(nullptr);
  EXPECT_EQ(f(1), 1);
  EXPECT_EQ(f.tuner().last_search()->world_size, 1);
}
