#pragma once
// Running the built `tunekit` command from a test (cli_test.cpp, kernels_cli_test.cpp).

#include "test_support.hpp"

#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>

namespace tunekit_test {

/// Exit code, stdout and stderr of one run of the command.
struct cli_result {
  int rc = -1;
  std::string out;
  std::string err;
};

/// `s` quoted for the shell.
inline std::string shell_quote(const std::string &s) {
  std::string q = "'";
  for (char c : s) {
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return q + "'";
}

/// Runs `tunekit [--cache-dir <cache>] args...` (no --cache-dir when `cache` is empty); its stderr
/// goes through `err_file`.
inline cli_result run_cli(const std::string &args, const std::filesystem::path &cache,
                          const std::filesystem::path &err_file) {
  const std::string cmd = shell_quote(TUNEKIT_CLI) +
                          (cache.empty() ? "" : " --cache-dir " + shell_quote(cache.string())) +
                          " " + args + " 2>" + shell_quote(err_file.string());
  cli_result r;
  FILE *p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    return r;
  }
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
    r.out.append(buf, n);
  }
  const int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_text(err_file);
  return r;
}

} // namespace tunekit_test
