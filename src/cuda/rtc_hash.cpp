#include "rtc_hash.hpp"

#include <tunekit/error.hpp>

#include "../core/os.hpp"
#include "../core/sha256.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <system_error>

namespace tunekit::cuda::rtc_detail {

std::string read_text(const std::filesystem::path &path) {
  std::string why;
  auto text = tunekit::detail::read_file(path, &why);
  if (!text) {
    throw error(path.string() + " " + why);
  }
  return std::move(*text);
}

namespace {

// (relative path, SHA-256) of every file under `dir`, sorted.
nlohmann::json hash_tree(const std::filesystem::path &dir) {
  constexpr std::size_t max_files = 20000;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw error("include directory " + dir.string() + " does not exist or is not a directory");
  }
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) {
      files.push_back(it->path());
      if (files.size() > max_files) {
        throw error("include directory " + dir.string() + " holds more than " +
                    std::to_string(max_files) +
                    " files; list it in system_include_dirs (not hashed) instead");
      }
    }
  }
  if (ec) {
    throw error("cannot list include directory " + dir.string() + ": " + ec.message());
  }
  std::sort(files.begin(), files.end());
  nlohmann::json out = nlohmann::json::array();
  for (const auto &f : files) {
    out.push_back(
        {f.lexically_relative(dir).generic_string(), tunekit::detail::sha256_hex(read_text(f))});
  }
  return out;
}

} // namespace

std::string program_digest(const kernel_definition &d) {
  nlohmann::json headers = nlohmann::json::array();
  for (const auto &h : d.headers) {
    headers.push_back({h.name, h.text});
  }
  nlohmann::json trees = nlohmann::json::array();
  for (const auto &dir : d.include_dirs) {
    trees.push_back(hash_tree(dir));
  }
  const nlohmann::json identity = {
      {"schema", "tunekit.kernel_program/1"},
      {"source_name", d.source.name},
      {"source", d.source.text},
      {"entry", d.entry},
      {"headers", headers},
      {"include_files", trees},
      {"options", d.options},
  };
  return tunekit::detail::sha256_hex(identity.dump());
}

std::string config_key(std::string_view program_digest, std::string_view nvrtc,
                       std::string_view target, const std::vector<definition> &defs,
                       std::string_view name_expression) {
  nlohmann::json defs_json = nlohmann::json::array();
  for (const auto &d : defs) {
    defs_json.push_back({d.name, d.value});
  }
  const nlohmann::json key_json = {
      {"schema", "tunekit.kernel_key/1"},
      {"program", program_digest},
      {"nvrtc", nvrtc},
      {"target", target},
      {"definitions", defs_json},
      {"name_expression", name_expression},
  };
  return tunekit::detail::sha256_hex(key_json.dump());
}

} // namespace tunekit::cuda::rtc_detail
