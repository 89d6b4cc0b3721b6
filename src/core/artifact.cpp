#include "json_io.hpp"
#include "os.hpp"
#include "sha256.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/error.hpp>
#include <tunekit/winner_cache.hpp>

#include <algorithm>

namespace tunekit {

using detail::json;

device_identity device_identity::of(const hardware_info &hw) {
  return device_identity{hw.name, hw.arch, hw.units};
}

bool device_identity::complete() const noexcept {
  return !name.empty() && !arch.empty() && units > 0;
}

bool is_valid_artifact_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 64) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

namespace {

json device_json(const device_identity &d) {
  return json{{"name", d.name}, {"arch", d.arch}, {"units", d.units}};
}

} // namespace

std::string artifact_digest(std::string_view name, const key &k, const device_identity &dev) {
  const json id{{"artifact", name}, {"key", detail::to_json(k)}, {"device", device_json(dev)}};
  return detail::sha256_hex(detail::dump(id));
}

std::filesystem::path artifact_path(const std::filesystem::path &dir, std::string_view name,
                                    const key &k, const device_identity &dev) {
  return dir / (std::string(name) + "-" + artifact_digest(name, k, dev) + ".json");
}

std::string to_json(const artifact &a) {
  json j;
  j["schema"] = artifact::schema;
  j["artifact"] = a.name;
  j["key"] = detail::to_json(a.key);
  if (!a.key_names.empty()) {
    j["key_names"] = a.key_names;
  }
  j["device"] = device_json(a.device);
  j["digest"] = artifact_digest(a.name, a.key, a.device);
  if (!a.config.template_id().empty()) {
    j["template_id"] = a.config.template_id();
  }
  j["config"] = detail::to_json(a.config);
  return detail::dump(j, 2) + "\n";
}

artifact artifact_from_json(std::string_view text) {
  const json j = detail::parse(text, "artifact");
  if (!j.is_object()) {
    throw error("artifact is not a JSON object");
  }
  for (const auto &[name, v] : j.items()) {
    static constexpr std::string_view known[] = {"schema", "artifact", "key",         "key_names",
                                                 "device", "digest",   "template_id", "config"};
    if (std::find(std::begin(known), std::end(known), name) == std::end(known)) {
      throw error("artifact has an unknown member '" + name + "'");
    }
  }
  const std::string schema = detail::string_member(j, "schema", "");
  if (schema != artifact::schema) {
    throw error("artifact has schema '" + schema + "', expected '" + std::string(artifact::schema) +
                "'");
  }
  artifact a;
  a.name = detail::string_member(j, "artifact", "");
  if (!is_valid_artifact_name(a.name)) {
    throw error("'artifact' is not a valid artifact name: '" + a.name + "'");
  }
  a.key = detail::key_from_json(detail::member(j, "key", json::value_t::array, ""), "key");
  if (j.contains("key_names")) {
    const json &names = detail::member(j, "key_names", json::value_t::array, "");
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!names[i].is_string()) {
        throw error("'key_names[" + std::to_string(i) + "]' must be a string");
      }
      a.key_names.push_back(names[i].get<std::string>());
    }
    if (a.key_names.size() != a.key.size()) {
      throw error("'key_names' has " + std::to_string(a.key_names.size()) + " names for " +
                  std::to_string(a.key.size()) + " key values");
    }
  }
  const json &dev = detail::member(j, "device", json::value_t::object, "");
  a.device.name = detail::string_member(dev, "name", "device");
  a.device.arch = detail::string_member(dev, "arch", "device");
  a.device.units = detail::int_member(dev, "units", "device");
  if (dev.size() != 3) {
    throw error("'device' must hold exactly name, arch and units");
  }
  if (detail::string_member(j, "digest", "") != artifact_digest(a.name, a.key, a.device)) {
    throw error("'digest' does not match the artifact's identity");
  }
  a.config =
      detail::config_from_json(detail::member(j, "config", json::value_t::object, ""), "config");
  if (a.config.empty()) {
    throw error("'config' is empty");
  }
  if (j.contains("template_id")) {
    a.config.set_template_id(detail::string_member(j, "template_id", ""));
  }
  return a;
}

load_result<artifact> load_artifact(const std::filesystem::path &dir, std::string_view name,
                                    const key &k, const device_identity &dev) {
  load_result<artifact> out;
  out.path = artifact_path(dir, name, k, dev);
  std::error_code ec;
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
    artifact a = artifact_from_json(*text);
    out.status = load_status::identity_mismatch;
    if (a.name != name) {
      out.detail = "belongs to artifact '" + a.name + "'";
    } else if (!(a.key == k)) {
      out.detail = "holds key " + a.key.to_string() + ", not " + k.to_string();
    } else if (!(a.device == dev)) {
      out.detail = "was tuned on " + a.device.name + " (" + a.device.arch + ", " +
                   std::to_string(a.device.units) + " units), not " + dev.name + " (" + dev.arch +
                   ", " + std::to_string(dev.units) + " units)";
    } else {
      out.status = load_status::found;
      out.value = std::move(a);
    }
  } catch (const error &e) {
    out.status = load_status::invalid;
    out.detail = e.what();
  }
  return out;
}

