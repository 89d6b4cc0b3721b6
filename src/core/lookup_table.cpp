#include "json_io.hpp"
#include "os.hpp"

#include <tunekit/error.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/winner_cache.hpp>

#include <algorithm>

namespace tunekit {

using detail::json;

lookup_table lookup_table::from_json(std::string_view text) {
  const json j = detail::parse(text, "lookup table");
  if (!j.is_object()) {
    throw error("lookup table is not a JSON object of key -> list of entries");
  }
  lookup_table t;
  for (const auto &[k, entries] : j.items()) {
    if (!entries.is_array()) {
      throw error("lookup table key '" + k + "': the value must be a list of entries");
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const json &e = entries[i];
      const std::string where = "lookup table key '" + k + "', entry " + std::to_string(i);
      if (!e.is_object()) {
        throw error(where + ": an entry must be an object");
      }
      const auto id = e.find(std::string(template_id_member));
      if (id == e.end() || !id->is_string()) {
        throw error(where + ": an entry needs a string 'template_id'");
      }
      table_entry te;
      std::vector<field> fields;
      for (const auto &[name, v] : e.items()) {
        if (name == template_id_member) {
          continue;
        }
        if (name == template_hash_member) {
          if (!v.is_string()) {
            throw error(where + ": 'template_hash' must be a string");
          }
          te.template_hash = v.get<std::string>();
          continue;
        }
        try {
          fields.push_back(field{name, detail::value_from_json(v, name)});
        } catch (const error &err) {
          throw error(where + ": " + err.what());
        }
      }
      te.choice = config(std::move(fields));
      te.choice.set_template_id(id->get<std::string>());
      t.add(k, std::move(te));
    }
  }
  return t;
}

lookup_table lookup_table::load(const std::filesystem::path &path) {
  const auto text = detail::read_file(path);
  if (!text) {
    throw error("cannot read lookup table " + path.string());
  }
  try {
    return from_json(*text);
  } catch (const error &e) {
    throw error(path.string() + ": " + e.what());
  }
}

lookup_table lookup_table::from_entries(const std::vector<cache_entry> &entries,
                                        std::string_view op, std::size_t top_k,
                                        const config &params,
                                        const std::map<std::string, std::string> &template_hashes) {
  if (top_k == 0) {
    throw error("a lookup table from cache entries needs top_k of at least 1");
  }
  lookup_table t;
  for (const auto &e : entries) {
    const auto ok = fastest_candidates(e, top_k);
    const stored_key_parts parts = split_stored_key(e.key);
    config key_params = params;
    for (const auto &f : parts.pinned) {
      key_params.set(f.name, f.value);
    }
    const std::string k = table_key(e.hardware.name, parts.input, table_params(key_params),
                                    op.empty() ? std::string_view(e.function.name) : op);
    if (t.find(k) != nullptr) {
      throw error("two cache entries give the table key '" + k + "' (function '" + e.function.name +
                  "' version '" + e.function.version +
                  "'; several functions or versions with one op?)");
    }
    for (const candidate_record *r : ok) {
      table_entry te;
      te.choice.set_template_id(r->config.template_id());
      for (const auto &f : r->config) {
        if (!parts.pinned.contains(f.name)) {
          te.choice.set(f.name, f.value);
        }
      }
      if (const auto h = template_hashes.find(te.choice.template_id());
          h != template_hashes.end()) {
        te.template_hash = h->second;
      }
      t.add(k, std::move(te));
    }
  }
  return t;
}

std::string lookup_table::to_json() const {
  json j = json::object();
  for (const auto &[k, entries] : m_entries) {
    json list = json::array();
    for (const auto &e : entries) {
      json o = json::object();
      o[std::string(template_id_member)] = e.choice.template_id();
      for (const auto &f : e.choice) {
        o[f.name] = detail::to_json(f.value);
      }
      if (!e.template_hash.empty()) {
        o[std::string(template_hash_member)] = e.template_hash;
      }
      list.push_back(std::move(o));
    }
    j[k] = std::move(list);
  }
  return detail::dump(j, 2) + "\n";
}

void lookup_table::add(const std::string &table_key, table_entry e) {
  m_entries[table_key].push_back(std::move(e));
}

const std::vector<table_entry> *lookup_table::find(std::string_view table_key) const noexcept {
  const auto it = m_entries.find(table_key);
  return it == m_entries.end() ? nullptr : &it->second;
}

std::string table_params(const config &params) {
  std::vector<const field *> sorted;
  for (const auto &f : params) {
    sorted.push_back(&f);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const field *a, const field *b) { return a->name < b->name; });
  std::string out;
  for (const field *f : sorted) {
    out += (out.empty() ? "" : "&") + f->name + "=" + f->value.to_string();
  }
  return out;
}

std::string table_key(std::string_view device, const key &input, std::string_view params,
                      std::string_view op) {
  std::string out;
  if (!device.empty()) {
    out += std::string(device) + "+";
  }
  out += input.to_string() + "+";
  if (!params.empty()) {
    out += std::string(params) + "+";
  }
  out += op;
  return out;
}

} // namespace tunekit
