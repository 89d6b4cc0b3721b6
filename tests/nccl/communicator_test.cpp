// The NCCL communicator on two GPUs: one NCCL communicator per GPU in this process
// (ncclCommInitAll), one thread per rank. Collectives, buffer growth, broadcast, barrier, the
// timeout and a tuner agreeing over it (with and without the parallel split). Skips with fewer
// than two GPUs.

#include <tunekit/cuda/device.hpp>
#include <tunekit/cuda/error.hpp>
#include <tunekit/nccl/communicator.hpp>
#include <tunekit/nccl/error.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int ranks = 2;

// Two NCCL communicators over GPUs 0 and 1 with a stream each; destroyed (or aborted) at the end.
class NcclTwoGpus : public ::testing::Test {
protected:
  void SetUp() override {
    if (tunekit::cuda::device_count() < ranks) {
      GTEST_SKIP() << "needs " << ranks << " GPUs, sees " << tunekit::cuda::device_count();
    }
    const std::array<int, ranks> devices{0, 1};
    tunekit::nccl::check(ncclCommInitAll(m_comms.data(), ranks, devices.data()), "ncclCommInitAll");
    for (int r = 0; r < ranks; ++r) {
      TUNEKIT_CUDA_CHECK(cudaSetDevice(r));
      TUNEKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&m_streams[r], cudaStreamNonBlocking));
    }
  }
  void TearDown() override {
    for (int r = 0; r < ranks; ++r) {
      if (m_comms[r] != nullptr) {
        static_cast<void>(m_aborted ? ncclCommAbort(m_comms[r]) : ncclCommDestroy(m_comms[r]));
      }
      if (m_streams[r] != nullptr) {
        static_cast<void>(cudaSetDevice(r));
        static_cast<void>(cudaStreamDestroy(m_streams[r]));
      }
    }
  }

  // Runs `f(rank, communicator)` on one thread per rank, each with its GPU current.
  void on_every_rank(const std::function<void(int, tunekit::nccl::communicator &)> &f,
                     tunekit::nccl::communicator_options o = {}) {
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        try {
          TUNEKIT_CUDA_CHECK(cudaSetDevice(r));
          tunekit::nccl::communicator c(m_comms[r], m_streams[r], o);
          f(r, c);
        } catch (const std::exception &e) {
          ADD_FAILURE() << "rank " << r << ": " << e.what();
        }
      });
    }
    for (auto &t : threads) {
      t.join();
    }
  }

  std::array<ncclComm_t, ranks> m_comms{};
  std::array<cudaStream_t, ranks> m_streams{};
  bool m_aborted = false;
};

TEST_F(NcclTwoGpus, RankSizeDeviceAndLocalRank) {
  on_every_rank(
      [](int r, tunekit::nccl::communicator &c) {
        EXPECT_EQ(c.rank(), r);
        EXPECT_EQ(c.size(), ranks);
        EXPECT_EQ(c.device(), r);
        EXPECT_EQ(c.local_rank(), r); // no launcher: the rank
      },
      {.launcher = {}});
  for (int r = 0; r < ranks; ++r) {
    tunekit::nccl::communicator c(m_comms[r], m_streams[r], {.local_rank = 1 - r});
    EXPECT_EQ(c.local_rank(), 1 - r);
  }
  EXPECT_THROW(tunekit::nccl::communicator(m_comms[0], m_streams[0], {.local_rank = 2}),
               tunekit::error);
}

TEST_F(NcclTwoGpus, LocalRankFromTheLauncherInTheOptions) {
  using tunekit::launcher_info;
  using tunekit::launcher_kind;
  for (int r = 0; r < ranks; ++r) {
    // A launcher whose world is this communicator: its local rank.
    const launcher_info same{launcher_kind::torchrun, r, 1 - r, ranks};
    tunekit::nccl::communicator c(m_comms[r], m_streams[r], {.launcher = same});
    EXPECT_EQ(c.local_rank(), 1 - r);
    // Another world (a larger job, or another rank): the rank, so that only rank 0 writes.
    const launcher_info larger{launcher_kind::torchrun, r, 1, 4};
    EXPECT_EQ(
        tunekit::nccl::communicator(m_comms[r], m_streams[r], {.launcher = larger}).local_rank(),
        r);
    const launcher_info other_rank{launcher_kind::torchrun, 1 - r, 1, ranks};
    EXPECT_EQ(tunekit::nccl::communicator(m_comms[r], m_streams[r], {.launcher = other_rank})
                  .local_rank(),
              r);
    // No launcher: the rank.
    EXPECT_EQ(tunekit::nccl::communicator(m_comms[r], m_streams[r], {.launcher = {}}).local_rank(),
              r);
    // An explicit local rank wins over the launcher.
    EXPECT_EQ(
        tunekit::nccl::communicator(m_comms[r], m_streams[r], {.local_rank = 0, .launcher = same})
            .local_rank(),
        0);
  }
}

