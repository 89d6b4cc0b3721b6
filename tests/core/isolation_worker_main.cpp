// A worker for the isolated-measurement tests (isolation_test.cpp), host only. It speaks the
// protocol of tunekit/isolation.hpp: one JSON request per line on stdin, one reply per line on
// stdout. The config's "mode" says what it does with the candidate:
//   ok       reply the policy's runs of `cost(config) * request.scale` ms (scale default 1)
//   abort    abort()                 segv     raise(SIGSEGV)
//   spin     loop forever            exit     exit with status 3
//   garbage  reply a line that is not JSON
//   error    reply {"error": ...}    fatal    reply {"error": ..., "fatal": true} and exit
// Each mode other than ok first writes a line about it to stderr. A request {"crash": true} means
// segv whatever the mode. Ends at end of input.

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

namespace {

// Fastest at BLOCK=512, as the in-process comparison in the tests expects.
double cost(const nlohmann::json &config) {
  const auto block = config.at("BLOCK").get<long>();
  return block == 512 ? 1.0 : block == 1024 ? 2.0 : block == 256 ? 3.0 : 4.0;
}

} // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto req = nlohmann::json::parse(line);
    const auto &config = req.at("config");
    const auto &extra = req.at("request");
    // {"crash": true} in the request: this process only (a rank of an MPI test) crashes.
    const bool crash = extra.is_object() && extra.value("crash", false);
    const std::string mode = crash ? "segv" : config.value("mode", "ok");
    if (mode != "ok") {
      std::cerr << "isolation worker: candidate BLOCK=" << config.at("BLOCK") << " mode " << mode
                << std::endl;
    }
    if (mode == "abort") {
      std::abort();
    } else if (mode == "segv") {
      std::raise(SIGSEGV);
    } else if (mode == "spin") {
      volatile unsigned long spins = 0;
      for (;;) {
        spins = spins + 1;
      }
    } else if (mode == "exit") {
      std::exit(3);
    } else if (mode == "garbage") {
      std::cout << "this is not json" << std::endl;
      continue;
    } else if (mode == "error" || mode == "fatal") {
      std::cout << nlohmann::json{{"error",
                                   "the kernel rejected BLOCK=" + config.at("BLOCK").dump()},
                                  {"fatal", mode == "fatal"}}
                       .dump()
                << std::endl;
      if (mode == "fatal") {
        return 0;
      }
      continue;
    }
    const double scale = extra.is_object() ? extra.value("scale", 1.0) : 1.0;
    const int runs = req.at("policy").at("runs").get<int>();
    nlohmann::json times = nlohmann::json::array();
    for (int i = 0; i < runs; ++i) {
      times.push_back(cost(config) * scale);
    }
    std::cout << nlohmann::json{{"times_ms", times}}.dump() << std::endl;
  }
  return 0;
}
