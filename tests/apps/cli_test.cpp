// The `tunekit` command, run as a process: a winner cache filled by real tuners (simulated
// timings) is listed, shown, exported to artifacts and tables, checked, and cleared.

#include "cli_support.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

using json = nlohmann::json;
using tunekit::config;
using tunekit::key;
using tunekit_test::temp_dir;

namespace {

using result = tunekit_test::cli_result;

std::string quote(const std::string &s) { return tunekit_test::shell_quote(s); }

class cli_test : public ::testing::Test {
protected:
  // Runs `tunekit --cache-dir <cache> args...`.
  result run(const std::string &args, bool with_cache = true) const {
    return tunekit_test::run_cli(args, with_cache ? cache.path() : std::filesystem::path(),
                                 scratch.path() / "stderr.txt");
  }

  // Two keys of "scale" and one of "other" in the cache; BLOCK=512 is fastest, then 1024.
  void fill_cache() {
    auto meas = std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
    auto space = tunekit::config_space::product({{"BLOCK", {256, 512, 1024}}});
    for (const char *name : {"scale", "other"}) {
      auto f = tunekit::autotune(
          name, space, [](int n) { return key{n}; }, tunekit::keep_all{},
          [](int, const config &) {}, tunekit_test::options(cache.path(), meas, log));
      f(1024);
      if (std::string(name) == "scale") {
        f(4096);
      }
    }
  }

  [[nodiscard]] std::string str(const std::filesystem::path &p) const { return quote(p.string()); }

