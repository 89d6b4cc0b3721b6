#include "json_io.hpp"
#include "os.hpp"
#include "sha256.hpp"

#include <tunekit/hardware.hpp>
#include <tunekit/version.hpp>

#include <sstream>
#include <string>
#include <thread>

namespace tunekit {

const char *version() noexcept { return TUNEKIT_VERSION_STRING; }

std::string hardware_info::digest() const {
  return detail::sha256_hex(detail::dump(detail::to_json(*this)));
}

std::string hardware_info::to_string() const {
  return name + " (" + arch + ", " + std::to_string(units) + " units, " + std::to_string(count) +
         (count == 1 ? " device)" : " devices)");
}

namespace {
std::string cpu_model() {
  std::istringstream in(
      detail::read_file("/proc/cpuinfo", nullptr, std::uint64_t{16} << 20).value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    for (const char *tag : {"model name", "Hardware", "cpu model"}) {
      if (line.rfind(tag, 0) == 0) {
        if (auto colon = line.find(':'); colon != std::string::npos) {
          auto start = line.find_first_not_of(" \t", colon + 1);
          return start == std::string::npos ? std::string() : line.substr(start);
        }
      }
    }
  }
  return "unknown CPU";
}

const char *cpu_arch() {
#if defined(__x86_64__) || defined(_M_X64)
  return "x86_64";
#elif defined(__aarch64__) || defined(_M_ARM64)
  return "aarch64";
#elif defined(__powerpc64__)
  return "ppc64";
#else
  return "unknown";
#endif
}
} // namespace

hardware_info host_hardware() {
  hardware_info hw;
  hw.kind = "host";
  hw.name = cpu_model();
  hw.arch = cpu_arch();
  hw.units = static_cast<std::int64_t>(std::thread::hardware_concurrency());
  hw.count = 1;
  return hw;
}

dependencies core_dependencies() {
  dependencies d;
  d["tunekit"] = version();
#if defined(__clang__)
  d["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
  d["compiler"] = "gcc " __VERSION__;
#elif defined(_MSC_VER)
  d["compiler"] = "msvc " + std::to_string(_MSC_VER);
#else
  d["compiler"] = "unknown";
#endif
  return d;
}

std::string dependency_diff(const dependencies &recorded, const dependencies &now) {
  std::string diff;
  auto add = [&](const std::string &dep, const std::string &from, const std::string &to) {
    diff += (diff.empty() ? "" : ", ") + dep + " " + from + " -> " + to;
  };
  for (const auto &[dep, ver] : now) {
    const auto found = recorded.find(dep);
    const std::string old = found == recorded.end() ? "none" : found->second;
    if (old != ver) {
      add(dep, old, ver);
    }
  }
  for (const auto &[dep, ver] : recorded) {
    if (!now.contains(dep)) {
      add(dep, ver, "none");
    }
  }
  return diff;
}

} // namespace tunekit
