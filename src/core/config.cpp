#include <tunekit/config.hpp>
#include <tunekit/error.hpp>

#include <algorithm>
#include <string>

namespace tunekit {

config::config(std::initializer_list<field> fields) : config(std::vector<field>(fields)) {}

config::config(std::vector<field> fields) {
  m_fields.reserve(fields.size());
  for (auto &f : fields) {
    if (contains(f.name)) {
      throw error("config field '" + f.name + "' is given twice");
    }
    m_fields.push_back(std::move(f));
  }
}

config &config::set(std::string_view name, value v) {
  for (auto &f : m_fields) {
    if (f.name == name) {
      f.value = std::move(v);
      return *this;
    }
  }
  m_fields.push_back(field{std::string(name), std::move(v)});
  return *this;
}

const value *config::find(std::string_view name) const noexcept {
  for (const auto &f : m_fields) {
    if (f.name == name) {
      return &f.value;
    }
  }
  return nullptr;
}

const value &config::at(std::string_view name) const {
  if (const value *v = find(name)) {
    return *v;
  }
  std::string names;
  for (const auto &f : m_fields) {
    names += names.empty() ? f.name : ", " + f.name;
  }
  throw error("config has no field '" + std::string(name) +
              "' (fields: " + (names.empty() ? "none" : names) + ")");
}

namespace {
template <class Get> decltype(auto) typed(const config &c, std::string_view name, Get get) {
  const value &v = c.at(name);
  try {
    return get(v);
  } catch (const error &e) {
    throw error("config field '" + std::string(name) + "': " + e.what());
  }
}
} // namespace

std::int64_t config::get_int(std::string_view name) const {
  return typed(*this, name, [](const value &v) { return v.as_int(); });
}

double config::get_double(std::string_view name) const {
  return typed(*this, name, [](const value &v) { return v.as_double(); });
}

bool config::get_bool(std::string_view name) const {
  return typed(*this, name, [](const value &v) { return v.as_bool(); });
}

const std::string &config::get_string(std::string_view name) const {
  return typed(*this, name, [](const value &v) -> const std::string & { return v.as_string(); });
}

bool config::same_fields(const config &other) const noexcept {
  return m_template_id == other.m_template_id && size() == other.size() &&
         std::all_of(begin(), end(), [&](const field &f) {
           const value *v = other.find(f.name);
           return v != nullptr && *v == f.value;
         });
}

config &config::set_template_id(std::string id) {
  m_template_id = std::move(id);
  return *this;
}

std::string config::to_string() const {
  std::string out = m_template_id.empty() ? "" : m_template_id + ":";
  bool first = true;
  for (const auto &f : m_fields) {
    if (!first) {
      out += ", ";
    }
    first = false;
    out += f.name + "=" + f.value.to_string();
  }
  return out;
}

} // namespace tunekit
