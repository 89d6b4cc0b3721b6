#include <tunekit/environment.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace tunekit {

namespace {
std::string get(const char *name) {
  const char *v = std::getenv(name); // NOLINT(concurrency-mt-unsafe): read once, at tuner build
  return v == nullptr ? std::string() : std::string(v);
}

bool flag(const char *name) {
  std::string v = get(name);
  std::transform(v.begin(), v.end(), v.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return v == "1" || v == "true" || v == "yes" || v == "on";
}
} // namespace

environment environment::from_env() {
  environment e;
  if (auto dir = get("TUNEKIT_CACHE_DIR"); !dir.empty()) {
    e.cache_dir = dir;
  } else if (auto xdg = get("XDG_CACHE_HOME"); !xdg.empty()) {
    e.cache_dir = std::filesystem::path(xdg) / "tunekit";
  } else if (auto home = get("HOME"); !home.empty()) {
    e.cache_dir = std::filesystem::path(home) / ".cache" / "tunekit";
  } else {
    e.cache_dir = std::filesystem::temp_directory_path() / "tunekit-cache";
  }
  e.always_tune = flag("TUNEKIT_ALWAYS_TUNE");
  e.version_check = flag("TUNEKIT_VERSION_CHECK");
  e.verbose = flag("TUNEKIT_VERBOSE");
  e.progress = flag("TUNEKIT_PROGRESS");
  e.artifact_dir = get("TUNEKIT_ARTIFACT_DIR");
  e.lookup_table = get("TUNEKIT_LOOKUP_TABLE");
  if (auto dir = get("TUNEKIT_LOG_DIR"); !dir.empty()) {
    e.log_dir = dir;
  }
  e.autotune = get("TUNEKIT_AUTOTUNE");
  return e;
}

} // namespace tunekit
