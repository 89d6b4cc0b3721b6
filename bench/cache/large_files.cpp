// The time to read large files (docs/reliability.md, "Large files"): a lookup table of 10^4 to
// 10^6 keys loaded as TUNEKIT_LOOKUP_TABLE would load it, one lookup in it, and a cache entry
// that carries one extra object of 10^5 members served to a fresh tuner. Goals: a 10^6-key table
// loads in under 2 s; the entry is served in time proportional to its size.
//
//   tunekit_bench_large_files [largest table, default 1000000] [scratch directory, default: a
//                             fresh one under the system's temp directory]

#include <tunekit/tunekit.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void write_text(const std::filesystem::path &p, const std::string &text) {
  std::ofstream(p, std::ios::binary) << text;
}

// A table of `n` keys, each with one entry, as Inductor writes them.
std::string table_text(std::size_t n) {
  std::string out = "{";
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) {
      out += ",\n";
    }
    out += "\"NVIDIA H200+[" + std::to_string(i) + "]+mm\": [{\"template_id\": \"triton_mm\", ";
    out += "\"BLOCK_M\": " + std::to_string(16 << (i % 4)) + ", \"num_warps\": 4}]";
  }
  out += "}\n";
  return out;
}

} // namespace

int main(int argc, char **argv) {
  const std::size_t largest = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const auto dir = argc > 2 ? std::filesystem::path(argv[2])
                            : std::filesystem::temp_directory_path() / "tunekit-large-files";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  std::printf("%-28s %12s %12s\n", "file", "MB", "seconds");
  for (std::size_t n = 10000; n <= largest; n *= 10) {
    const auto path = dir / ("table-" + std::to_string(n) + ".json");
    const std::string text = table_text(n);
    write_text(path, text);
    const auto t = std::chrono::steady_clock::now();
    const auto table = tunekit::lookup_table::load(path);
    const double load_s = seconds_since(t);
    const auto t2 = std::chrono::steady_clock::now();
    const auto *hit = table.find("NVIDIA H200+[" + std::to_string(n / 2) + "]+mm");
    const double find_s = seconds_since(t2);
    if (hit == nullptr || table.size() != n) {
      std::fprintf(stderr, "table of %zu keys: read %zu keys, lookup %s\n", n, table.size(),
                   hit ? "found" : "missing");
      return 1;
    }
    std::printf("%-28s %12.1f %12.3f\n", ("lookup table, " + std::to_string(n) + " keys").c_str(),
                static_cast<double>(text.size()) / 1e6, load_s);
    std::printf("%-28s %12s %12.2e\n", "  one lookup in it", "", find_s);
  }

  // An entry of a small space with one extra member holding 10^5 members.
  const auto space = tunekit::config_space::product({{"BLOCK", {64, 128, 256}}});
  auto make = [&] {
    tunekit::tuner_options o;
    tunekit::environment env;
    env.cache_dir = dir / "cache";
    env.log_dir = dir / "logs";
    o.process = tunekit::process_context{env, tunekit::launcher_info{}, nullptr};
    o.measurer = std::make_shared<tunekit::simulated_measurer>(
        [](const tunekit::config &c, const tunekit::key &) {
          return static_cast<double>(c.get_int("BLOCK"));
        });
    return tunekit::autotune(
        "large.entry", space, [](int n) { return tunekit::key{n}; }, tunekit::keep_all{},
        [](int, const tunekit::config &) {}, std::move(o));
  };
  auto first = make();
  first(1);
  const auto entry = first.tuner().cache_path(tunekit::key{1});
  std::ifstream in(entry, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string extra = ",\n  \"extra\": {";
  for (int i = 0; i < 100000; ++i) {
    extra += (i > 0 ? ",\"m" : "\"m") + std::to_string(i) + "\": 1";
  }
  extra += "}\n}\n";
  text.erase(text.find_last_of('}'));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  write_text(entry, text + extra);
  auto fresh = make();
  const auto t = std::chrono::steady_clock::now();
  fresh(1);
  const double serve_s = seconds_since(t);
  if (fresh.tuner().last_source() != tunekit::source::cache) {
    std::fprintf(stderr, "the entry with an extra object was not served from the cache\n");
    return 1;
  }
  std::printf("%-28s %12.1f %12.3f\n", "entry + 1e5-member object",
              static_cast<double>(std::filesystem::file_size(entry)) / 1e6, serve_s);
  std::filesystem::remove_all(dir);
  return 0;
}
