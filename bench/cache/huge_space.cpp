// The cost of a key over a huge space whose prune_fn keeps one config: the first call (prune
// every config, measure one, store), the size of the entry and its log, and a cache hit in a fresh
// tuner (a new process's first call): its time and the memory it adds. Goals (docs/cache.md): for
// 10^6 configs an entry under 1 MB, a cache hit under 10 ms and 50 MB.
//
//   tunekit_bench_huge_space [configs per parameter, default 100: 100^3 = 10^6 configs]

#include <tunekit/tunekit.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

double resident_mb() {
  std::ifstream in("/proc/self/statm");
  long pages = 0;
  long resident = 0;
  in >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / 1e6;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

int main(int argc, char **argv) {
  const int per = argc > 1 ? std::atoi(argv[1]) : 100;
  std::vector<tunekit::value> domain;
  for (int i = 0; i < per; ++i) {
    domain.emplace_back(i);
  }
  auto t = std::chrono::steady_clock::now();
  const auto space = tunekit::config_space::product({{"x", domain}, {"y", domain}, {"z", domain}});
  std::printf("space: %zu configs built in %.2f s, resident %.0f MB\n", space.size(),
              seconds_since(t), resident_mb());

  const auto root =
      std::filesystem::temp_directory_path() / ("tunekit-huge-space-" + std::to_string(::getpid()));
  auto make = [&] {
    tunekit::tuner_options o;
    o.version = "bench";
    tunekit::environment env;
    env.cache_dir = root;
    env.log_dir = root / "logs";
    o.process = tunekit::process_context{env, tunekit::launcher_info{}, nullptr};
    o.measurer = std::make_shared<tunekit::simulated_measurer>(
        [](const tunekit::config &, const tunekit::key &) { return 1.0; });
    const int keep = per / 2;
    return tunekit::autotune(
        "huge", space, [](int n) { return tunekit::key{n}; },
        [keep](const tunekit::config &c, int) {
          return c.get_int("x") == keep && c.get_int("y") == keep && c.get_int("z") == keep;
        },
        [](int, const tunekit::config &c) { return c.get_int("x"); }, std::move(o));
  };

  {
    auto first = make();
    t = std::chrono::steady_clock::now();
    static_cast<void>(first(1));
    const double miss_s = seconds_since(t);
    const auto entry = first.tuner().cache_path(tunekit::key{1});
    auto log = entry;
    log.replace_extension(".log");
    std::printf("new key (prune all, measure one, store): %.3f s; entry %.1f kB, log %.1f kB\n",
                miss_s, static_cast<double>(std::filesystem::file_size(entry)) / 1e3,
                static_cast<double>(std::filesystem::file_size(log)) / 1e3);
  }
  t = std::chrono::steady_clock::now();
  auto fresh = make();
  std::printf("a fresh tuner over the space: built in %.3f s\n", seconds_since(t));
  const double before_mb = resident_mb();
  t = std::chrono::steady_clock::now();
  static_cast<void>(fresh(1));
  const double hit_ms = seconds_since(t) * 1e3;
  const double added_mb = resident_mb() - before_mb;
  std::printf("cache hit in a fresh tuner: %.3f ms, %+.1f MB resident (source %s)\n", hit_ms,
              added_mb, std::string(tunekit::to_string(fresh.tuner().last_source())).c_str());
  std::filesystem::remove_all(root);
  return fresh.tuner().last_source() == tunekit::source::cache ? 0 : 1;
}
