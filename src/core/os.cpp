// Files of the OS layer (os.hpp): the whole-file reader and the atomic writer.

#include "os.hpp"

#include <tunekit/error.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <system_error>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tunekit {

namespace detail {

namespace {

void say(std::string *why, std::string text) {
  if (why != nullptr) {
    *why = std::move(text);
  }
}

const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISCHR(mode)) {
    return "a character device";
  }
  if (S_ISBLK(mode)) {
    return "a block device";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  return "a special file";
}

struct fd_closer {
  int fd;
  ~fd_closer() { ::close(fd); }
};

} // namespace

std::optional<std::uint64_t> parse_file_size(std::string_view text) {
  std::uint64_t n = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    const auto d = static_cast<std::uint64_t>(text[i] - '0');
    if (n > (std::numeric_limits<std::uint64_t>::max() - d) / 10) {
      return std::nullopt;
    }
    n = n * 10 + d;
  }
  if (i == 0) {
    return std::nullopt;
  }
  std::string_view unit = text.substr(i);
  int shift = 0;
  if (!unit.empty()) {
    const std::string_view units = "KMGT";
    const auto at =
        units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
    if (at == std::string_view::npos) {
      return std::nullopt;
    }
    shift = 10 * (static_cast<int>(at) + 1);
    unit.remove_prefix(1);
    // "K", "KB", "KiB", in either case: all mean 1024 bytes.
    if (!unit.empty() && (unit[0] == 'i' || unit[0] == 'I')) {
      unit.remove_prefix(1);
      if (unit.empty()) {
        return std::nullopt;
      }
    }
    if (unit != "" && unit != "B" && unit != "b") {
      return std::nullopt;
    }
  }
  if (shift > 0 && n > (std::numeric_limits<std::uint64_t>::max() >> shift)) {
    return std::nullopt;
  }
  return n << shift;
}

std::optional<std::uint64_t> max_file_size(std::string *why) {
  const char *v = std::getenv("TUNEKIT_MAX_FILE_SIZE");
  if (v == nullptr || *v == '\0') {
    return default_max_file_size;
  }
  const auto n = parse_file_size(v);
  if (!n) {
    say(why, std::string("cannot be read: TUNEKIT_MAX_FILE_SIZE='") + v +
                 "' is not a size (a number of bytes, with K, M, G or T for KiB, MiB, GiB, TiB; "
                 "0: no limit)");
  }
  return n;
}

std::optional<std::string> read_file(const std::filesystem::path &path, std::string *why) {
  const auto limit = max_file_size(why);
  if (!limit) {
    return std::nullopt;
  }
  return read_file(path, why, *limit);
}

std::optional<std::string> read_file(const std::filesystem::path &path, std::string *why,
                                     std::uint64_t limit_bytes) {
  const std::optional<std::uint64_t> limit = limit_bytes;
  // Without O_NONBLOCK, opening a FIFO waits for a writer; the type is checked on the open file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    say(why, std::string("cannot be opened: ") + std::strerror(errno));
    return std::nullopt;
  }
  const fd_closer closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    say(why, std::string("cannot be read: ") + std::strerror(errno));
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    say(why, std::string("is ") + file_kind(st.st_mode) + ", not a regular file; it is not read");
    return std::nullopt;
  }
  auto too_large = [&](std::uint64_t size, bool at_least) {
    say(why, "is " + std::string(at_least ? "over " : "") + std::to_string(size) +
                 " bytes, larger than the limit of " + std::to_string(*limit) +
                 " bytes (TUNEKIT_MAX_FILE_SIZE); it is not read");
  };
  const bool limited = *limit > 0;
  if (limited && static_cast<std::uint64_t>(st.st_size) > *limit) {
    too_large(static_cast<std::uint64_t>(st.st_size), false);
    return std::nullopt;
  }
  // Read to the end, whatever the size says (/proc files say 0), never past the limit.
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      say(why, std::string("cannot be read: ") + std::strerror(errno));
      return std::nullopt;
    }
    if (n == 0) {
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
    if (limited && out.size() > *limit) {
      too_large(*limit, true);
      return std::nullopt;
    }
  }
  return out;
}

} // namespace detail

