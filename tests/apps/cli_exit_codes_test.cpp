// The exit codes of every `tunekit` command (docs/cli.md, "Exit codes"), each error path run as a
// process: 1 something checked is bad, 2 an error (a missing cache directory or file, nothing to
// export, a bad value, an unwritable file), CLI11's 105, 106 and 109 for usage errors.

#include "cli_support.hpp"

#include <tunekit/tunekit.hpp>

#include <gtest/gtest.h>

#include <string>

using tunekit::config;
using tunekit::key;
using tunekit_test::temp_dir;

namespace {

using result = tunekit_test::cli_result;

constexpr int bad = 1;
constexpr int error = 2;
constexpr int invalid_value = 105; // CLI11's ValidationError
constexpr int missing = 106;       // CLI11's RequiredError
constexpr int unexpected = 109;    // CLI11's ExtrasError

std::string quote(const std::string &s) { return tunekit_test::shell_quote(s); }

const std::string kernel_tuner_file =
    std::string(TUNEKIT_TEST_DATA_DIR) + "/convolution_A100_excerpt.json";
const std::string wisdom_file = std::string(TUNEKIT_TEST_DATA_DIR) + "/vector_add_float.wisdom";

class cli_exit_codes : public ::testing::Test {
protected:
  // `tunekit --cache-dir <cache> args...`, or without --cache-dir.
  [[nodiscard]] result run(const std::string &args, bool with_cache = true) const {
    return tunekit_test::run_cli(args, with_cache ? cache.path() : std::filesystem::path(),
                                 scratch.path() / "stderr.txt");
  }
  // `tunekit --cache-dir <a directory that does not exist> args...`.
  [[nodiscard]] result run_without_cache(const std::string &args) const {
    return tunekit_test::run_cli(args, absent(), scratch.path() / "stderr.txt");
  }
  [[nodiscard]] std::filesystem::path absent() const { return scratch.path() / "absent"; }

  // Two entries of "scale" (keys 1024 and 4096).
  void fill_cache() {
    auto meas = std::make_shared<tunekit::simulated_measurer>(tunekit_test::block_cost);
    auto f = tunekit::autotune(
        "scale", tunekit::config_space::product({{"BLOCK", {256, 512, 1024}}}),
        [](int n) { return key{n}; }, tunekit::keep_all{}, [](int, const config &) {},
        tunekit_test::options(cache.path(), meas, log));
    f(1024);
    f(4096);
  }

  // A winner cache entry file made unreadable, so that the commands that check it report it.
  void break_an_entry() const {
    const auto files = tunekit::winner_cache(cache.path()).list("scale");
    ASSERT_FALSE(files.empty());
    tunekit_test::write_text(files.at(0), "{ truncated");
  }

  // The exit code is `rc` and stderr holds `message`.
  static void expect(const result &r, int rc, const std::string &message) {
    EXPECT_EQ(r.rc, rc) << r.out << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }

