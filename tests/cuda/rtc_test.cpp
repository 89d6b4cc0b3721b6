// Runtime compilation without a GPU: NVRTC compiles for sm_90 on any machine, so compiling, the
// compile cache (hits, corruption, two processes, concurrent writers), compile failures and the
// cache key are all tested here. Nothing in this file loads the CUDA driver.

#include "../core/test_support.hpp"
#include "rtc_test_support.hpp"

#include <tunekit/cuda/device.hpp>
#include <tunekit/cuda/rtc.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

namespace {

namespace tc = tunekit::cuda;
using tunekit_test::log_capture;
using tunekit_test::temp_dir;

tc::compile_options sm90(const std::filesystem::path &cache_dir, const log_capture &log,
                         unsigned threads = 2) {
  tc::compile_options o;
  o.arch = "sm_90";
  o.cache = std::make_shared<const tc::kernel_cache>(cache_dir, log.sink());
  o.threads = threads;
  o.log = log.sink();
  return o;
}

tunekit::config elems(int e) { return tunekit::config{{"ELEMS", e}}; }

std::string read_all(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::filesystem::path &p, const std::string &bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

// Runs a shell command; its exit status and standard output.
std::pair<int, std::string> run_command(const std::string &command) {
  std::string out;
  FILE *pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return {-1, out};
  }
  std::array<char, 256> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe) != nullptr) {
    out += buf.data();
  }
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string helper_command(const std::filesystem::path &cache_dir) {
  return std::string("'") + TUNEKIT_RTC_COMPILE_PROCESS + "' '" + cache_dir.string() + "'";
}

} // namespace

TEST(rtc_target, supported_architectures_compile_to_cubins_newer_ones_to_ptx) {
  const auto archs = tc::nvrtc_supported_archs();
  ASSERT_FALSE(archs.empty());
  EXPECT_EQ(tc::compile_target("sm_90"), "sm_90");
  EXPECT_EQ(tc::compile_target("90"), "sm_90");
  EXPECT_EQ(tc::compile_target("sm_90a"), "sm_90a");
  // An architecture newer than this NVRTC: PTX of the newest one it knows, for the driver's JIT.
  EXPECT_EQ(tc::compile_target("sm_999"), "compute_" + std::to_string(archs.back()));
  EXPECT_THROW(static_cast<void>(tc::compile_target("sm_10")), tunekit::error);
  EXPECT_THROW(static_cast<void>(tc::compile_target("hopper")), tunekit::error);
  EXPECT_FALSE(tc::nvrtc_version().empty());
}

TEST(rtc_definitions, every_field_becomes_a_definition_with_its_type_kept) {
  const tunekit::config c{{"BLOCK", 256}, {"SCALE", 0.5}, {"FAST", true}, {"T", "float"}};
  const auto defs = tc::config_definitions(c);
  ASSERT_EQ(defs.size(), 4U);
  EXPECT_EQ(defs[0], (tc::definition{"BLOCK", "256"}));
  EXPECT_EQ(defs[1], (tc::definition{"SCALE", "0.5"}));
  EXPECT_EQ(defs[2], (tc::definition{"FAST", "1"}));
  EXPECT_EQ(defs[3], (tc::definition{"T", "float"}));
}

TEST(rtc_compile, compiles_a_cubin_for_sm_90_and_stores_it) {
  temp_dir dir;
  log_capture log;
  tc::kernel_program program(tc::test::scale_definition(), sm90(dir.path(), log));
  EXPECT_EQ(program.target(), "sm_90");
  EXPECT_FALSE(program.record(elems(4)).has_value());
  const auto r = program.compile(elems(4));
  EXPECT_EQ(r.status, tc::compile_status::compiled);
  EXPECT_EQ(r.target, "sm_90");
  EXPECT_GT(r.binary_bytes, 0U);
  EXPECT_GT(r.compile_ms, 0.0);
  EXPECT_EQ(r.key.size(), 64U);
  EXPECT_EQ(r.config, elems(4));

  const tc::kernel_cache cache(dir.path());
  const auto path = cache.path_of(r.key, "sm_90");
  EXPECT_EQ(path, dir.path() / "kernels" / (r.key + ".cubin"));
  const auto loaded = cache.load(r.key, "sm_90");
  ASSERT_TRUE(loaded.found()) << loaded.detail;
  EXPECT_EQ(loaded.path, path);
  EXPECT_TRUE(loaded.detail.empty());
  const tc::kernel_binary &stored = *loaded.value;
  EXPECT_EQ(stored.binary.substr(0, 4), "\x7f"
                                        "ELF"); // a cubin is an ELF image
  EXPECT_EQ(stored.lowered_name, "scale");      // extern "C"
  EXPECT_NE(stored.description.find("ELEMS=4"), std::string::npos);
  EXPECT_TRUE(log.warnings().empty()) << log.dump();
}

