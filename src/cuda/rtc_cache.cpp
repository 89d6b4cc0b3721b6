#include <tunekit/cuda/rtc_cache.hpp>
#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>
#include <tunekit/winner_cache.hpp>

#include "../core/json_io.hpp"
#include "../core/os.hpp"
#include "../core/sha256.hpp"
#include "../core/timestamp.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>

namespace tunekit::cuda {

namespace {

constexpr std::string_view binary_schema = "tunekit.kernel_binary/1";

bool is_cubin_target(std::string_view target) { return target.starts_with("sm_"); }

// The header line and the payload of a stored binary; throws `tunekit::error` saying what is
// wrong with the file.
struct parsed_file {
  tunekit::detail::json header;
  std::string_view payload;
};

parsed_file parse_file(std::string_view bytes) {
  const auto eol = bytes.find('\n');
  if (eol == std::string_view::npos) {
    throw error("no header line (truncated file?)");
  }
  parsed_file f;
  try {
    f.header = tunekit::detail::parse_json(bytes.substr(0, eol));
  } catch (const error &e) {
    throw error(std::string("the header is not JSON: ") + e.what());
  }
  if (!f.header.is_object()) {
    throw error("the header is not a JSON object");
  }
  if (f.header.value("schema", std::string()) != binary_schema) {
    throw error("not a " + std::string(binary_schema) + " file");
  }
  for (const char *field :
       {"key", "target", "lowered_name", "sha256", "description", "nvrtc", "created"}) {
    if (!f.header.contains(field) || !f.header[field].is_string()) {
      throw error(std::string("header field '") + field + "' is missing or not a string");
    }
  }
  if (!f.header.contains("bytes") || !f.header["bytes"].is_number_unsigned()) {
    throw error("header field 'bytes' is missing or not a size");
  }
  f.payload = bytes.substr(eol + 1);
  return f;
}

} // namespace

kernel_cache::kernel_cache(std::filesystem::path root, log_sink log)
    : m_dir(std::move(root) / "kernels"), m_log(log ? std::move(log) : default_log_sink()) {}

kernel_cache kernel_cache::from_env(log_sink log) {
  return kernel_cache(environment::from_env().cache_dir, std::move(log));
}

std::filesystem::path kernel_cache::path_of(std::string_view key, std::string_view target) const {
  return m_dir / (std::string(key) + (is_cubin_target(target) ? ".cubin" : ".ptx"));
}

load_result<kernel_binary> kernel_cache::load(std::string_view key, std::string_view target) const {
  load_result<kernel_binary> out;
  out.path = path_of(key, target);
  std::error_code ec;
  if (!std::filesystem::exists(out.path, ec)) {
    return out;
  }
  std::string why;
  const auto bytes = tunekit::detail::read_file(out.path, &why);
  if (!bytes) {
    out.status = load_status::unreadable;
    out.detail = why;
  } else {
    try {
      const parsed_file f = parse_file(*bytes);
      const auto size = f.header["bytes"].get<std::size_t>();
      if (f.header["key"].get<std::string>() != key) {
        out.status = load_status::identity_mismatch;
        out.detail = "made for key " + f.header["key"].get<std::string>();
      } else if (f.header["target"].get<std::string>() != target) {
        out.status = load_status::identity_mismatch;
        out.detail = "made for " + f.header["target"].get<std::string>();
      } else if (f.payload.size() != size) {
        out.status = load_status::invalid;
        out.detail = "truncated: " + std::to_string(f.payload.size()) + " of " +
                     std::to_string(size) + " bytes";
      } else if (tunekit::detail::sha256_hex(f.payload) != f.header["sha256"].get<std::string>()) {
        out.status = load_status::invalid;
        out.detail = "checksum mismatch (corrupt binary)";
      } else {
        kernel_binary b;
        b.key = std::string(key);
        b.target = std::string(target);
        b.lowered_name = f.header["lowered_name"].get<std::string>();
        b.description = f.header["description"].get<std::string>();
        b.compile_ms = f.header.value("compile_ms", 0.0);
        b.nvrtc = f.header["nvrtc"].get<std::string>();
        b.binary = std::string(f.payload);
        out.status = load_status::found;
        out.value = std::move(b);
        return out;
      }
    } catch (const std::exception &e) {
      out.status = load_status::invalid;
      out.detail = e.what();
    }
  }
  m_log(log_level::warning, "compile cache: skipping " + out.path.string() + ": " + out.detail +
                                "; compiling it again");
  return out;
}

void kernel_cache::store(const kernel_binary &b) const {
  const nlohmann::json header = {
      {"schema", binary_schema},
      {"key", b.key},
      {"target", b.target},
      {"lowered_name", b.lowered_name},
      {"description", b.description},
      {"bytes", b.binary.size()},
      {"sha256", tunekit::detail::sha256_hex(b.binary)},
      {"compile_ms", b.compile_ms},
      {"nvrtc", b.nvrtc},
      {"created", tunekit::detail::utc_timestamp()},
  };
  std::string text = header.dump();
  text += '\n';
  text += b.binary;
  tunekit::detail::write_file_atomically(path_of(b.key, b.target), text);
}

std::vector<kernel_cache_entry> kernel_cache::list() const {
  std::vector<kernel_cache_entry> out;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(m_dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto &p = it->path();
    const auto ext = p.extension();
    if (!it->is_regular_file(ec) || (ext != ".cubin" && ext != ".ptx") ||
        p.filename().string().starts_with(".")) {
      continue;
    }
    kernel_cache_entry e;
    e.path = p;
    e.key = p.stem().string();
    try {
      std::string why;
      const auto bytes = tunekit::detail::read_file(p, &why);
      if (!bytes) {
        throw error(why);
      }
      const parsed_file f = parse_file(*bytes);
      e.target = f.header["target"].get<std::string>();
      e.description = f.header["description"].get<std::string>();
      e.nvrtc = f.header["nvrtc"].get<std::string>();
      e.created = f.header["created"].get<std::string>();
      e.bytes = f.header["bytes"].get<std::size_t>();
      e.compile_ms = f.header.value("compile_ms", 0.0);
    } catch (const std::exception &x) {
      e.problem = x.what();
    }
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const kernel_cache_entry &a, const kernel_cache_entry &b) {
    return a.path < b.path;
  });
  return out;
}

std::size_t kernel_cache::clear() const {
  std::size_t removed = 0;
  std::error_code ec;
  std::vector<std::filesystem::path> doomed;
  for (auto it = std::filesystem::directory_iterator(m_dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    const auto ext = it->path().extension();
    const bool binary = ext == ".cubin" || ext == ".ptx";
    const bool temp = name.starts_with(".") && name.find(".tmp.") != std::string::npos;
    if (it->is_regular_file(ec) && (binary || temp)) {
      doomed.push_back(it->path());
    }
  }
  for (const auto &p : doomed) {
    std::error_code rm;
    const bool gone = std::filesystem::remove(p, rm);
    if (rm) {
      throw error("cannot remove " + p.string() + ": " + rm.message());
    }
    const auto ext = p.extension();
    if (gone && !p.filename().string().starts_with(".") && (ext == ".cubin" || ext == ".ptx")) {
      ++removed;
    }
  }
  return removed;
}

} // namespace tunekit::cuda