TEST_F(NcclTwoGpus, MaxAndMinAreElementWiseOverRanksAndBuffersGrow) {
  on_every_rank([](int r, tunekit::nccl::communicator &c) {
    const double inf = std::numeric_limits<double>::infinity();
    for (const std::size_t n :
         {std::size_t{1}, std::size_t{3}, std::size_t{1000}, std::size_t{5}}) {
      std::vector<double> hi(n);
      std::vector<double> lo(n);
      for (std::size_t i = 0; i < n; ++i) {
        // Rank 0 holds i, rank 1 holds n - i; the last element is -inf on rank 1, +inf on rank 0.
        hi[i] = r == 0 ? static_cast<double>(i) : static_cast<double>(n - i);
        lo[i] = hi[i];
      }
      hi[n - 1] = r == 0 ? inf : -inf;
      lo[n - 1] = hi[n - 1];
      c.all_reduce_max(hi);
      c.all_reduce_min(lo);
      for (std::size_t i = 0; i + 1 < n; ++i) {
        const double a = static_cast<double>(i);
        const double b = static_cast<double>(n - i);
        ASSERT_EQ(hi[i], std::max(a, b)) << "n " << n << " i " << i;
        ASSERT_EQ(lo[i], std::min(a, b)) << "n " << n << " i " << i;
      }
      EXPECT_EQ(hi[n - 1], inf);
      EXPECT_EQ(lo[n - 1], -inf);
    }
    std::vector<double> none;
    c.all_reduce_max(none); // nothing to exchange
  });
}

TEST_F(NcclTwoGpus, BroadcastCopiesTheRootsBytesAndBarrierReturns) {
  on_every_rank([](int r, tunekit::nccl::communicator &c) {
    for (int root = 0; root < ranks; ++root) {
      const std::string expected = "winner from rank " + std::to_string(root);
      const std::string text = r == root ? expected : std::string(expected.size(), 'x');
      std::vector<std::byte> bytes(text.size());
      std::memcpy(bytes.data(), text.data(), text.size());
      c.broadcast(bytes, root);
      EXPECT_EQ(std::string(reinterpret_cast<const char *>(bytes.data()), bytes.size()),
                "winner from rank " + std::to_string(root));
    }
    c.barrier();
    std::vector<std::byte> one(1);
    EXPECT_THROW(c.broadcast(one, ranks), tunekit::error);
  });
}

TEST_F(NcclTwoGpus, AWaitLongerThanTheTimeoutThrowsAndRefusesFurtherUse) {
  // A blocking communicator connects to its peers inside the first collective call, which no
  // timeout bounds: connect both ranks first.
  on_every_rank([](int, tunekit::nccl::communicator &c) { c.barrier(); });
  TUNEKIT_CUDA_CHECK(cudaSetDevice(0));
  tunekit::nccl::communicator c(m_comms[0], m_streams[0],
                                {.timeout = std::chrono::milliseconds(300)});
  std::vector<double> v{1.0, 2.0};
  const auto t0 = std::chrono::steady_clock::now();
  try {
    c.all_reduce_max(v); // rank 1 never joins
    ADD_FAILURE() << "no timeout";
  } catch (const tunekit::communicator_timeout &e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("NCCL all-reduce (max) waited 300 ms on rank 0 of 2"), std::string::npos) << w;
    EXPECT_NE(w.find("ncclCommAbort"), std::string::npos) << w;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_TRUE(c.broken());
  EXPECT_THROW(c.barrier(), tunekit::communicator_timeout);
  m_aborted = true; // the application aborts the stuck communicators
}

// Rank r's simulated cost: each rank alone would pick another candidate; the worst rank counts.
double cost_on(int rank, std::int64_t i) {
  static constexpr std::array<std::array<double, 4>, 2> table{
      {{1.0, 3.0, 2.0, 5.0}, {4.0, 1.0, 2.5, 0.5}}};
  return table[static_cast<std::size_t>(rank)][static_cast<std::size_t>(i)];
}

TEST_F(NcclTwoGpus, TunersAgreeOverNcclWithAndWithoutTheParallelSplit) {
  for (const bool split : {false, true}) {
    std::array<std::string, ranks> winners;
    std::array<std::size_t, ranks> measured{};
    on_every_rank([&](int r, tunekit::nccl::communicator &c) {
      auto meas = std::make_shared<tunekit::simulated_measurer>(
          [r](const tunekit::config &cfg, const tunekit::key &) {
            return cost_on(r, cfg.get_int("i"));
          });
      tunekit::tuner_options o;
      o.measurer = meas;
      o.process = tunekit::process_context{};
      o.use_disk_cache = false;
      o.comm = &c;
      o.parallel_split = split;
      auto g = tunekit::autotune(
          "nccl_test.agree", tunekit::config_space::product({{"i", {0, 1, 2, 3}}}),
          [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
          [](int, const tunekit::config &cfg) { return cfg.get_int("i"); }, o);
      winners[static_cast<std::size_t>(r)] = std::to_string(g(7));
      measured[static_cast<std::size_t>(r)] = meas->candidates_measured();
    });
    // Unsplit, the worst rank counts: {4, 3, 2.5, 5} -> candidate 2. Split, rank 0 measures 0 and
    // 2 (1, 2), rank 1 measures 1 and 3 (1, 0.5) -> candidate 3.
    const std::string expected = split ? "3" : "2";
    EXPECT_EQ(winners[0], expected) << "split " << split;
    EXPECT_EQ(winners[1], expected) << "split " << split;
    EXPECT_EQ(measured[0], split ? 2U : 4U);
    EXPECT_EQ(measured[1], split ? 2U : 4U);
  }
}

} // namespace
