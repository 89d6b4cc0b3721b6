// Helper of rtc_test: one process that compiles the scale kernel for sm_90 over ELEMS = 1..8
// against the compile cache in the directory given on its command line, and prints how many
// configs NVRTC compiled and how many came from the cache.
//
//   tunekit_rtc_compile_process <cache_dir>
//   -> compiled=8 cache_hits=0 failed=0

#include "rtc_test_support.hpp"

#include <cstdio>
#include <exception>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CACHE_DIR\n", argv[0]);
    return 2;
  }
  try {
    namespace tc = tunekit::cuda;
    tc::compile_options options;
    options.arch = "sm_90";
    options.cache = std::make_shared<const tc::kernel_cache>(argv[1]);
    options.threads = 2;
    tc::kernel_program program(tc::test::scale_definition(), options);
    std::vector<tunekit::config> configs;
    for (int elems = 1; elems <= 8; ++elems) {
      configs.push_back(tunekit::config{{"ELEMS", elems}});
    }
    program.prepare(configs);
    for (const auto &c : configs) {
      static_cast<void>(program.compile(c));
    }
    const auto s = program.summary();
    std::printf("compiled=%zu cache_hits=%zu failed=%zu\n", s.compiled, s.cache_hits, s.failed);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tunekit_rtc_compile_process: %s\n", e.what());
    return 1;
  }
}
