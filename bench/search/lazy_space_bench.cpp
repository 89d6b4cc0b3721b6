// Builds a 10^6-point product search space with a constraint that keeps about a fifth of it, draws
// 1,000 valid samples and the Hamming neighbourhood of each, and prints the time and the growth of
// the process's peak resident memory. Nothing is enumerated: the space holds only its domains.

#include <tunekit/strategy/run_search.hpp>
#include <tunekit/strategy/search_space.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace {

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

} // namespace

int main() {
  const long rss0 = peak_rss_kib();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<tunekit::parameter> params;
  for (int p = 0; p < 6; ++p) { // 10^6 points: six parameters of ten values
    char name[8];
    std::snprintf(name, sizeof(name), "P%d", p);
    tunekit::parameter par{name, {}};
    for (int v = 1; v <= 10; ++v) {
      par.values.emplace_back(v * (p + 1));
    }
    params.push_back(std::move(par));
  }
  auto space = tunekit::search_space::product(
      params, {[](const tunekit::config &c) {
        return (c.get_int("P0") + c.get_int("P1") + c.get_int("P2")) % 5 == 0;
      }});
  const auto t1 = std::chrono::steady_clock::now();
  tunekit::search_rng rng(1);
  auto samples = space.sample(rng, 1000);
  const auto t2 = std::chrono::steady_clock::now();
  std::size_t neighbours = 0;
  for (std::size_t i : samples) {
    neighbours += space.neighbours(i, tunekit::neighbourhood::hamming).size();
  }
  const auto t3 = std::chrono::steady_clock::now();
  const long rss1 = peak_rss_kib();
  auto cpu_us = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e6 * static_cast<double>(t.tv_sec) + 1e-3 * static_cast<double>(t.tv_nsec);
  };
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("product of %zu points: built in %.3f ms\n", space.product_size(), ms(t0, t1));
  std::printf("1000 valid samples (%zu drawn): %.3f ms\n", samples.size(), ms(t1, t2));
  std::printf("Hamming neighbourhoods of those samples (%zu valid neighbours): %.3f ms\n",
              neighbours, ms(t2, t3));
  std::printf("peak resident memory grew by %ld KiB\n", rss1 - rss0);
  const bool ok = samples.size() == 1000 && ms(t0, t2) < 1000.0;
  std::printf("%s\n", ok ? "ok: well under a second" : "FAILED: slower than a second");

  // Each strategy's own time per proposal over a lazy 10^5-point space (five parameters of ten
  // values, the same kind of constraint), 400 evaluations of a synthetic cost.
  params.pop_back();
  auto smaller = tunekit::search_space::product(
      params, {[](const tunekit::config &c) {
        return (c.get_int("P0") + c.get_int("P1") + c.get_int("P2")) % 5 == 0;
      }});
  auto cost = [&](std::span<const std::size_t> batch) {
    std::vector<double> out;
    for (std::size_t i : batch) {
      double t = 1;
      for (std::size_t p = 0; p < smaller.dimensions(); ++p) {
        const double d = static_cast<double>(smaller.digit(i, p)) - 6.0;
        t += d * d * static_cast<double>(p + 1);
      }
      out.push_back(t);
    }
    return out;
  };
  bool fast = true;
  for (const auto &name : tunekit::strategy_names()) {
    auto strat = tunekit::make_strategy(name);
    auto r = tunekit::run_search(smaller, *strat, {.max_evaluations = 400}, cost);
    const double us = 1e6 * r.strategy_seconds / static_cast<double>(r.proposals);
    // Single proposals: the strategy driven by hand, one candidate per ask, each ask timed in
    // thread CPU time (a shared machine's preemptions are not the strategy's cost). A model-based
    // strategy costs most late, when it has been told the most.
    auto again = tunekit::make_strategy(name);
    again->start(smaller, 0, {});
    double slowest_us = 0;
    for (std::size_t k = 0; k < r.evaluations; ++k) {
      const double a0 = cpu_us();
      const auto next = again->ask(1);
      slowest_us = std::max(slowest_us, cpu_us() - a0);
      if (next.empty()) {
        break;
      }
      again->tell(next.front(), cost(next).front());
    }
    std::printf("%-8s %zu evaluations of a %zu-point lazy space: %.1f us per proposal, slowest "
                "%.1f us of CPU\n",
                name.c_str(), r.evaluations, smaller.product_size(), us, slowest_us);
    fast = fast && us < 1000.0 && slowest_us < 1000.0;
  }
  return ok && fast ? 0 : 1;
}
