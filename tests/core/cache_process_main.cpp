// Helper of multi_process_test: one process that tunes a host function against the winner cache
// in the directory given on its command line, then prints where the winner came from.
//
//   tunekit_cache_process <cache_dir> [n] [tag_hex]
//   -> source=search measured=6 winner=[BLOCK=512, num_warps=4]
//
// With `tag_hex`, the key also holds the string of those bytes (hex, so that a test can pass bytes
// that are not UTF-8, such as "caf\xe9" = 636166e9).
//
// The measurer is simulated (a cost of the config, seeded noise), so every process that searches
// picks the same winner; the environment is not read (cache directory, launcher), so only the
// command line matters.

#include <tunekit/tunekit.hpp>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

namespace {

double cost(const tunekit::config &c, const tunekit::key & /*k*/) {
  const auto block = c.get_int("BLOCK");
  const double base = block == 512 ? 1.0 : block == 1024 ? 2.0 : block == 256 ? 3.0 : 4.0;
  return base + (c.get_int("num_warps") == 8 ? 0.5 : 0.0);
}

// The tuned host function: y = 2 * x over n elements, in blocks (the block size is its config).
double scale_sum(std::int64_t n, const tunekit::config &c) {
  const std::int64_t block = c.get_int("BLOCK");
  double sum = 0;
  for (std::int64_t start = 0; start < n; start += block) {
    for (std::int64_t i = start; i < std::min(start + block, n); ++i) {
      sum += 2.0 * static_cast<double>(i);
    }
  }
  return sum;
}

std::string from_hex(const std::string &hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <cache_dir> [n]\n", argv[0]);
    return 2;
  }
  try {
    const std::int64_t n = argc > 2 ? std::stoll(argv[2]) : 1024;
    const std::string tag = argc > 3 ? from_hex(argv[3]) : std::string();
    auto key_of = [tag](std::int64_t len) {
      tunekit::key k{len};
      if (!tag.empty()) {
        k.push_back(tag);
      }
      return k;
    };
    auto meas = std::make_shared<tunekit::simulated_measurer>(cost, 0.02, 11);
    tunekit::environment env;
    env.cache_dir = argv[1];
    tunekit::tuner_options o;
    o.version = "multi-process-v1";
    o.measurer = meas;
    o.policy = {.warmup = 1, .runs = 2};
    // One process of its own, whatever the environment says.
    o.process = tunekit::process_context{
        env, tunekit::launcher_info{}, [](tunekit::log_level level, std::string_view msg) {
          std::fprintf(stderr, "[%s] %.*s\n",
                       level == tunekit::log_level::info ? "info" : "warning",
                       static_cast<int>(msg.size()), msg.data());
        }};
    auto tuned = tunekit::autotune(
        "multi_process.scale",
        tunekit::config_space::product({{"BLOCK", {256, 512, 1024, 2048}}, {"num_warps", {4, 8}}}),
        key_of,
        [](const tunekit::config &c, std::int64_t len) { return c.get_int("BLOCK") <= len; },
        scale_sum, o);
    const double sum = tuned(n);
    const double expected = static_cast<double>(n) * static_cast<double>(n - 1);
    const tunekit::config *winner = tuned.tuner().find(key_of(n));
    std::printf("source=%s measured=%zu winner=[%s]\n",
                std::string(tunekit::to_string(tuned.tuner().last_source())).c_str(),
                meas->candidates_measured(), winner != nullptr ? winner->to_string().c_str() : "");
    return sum == expected ? 0 : 3;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
