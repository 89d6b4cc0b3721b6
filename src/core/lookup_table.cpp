#include "json_io.hpp"
#include "os.hpp"

#include <tunekit/error.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/winner_cache.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

namespace tunekit {

using detail::json;

namespace {

// Python's repr() of a float (what str() of a float gives too): the shortest text that reads back
// as `d`, fixed notation while the decimal exponent is in [-4, 16), else d.ddde+XX.
std::string python_float_text(double d) {
  if (std::isnan(d)) {
    return "nan";
  }
  if (std::isinf(d)) {
    return d > 0 ? "inf" : "-inf";
  }
  std::array<char, 64> buf{};
  const auto r =
      std::to_chars(buf.data(), buf.data() + buf.size(), d, std::chars_format::scientific);
  const std::string sci(buf.data(), r.ptr); // "-1.2345e+02", "1e+16", "0e+00"
  const std::size_t e = sci.find('e');
  const bool negative = sci.front() == '-';
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < e; ++i) {
    if (sci[i] != '.') {
      digits += sci[i];
    }
  }
  const int exp = std::atoi(sci.c_str() + e + 1);
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1);
    }
    const int a = std::abs(exp);
    out += exp < 0 ? "e-" : "e+";
    if (a < 10) {
      out += '0';
    }
    out += std::to_string(a);
  } else if (exp >= 0) {
    const auto whole = static_cast<std::size_t>(exp) + 1;
    if (digits.size() < whole) {
      digits.append(whole - digits.size(), '0');
    }
    out.append(digits, 0, whole);
    out += '.';
    out += whole < digits.size() ? digits.substr(whole) : std::string("0");
  } else {
    out += "0.";
    out.append(static_cast<std::size_t>(-exp - 1), '0');
    out += digits;
  }
  return out;
}

// A param value as Python's str() writes it: Inductor's `f"{key}={value}"`.
std::string python_text(const value &v) {
  if (v.is_bool()) {
    return v.as_bool() ? "True" : "False";
  }
  if (v.is_double()) {
    return python_float_text(v.as_double());
  }
  if (v.is_string()) {
    return v.as_string();
  }
  return v.to_string();
}

} // namespace

std::string_view to_string(table_key_format f) noexcept {
  switch (f) {
  case table_key_format::tunekit:
    return "tunekit";
  case table_key_format::inductor:
    return "inductor";
  }
  return "unknown";
}

std::optional<table_key_format> parse_table_key_format(std::string_view name) noexcept {
  for (const auto f : {table_key_format::tunekit, table_key_format::inductor}) {
    if (name == to_string(f)) {
      return f;
    }
  }
  return std::nullopt;
}

namespace {

// One key of a table and its list of entries, into `t`.
void read_table_key(lookup_table &t, const std::string &k, const json &entries) {
  if (!entries.is_array()) {
    throw error("lookup table key '" + k + "': the value must be a list of entries");
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json &e = entries[i];
    // Built for an error only: a table of 10^6 keys is read at every tuner's start.
    const auto where = [&] { return "lookup table key '" + k + "', entry " + std::to_string(i); };
    if (!e.is_object()) {
      throw error(where() + ": an entry must be an object");
    }
    const auto id = e.find(std::string(lookup_table::template_id_member));
    if (id == e.end() || !id->is_string()) {
      throw error(where() + ": an entry needs a string 'template_id'");
    }
    table_entry te;
    std::vector<field> fields;
    for (const auto &[name, v] : e.items()) {
      if (name == lookup_table::template_id_member) {
        continue;
      }
      if (v.is_null()) {
        continue; // no value (Inductor writes "hint_override": null); a null hash is no hash
      }
      if (name == lookup_table::template_hash_member) {
        if (!v.is_string()) {
          throw error(where() + ": 'template_hash' must be a string or null");
        }
        te.template_hash = v.get<std::string>();
        continue;
      }
      try {
        fields.push_back(field{name, detail::value_from_json(v, name)});
      } catch (const error &err) {
        throw error(where() + ": " + err.what());
      }
    }
    te.choice = config(std::move(fields));
    te.choice.set_template_id(id->get<std::string>());
    t.add(k, std::move(te));
  }
}

} // namespace