TEST(rtc_compile, template_arguments_go_through_a_name_expression) {
  temp_dir dir;
  log_capture log;
  tc::kernel_program program(tc::test::fill_definition(), sm90(dir.path(), log));
  const auto a = program.compile(tunekit::config{{"TILE", 64}});
  const auto b = program.compile(tunekit::config{{"TILE", 128}});
  ASSERT_EQ(a.status, tc::compile_status::compiled);
  ASSERT_EQ(b.status, tc::compile_status::compiled);
  EXPECT_NE(a.key, b.key);
  const tc::kernel_cache cache(dir.path());
  const auto stored = cache.load(a.key, "sm_90");
  ASSERT_TRUE(stored.found()) << stored.detail;
  EXPECT_EQ(stored.value->lowered_name, "_Z4fillILi64EEvPfi"); // fill<64>(float*, int)
  EXPECT_NE(stored.value->description.find("fill<64>"), std::string::npos);
}

TEST(rtc_compile, a_compile_error_is_a_candidate_error_starting_with_the_nvrtc_log) {
  temp_dir dir;
  log_capture log;
  tc::kernel_program program(tc::test::scale_definition(), sm90(dir.path(), log));
  try {
    static_cast<void>(program.compile(elems(32))); // static_assert(ELEMS <= 16)
    FAIL() << "ELEMS=32 compiled";
  } catch (const tunekit::fatal_candidate_error &e) {
    FAIL() << "a compile error must not be fatal: " << e.what();
  } catch (const tunekit::error &e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("scale.cu(", 0), 0U) << what; // the log's first line leads
    EXPECT_NE(what.find("ELEMS is too large for this kernel"), std::string::npos) << what;
    EXPECT_NE(what.find("NVRTC_ERROR_COMPILATION"), std::string::npos) << what;
    EXPECT_NE(what.find("ELEMS=32"), std::string::npos) << what;
    EXPECT_NE(what.find("sm_90"), std::string::npos) << what;
  }
  const auto r = program.record(elems(32));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, tc::compile_status::failed);
  EXPECT_NE(r->reason.find("ELEMS is too large"), std::string::npos);
  // The failure is remembered: the next attempt throws the same without compiling again.
  const double first_ms = r->compile_ms;
  EXPECT_THROW(static_cast<void>(program.compile(elems(32))), tunekit::error);
  EXPECT_EQ(program.record(elems(32))->compile_ms, first_ms);
  EXPECT_EQ(program.summary().failed, 1U);
  // Nothing is cached for a failure.
  EXPECT_TRUE(tc::kernel_cache(dir.path()).list().empty());
}

TEST(rtc_cache, a_second_program_compiles_nothing) {
  temp_dir dir;
  log_capture log;
  {
    tc::kernel_program first(tc::test::scale_definition(), sm90(dir.path(), log));
    EXPECT_EQ(first.compile(elems(2)).status, tc::compile_status::compiled);
  }
  tc::kernel_program second(tc::test::scale_definition(), sm90(dir.path(), log));
  const auto r = second.compile(elems(2));
  EXPECT_EQ(r.status, tc::compile_status::cache_hit);
  EXPECT_GT(r.binary_bytes, 0U);
  EXPECT_EQ(second.summary().cache_hits, 1U);
  EXPECT_EQ(second.summary().compiled, 0U);
}

