#pragma once
// Where a tuner's and a contextual tuner's messages go when several ranks run: verbose lines reach
// the log sink (the console) only from local rank 0, warnings from every rank, and every rank keeps
// all of its lines in `<log_dir>/rank-<rank>.log`. With one rank, lines go to the sink only (the
// contextual tuner still keeps its file: `always_file`).

#include <tunekit/launcher.hpp>
#include <tunekit/log.hpp>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <string_view>

namespace tunekit::detail {

class rank_log final {
public:
  /// `owner` prefixes every file line (e.g. "tuner 'scale'"); `rank` names the file.
  rank_log(log_sink sink, launcher_info launcher, std::filesystem::path dir, std::string owner,
           bool always_file = false);

  /// A verbose line: the sink on local rank 0 (prefixed by the rank when there are several) and
  /// the rank's file.
  void info(const std::string &msg) const;
  /// A warning: the sink on every rank, and the rank's file.
  void warn(const std::string &msg) const;
  /// A line for the rank's file only (when the file is kept).
  void file(std::string_view text) const;
  /// Whether lines go to the rank's file.
  [[nodiscard]] bool keeps_file() const noexcept {
    return m_always_file || m_launcher.multi_rank();
  }
  /// The rank's file: `<dir>/rank-<rank>.log`.
  [[nodiscard]] std::filesystem::path path() const;
  [[nodiscard]] const launcher_info &launcher() const noexcept { return m_launcher; }
  /// Another rank for the file name (the contextual tuner names it after its communicator's rank).
  void set_rank(int rank) noexcept { m_launcher.rank = rank; }

private:
  log_sink m_sink;
  launcher_info m_launcher;
  std::filesystem::path m_dir;
  std::string m_owner;
  bool m_always_file;
  mutable std::mutex m_mutex;
  mutable std::ofstream m_file; // opened on first use
  mutable bool m_failed = false;
};

} // namespace tunekit::detail