lookup_table lookup_table::from_json(std::string_view text) {
  // Read key by key (detail::parse_json_members): a key's entries are freed once read, so that a
  // table of 10^6 keys is never held whole as a JSON document beside the table.
  lookup_table t;
  std::optional<std::string> bad; // what is wrong with an entry, which stopped the parse
  const detail::member_fn read = [&](std::string &k, json &entries) {
    if (t.find(k) != nullptr) {
      bad = "lookup table is not valid JSON: the member \"" + detail::utf8_text(k) +
            "\" appears twice in one object";
      return false;
    }
    try {
      read_table_key(t, k, entries);
    } catch (const error &e) {
      bad = e.what();
      return false;
    }
    return true;
  };
  json top;
  try {
    top = detail::parse_json_members(text, read);
  } catch (const error &e) {
    throw error(std::string("lookup table is not valid JSON: ") + e.what());
  }
  if (bad) {
    throw error(*bad);
  }
  if (!top.is_object()) {
    throw error("lookup table is not a JSON object of key -> list of entries");
  }
  return t;
}

lookup_table lookup_table::load(const std::filesystem::path &path) {
  std::string why;
  const auto text = detail::read_file(path, &why);
  if (!text) {
    throw error("lookup table " + path.string() + " " + why);
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
                                        const std::map<std::string, std::string> &template_hashes,
                                        table_key_format key_format) {
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
    const std::string k =
        table_key(e.hardware.name, parts.input, table_params(key_params, key_format),
                  op.empty() ? std::string_view(e.function.name) : op, key_format);
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
  for (const std::string_view reserved : {template_id_member, template_hash_member}) {
    if (e.choice.contains(reserved)) {
      throw error("lookup table key '" + table_key + "': the choice [" + e.choice.to_string() +
                  "] has a field named '" + std::string(reserved) +
                  "', which a table reads as the entry's " +
                  (reserved == template_id_member ? "template" : "template source hash") +
                  ", so the table could not be read back as written; give the config its "
                  "template with config::set_template_id (in Python, the config dict's "
                  "'template_id') and rename the field");
    }
  }
  m_entries[table_key].push_back(std::move(e));
}

std::vector<std::string> lookup_table::templates() const {
  std::set<std::string> ids;
  for (const auto &[k, entries] : m_entries) {
    for (const auto &e : entries) {
      ids.insert(e.choice.template_id());
    }
  }
  return {ids.begin(), ids.end()};
}

const std::vector<table_entry> *lookup_table::find(std::string_view table_key) const noexcept {
  const auto it = m_entries.find(table_key);
  return it == m_entries.end() ? nullptr : &it->second;
}

std::string table_params(const config &params, table_key_format fmt) {
  std::vector<const field *> sorted;
  for (const auto &f : params) {
    sorted.push_back(&f);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const field *a, const field *b) { return a->name < b->name; });
  std::string out;
  for (const field *f : sorted) {
    out += (out.empty() ? "" : "&") + f->name + "=" +
           (fmt == table_key_format::inductor ? python_text(f->value) : f->value.to_string());
  }
  return out;
}

std::string table_input_key(const key &input, table_key_format f) {
  if (f == table_key_format::inductor && input.size() == 1 && input[0].is_string()) {
    return input[0].as_string();
  }
  return input.to_string();
}

std::string table_key(std::string_view device, const key &input, std::string_view params,
                      std::string_view op, table_key_format f) {
  std::string out;
  if (!device.empty()) {
    out += std::string(device) + "+";
  }
  out += table_input_key(input, f) + "+";
  if (!params.empty()) {
    out += std::string(params) + "+";
  }
  out += op;
  return out;
}

} // namespace tunekit
