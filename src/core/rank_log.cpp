#include "rank_log.hpp"

#include "timestamp.hpp"

#include <system_error>
#include <utility>

namespace tunekit::detail {

rank_log::rank_log(log_sink sink, launcher_info launcher, std::filesystem::path dir,
                   std::string owner, bool always_file)
    : m_sink(std::move(sink)), m_launcher(launcher), m_dir(std::move(dir)),
      m_owner(std::move(owner)), m_always_file(always_file) {}

std::filesystem::path rank_log::path() const {
  return m_dir / ("rank-" + std::to_string(m_launcher.rank) + ".log");
}

void rank_log::info(const std::string &msg) const {
  if (!m_launcher.multi_rank()) {
    m_sink(log_level::info, msg);
  } else if (m_launcher.local_rank == 0) {
    m_sink(log_level::info, "rank " + std::to_string(m_launcher.rank) + ": " + msg);
  }
  file(msg);
}

void rank_log::warn(const std::string &msg) const {
  m_sink(log_level::warning,
         m_launcher.multi_rank() ? "rank " + std::to_string(m_launcher.rank) + ": " + msg : msg);
  file("WARNING " + msg);
}

void rank_log::file(std::string_view text) const {
  if (!keeps_file()) {
    return;
  }
  const std::lock_guard lock(m_mutex);
  if (m_failed) {
    return;
  }
  if (!m_file.is_open()) {
    std::error_code ec;
    std::filesystem::create_directories(m_dir, ec);
    m_file.open(path(), std::ios::app);
    if (!m_file) {
      m_failed = true;
      m_sink(log_level::warning,
             m_owner + ": cannot write " + path().string() + "; per-rank log lines are dropped");
      return;
    }
  }
  m_file << utc_timestamp() << ' ' << m_owner << ' ' << text << '\n';
  m_file.flush();
}

} // namespace tunekit::detail
