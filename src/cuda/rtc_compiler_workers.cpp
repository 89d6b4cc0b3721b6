#include "rtc_compiler.hpp"

#include <tunekit/error.hpp>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <utility>

#include <stdlib.h>

namespace tunekit::cuda::rtc_detail {

namespace {

// A private directory for compile workers' binaries.
std::filesystem::path make_scratch_dir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "tunekit-compile-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw error("compile worker: cannot make a directory " + pattern + ": " + std::strerror(errno));
  }
  return pattern;
}

class nvrtc_workers final : public compiler {
public:
  nvrtc_workers(nvrtc_source source, std::vector<std::string> command,
                std::chrono::milliseconds deadline)
      : m_source(std::move(source)), m_command(std::move(command)), m_deadline(deadline) {}

  nvrtc_workers(const nvrtc_workers &) = delete;
  nvrtc_workers &operator=(const nvrtc_workers &) = delete;

  ~nvrtc_workers() override {
    m_idle.clear();
    if (!m_scratch.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(m_scratch, ec);
    }
  }

  // One worker per compile thread at a time: taken from the idle ones (or started), given back
  // after the compile whatever its outcome (a dead worker starts again at its next request).
  [[nodiscard]] nvrtc_output compile(const nvrtc_job &job) override {
    std::unique_ptr<tunekit::detail::child_process> w;
    std::filesystem::path dir;
    {
      const std::lock_guard lock(m_mutex);
      if (!m_idle.empty()) {
        w = std::move(m_idle.back());
        m_idle.pop_back();
      }
      if (m_scratch.empty()) {
        m_scratch = make_scratch_dir();
      }
      dir = m_scratch;
    }
    if (!w) {
      w = std::make_unique<tunekit::detail::child_process>(m_command);
    }
    const give_back back(*this, w);
    const auto out = dir / (std::to_string(m_next.fetch_add(1)) + ".bin");
    return compile_in_worker(*w, m_source, job, out, m_deadline);
  }

private:
  struct give_back {
    nvrtc_workers &self;
    std::unique_ptr<tunekit::detail::child_process> &worker;
    give_back(nvrtc_workers &s, std::unique_ptr<tunekit::detail::child_process> &w)
        : self(s), worker(w) {}
    give_back(const give_back &) = delete;
    give_back &operator=(const give_back &) = delete;
    ~give_back() {
      const std::lock_guard lock(self.m_mutex);
      self.m_idle.push_back(std::move(worker));
    }
  };

  nvrtc_source m_source;
  std::vector<std::string> m_command;
  std::chrono::milliseconds m_deadline;
  std::atomic<std::uint64_t> m_next{0};
  std::mutex m_mutex;
  // Workers not in use, and the directory where they leave binaries (made at the first compile,
  // removed with the compiler).
  std::vector<std::unique_ptr<tunekit::detail::child_process>> m_idle;
  std::filesystem::path m_scratch;
};

} // namespace

std::unique_ptr<compiler> make_worker_compiler(nvrtc_source source,
                                               std::vector<std::string> command,
                                               std::chrono::milliseconds deadline) {
  return std::make_unique<nvrtc_workers>(std::move(source), std::move(command), deadline);
}

} // namespace tunekit::cuda::rtc_detail