std::string artifact_config_problem(const config &c, const config_space &space,
                                    const config &pinned,
                                    const std::vector<std::string> &key_names) {
  for (const auto &f : c) {
    if (pinned.contains(f.name)) {
      return "it sets '" + f.name + "', which the caller pinned";
    }
    if (std::find(key_names.begin(), key_names.end(), f.name) != key_names.end()) {
      return "it sets the key axis '" + f.name + "'";
    }
    bool seen = false;
    bool same_type = false;
    for (const auto &s : space) {
      if (const value *v = s.find(f.name)) {
        seen = true;
        same_type = same_type || v->type() == f.value.type();
      }
    }
    if (!seen) {
      return "its field '" + f.name + "' is not a parameter of the config space";
    }
    if (!same_type) {
      return "its field '" + f.name + "' is " + std::string(to_string(f.value.type())) + " " +
             f.value.to_string() + ", a type the config space never gives it";
    }
  }
  // The caller's pinned values complete the config: compare the other fields only.
  for (const auto &s : space) {
    if (s.template_id() != c.template_id()) {
      continue;
    }
    std::size_t n = 0;
    const bool same = std::all_of(s.begin(), s.end(), [&](const field &f) {
      if (pinned.contains(f.name)) {
        return true;
      }
      ++n;
      const value *v = c.find(f.name);
      return v != nullptr && *v == f.value;
    });
    if (same && n == c.size()) {
      return {};
    }
  }
  return "[" + c.to_string() + "] is not a config of the config space";
}

namespace {
void require_valid_name(const std::string &name) {
  if (!is_valid_artifact_name(name)) {
    throw error("invalid artifact name '" + name + "': use 1-64 letters, digits, '.', '_' or '-'");
  }
}

std::string joined(const std::vector<std::string> &names) {
  std::string out;
  for (const auto &n : names) {
    out += (out.empty() ? "" : ", ") + n;
  }
  return out;
}
} // namespace

artifact make_artifact(std::string name, const cache_entry &entry,
                       std::vector<std::string> key_names) {
  require_valid_name(name);
  const stored_key_parts parts = split_stored_key(entry.key);
  if (!key_names.empty() && key_names.size() == parts.input.size()) {
    for (const auto &f : parts.pinned) {
      key_names.push_back("pinned " + f.name);
      key_names.push_back(f.name);
    }
  } else if (!key_names.empty() && key_names.size() != entry.key.size()) {
    throw error("artifact '" + name + "': " + std::to_string(key_names.size()) + " key names (" +
                joined(key_names) + ") for the key " + parts.input.to_string() + " of " +
                std::to_string(parts.input.size()) +
                (parts.input.size() == 1 ? " value" : " values") + " of function '" +
                entry.function.name + "'");
  }
  artifact a;
  a.name = std::move(name);
  a.key = entry.key;
  a.key_names = std::move(key_names);
  a.device = device_identity::of(entry.hardware);
  a.config.set_template_id(entry.winner.template_id());
  for (const auto &f : entry.winner) {
    if (!parts.pinned.contains(f.name)) {
      a.config.set(f.name, f.value);
    }
  }
  return a;
}

std::filesystem::path store_artifact(const std::filesystem::path &dir, const artifact &a) {
  require_valid_name(a.name);
  if (!a.device.complete()) {
    throw error("cannot write artifact '" + a.name +
                "': the device identity is incomplete (name '" + a.device.name + "', arch '" +
                a.device.arch + "', " + std::to_string(a.device.units) + " units)");
  }
  const auto path = artifact_path(dir, a.name, a.key, a.device);
  detail::write_file_atomically(path, to_json(a));
  return path;
}

std::string artifact_file_problem(const std::filesystem::path &path) {
  std::string why;
  const auto text = detail::read_file(path, &why);
  if (!text) {
    return why;
  }
  try {
    const artifact a = artifact_from_json(*text);
    const std::string want = a.name + "-" + artifact_digest(a.name, a.key, a.device) + ".json";
    if (path.filename().string() != want) {
      return "is named " + path.filename().string() + " but its identity names it " + want;
    }
  } catch (const error &e) {
    return e.what();
  }
  return {};
}

} // namespace tunekit