namespace {
// Temporary files are named `.<target>.tmp.<suffix>`: 16 random hex digits now, `<pid>.<counter>`
// from older versions. One older than this is left by a killed writer (a live one writes a file in
// well under a second) and is removed by the first write into its directory of a later process.
constexpr auto stale_temp_age = std::chrono::minutes(10);

std::string temp_prefix(const std::filesystem::path &target) {
  // Appended in steps: GCC 12 warns falsely (-Wrestrict) on "." + name + ".tmp." once inlined.
  std::string prefix = ".";
  prefix += target.filename().string();
  prefix += ".tmp.";
  return prefix;
}

bool is_temp_suffix(std::string_view suffix) {
  return !suffix.empty() && std::all_of(suffix.begin(), suffix.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '.';
  });
}

// 64 random bits from the kernel, so that processes with equal PIDs (other PID namespaces, other
// hosts on a shared file system) and forked children never pick the same name.
std::uint64_t random_bits() {
  std::uint64_t r = 0;
  auto *p = reinterpret_cast<unsigned char *>(&r);
  std::size_t got = 0;
  while (got < sizeof r) {
    const ssize_t n = ::getrandom(p + got, sizeof r - got, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  if (got < sizeof r) {
    std::random_device rd;
    r = (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  return r;
}

// A sweep reads every entry of the directory, and the compile cache's holds thousands, so each
// directory is swept at its first write in this process only: the files it looks for are left by
// writers that died, almost always in an earlier process.
bool first_write_in(const std::filesystem::path &dir) {
  static std::mutex mutex;
  static std::set<std::string> swept;
  const std::lock_guard lock(mutex);
  return swept.insert(dir.lexically_normal().string()).second;
}

// Whether `name` is a temp file's name: `.<target>.tmp.<suffix>`, of any target.
bool is_temp_name(std::string_view name) {
  const auto at = name.rfind(".tmp.");
  return name.size() > 1 && name[0] == '.' && at != std::string_view::npos && at > 1 &&
         is_temp_suffix(name.substr(at + 5));
}

// Removes the temp files of every target in `dir` that dead writers left.
void remove_stale_temp_files(const std::filesystem::path &dir) {
  if (!first_write_in(dir)) {
    return;
  }
  const auto now = std::filesystem::file_time_type::clock::now();
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (!is_temp_name(it->path().filename().string())) {
      continue;
    }
    std::error_code ec2;
    if (!it->is_regular_file(ec2) || it->is_symlink(ec2)) {
      continue;
    }
    const auto mtime = it->last_write_time(ec2);
    if (!ec2 && now - mtime > stale_temp_age) {
      std::filesystem::remove(it->path(), ec2); // best effort: another writer may clean it first
    }
  }
}
} // namespace

void detail::write_file_atomically(const std::filesystem::path &path, std::string_view text) {
  std::error_code ec;
  // A bare file name ("t.json") lives in the working directory.
  const std::filesystem::path dir_path =
      path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::filesystem::create_directories(dir_path, ec);
  if (ec) {
    throw error("cannot create directory " + dir_path.string() + ": " + ec.message());
  }
  remove_stale_temp_files(dir_path);
  std::filesystem::path tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(random_bits()));
    tmp = dir_path / (temp_prefix(path) + suffix);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && (errno != EEXIST || attempt >= 100)) {
      throw error("cannot write " + tmp.string() + ": " + std::strerror(errno));
    }
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      const std::string why = std::strerror(errno);
      ::close(fd);
      std::filesystem::remove(tmp, ec);
      throw error("cannot write " + tmp.string() + ": " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int sync_errno = errno;
  if (::close(fd) != 0 || !synced) {
    const std::string why = std::strerror(synced ? errno : sync_errno);
    std::filesystem::remove(tmp, ec);
    throw error("cannot flush " + tmp.string() + ": " + why);
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw error("cannot rename " + tmp.string() + " to " + path.string() + ": " + why);
  }
  // Make the rename itself durable (best effort: some file systems refuse fsync on directories).
  const int dir = ::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    static_cast<void>(::fsync(dir));
    ::close(dir);
  }
}

} // namespace tunekit
