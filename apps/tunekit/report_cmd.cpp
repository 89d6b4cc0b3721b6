// `tunekit report`: the HTML report of a winner cache. The page is made by the Python package's
// `tunekit.report` module (plotly), so this command runs `python3 -m tunekit.report` (the
// interpreter `TUNEKIT_PYTHON` names, else `python3` on PATH) with the cache directory this
// command resolved, and says how to install the package when that interpreter lacks it.

#include "commands.hpp"

#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>

extern char **environ; // NOLINT(readability-redundant-declaration): POSIX, for posix_spawnp

namespace tunekit::cli {

namespace {

// Runs `argv` (looked up on PATH) and returns its exit code; -1 when it could not be started.
int run(const std::vector<std::string> &argv) {
  std::vector<char *> args;
  args.reserve(argv.size() + 1);
  for (const auto &a : argv) {
    args.push_back(const_cast<char *>(a.c_str())); // NOLINT(cppcoreguidelines-pro-type-const-cast)
  }
  args.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) {
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return -1;
    }
  }
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

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
  const std::string cache_dir =
      g.cache_dir.empty() ? environment::from_env().cache_dir.string() : g.cache_dir;

  const int found = run({python, "-c", probe});
  if (found == -1 || found == 127) {
    throw error("cannot run the Python interpreter '" + python +
                "' (set TUNEKIT_PYTHON to the interpreter that has the tunekit package)");
  }
  if (found != 0) {
    throw error("the report needs the tunekit Python package (with plotly) in '" + python +
                "': pip install tunekit (from a checkout of tunekit: pip install .), or set "
                "TUNEKIT_PYTHON to an interpreter that has it");
  }
  std::vector<std::string> argv{python,  "-m", "tunekit.report", "--cache-dir", cache_dir,
                                "--out", o.out};
  for (const auto &f : o.functions) {
    argv.emplace_back("--function");
    argv.push_back(f);
  }
  std::cout.flush();
  const int rc = run(argv);
  if (rc < 0) {
    throw error("cannot run '" + python + " -m tunekit.report'");
  }
  return rc;
}

} // namespace tunekit::cli
