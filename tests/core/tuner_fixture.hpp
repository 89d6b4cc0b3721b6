#pragma once
// Fixtures of the function-level tuner tests (tuner_test.cpp, tuner_options_test.cpp,
// tuner_failure_test.cpp, tuner_concurrency_test.cpp, search_test.cpp): a probe of what the tuned
// function saw, the `scale` tuner over BLOCK x num_warps, a measurer with fixed samples and a
// two-rank communicator seen from one rank. Every timing comes from a simulated measurer, so each
// winner is fixed.

#include "test_support.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tunekit_test {

/// What the wrapped functions saw.
struct probe {
  int key_calls = 0;
  int prune_calls = 0;
  std::vector<tunekit::config> calls; ///< the config of every call of the tuned function, in order
};

/// BLOCK x num_warps, 8 configs; with block_cost, BLOCK=512, num_warps=4 (#2) is fastest.
inline tunekit::config_space block_space() {
  return tunekit::config_space::product({{"BLOCK", {256, 512, 1024, 2048}}, {"num_warps", {4, 8}}});
}

inline const tunekit::config fastest{{"BLOCK", 512}, {"num_warps", 4}};

/// `scale(n, config)`: keyed by n, prunes blocks larger than n. Returns a number that identifies
/// the call (its position among all calls) so a test can tell which call's result it got.
inline auto make_scale(const std::shared_ptr<probe> &p, tunekit::tuner_options o,
                       tunekit::config_space space = block_space()) {
  return tunekit::autotune(
      "scale", std::move(space),
      [p](int n) {
        ++p->key_calls;
        return tunekit::key{n};
      },
      [p](const tunekit::config &c, int n) {
        ++p->prune_calls;
        return c.get_int("BLOCK") <= n;
      },
      [p](int n, const tunekit::config &c) {
        p->calls.push_back(c);
        return static_cast<long>(p->calls.size()) * 100000L + n;
      },
      std::move(o));
}

/// A fresh cache directory, a log capture, the simulated measurer over `block_cost` and a probe.
class tuner_test : public ::testing::Test {
protected:
  [[nodiscard]] tunekit::tuner_options opts(std::string version = "v1") const {
    return options(dir.path(), meas, log, std::move(version));
  }
  [[nodiscard]] std::size_t json_files() const {
    std::size_t n = 0;
    for (const auto &f : files_below(dir.path())) {
      n += f.extension() == ".json" ? 1 : 0;
    }
    return n;
  }

  temp_dir dir;
  log_capture log;
  std::shared_ptr<tunekit::simulated_measurer> meas =
      std::make_shared<tunekit::simulated_measurer>(block_cost, 0.02, 1);
  std::shared_ptr<probe> p = std::make_shared<probe>();
};

inline bool has(const std::string &text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

/// Fixed samples per config: "spiky" (of the field "algo") has a low minimum but a high mean;
/// every other config, and a config without "algo", takes 2 each time.
class fixed_measurer final : public tunekit::measurer {
public:
  std::vector<double> measure(const tunekit::candidate_info &info,
                              tunekit::detail::function_ref<void()> run,
                              const tunekit::measure_policy & /*policy*/) override {
    run();
    if (info.config.contains("algo") && info.config.get_string("algo") == "spiky") {
      return {1.0, 1.0, 10.0};
    }
    return {2.0, 2.0, 2.0};
  }
  [[nodiscard]] std::string name() const override { return "fixed"; }
};

/// A job of two ranks seen from one of them: the other rank's timings are `other` (+inf: that
/// candidate failed there). Agreement collectives see identical digests and proposals.
class two_rank_communicator final : public tunekit::communicator {
public:
  two_rank_communicator(int rank, std::vector<double> other)
      : m_rank(rank), m_other(std::move(other)) {}
  [[nodiscard]] int rank() const override { return m_rank; }
  [[nodiscard]] int size() const override { return 2; }
  void all_reduce_max(std::span<double> values) override {
    ++max_calls;
    // The timing reduction: one time per kept candidate, then the "a rank failed fatally" flag.
    if (values.size() == m_other.size() + 1) {
      for (std::size_t i = 0; i < m_other.size(); ++i) {
        values[i] = std::max(values[i], m_other[i]);
      }
    }
  }
  void all_reduce_min(std::span<double> /*values*/) override { ++min_calls; }
  void broadcast(std::span<std::byte> /*bytes*/, int /*root*/) override {}
  void barrier() override {}
  int max_calls = 0;
  int min_calls = 0;

private:
  int m_rank;
  std::vector<double> m_other;
};

} // namespace tunekit_test
