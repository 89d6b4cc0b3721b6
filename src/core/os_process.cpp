// Processes of the OS layer (os.hpp): the line-answering child process and run_and_wait.

#include "os.hpp"

#include <tunekit/error.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ; // NOLINT(readability-redundant-declaration): POSIX, for posix_spawnp

namespace tunekit::detail {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::size_t max_reply_bytes = std::size_t{16} << 20U;
constexpr std::size_t max_stderr_bytes = std::size_t{16} << 10U;

std::string errno_text(int e) { return std::strerror(e); }

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) {
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK); // NOLINT(hicpp-signed-bitwise)
  }
}

int remaining_ms(clock_type::time_point until) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock_type::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1LL << 30U));
}

// "signal SIGSEGV (Segmentation fault)", "exit status 3".
std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char *abbrev = ::sigabbrev_np(sig);
    const char *text = ::strsignal(sig);
    std::string s = "signal ";
    s += abbrev != nullptr ? "SIG" + std::string(abbrev) : std::to_string(sig);
    if (text != nullptr) {
      s += " (" + std::string(text) + ")";
    }
    return s;
  }
  if (WIFEXITED(status)) {
    return "exit status " + std::to_string(WEXITSTATUS(status));
  }
  return "status " + std::to_string(status);
}

// Waits for `pid` until `until`; true with its status when it ended (or cannot be waited for).
bool wait_until(int pid, clock_type::time_point until, int &status) {
  for (;;) {
    const int r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      return true;
    }
    if (r < 0 && errno != EINTR) {
      status = -1; // ECHILD: reaped elsewhere (SIGCHLD ignored)
      return true;
    }
    if (clock_type::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Waits for `pid` to end; its status, or -1 when it cannot be waited for.
int reap(int pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return -1;
    }
  }
  return status;
}

int kill_and_reap(int pid) {
  ::kill(pid, SIGKILL);
  return reap(pid);
}

// The NULL-terminated argument vector posix_spawnp takes, over the strings of `command`.
std::vector<char *> argv_of(const std::vector<std::string> &command) {
  std::vector<char *> argv;
  argv.reserve(command.size() + 1);
  for (const auto &a : command) {
    argv.push_back(const_cast<char *>(a.c_str())); // NOLINT(cppcoreguidelines-pro-type-const-cast)
  }
  argv.push_back(nullptr);
  return argv;
}

} // namespace

