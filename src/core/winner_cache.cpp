#include "json_io.hpp"
#include "os.hpp"
#include "sha256.hpp"

#include <tunekit/error.hpp>
#include <tunekit/winner_cache.hpp>

#include <algorithm>
#include <string>
#include <system_error>

namespace tunekit {

using detail::json;

namespace {
std::string file_safe(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") {
    out = "_" + out;
  }
  return out;
}
} // namespace

namespace {
constexpr std::string_view pinned_marker = "pinned ";

// The name a marker value ("pinned NAME") stands for, or empty when `v` is not a marker.
std::string_view pinned_name(const value &v) {
  if (v.type() != value_type::string) {
    return {};
  }
  const std::string_view s = v.as_string();
  return s.starts_with(pinned_marker) && s.size() > pinned_marker.size()
             ? s.substr(pinned_marker.size())
             : std::string_view{};
}
} // namespace

key stored_key(const key &input, const config &pinned) {
  key k = input;
  for (const auto &f : pinned) {
    k.push_back(value(std::string(pinned_marker) + f.name));
    k.push_back(f.value);
  }
  return k;
}

stored_key_parts split_stored_key(const key &stored) {
  std::size_t end = stored.size();
  while (end >= 2 && !pinned_name(stored[end - 2]).empty()) {
    end -= 2;
  }
  stored_key_parts parts;
  for (std::size_t i = 0; i < end; ++i) {
    parts.input.push_back(stored[i]);
  }
  // Walked forward, so the pinned values keep the order the tuner appended them in.
  for (std::size_t i = end; i < stored.size(); i += 2) {
    parts.pinned.set(pinned_name(stored[i]), stored[i + 1]);
  }
  return parts;
}

std::string cache_digest(const function_identity &fn, const hardware_info &hw, const key &k) {
  const json id{{"function", detail::utf8_name(fn.name, "function name")},
                {"version", detail::utf8_name(fn.version, "function version")},
                {"hardware", hw.digest()},
                {"key", detail::to_json(k)}};
  return detail::sha256_hex(detail::dump(id));
}

winner_cache::winner_cache(std::filesystem::path root) : m_root(std::move(root)) {}

namespace {
// The first path below `root` on the way to `path` that is a symbolic link, or empty. The root
// itself may be a link (a cache on another volume); below it tunekit follows none, so that no
// entry is read from, nor written to, outside the cache.
std::filesystem::path link_below(const std::filesystem::path &root,
                                 const std::filesystem::path &path) {
  std::filesystem::path at = root;
  for (const auto &part : path.lexically_relative(root)) {
    at /= part;
    std::error_code ec;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(at, ec))) {
      return at;
    }
  }
  return {};
}

std::string link_refusal(const std::filesystem::path &link) {
  std::error_code ec;
  const auto to = std::filesystem::read_symlink(link, ec);
  return link.string() + " is a symbolic link" + (ec ? "" : " (to " + to.string() + ")") +
         "; tunekit follows no links below the cache root";
}
} // namespace

std::filesystem::path winner_cache::function_dir(std::string_view function) const {
  return m_root / "autotune" / file_safe(function);
}

std::filesystem::path winner_cache::entry_path(const function_identity &fn, const hardware_info &hw,
                                               const key &k) const {
  return function_dir(fn.name) / (cache_digest(fn, hw, k) + ".json");
}

load_result<cache_entry> winner_cache::load(const function_identity &fn, const hardware_info &hw,
                                            const key &k) const {
  load_result<cache_entry> out;
  out.path = entry_path(fn, hw, k);
  std::error_code ec;
  if (const auto link = link_below(m_root, out.path); !link.empty()) {
    out.status = load_status::unreadable;
    out.detail = link_refusal(link);
    return out;
  }
  if (!std::filesystem::exists(out.path, ec)) {
    return out;
  }
  std::string why;
  const auto text = detail::read_file(out.path, &why);
  if (!text) {
    out.status = load_status::unreadable;
    out.detail = why;
    return out;
  }
  try {
    cache_entry e = cache_entry_from_json(*text);
    out.status = load_status::identity_mismatch;
    if (!(e.function == fn)) {
      out.detail =
          "belongs to function '" + e.function.name + "' version '" + e.function.version + "'";
    } else if (!(e.hardware == hw)) {
      out.detail = "was measured on other hardware: " + e.hardware.to_string();
    } else if (!(e.key == k)) {
      out.detail = "holds key " + e.key.to_string() + ", not " + k.to_string();
    } else {
      out.status = load_status::found;
      out.value = std::move(e);
    }
  } catch (const error &e) {
    out.status = load_status::invalid;
    out.detail = e.what();
  }
  return out;
}

std::filesystem::path winner_cache::store(const cache_entry &e, std::string_view log_text) const {
  const std::filesystem::path path = entry_path(e.function, e.hardware, e.key);
  if (const auto link = link_below(m_root, path); !link.empty()) {
    throw error("cannot store " + path.string() + ": " + link_refusal(link));
  }
  auto log_path = path;
  log_path.replace_extension(".log");
  if (!log_text.empty()) {
    detail::write_file_atomically(log_path, log_text);
  }
  try {
    detail::write_file_atomically(path, to_json(e));
  } catch (const error &) {
    // No log without its entry (e.g. on a nearly full disk the small log fits, the entry not).
    std::error_code ec;
    if (!log_text.empty()) {
      std::filesystem::remove(log_path, ec);
    }
    throw;
  }
  return path;
}

std::vector<std::filesystem::path> winner_cache::list(std::string_view function) const {
  std::vector<std::filesystem::path> out;
  const auto base = function.empty() ? m_root / "autotune" : function_dir(function);
  std::error_code ec;
  if (!std::filesystem::is_directory(base, ec)) {
    return out;
  }
  for (auto it = std::filesystem::recursive_directory_iterator(base, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".json") {
      out.push_back(it->path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

load_result<cache_entry> winner_cache::read(const std::filesystem::path &path) {
  load_result<cache_entry> out;
  out.path = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return out;
  }
  std::string why;
  const auto text = detail::read_file(path, &why);
  if (!text) {
    out.status = load_status::unreadable;
    out.detail = why;
    return out;
  }
  try {
    cache_entry e = cache_entry_from_json(*text);
    const std::string want = cache_digest(e.function, e.hardware, e.key) + ".json";
    if (path.filename() != want) {
      out.status = load_status::identity_mismatch;
      out.detail = "is named " + path.filename().string() + " but its identity names it " + want;
      return out;
    }
    out.status = load_status::found;
    out.value = std::move(e);
  } catch (const error &e) {
    out.status = load_status::invalid;
    out.detail = e.what();
  }
  return out;
}

std::vector<std::filesystem::path> winner_cache::remove(std::string_view function) const {
  std::vector<std::filesystem::path> removed;
  for (const auto &p : list(function)) {
    std::error_code ec;
    auto log = p;
    log.replace_extension(".log");
    std::filesystem::remove(log, ec);
    if (ec) {
      throw error("cannot remove the tuning log " + log.string() + ": " + ec.message());
    }
    if (std::filesystem::remove(p, ec)) {
      removed.push_back(p);
    } else if (ec) {
      throw error("cannot remove the cache entry " + p.string() + ": " + ec.message());
    }
  }
  return removed;
}

} // namespace tunekit
