#pragma once
// The operating-system layer (private to tunekit): the one place that reads a whole file, writes
// one atomically, starts a child process that answers line by line, and runs a command to its end.
// The readers of cache entries, artifacts and lookup tables, the isolated measurer, the compile
// pool and the command-line tool all come through here. Files: os.cpp; processes: os_process.cpp.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::detail {

/// The size limit of a file tunekit reads when `TUNEKIT_MAX_FILE_SIZE` is not set.
inline constexpr std::uint64_t default_max_file_size = std::uint64_t{256} << 20;

/// `TUNEKIT_MAX_FILE_SIZE` in bytes ("268435456", "256M", "1GiB"; 0: no limit), the default when
/// it is unset; nullopt when it is not a size, with the reason in `why`.
[[nodiscard]] std::optional<std::uint64_t> max_file_size(std::string *why = nullptr);
/// A size: digits, then optionally K, M, G or T (powers of 1024), optionally followed by B or
/// iB. nullopt for anything else, or past 2^64 - 1.
[[nodiscard]] std::optional<std::uint64_t> parse_file_size(std::string_view text);

/// The bytes of the regular file `path`, or nullopt, with the reason in `why` (a phrase that
/// follows the path: "cannot be opened: No such file or directory", "is a FIFO, not a regular
/// file; it is not read", "is 300000000 bytes, larger than the limit of ..."): missing, no
/// permission, an I/O error, not a regular file (a directory, FIFO, device or socket, which are
/// never opened for blocking reads), or larger than `max_file_size()`.
[[nodiscard]] std::optional<std::string> read_file(const std::filesystem::path &path,
                                                   std::string *why = nullptr);
/// `read_file` with the size limit given (0: none) instead of `max_file_size()`: for the files
/// of the system (`/proc/cpuinfo`) that no setting should make unreadable.
[[nodiscard]] std::optional<std::string> read_file(const std::filesystem::path &path,
                                                   std::string *why, std::uint64_t limit_bytes);

/// Writes `text` to `path` atomically: a temp file in the same directory (named
/// `.<name>.tmp.<16 hex digits>`), flushed, then renamed over `path`. Creates the directory;
/// the first write into a directory in this process removes the temp files (of every target) that
/// dead writers left there over ten minutes ago. Throws `tunekit::error` naming the path on
/// failure.
void write_file_atomically(const std::filesystem::path &path, std::string_view text);

/// Runs `argv` (its program looked up in PATH when it has no '/') with this process's environment
/// and standard streams, waits for it, and returns its exit status: 128 + the signal when a signal
/// ended it, -1 when it could not be started or waited for.
[[nodiscard]] int run_and_wait(const std::vector<std::string> &argv);

/// A child process that answers one line with one line on its stdin and stdout (the isolation
/// worker, the compile worker). Started at the first request and again at the first request after
/// it died or was stopped; its stderr is kept for the reason when it dies. Every other descriptor
/// of this process is closed in the child, and it starts with no signal blocked and SIGPIPE at its
/// default. Not thread-safe: one request at a time.
class child_process final {
public:
  /// `command`: the program (looked up in PATH when it has no '/') and its arguments;
  /// `stderr_lines`: how many last lines of its stderr a death's reason quotes. Throws
  /// `tunekit::error` when the command is empty.
  explicit child_process(std::vector<std::string> command, std::size_t stderr_lines = 8);
  /// Stops the child (see `stop`).
  ~child_process();
  child_process(const child_process &) = delete;
  child_process &operator=(const child_process &) = delete;

  /// Sends `line` (without its newline; it must contain none) and returns the reply line, without
  /// its newline. Throws `tunekit::error` when the child cannot be started, died before replying
  /// ("worker died: signal SIGSEGV (Segmentation fault)", "worker died: exit status 3", then the
  /// last lines of its stderr), or did not reply within `deadline` ("exceeded the deadline of
  /// 2000 ms"; the child is killed). After any of these the next request starts a new child.
  [[nodiscard]] std::string request(std::string_view line, std::chrono::milliseconds deadline);

  /// Ends the child: closes its stdin, gives it `grace` to exit, then kills it (SIGKILL), and
  /// reaps it. Nothing when none is running.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(500));

  /// Whether a child is running now (started and not known to have ended).
  [[nodiscard]] bool running() const noexcept { return m_pid > 0; }
  /// Its process id, or 0 when none runs.
  [[nodiscard]] int pid() const noexcept { return m_pid; }
  /// Children started so far (1 + restarts).
  [[nodiscard]] std::size_t starts() const noexcept { return m_starts; }

private:
  void start();
  void send(std::string_view data, std::chrono::steady_clock::time_point until,
            std::chrono::milliseconds deadline);
  [[nodiscard]] std::string died(std::chrono::steady_clock::time_point until);
  [[nodiscard]] std::string timed_out(std::chrono::milliseconds deadline);
  void drain_stderr(bool to_eof);
  void close_fds() noexcept;
  [[nodiscard]] std::string stderr_tail() const;

  std::vector<std::string> m_command;
  std::size_t m_stderr_lines;
  int m_pid = 0;
  int m_io = -1;  // our end of the child's stdin/stdout socket
  int m_err = -1; // read end of the child's stderr pipe
  std::string m_out;
  std::string m_err_text;
  std::size_t m_starts = 0;
};

} // namespace tunekit::detail