  temp_dir cache;
  temp_dir scratch;
  tunekit_test::log_capture log;
};

TEST_F(cli_exit_codes, usage_errors_exit_with_cli11s_codes) {
  expect(run(""), missing, "A subcommand is required");
  expect(run("frobnicate"), unexpected, "not expected: frobnicate");
  expect(run("cache"), missing, "A subcommand is required");
  expect(run("cache frobnicate"), unexpected, "not expected: frobnicate");
  expect(run("cache list --bogus"), unexpected, "not expected: --bogus");
  expect(run("device extra"), unexpected, "not expected: extra");
  EXPECT_EQ(run("--help").rc, 0);
  EXPECT_EQ(run("table export --help").rc, 0);
}

TEST_F(cli_exit_codes, a_missing_cache_directory_is_an_error_for_every_reading_command) {
  for (const char *args :
       {"cache list", "cache list --json", "cache show", "cache clear",
        "cache export kernel-tuner --function scale --out x",
        "cache export kernel-launcher --function scale --out x",
        "artifact emit --name k --function scale --out x", "table export", "report"}) {
    const result r = run_without_cache(args);
    expect(r, error, "cache directory " + absent().string() + " does not exist (--cache-dir)");
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(absent())) << "nothing is made";

  // Named by where it came from; a file is no cache directory either.
  {
    const tunekit_test::scoped_env env({}, {{"TUNEKIT_CACHE_DIR", absent().string()}});
    expect(run("cache list", false), error,
           "cache directory " + absent().string() + " does not exist ($TUNEKIT_CACHE_DIR)");
  }
  const auto file = scratch.path() / "file";
  tunekit_test::write_text(file, "x");
  expect(tunekit_test::run_cli("cache list", file, scratch.path() / "stderr.txt"), error,
         "cache directory " + file.string() + " is not a directory (--cache-dir)");

  // An empty cache directory is an empty cache.
  EXPECT_EQ(run("cache list").rc, 0);
  EXPECT_EQ(run("cache show").rc, 0);
  EXPECT_EQ(run("cache clear").rc, 0);
}

TEST_F(cli_exit_codes, cache_list_show_and_clear) {
  fill_cache();
  EXPECT_EQ(run("cache list").rc, 0);
  EXPECT_EQ(run("cache list --long").rc, 0);
  break_an_entry();
  EXPECT_EQ(run("cache list").rc, bad);
  EXPECT_EQ(run("cache list --json").rc, bad);
  EXPECT_EQ(run("cache list --long").rc, bad);
  EXPECT_EQ(run("cache show").rc, bad);
  EXPECT_EQ(run("cache show --json").rc, bad);
  EXPECT_EQ(run("cache clear --function scale").rc, 0); // clears bad entries too
  EXPECT_EQ(run("cache list").rc, 0);
  expect(run("cache show --long"), unexpected, "not expected: --long"); // list's only
}

TEST_F(cli_exit_codes, cache_import_and_export_kernel_tuner) {
  const std::string import = "cache import kernel-tuner ";
  // Into a cache directory that is not there yet: made.
  EXPECT_EQ(run_without_cache(import + quote(kernel_tuner_file) + " --function f --key '[1]'").rc,
            0);
  EXPECT_TRUE(std::filesystem::is_directory(absent()));

  expect(run(import + quote((scratch.path() / "none.json").string()) + " --function f"), error,
         "no such file");
  const auto not_json = scratch.path() / "not.json";
  tunekit_test::write_text(not_json, "not json");
  EXPECT_EQ(run(import + quote(not_json.string()) + " --function f --key '[1]'").rc, bad);
  expect(run(import + quote(kernel_tuner_file) + " --function f --key 1"), error,
         "--key must be a JSON array");
  expect(run(import + quote(kernel_tuner_file) + " --key '[1]'"), missing,
         "--function is required");
  expect(run(import), missing, "FILE is required");
  // The entry cannot be written: its function's folder is a file.
  const auto folder = tunekit::winner_cache(cache.path()).function_dir("f");
  std::filesystem::create_directories(folder.parent_path());
  tunekit_test::write_text(folder, "x");
  EXPECT_EQ(run(import + quote(kernel_tuner_file) + " --function f --key '[1]'").rc, error);

  const std::string out = " --out " + quote((scratch.path() / "kt").string());
  expect(run("cache export kernel-tuner --function absent" + out), error,
         "no valid winner-cache entries of function 'absent'");
  fill_cache();
  expect(run("cache export kernel-tuner --function scale --key 1" + out), error,
         "--key must be a JSON array");
  expect(run("cache export kernel-tuner --function scale --key '[7]'" + out), error, "for key (7)");
  expect(run("cache export kernel-tuner --function scale"), missing, "--out is required");
  EXPECT_EQ(run("cache export kernel-tuner --function scale" + out).rc, 0);
}

TEST_F(cli_exit_codes, cache_import_and_export_kernel_launcher) {
  const std::string import = "cache import kernel-launcher ";
  EXPECT_EQ(run_without_cache(import + quote(wisdom_file) + " --function v").rc, 0);
  EXPECT_TRUE(std::filesystem::is_directory(absent()));

  expect(run(import + quote((scratch.path() / "none.wisdom").string()) + " --function v"), error,
         "no such file");
  EXPECT_EQ(run(import + quote(kernel_tuner_file) + " --function v").rc, bad);
  EXPECT_EQ(run(import + quote(wisdom_file) + " --function v --key '[1]'").rc, bad); // 2 sizes
  expect(run(import + quote(wisdom_file) + " --function v --key '[1.5]=[1]'"), error,
         "--key: [1.5] is not a problem size");
  expect(run(import + quote(wisdom_file) + " --function v --key 'x=y'"), error,
         "--key is not valid JSON");
  expect(run(import + quote(wisdom_file)), missing, "--function is required");

  const std::string out = " --out " + quote((scratch.path() / "v.wisdom").string());
  expect(run("cache export kernel-launcher --function absent" + out), error,
         "no valid winner-cache entries of function 'absent'");
  fill_cache();
  expect(run("cache export kernel-launcher --function scale --problem-size x" + out), error,
         "--problem-size must be KEY=SIZE");
  expect(run("cache export kernel-launcher --function scale"), missing, "--out is required");
  EXPECT_EQ(run("cache export kernel-launcher --function scale" + out).rc, 0);
}

TEST_F(cli_exit_codes, artifact_check_and_emit) {
  expect(run("artifact check " + quote(absent().string())), error, "no such directory");
  expect(run("artifact check"), missing, "DIR is required");
  const auto dir = scratch.path() / "artifacts";
  std::filesystem::create_directories(dir);
  EXPECT_EQ(run("artifact check " + quote(dir.string())).rc, 0); // empty: nothing bad
  tunekit_test::write_text(dir / "k-x.json", "not json");
  EXPECT_EQ(run("artifact check " + quote(dir.string())).rc, bad);
  EXPECT_EQ(run("artifact check --json " + quote(dir.string())).rc, bad);

  const std::string out = " --out " + quote((scratch.path() / "emitted").string());
  expect(run("artifact emit --name k --function scale" + out), error,
         "no valid winner-cache entries of function 'scale'");
  fill_cache();
  expect(run("artifact emit --name k --function scale --key-names n,m" + out), error,
         "2 key names (n, m) for the key");
  {
    const tunekit_test::scoped_env env({"TUNEKIT_ARTIFACT_DIR"});
    expect(run("artifact emit --name k --function scale"), error, "no artifact directory");
  }
  const auto file = scratch.path() / "file";
  tunekit_test::write_text(file, "x");
  EXPECT_EQ(run("artifact emit --name k --function scale --out " + quote(file.string())).rc, error);
  expect(run("artifact emit --function scale" + out), missing, "--name is required");
  expect(run("artifact emit --name k" + out), missing, "--function is required");
  EXPECT_EQ(run("artifact emit --name k --function scale" + out).rc, 0);
}

TEST_F(cli_exit_codes, table_check_and_export) {
  expect(run("table check " + quote((scratch.path() / "none.json").string())), error,
         "no such file");
  expect(run("table check"), missing, "FILE is required");
  const auto table = scratch.path() / "table.json";
  tunekit_test::write_text(table, R"({"(1)+mm": [{"BLOCK": 1}]})");
  EXPECT_EQ(run("table check " + quote(table.string())).rc, bad);
  EXPECT_EQ(run("table check --json " + quote(table.string())).rc, bad);

  expect(run("table export"), error, "no valid winner-cache entries in ");
  fill_cache();
  expect(run("table export --function absent"), error,
         "no valid winner-cache entries of function 'absent'");
  expect(run("table export --top-k 0"), invalid_value,
         "--top-k: expected a whole number of choices, at least 1, not '0'");
  expect(run("table export --top-k -3"), invalid_value, "not '-3'");
  expect(run("table export --top-k two"), invalid_value, "not 'two'");
  expect(run("table export --key-format torch"), invalid_value, "torch not in {tunekit,inductor}");
  expect(run("table export --template-hash x"), error, "expected TEMPLATE_ID=HASH");
  expect(run("table export --template-hash tiled=abc"), error,
         "no exported choice has the template 'tiled'");
  const auto dir_as_file = scratch.path() / "dir";
  std::filesystem::create_directories(dir_as_file);
  EXPECT_EQ(run("table export --out " + quote(dir_as_file.string())).rc, error);
  EXPECT_EQ(run("table export --top-k 1 --out " + quote(table.string())).rc, 0);
  EXPECT_EQ(run("table check " + quote(table.string())).rc, 0);
}

#ifdef TUNEKIT_CLI_KERNELS
TEST_F(cli_exit_codes, kernels_list_and_clear) {
  expect(run_without_cache("kernels list"), error, "does not exist (--cache-dir)");
  expect(run_without_cache("kernels clear"), error, "does not exist (--cache-dir)");
  EXPECT_EQ(run("kernels list").rc, 0); // a cache without compiled kernels
  EXPECT_EQ(run("kernels clear").rc, 0);
  expect(run("kernels"), missing, "A subcommand is required");
  expect(run("kernels clear --older-than -1"), invalid_value,
         "--older-than: expected a number of days, 0 or more, not '-1'");
  expect(run("kernels clear --older-than soon"), invalid_value, "not 'soon'");
  EXPECT_EQ(run("kernels clear --older-than 0.5").rc, 0);
}
#endif

TEST_F(cli_exit_codes, device_and_report) {
  EXPECT_EQ(run("device").rc, 0);
  EXPECT_EQ(run("device --json").rc, 0);
  expect(run_without_cache("report"), error, "does not exist (--cache-dir)");
  const tunekit_test::scoped_env env({},
                                     {{"TUNEKIT_PYTHON", (scratch.path() / "no-python").string()}});
  expect(run("report"), error, "cannot run the Python interpreter");
}

} // namespace
