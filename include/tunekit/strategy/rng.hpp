#pragma once
/// \file strategy/rng.hpp
/// The random numbers of search strategies: a seeded `std::mt19937_64` (its output sequence is
/// fixed by the C++ standard) with uniform helpers written here, because
/// `std::uniform_int_distribution` and friends may give different numbers with different standard
/// libraries. Every rank of a job must draw the same numbers from the same seed, whatever it was
/// compiled with.

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <utility>

namespace tunekit {

/// A portable, seeded random source for search strategies.
class search_rng final {
public:
  explicit search_rng(std::uint64_t seed = 0) noexcept : m_engine(seed) {}

  /// The next raw 64-bit number.
  [[nodiscard]] std::uint64_t next() noexcept { return m_engine(); }

  /// A uniform integer in [0, n) (n > 0), without modulo bias (rejection of the short tail).
  [[nodiscard]] std::uint64_t below(std::uint64_t n) noexcept {
    if (n <= 1) {
      return 0;
    }
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n; // multiple of n
    std::uint64_t x = next();
    while (x >= limit) {
      x = next();
    }
    return x % n;
  }

  /// A uniform double in [0, 1) with 53 random bits.
  [[nodiscard]] double uniform() noexcept { return static_cast<double>(next() >> 11U) * 0x1.0p-53; }

  /// True with probability `p`.
  [[nodiscard]] bool chance(double p) noexcept { return uniform() < p; }

  /// Index drawn with probability proportional to `weights` (non-negative, some positive); the
  /// last index with a positive weight when rounding runs past the end.
  [[nodiscard]] std::size_t weighted(std::span<const double> weights) noexcept {
    double total = 0;
    for (double w : weights) {
      total += w;
    }
    double r = uniform() * total;
    std::size_t last = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (weights[i] > 0) {
        last = i;
        if (r < weights[i]) {
          return i;
        }
        r -= weights[i];
      }
    }
    return last;
  }

  /// Fisher-Yates shuffle with `below`.
  template <class T> void shuffle(std::span<T> items) noexcept {
    for (std::size_t i = items.size(); i > 1; --i) {
      std::swap(items[i - 1], items[below(i)]);
    }
  }

private:
  std::mt19937_64 m_engine;
};

} // namespace tunekit
