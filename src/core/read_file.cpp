#include "read_file.hpp"

#include <fstream>
#include <sstream>

namespace tunekit::detail {

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

} // namespace tunekit::detail