int run_and_wait(const std::vector<std::string> &argv) {
  if (argv.empty() || argv.front().empty()) {
    return -1;
  }
  const std::vector<char *> args = argv_of(argv);
  pid_t pid = 0;
  if (::posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) {
    return -1;
  }
  const int status = reap(pid);
  if (status == -1) {
    return -1;
  }
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

child_process::child_process(std::vector<std::string> command, std::size_t stderr_lines)
    : m_command(std::move(command)), m_stderr_lines(stderr_lines) {
  if (m_command.empty() || m_command.front().empty()) {
    throw error("a worker process needs a command (the worker program and its arguments)");
  }
}

child_process::~child_process() { stop(); }

void child_process::close_fds() noexcept {
  if (m_io >= 0) {
    ::close(m_io);
    m_io = -1;
  }
  if (m_err >= 0) {
    ::close(m_err);
    m_err = -1;
  }
}

void child_process::start() {
  int sv[2] = {-1, -1};
  int ep[2] = {-1, -1};
  // NOLINTNEXTLINE(hicpp-signed-bitwise)
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw error("cannot start the worker '" + m_command.front() +
                "': socketpair: " + errno_text(errno));
  }
  if (::pipe2(ep, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    throw error("cannot start the worker '" + m_command.front() + "': pipe: " + errno_text(e));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The socket is the worker's stdin and stdout, the pipe its stderr; every other descriptor of
  // this process is closed in the worker.
  posix_spawn_file_actions_adddup2(&actions, sv[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, sv[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, ep[1], STDERR_FILENO);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const std::vector<char *> argv = argv_of(m_command);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  ::close(ep[1]);
  if (rc != 0) {
    ::close(sv[0]);
    ::close(ep[0]);
    throw error("cannot start the worker '" + m_command.front() + "': " + errno_text(rc));
  }
  m_pid = pid;
  m_io = sv[0];
  m_err = ep[0];
  set_nonblocking(m_io);
  set_nonblocking(m_err);
  m_out.clear();
  m_err_text.clear();
  ++m_starts;
}

void child_process::drain_stderr(bool to_eof) {
  char buf[4096];
  while (m_err >= 0) {
    const ssize_t n = ::read(m_err, buf, sizeof buf);
    if (n > 0) {
      m_err_text.append(buf, static_cast<std::size_t>(n));
      if (m_err_text.size() > max_stderr_bytes) {
        m_err_text.erase(0, m_err_text.size() - max_stderr_bytes);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!to_eof) {
        return;
      }
      // The worker is gone; a child it left behind may still hold the pipe: wait briefly.
      pollfd p{m_err, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) {
        continue;
      }
      return;
    }
    ::close(m_err); // end of file or an error: nothing more to read
    m_err = -1;
  }
}

std::string child_process::stderr_tail() const {
  std::vector<std::string_view> lines;
  std::string_view text = m_err_text;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
      line.remove_suffix(1);
    }
    if (!line.empty()) {
      lines.push_back(line);
    }
  }
  std::string out;
  const std::size_t first = lines.size() > m_stderr_lines ? lines.size() - m_stderr_lines : 0;
  for (std::size_t i = first; i < lines.size(); ++i) {
    out += (out.empty() ? "" : " | ") + std::string(lines[i]);
  }
  return out;
}

std::string child_process::died(clock_type::time_point until) {
  // The worker closed its output: it is ending. Give it until the deadline (at least a second)
  // to do so, then kill it.
  int status = 0;
  const auto limit = std::max(until, clock_type::now() + std::chrono::seconds(1));
  std::string reason;
  if (wait_until(m_pid, limit, status)) {
    reason = status == -1 ? "worker died" : "worker died: " + describe_status(status);
  } else {
    static_cast<void>(kill_and_reap(m_pid));
    reason = "worker closed its output without replying and was killed";
  }
  m_pid = 0;
  drain_stderr(true);
  close_fds();
  const std::string tail = stderr_tail();
  if (!tail.empty()) {
    reason += "; its stderr ended with: " + tail;
  }
  return reason;
}

// Kills the child that ran past `deadline` and says so.
std::string child_process::timed_out(std::chrono::milliseconds deadline) {
  static_cast<void>(kill_and_reap(m_pid));
  m_pid = 0;
  drain_stderr(false);
  close_fds();
  return "exceeded the deadline of " + std::to_string(deadline.count()) + " ms";
}

// Writes all of `data` to the child's stdin, draining its stderr while the socket is full.
void child_process::send(std::string_view data, clock_type::time_point until,
                         std::chrono::milliseconds deadline) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(m_io, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      throw error(died(until)); // EPIPE, ECONNRESET: it is gone
    }
    std::array<pollfd, 2> fds{pollfd{m_io, POLLOUT, 0}, pollfd{m_err, POLLIN, 0}};
    if (::poll(fds.data(), fds.size(), remaining_ms(until)) == 0) {
      throw error(timed_out(deadline));
    }
    drain_stderr(false);
  }
}

std::string child_process::request(std::string_view line, std::chrono::milliseconds deadline) {
  if (line.find('\n') != std::string_view::npos) {
    throw error("a request to a worker process must not contain a newline");
  }
  const auto until = clock_type::now() + deadline;
  if (m_pid > 0) {
    int status = 0;
    if (wait_until(m_pid, clock_type::now(), status)) { // it ended since the last reply
      m_pid = 0;
      close_fds();
    }
  }
  if (m_pid <= 0) {
    start();
  }
  m_out.clear();
  std::string data(line);
  data += '\n';
  send(data, until, deadline);
  for (;;) {
    std::array<pollfd, 2> fds{pollfd{m_io, POLLIN, 0}, pollfd{m_err, POLLIN, 0}};
    const int ready = ::poll(fds.data(), fds.size(), remaining_ms(until));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready < 0) {
      const int e = errno;
      stop(std::chrono::milliseconds(0));
      throw error("waiting for the worker's reply: " + errno_text(e));
    }
    if (ready == 0) {
      throw error(timed_out(deadline));
    }
    if (fds[1].revents != 0) {
      drain_stderr(false);
    }
    if (fds[0].revents == 0) {
      continue;
    }
    char buf[4096];
    const ssize_t n = ::recv(m_io, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
      continue;
    }
    if (n <= 0) {
      throw error(died(until));
    }
    m_out.append(buf, static_cast<std::size_t>(n));
    const auto nl = m_out.find('\n');
    if (nl != std::string::npos) {
      std::string reply = m_out.substr(0, nl);
      m_out.erase(0, nl + 1);
      return reply;
    }
    if (m_out.size() > max_reply_bytes) {
      stop(std::chrono::milliseconds(0));
      throw error("worker wrote more than " + std::to_string(max_reply_bytes >> 20U) +
                  " MiB without ending its reply line");
    }
  }
}

void child_process::stop(std::chrono::milliseconds grace) {
  if (m_pid <= 0) {
    close_fds();
    return;
  }
  if (m_io >= 0) {
    ::shutdown(m_io, SHUT_RDWR); // the worker reads end of file and ends
  }
  int status = 0;
  if (!wait_until(m_pid, clock_type::now() + grace, status)) {
    static_cast<void>(kill_and_reap(m_pid));
  }
  m_pid = 0;
  close_fds();
}

} // namespace tunekit::detail
