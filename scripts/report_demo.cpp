// A winner cache to look at with `tunekit report` (scripts/screenshot-report.sh builds and runs
// it): real host-function searches, timed with the host measurer.
//
//   report_demo <cache_dir>
//
// - `demo.blocked_sum`: 576 configs (tile x unroll x stride x order), searched by the default
//   strategy within a budget of 150 evaluations, for two sizes. Some configs fail for real (a tile
//   larger than the scratch buffer throws), so the report has failures grouped by reason.
// - `demo.transpose`: 24 configs measured exhaustively; those that skip the tail fail their check.

#include <tunekit/tunekit.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Sums `x` in tiles through a scratch buffer of 4096 doubles, `unroll` accumulators, visiting the
// tiles with a stride; `order` reverses the visit. A tile over the scratch size throws.
double blocked_sum(const std::vector<double> &x, const tunekit::config &c) {
  const auto tile = static_cast<std::size_t>(c.get_int("tile"));
  const auto unroll = static_cast<std::size_t>(c.get_int("unroll"));
  const auto stride = static_cast<std::size_t>(c.get_int("stride"));
  const bool reverse = c.get_string("order") == "reverse";
  static thread_local std::vector<double> scratch(4096);
  if (tile > scratch.size()) {
    throw std::length_error("tile " + std::to_string(tile) + " exceeds the scratch buffer (" +
                            std::to_string(scratch.size()) + " doubles)");
  }
  const std::size_t tiles = (x.size() + tile - 1) / tile;
  double total = 0;
  for (std::size_t s = 0; s < stride; ++s) {
    for (std::size_t t = s; t < tiles; t += stride) {
      const std::size_t tt = reverse ? tiles - 1 - t : t;
      const std::size_t begin = tt * tile;
      const std::size_t n = std::min(tile, x.size() - begin);
      for (std::size_t i = 0; i < n; ++i) {
        scratch[i] = x[begin + i];
      }
      std::vector<double> acc(unroll, 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        acc[i % unroll] += scratch[i];
      }
      for (double a : acc) {
        total += a;
      }
    }
  }
  return total;
}

// out = transpose(in) for an n x n matrix in square blocks, the inner loops in `loops` order;
// `skip_tail` leaves the last partial block out (a wrong result when the block does not divide n).
void transpose(const std::vector<float> &in, std::vector<float> &out, std::int64_t n,
               const tunekit::config &c) {
  const std::int64_t b = c.get_int("block");
  const bool skip_tail = c.get_bool("skip_tail");
  const bool ij = c.get_string("loops") == "ij";
  const std::int64_t end = skip_tail ? n / b * b : n;
  std::fill(out.begin(), out.end(), 0.0F);
  auto at = [](std::int64_t i, std::int64_t j, std::int64_t m) {
    return static_cast<std::size_t>(i * m + j);
  };
  for (std::int64_t i0 = 0; i0 < end; i0 += b) {
    for (std::int64_t j0 = 0; j0 < end; j0 += b) {
      for (std::int64_t u = 0; u < std::min(b, end - (ij ? i0 : j0)); ++u) {
        for (std::int64_t v = 0; v < std::min(b, end - (ij ? j0 : i0)); ++v) {
          const std::int64_t i = ij ? i0 + u : i0 + v;
          const std::int64_t j = ij ? j0 + v : j0 + u;
          out[at(j, i, n)] = in[at(i, j, n)];
        }
      }
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <cache_dir>\n", argv[0]);
    return 2;
  }
  try {
    auto process = tunekit::process_context::from_env();
    process.env.cache_dir = argv[1];
    process.env.always_tune = true;

    tunekit::tuner_options o{.version = "demo-1"};
    o.process = process;
    o.policy = {.warmup = 2, .runs = 5};
    o.search.budget.max_evaluations = 150;
    o.search.seed = 3;
    auto space =
        tunekit::config_space::product({{"tile", {512, 64, 128, 256, 1024, 2048, 4096, 8192}},
                                        {"unroll", {1, 2, 4, 8, 16, 32}},
                                        {"stride", {1, 2, 4, 8, 16, 32}},
                                        {"order", {"forward", "reverse"}}});
    auto sum = tunekit::autotune(
        "demo.blocked_sum", space,
        [](const std::vector<double> &x) {
          return tunekit::key{static_cast<std::int64_t>(x.size())};
        },
        tunekit::keep_all{}, blocked_sum, o);
    for (const std::size_t n : {std::size_t{1} << 16, std::size_t{1} << 18}) {
      const std::vector<double> x(n, 1.0);
      std::printf("demo.blocked_sum n=%zu: %.0f\n", n, sum(x));
    }

    tunekit::tuner_options t{.version = "demo-1"};
    t.process = process;
    t.policy = {.warmup = 2, .runs = 5};
    const std::int64_t n = 700;
    std::vector<float> in(static_cast<std::size_t>(n * n));
    for (std::size_t i = 0; i < in.size(); ++i) {
      in[i] = static_cast<float>(i);
    }
    std::vector<float> out(in.size());
    auto tr = tunekit::autotune(
                  "demo.transpose",
                  tunekit::config_space::product({{"block", {8, 4, 16, 32, 64, 128}},
                                                  {"skip_tail", {false, true}},
                                                  {"loops", {"ij", "ji"}}}),
                  [](const std::vector<float> &, const std::vector<float> &, std::int64_t m) {
                    return tunekit::key{m};
                  },
                  tunekit::keep_all{}, transpose, t)
                  .with_check(
                      [](const auto &src, const auto &dst, const auto &m, const tunekit::config &) {
                        return dst[static_cast<std::size_t>(m * m - 1)] ==
                               src[static_cast<std::size_t>(m * m - 1)];
                      });
    tr(in, out, n);
    std::printf("demo.transpose n=%lld done\n", static_cast<long long>(n));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "report_demo: %s\n", e.what());
    return 1;
  }
  return 0;
}