TEST(rtc_cache, without_the_cache_nothing_is_written) {
  temp_dir dir;
  log_capture log;
  auto o = sm90(dir.path(), log);
  o.use_cache = false;
  tc::kernel_program program(tc::test::scale_definition(), o);
  EXPECT_EQ(program.compile(elems(2)).status, tc::compile_status::compiled);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "kernels"));
}

TEST(rtc_cache, corrupt_or_truncated_binaries_are_skipped_with_a_warning_and_rebuilt) {
  temp_dir dir;
  log_capture log;
  std::string key;
  {
    tc::kernel_program p(tc::test::scale_definition(), sm90(dir.path(), log));
    key = p.compile(elems(3)).key;
  }
  const tc::kernel_cache cache(dir.path());
  const auto path = cache.path_of(key, "sm_90");
  const std::string good = read_all(path);
  ASSERT_GT(good.size(), 200U);

  struct damage {
    std::string name;
    std::string bytes;
    std::string problem;
  };
  std::string flipped = good;
  flipped[flipped.size() - 10] = static_cast<char>(flipped[flipped.size() - 10] ^ 0x5a);
  const std::vector<damage> cases = {
      {"truncated", good.substr(0, good.size() - 100), "truncated"},
      {"flipped byte", flipped, "checksum mismatch"},
      {"no header", good.substr(good.find('\n') + 1), "header"},
      {"empty", "", "no header line"},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.name);
    write_all(path, c.bytes);
    log.clear();
    tc::kernel_program p(tc::test::scale_definition(), sm90(dir.path(), log));
    const auto r = p.compile(elems(3));
    EXPECT_EQ(r.status, tc::compile_status::compiled);
    EXPECT_EQ(log.count(tunekit::log_level::warning, {"compile cache: skipping", path.string(),
                                                      c.problem, "compiling it again"}),
              1U)
        << log.dump();
    // Rewritten whole: the next program reads it.
    tc::kernel_program again(tc::test::scale_definition(), sm90(dir.path(), log));
    EXPECT_EQ(again.compile(elems(3)).status, tc::compile_status::cache_hit);
  }
}

TEST(rtc_cache, a_file_of_another_key_is_not_trusted) {
  temp_dir dir;
  log_capture log;
  std::string k2;
  std::string k3;
  {
    tc::kernel_program p(tc::test::scale_definition(), sm90(dir.path(), log));
    k2 = p.compile(elems(2)).key;
    k3 = p.compile(elems(3)).key;
  }
  const tc::kernel_cache cache(dir.path());
  // ELEMS=2's binary under ELEMS=3's name: its header names the other key.
  std::filesystem::copy_file(cache.path_of(k2, "sm_90"), cache.path_of(k3, "sm_90"),
                             std::filesystem::copy_options::overwrite_existing);
  tc::kernel_program p(tc::test::scale_definition(), sm90(dir.path(), log));
  EXPECT_EQ(p.compile(elems(3)).status, tc::compile_status::compiled);
  EXPECT_EQ(log.count(tunekit::log_level::warning, {"made for key " + k2}), 1U) << log.dump();
}

TEST(rtc_cache, key_changes_with_every_input) {
  temp_dir dir;
  log_capture log;
  auto key_of = [&](const tc::kernel_definition &d, const tunekit::config &c,
                    const std::string &arch = "sm_90") {
    auto o = sm90(dir.path(), log);
    o.arch = arch;
    tc::kernel_program p(d, o);
    return std::pair{p.digest(), p.compile(c).key};
  };
  const auto base = key_of(tc::test::scale_definition(), elems(4));
  // The same inputs: the same digest and key, served from the cache.
  EXPECT_EQ(key_of(tc::test::scale_definition(), elems(4)), base);
  // A compile-time value.
  EXPECT_NE(key_of(tc::test::scale_definition(), elems(5)).second, base.second);
  // A named header's contents: a new digest (retune) and a new binary.
  const auto header = key_of(tc::test::scale_definition("#define MAX_ELEMS 17\n"), elems(4));
  EXPECT_NE(header.first, base.first);
  EXPECT_NE(header.second, base.second);
  // The source.
  auto edited = tc::test::scale_definition();
  edited.source.text += "\n// edited\n";
  EXPECT_NE(key_of(edited, elems(4)).second, base.second);
  // An option.
  auto fast = tc::test::scale_definition();
  fast.options = {"-use_fast_math"};
  EXPECT_NE(key_of(fast, elems(4)).second, base.second);
  // The architecture.
  EXPECT_NE(key_of(tc::test::scale_definition(), elems(4), "sm_80").second, base.second);
}

