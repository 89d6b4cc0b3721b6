// Files of the OS layer (os.hpp): the whole-file reader and the atomic writer.

#include "os.hpp"

#include <tunekit/error.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <system_error>

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

namespace tunekit {

namespace detail {

std::optional<std::string> read_file(const std::filesystem::path &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return std::nullopt; // opens on Linux, but reading it fails
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) {
    return std::nullopt;
  }
  return std::move(buf).str();
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

void remove_stale_temp_files(const std::filesystem::path &dir,
                             const std::filesystem::path &target) {
  if (!first_write_in(dir)) {
    return;
  }
  const std::string prefix = temp_prefix(target);
  const auto now = std::filesystem::file_time_type::clock::now();
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix) ||
        !is_temp_suffix(std::string_view(name).substr(prefix.size()))) {
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
  remove_stale_temp_files(dir_path, path);
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