  temp_dir cache;
  temp_dir scratch;
  tunekit_test::log_capture log;
};

TEST_F(cli_test, device_reports_the_host_identity_and_digest) {
  const auto r = run("device --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = json::parse(r.out);
  const auto host = tunekit::host_hardware();
  EXPECT_EQ(j["host"]["digest"], host.digest());
  EXPECT_EQ(j["host"]["name"], host.name);
  EXPECT_EQ(j["host"]["identity"]["units"], host.units);
  EXPECT_TRUE(j["devices"].is_array());

  const auto text = run("device");
  EXPECT_EQ(text.rc, 0);
  EXPECT_NE(text.out.find(host.digest()), std::string::npos) << text.out;
}

TEST_F(cli_test, cache_list_show_and_clear_by_function) {
  fill_cache();
  auto r = run("cache list --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = json::parse(r.out);
  ASSERT_EQ(j.size(), 3U);

  r = run("cache list --function scale --json");
  j = json::parse(r.out);
  ASSERT_EQ(j.size(), 2U);
  for (const auto &e : j) {
    EXPECT_EQ(e["function"], "scale");
    EXPECT_EQ(e["winner"]["BLOCK"], 512);
    EXPECT_TRUE(e["winner"]["BLOCK"].is_number_integer());
  }

  r = run("cache list");
  EXPECT_NE(r.out.find("[BLOCK=512]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 entries"), std::string::npos) << r.out;

  r = run("cache show --function other");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("* #1 [BLOCK=512] ok"), std::string::npos) << r.out;
  r = run("cache show --function other --json");
  j = json::parse(r.out);
  ASSERT_EQ(j.size(), 1U);
  EXPECT_EQ(j[0]["candidates"].size(), 3U);

  r = run("cache clear --function scale --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["removed"], 2);
  EXPECT_EQ(json::parse(run("cache list --json").out).size(), 1U);
  r = run("cache clear");
  EXPECT_NE(r.out.find("removed 1 entry"), std::string::npos) << r.out;
  EXPECT_EQ(tunekit_test::files_below(cache.path()).size(), 0U);
}

// Every line of `cache list` fits 100 columns: function, version, key and winner (cut with
// ", ..." when they do not fit) and its time; `--long` adds the hardware and the path, uncut.
TEST_F(cli_test, cache_list_lines_fit_100_columns_and_long_ones_hold_everything) {
  auto meas = std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
  auto o = tunekit_test::options(cache.path(), meas, log);
  o.version = std::string(64, 'a') + "0123"; // a digest, as make_tuner_options gives
  std::vector<tunekit::parameter> domains{{"BLOCK", {256, 512}}};
  for (const char *name :
       {"tile_m", "tile_n", "tile_k", "warps", "stages", "split_k", "swizzle", "vector_width"}) {
    domains.push_back({name, {std::int64_t{16}}});
  }
  auto wide = tunekit::autotune(
      "gemm_with_a_long_name", tunekit::config_space::product(domains),
      [](const std::string &shape) {
        return key{shape, "float16", 4096};
      },
      tunekit::keep_all{}, [](const std::string &, const config &) {}, o);
  wide(std::string("((torch.float16, [4096, 4096], [4096, 1]), (torch.float16, [4096, 4096]))"));
  fill_cache();

  auto r = run("cache list");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(r.out);
  std::size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    EXPECT_LE(line.size(), 100U) << line;
    if (n < 4) {
      EXPECT_EQ(line.find(cache.path().string()), std::string::npos) << "no path: " << line;
    }
  }
  EXPECT_EQ(n, 5U) << r.out; // 4 entries and the summary
  EXPECT_NE(
      r.out.find("gemm_with_a_long_name  aaaa...0123  (\"((torch.float16, ...)  [BLOCK=512, "),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(", ...]  1 ms\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scale  v1  (1024)  [BLOCK=512]  1 ms\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 entries in " + cache.path().string()), std::string::npos) << r.out;

  r = run("cache list --long --function gemm_with_a_long_name");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(o.version), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vector_width=16]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(tunekit_test::test_hardware().to_string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(wide.tuner()
                           .cache_path(wide.key_of(std::string(
                               "((torch.float16, [4096, 4096], [4096, 1]), (torch.float16, [4096, "
                               "4096]))")))
                           .string()),
            std::string::npos)
      << r.out;
}

TEST_F(cli_test, cache_list_and_show_report_a_corrupt_entry_and_exit_1) {
  fill_cache();
  tunekit::winner_cache c(cache.path());
  const auto bad = c.list("other").at(0);
  tunekit_test::write_text(bad, "{ truncated");
  auto r = run("cache list --function other --json");
  EXPECT_EQ(r.rc, 1) << r.err;
  const auto j = json::parse(r.out);
  ASSERT_EQ(j.size(), 1U);
  EXPECT_TRUE(j[0].contains("problem"));

  r = run("cache list");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.out.find("BAD " + bad.string() + ": cache entry is not valid JSON"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("3 entries (1 bad)"), std::string::npos) << r.out;
  EXPECT_EQ(run("cache show --function other").rc, 1);
  EXPECT_EQ(run("cache list --function scale").rc, 0);

  // A valid entry copied under another name is not the entry its name says.
  std::filesystem::copy_file(c.list("scale").at(0), bad.parent_path() / "copy.json");
  r = run("cache list --function other");
  EXPECT_NE(r.out.find("copy.json: is named copy.json but its identity names it"),
            std::string::npos)
      << r.out;
}

TEST_F(cli_test, artifact_emit_then_check_then_serve) {
  fill_cache();
  const auto dir = scratch.path() / "artifacts";
  auto r = run("artifact emit --name scale_v1 --function scale --key-names n --out " + str(dir));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(tunekit_test::files_below(dir).size(), 2U);

  // Emitting again gives the same bytes.
  const auto files = tunekit_test::files_below(dir);
  const std::string first = tunekit_test::read_text(files[0]);
  ASSERT_EQ(
      run("artifact emit --name scale_v1 --function scale --key-names n --out " + str(dir)).rc, 0);
  EXPECT_EQ(tunekit_test::read_text(files[0]), first);

  r = run("artifact check " + str(dir) + " --json");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(json::parse(r.out)["bad"], 0);

  // A tuner on a machine without a cache serves the emitted artifact, measuring nothing.
  temp_dir fresh;
  auto meas = std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
  auto o = tunekit_test::options(fresh.path(), meas, log);
  o.process->env.artifact_dir = dir;
  o.artifact.name = "scale_v1";
  auto f = tunekit::autotune(
      "scale", tunekit::config_space::product({{"BLOCK", {256, 512, 1024}}}),
      [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &c) { return c.get_int("BLOCK"); }, o);
  EXPECT_EQ(f(4096), 512);
  EXPECT_EQ(f.tuner().last_source(), tunekit::source::artifact);
  EXPECT_EQ(meas->candidates_measured(), 0U);
}

TEST_F(cli_test, artifact_emit_refuses_key_names_that_do_not_fit_the_key) {
  fill_cache();
  const auto dir = scratch.path() / "artifacts";
  const auto r =
      run("artifact emit --name k --function scale --key-names n,dtype --out " + str(dir));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("2 key names (n, dtype) for the key"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir)) << "nothing is written";
}