TEST(rtc_cache, a_header_changed_in_an_include_directory_recompiles) {
  temp_dir dir;
  temp_dir includes;
  log_capture log;
  std::filesystem::create_directories(includes.path() / "sub");
  write_all(includes.path() / "sub" / "scale_limits.h", "#define MAX_ELEMS 16\n");
  auto d = tc::test::scale_definition();
  d.headers.clear();
  d.source.text =
      "#include \"sub/scale_limits.h\"\n" + d.source.text.substr(d.source.text.find('\n', 1) + 1);
  d.include_dirs = {includes.path()};
  std::string first_key;
  {
    tc::kernel_program p(d, sm90(dir.path(), log));
    const auto r = p.compile(elems(4));
    ASSERT_EQ(r.status, tc::compile_status::compiled) << r.reason;
    first_key = r.key;
  }
  {
    tc::kernel_program p(d, sm90(dir.path(), log));
    EXPECT_EQ(p.compile(elems(4)).status, tc::compile_status::cache_hit);
  }
  write_all(includes.path() / "sub" / "scale_limits.h", "#define MAX_ELEMS 2\n");
  tc::kernel_program p(d, sm90(dir.path(), log));
  EXPECT_NE(p.compile(elems(2)).key, first_key);
  // The new header is what was compiled: ELEMS=4 no longer passes its static_assert.
  EXPECT_THROW(static_cast<void>(p.compile(elems(4))), tunekit::error);
}

TEST(rtc_cache, a_missing_include_directory_is_named) {
  auto d = tc::test::scale_definition();
  d.include_dirs = {"/nonexistent/tunekit-includes"};
  try {
    tc::kernel_program p(d, tc::compile_options{.arch = "sm_90", .use_cache = false});
    FAIL() << "no error";
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/tunekit-includes"), std::string::npos);
  }
}

TEST(rtc_cache, list_and_clear) {
  temp_dir dir;
  log_capture log;
  {
    tc::kernel_program p(tc::test::scale_definition(), sm90(dir.path(), log));
    for (int e = 1; e <= 3; ++e) {
      static_cast<void>(p.compile(elems(e)));
    }
  }
  const tc::kernel_cache cache(dir.path(), log.sink());
  write_all(cache.dir() / "junk.cubin", "not a binary");
  const auto entries = cache.list();
  ASSERT_EQ(entries.size(), 4U);
  std::size_t good = 0;
  for (const auto &e : entries) {
    if (e.problem.empty()) {
      ++good;
      EXPECT_EQ(e.target, "sm_90");
      EXPECT_NE(e.description.find("scale [ELEMS="), std::string::npos);
      EXPECT_EQ(e.nvrtc, tc::nvrtc_version());
      EXPECT_GT(e.bytes, 0U);
      EXPECT_FALSE(e.created.empty());
    } else {
      EXPECT_EQ(e.key, "junk");
    }
  }
  EXPECT_EQ(good, 3U);
  EXPECT_EQ(cache.clear(), 4U);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(cache.clear(), 0U);
}

