#pragma once
// Helpers shared by the core tests: a temporary directory removed at scope exit, environment
// variables set for a scope, a log sink that records what a tuner reports, and a tuner_options
// builder that never reads the process environment (fresh cache directory, fixed hardware, a
// single process, simulated measurer).

#include <tunekit/tunekit.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Readable values in gtest's failure messages (found by argument-dependent lookup).
namespace tunekit {
inline void PrintTo(const config &c, std::ostream *os) { *os << "[" << c.to_string() << "]"; }
inline void PrintTo(const key &k, std::ostream *os) { *os << k.to_string(); }
inline void PrintTo(source s, std::ostream *os) { *os << to_string(s); }
inline void PrintTo(candidate_status s, std::ostream *os) { *os << to_string(s); }
} // namespace tunekit

namespace tunekit_test {

/// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class temp_dir {
public:
  temp_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tunekit-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      throw std::runtime_error("mkdtemp failed for " + tmpl);
    }
    m_path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  temp_dir(const temp_dir &) = delete;
  temp_dir &operator=(const temp_dir &) = delete;

  [[nodiscard]] const std::filesystem::path &path() const noexcept { return m_path; }

private:
  std::filesystem::path m_path;
};

/// The message of the `tunekit::error` that `f` throws, empty when it throws none.
template <class F> std::string error_of(F f) {
  try {
    f();
  } catch (const tunekit::error &e) {
    return e.what();
  }
  return {};
}

/// Environment variables for a scope: each of `cleared` is unset and each of `set` is set; all of
/// them get their previous value (or absence) back at scope exit.
class scoped_env {
public:
  explicit scoped_env(std::vector<std::string> cleared,
                      std::vector<std::pair<std::string, std::string>> set = {}) {
    for (const auto &[name, value] : set) {
      cleared.push_back(name);
    }
    for (const auto &name : cleared) {
      const char *v = std::getenv(name.c_str()); // NOLINT(concurrency-mt-unsafe): tests are serial
      m_saved.emplace_back(name, v != nullptr ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(name.c_str());
    }
    for (const auto &[name, value] : set) {
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~scoped_env() {
    for (auto it = m_saved.rbegin(); it != m_saved.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }
  scoped_env(const scoped_env &) = delete;
  scoped_env &operator=(const scoped_env &) = delete;

private:
  std::vector<std::pair<std::string, std::optional<std::string>>> m_saved;
};

/// Records every line a tuner logs.
class log_capture {
public:
  struct line {
    tunekit::log_level level;
    std::string text;
  };

  [[nodiscard]] tunekit::log_sink sink() const {
    return [state = m_state](tunekit::log_level level, std::string_view text) {
      const std::lock_guard lock(state->mutex);
      state->lines.push_back(line{level, std::string(text)});
    };
  }

  [[nodiscard]] std::vector<line> lines() const {
    const std::lock_guard lock(m_state->mutex);
    return m_state->lines;
  }

  [[nodiscard]] std::vector<std::string> of(tunekit::log_level level) const {
    std::vector<std::string> out;
    for (const auto &l : lines()) {
      if (l.level == level) {
        out.push_back(l.text);
      }
    }
    return out;
  }
  [[nodiscard]] std::vector<std::string> infos() const { return of(tunekit::log_level::info); }
  [[nodiscard]] std::vector<std::string> warnings() const {
    return of(tunekit::log_level::warning);
  }

  /// Number of lines of `level` that contain every one of `parts`.
  [[nodiscard]] std::size_t count(tunekit::log_level level,
                                  std::initializer_list<std::string_view> parts) const {
    std::size_t n = 0;
    for (const auto &text : of(level)) {
      bool all = true;
      for (auto p : parts) {
        all = all && text.find(p) != std::string::npos;
      }
      n += all ? 1 : 0;
    }
    return n;
  }

  /// Every line, one per row, for failure messages.
  [[nodiscard]] std::string dump() const {
    std::string out;
    for (const auto &l : lines()) {
      out += (l.level == tunekit::log_level::info ? "INFO " : "WARNING ") + l.text + "\n";
    }
    return out;
  }

  void clear() {
    const std::lock_guard lock(m_state->mutex);
    m_state->lines.clear();
  }

private:
  struct state {
    std::mutex mutex;
    std::vector<line> lines;
  };
  std::shared_ptr<state> m_state = std::make_shared<state>();
};

/// Hardware that stays the same on every machine the tests run on.
inline tunekit::hardware_info test_hardware() {
  return tunekit::hardware_info{"host", "Test CPU 9000", "x86_64", 8, 1};
}

/// An environment that reads nothing from the process: only `cache_dir` is set.
inline tunekit::environment test_env(const std::filesystem::path &cache_dir) {
  tunekit::environment env;
  env.cache_dir = cache_dir;
  return env;
}

/// Options of a test tuner: the given cache dir, fixed hardware, a single process, the given
/// measurer and log.
inline tunekit::tuner_options options(const std::filesystem::path &cache_dir,
                                      std::shared_ptr<tunekit::measurer> measurer,
                                      const log_capture &log, std::string version = "v1") {
  tunekit::tuner_options o;
  o.version = std::move(version);
  o.measurer = std::move(measurer);
  // A single process (whatever RANK/WORLD_SIZE say) and the capture's sink.
  o.process = tunekit::process_context{test_env(cache_dir), tunekit::launcher_info{}, log.sink()};
  o.hardware = test_hardware();
  return o;
}

/// A cost that depends on the config only: `BLOCK` 512 is fastest, then 1024, 256, 2048.
inline double block_cost(const tunekit::config &c, const tunekit::key & /*k*/) {
  const auto block = c.get_int("BLOCK");
  const double base = block == 512 ? 1.0 : block == 1024 ? 2.0 : block == 256 ? 3.0 : 4.0;
  const auto *warps = c.find("num_warps");
  return base + (warps != nullptr && warps->as_int() == 8 ? 0.5 : 0.0);
}

inline std::string read_text(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::filesystem::path &p, std::string_view text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

/// Every regular file below `dir`.
inline std::vector<std::filesystem::path> files_below(const std::filesystem::path &dir) {
  std::vector<std::filesystem::path> out;
  if (!std::filesystem::exists(dir)) {
    return out;
  }
  for (const auto &e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) {
      out.push_back(e.path());
    }
  }
  return out;
}

} // namespace tunekit_test
