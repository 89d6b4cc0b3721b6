// `tunekit report`: the HTML report of a winner cache. The page is made by the Python package's
// `tunekit.report` module (plotly; it reads the entries through the package's extension over the
// core), so this command runs `python3 -m tunekit.report` (the interpreter `TUNEKIT_PYTHON` names,
// else `python3` on PATH; `python -m tunekit` sets `TUNEKIT_PYTHON` to its own interpreter when it
// is unset) with the cache directory this command resolved, and says how to install the package
// when that interpreter lacks it. The process is started by the core's OS layer.

#include "commands.hpp"
#include "common.hpp"
#include "os.hpp"

#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace tunekit::cli {

namespace {

// Exits 3 (after printing why) when `tunekit.report` cannot be imported.
constexpr const char *probe = "import sys\n"
                              "try:\n"
                              "    import tunekit.report\n"
                              "except ImportError as e:\n"
                              "    print('tunekit report: ' + str(e), file=sys.stderr)\n"
                              "    sys.exit(3)\n";

} // namespace

int report(const global_options &g, const report_options &o) {
  const char *env_python = std::getenv("TUNEKIT_PYTHON"); // NOLINT(concurrency-mt-unsafe)
  const std::string python =
      env_python != nullptr && *env_python != '\0' ? env_python : std::string("python3");
  const std::string cache_dir = existing_cache_root(g).string();

  const int found = detail::run_and_wait({python, "-c", probe});
  if (found == -1 || found == 127) {
    throw error("cannot run the Python interpreter '" + python +
                "' (set TUNEKIT_PYTHON to the interpreter that has the tunekit package)");
  }
  if (found != 0) {
    throw error("the report needs the tunekit Python package (with plotly) in '" + python +
                "': pip install tunekit-autotune (from a checkout of tunekit: pip install .), or "
                "set TUNEKIT_PYTHON to an interpreter that has it");
  }
  std::vector<std::string> argv{python,  "-m", "tunekit.report", "--cache-dir", cache_dir,
                                "--out", o.out};
  for (const auto &f : o.functions) {
    argv.emplace_back("--function");
    argv.push_back(f);
  }
  for (const auto &e : o.flop) {
    argv.emplace_back("--flop");
    argv.push_back(e);
  }
  for (const auto &e : o.bytes) {
    argv.emplace_back("--bytes");
    argv.push_back(e);
  }
  std::cout.flush();
  const int rc = detail::run_and_wait(argv);
  if (rc < 0) {
    throw error("cannot run '" + python + " -m tunekit.report'");
  }
  return rc;
}

} // namespace tunekit::cli