TEST(rtc_pool, prepare_compiles_ahead_and_a_compile_waits_for_it) {
  temp_dir dir;
  log_capture log;
  tc::kernel_program program(tc::test::scale_definition(), sm90(dir.path(), log, 2));
  std::vector<tunekit::config> configs;
  for (int e = 1; e <= 12; ++e) {
    configs.push_back(elems(e));
  }
  program.prepare(configs); // returns at once
  program.prepare(configs); // already scheduled: nothing more
  for (const auto &c : configs) {
    const auto r = program.compile(c);
    EXPECT_EQ(r.status, tc::compile_status::compiled) << r.reason;
  }
  const auto s = program.summary();
  EXPECT_EQ(s.configs, 12U);
  EXPECT_EQ(s.compiled, 12U);
  EXPECT_EQ(s.pending, 0U);
  EXPECT_GT(s.compile_ms, 0.0);
  const auto records = program.records();
  ASSERT_EQ(records.size(), 12U);
  EXPECT_EQ(records.front().config, elems(1));
  EXPECT_EQ(tc::kernel_cache(dir.path()).list().size(), 12U);
}

TEST(rtc_pool, concurrent_compiles_of_one_config_compile_it_once) {
  temp_dir dir;
  log_capture log;
  tc::kernel_program program(tc::test::scale_definition(), sm90(dir.path(), log));
  std::vector<std::thread> threads;
  std::vector<tc::compile_record> got(6);
  for (std::size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] { got[i] = program.compile(elems(7)); });
  }
  for (auto &t : threads) {
    t.join();
  }
  for (const auto &r : got) {
    EXPECT_EQ(r.status, tc::compile_status::compiled);
    EXPECT_EQ(r.key, got[0].key);
  }
  EXPECT_EQ(program.summary().configs, 1U);
}

TEST(rtc_pool, destroying_a_program_with_compiles_queued_is_clean) {
  temp_dir dir;
  log_capture log;
  std::vector<tunekit::config> configs;
  for (int e = 1; e <= 16; ++e) {
    configs.push_back(elems(e));
  }
  {
    tc::kernel_program program(tc::test::scale_definition(), sm90(dir.path(), log, 1));
    program.prepare(configs);
  } // drops what has not started, waits for what has
  for (const auto &e : tc::kernel_cache(dir.path()).list()) {
    EXPECT_TRUE(e.problem.empty()) << e.path;
  }
}

TEST(rtc_processes, a_second_process_compiles_nothing) {
  temp_dir dir;
  const auto first = run_command(helper_command(dir.path()));
  ASSERT_EQ(first.first, 0) << first.second;
  EXPECT_EQ(first.second, "compiled=8 cache_hits=0 failed=0\n");
  const auto second = run_command(helper_command(dir.path()));
  ASSERT_EQ(second.first, 0) << second.second;
  EXPECT_EQ(second.second, "compiled=0 cache_hits=8 failed=0\n");
}

TEST(rtc_processes, concurrent_writers_leave_valid_binaries) {
  temp_dir dir;
  std::string all;
  for (int i = 0; i < 4; ++i) {
    all += helper_command(dir.path()) + " & ";
  }
  const auto together = run_command("{ " + all + "wait; } 2>&1");
  ASSERT_EQ(together.first, 0) << together.second;
  EXPECT_EQ(together.second.find("WARNING"), std::string::npos) << together.second;
  const tc::kernel_cache cache(dir.path());
  const auto entries = cache.list();
  EXPECT_EQ(entries.size(), 8U);
  for (const auto &e : entries) {
    EXPECT_TRUE(e.problem.empty()) << e.path << ": " << e.problem;
  }
  for (const auto &p : std::filesystem::directory_iterator(cache.dir())) {
    EXPECT_FALSE(p.path().filename().string().starts_with(".")) << "temp file left: " << p.path();
  }
  const auto after = run_command(helper_command(dir.path()));
  EXPECT_EQ(after.second, "compiled=0 cache_hits=8 failed=0\n");
}

TEST(rtc_device, without_an_architecture_and_without_a_device_the_error_says_what_to_set) {
  if (tc::device_available()) {
    GTEST_SKIP() << "a device is visible; its architecture is used";
  }
  tc::kernel_program program(tc::test::scale_definition(), tc::compile_options{.use_cache = false});
  try {
    static_cast<void>(program.compile(elems(1)));
    FAIL() << "compiled without an architecture";
  } catch (const tunekit::error &e) {
    EXPECT_NE(std::string(e.what()).find("compile_options::arch"), std::string::npos) << e.what();
  }
}