TEST_F(cli_test, artifact_emit_leaves_pinned_values_out_and_a_pinned_call_is_served) {
  auto meas = std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
  auto space = tunekit::config_space::product({{"BLOCK", {256, 512, 1024}}, {"warps", {4, 8}}});
  const tunekit::call_options pin{.allow_arg_overwrite = true, .pinned = config{{"warps", 8}}};
  auto make = [&](const std::filesystem::path &root) {
    return tunekit::autotune(
        "pinned", space, [](int n) { return key{n}; }, tunekit::keep_all{},
        [](int, const config &c) { return c.get_int("BLOCK") * 100 + c.get_int("warps"); },
        tunekit_test::options(root, meas, log));
  };
  ASSERT_EQ(make(cache.path()).with(pin)(1024), 51208);

  const auto dir = scratch.path() / "artifacts";
  auto r = run("artifact emit --name p --function pinned --key-names n --json --out " + str(dir));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)[0]["config"], json({{"BLOCK", 512}})) << r.out;
  ASSERT_EQ(run("artifact check " + str(dir)).rc, 0);

  temp_dir fresh;
  auto o = tunekit_test::options(fresh.path(), meas, log);
  o.process->env.artifact_dir = dir;
  o.artifact.name = "p";
  auto served = tunekit::autotune(
      "pinned", space, [](int n) { return key{n}; }, tunekit::keep_all{},
      [](int, const config &c) { return c.get_int("BLOCK") * 100 + c.get_int("warps"); }, o);
  EXPECT_EQ(served.with(pin)(1024), 51208);
  EXPECT_EQ(served.tuner().last_source(), tunekit::source::artifact);
}

TEST_F(cli_test, artifact_check_names_each_bad_file_and_why) {
  fill_cache();
  const auto dir = scratch.path() / "artifacts";
  ASSERT_EQ(run("artifact emit --name k --function scale --out " + str(dir)).rc, 0);
  const auto files = tunekit_test::files_below(dir);
  ASSERT_EQ(files.size(), 2U);
  tunekit_test::write_text(files[0], "not json");
  std::filesystem::copy_file(files[1], dir / "k-renamed.json");

  auto r = run("artifact check " + str(dir));
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("BAD  " + files[0].string() + ": artifact is not valid JSON"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("k-renamed.json: is named"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok   " + files[1].string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 artifacts, 2 bad"), std::string::npos) << r.out;

  r = run("artifact check " + str(dir) + " --json");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(json::parse(r.out)["bad"], 2);

  EXPECT_EQ(run("artifact check " + str(scratch.path() / "missing")).rc, 2);
}

TEST_F(cli_test, table_export_keeps_top_k_device_specific_and_checks) {
  fill_cache();
  const auto file = scratch.path() / "table.json";
  auto r = run("table export --function scale --op scale_op --top-k 2 --out " + str(file));
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto t = tunekit::lookup_table::load(file);
  ASSERT_EQ(t.size(), 2U);
  const auto device = tunekit_test::test_hardware().name;
  const auto *entries = t.find(tunekit::table_key(device, key{4096}, "", "scale_op"));
  ASSERT_NE(entries, nullptr) << tunekit_test::read_text(file);
  ASSERT_EQ(entries->size(), 2U);
  EXPECT_EQ((*entries)[0].choice, (config{{"BLOCK", 512}}));
  EXPECT_EQ((*entries)[1].choice, (config{{"BLOCK", 1024}}));

  r = run("table check " + str(file) + " --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["keys"], 2);

  // stdout by default; the op defaults to the function name.
  r = run("table export --function other");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("+(1024)+other\""), std::string::npos) << r.out;

  tunekit_test::write_text(file, R"({"(1)+mm": [{"BLOCK": 1}]})");
  r = run("table check " + str(file));
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("(1)+mm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("template_id"), std::string::npos) << r.out;
}

TEST_F(cli_test, table_export_to_a_bare_file_name_writes_it_in_the_working_directory) {
  fill_cache();
  const auto old = std::filesystem::current_path();
  std::filesystem::current_path(scratch.path());
  const auto r = run("table export --function scale --template-hash =x --out t.json");
  const auto ok = run("table export --function scale --out t.json");
  std::filesystem::current_path(old);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("expected TEMPLATE_ID=HASH"), std::string::npos) << r.err;
  ASSERT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(tunekit::lookup_table::load(scratch.path() / "t.json").size(), 2U);
  const auto zero = run("table export --top-k 0");
  EXPECT_EQ(zero.rc, 105) << zero.err; // a usage error: CLI11's code for a value failing its check
  EXPECT_NE(zero.err.find("--top-k: expected a whole number of choices, at least 1, not '0'"),
            std::string::npos)
      << zero.err;
}

// What Inductor gave a 512x512 fp16 mm (torch 2.11, H200).
constexpr const char *mm_input =
    "((torch.float16, [512, 512], [512, 1]), (torch.float16, [512, 512], [512, 1]))";

// One entry of "mm", keyed by Inductor's input key, with two templates; triton::mm BLOCK_M=64
// is fastest.
void fill_inductor_cache(const std::filesystem::path &cache, tunekit_test::log_capture &log) {
  std::vector<config> cs;
  for (int b : {32, 64}) {
    config c{{"BLOCK_M", b}, {"num_warps", 4}};
    c.set_template_id("triton::mm");
    cs.push_back(c);
  }
  config aten;
  aten.set_template_id("aten::mm");
  cs.push_back(aten);
  auto meas = std::make_shared<tunekit::simulated_measurer>([](const config &c, const key &) {
    return c.contains("BLOCK_M") ? 100.0 / static_cast<double>(c.get_int("BLOCK_M")) : 9.0;
  });
  auto f = tunekit::autotune(
      "mm", tunekit::config_space(std::move(cs)),
      [](const std::string &input) { return key{input}; }, tunekit::keep_all{},
      [](const std::string &, const config &) {}, tunekit_test::options(cache, meas, log));
  f(std::string(mm_input));
}

TEST_F(cli_test, table_export_in_the_inductor_key_format_writes_inductors_keys) {
  fill_inductor_cache(cache.path(), log);
  const auto file = scratch.path() / "table.json";
  auto r = run("table export --function mm --key-format inductor --top-k 2 --template-hash "
               "triton::mm=0717af58 --out " +
               str(file));
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = json::parse(tunekit_test::read_text(file));
  const std::string k = tunekit_test::test_hardware().name + "+" + mm_input + "+mm";
  ASSERT_TRUE(j.contains(k)) << j.dump(2);
  ASSERT_EQ(j[k].size(), 2U);
  EXPECT_EQ(j[k][0], (json{{"template_id", "triton::mm"},
                           {"BLOCK_M", 64},
                           {"num_warps", 4},
                           {"template_hash", "0717af58"}}));
  EXPECT_EQ(j[k][1]["BLOCK_M"], 32);
  EXPECT_EQ(json::parse(run("table check " + str(file) + " --json").out)["ok"], true);

  // tunekit's own format quotes the key's string, as before.
  r = run("table export --function mm");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(R"(+(\"((torch.float16)"), std::string::npos) << r.out;

  // A hash of a template that no exported choice has is refused, naming the ones there are.
  r = run("table export --function mm --template-hash triton::bmm=abc");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("triton::bmm"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'triton::mm'"), std::string::npos) << r.err;
  EXPECT_NE(run("table export --key-format torch").rc, 0);
}

TEST_F(cli_test, table_check_accepts_the_seeds_inductor_table_with_its_null) {
  // shared/seeds/001's example table, its trailing comma removed (tests/core/data).
  const auto file = scratch.path() / "inductor.json";
  tunekit_test::write_text(
      file, tunekit_test::read_text(TUNEKIT_TEST_DATA_DIR "/inductor_seed_table.json"));
  const auto r = run("table check " + str(file) + " --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["keys"], 1);
  EXPECT_EQ(j["entries"], 2);
}

TEST_F(cli_test, cache_show_gives_the_early_stop_and_why_a_candidate_stopped) {
  auto meas = std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
  auto o = tunekit_test::options(cache.path(), meas, log);
  o.policy.early_stop_factor = 1.5;
  // 256 (3 ms), then 512 (1 ms), then 1024 (2 ms): the last stops after two runs.
  auto f = tunekit::autotune(
      "early", tunekit::config_space::product({{"BLOCK", {256, 512, 1024}}}),
      [](int n) { return key{n}; }, tunekit::keep_all{}, [](int, const config &) {}, o);
  f(1024);
  const auto r = run("cache show");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("mean, early stop after 2 runs beyond 1.5 x best, world size 1"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("#2 [BLOCK=1024] ok 2 ms (stopped early after 2 of 10 runs (2 ms > 1.5 x "
                       "best 1 ms))"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(json::parse(run("cache show --json").out)[0]["policy"]["early_stop_factor"], 1.5);
}

TEST_F(cli_test, usage_errors_exit_non_zero) {
  EXPECT_NE(run("").rc, 0);
  EXPECT_NE(run("frobnicate").rc, 0);
  EXPECT_NE(run("artifact emit --function scale").rc, 0); // --name is required
  EXPECT_EQ(run("--help").rc, 0);
  // Nothing to emit is an error, not an empty success.
  EXPECT_EQ(run("artifact emit --name k --function absent --out " + str(scratch.path())).rc, 2);
}

} // namespace
