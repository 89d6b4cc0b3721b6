// `tunekit table check | export`: validate a lookup table, write one from the winner cache (in
// tunekit's key format or PyTorch Inductor's).

#include "commands.hpp"

#include "json_io.hpp"
#include "os.hpp"

#include <tunekit/error.hpp>
#include <tunekit/lookup_table.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <system_error>

namespace tunekit::cli {

using detail::json;

int table_check(const table_check_options &o) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(o.file, ec)) {
    throw error("no such file: " + o.file.string());
  }
  std::string problem;
  std::size_t keys = 0;
  std::size_t entries = 0;
  try {
    const auto t = lookup_table::load(o.file);
    keys = t.size();
    for (const auto &[k, es] : t.entries()) {
      entries += es.size();
    }
  } catch (const error &e) {
    problem = e.what();
  }
  if (o.json) {
    json j{
        {"file", o.file.string()}, {"ok", problem.empty()}, {"keys", keys}, {"entries", entries}};
    if (!problem.empty()) {
      j["problem"] = problem;
    }
    std::cout << j.dump(2) << "\n";
  } else if (problem.empty()) {
    std::cout << "ok   " << o.file.string() << ": " << keys << " keys, " << entries << " entries\n";
  } else {
    std::cout << "BAD  " << problem << "\n";
  }
  return problem.empty() ? 0 : 1;
}

int table_export(const global_options &g, const table_export_options &o) {
  std::map<std::string, std::string> hashes;
  for (const auto &h : o.template_hashes) {
    const auto eq = h.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == h.size()) {
      throw error("--template-hash '" + h + "': expected TEMPLATE_ID=HASH");
    }
    hashes[h.substr(0, eq)] = h.substr(eq + 1);
  }
  const auto format = parse_table_key_format(o.key_format);
  if (!format) {
    throw error("--key-format '" + o.key_format + "': expected tunekit or inductor");
  }
  const winner_cache cache = open_cache(g);
  const auto entries = valid_entries(cache, o.function, o.version);
  if (entries.empty()) { // an empty table is no export: as `artifact emit`, an error
    throw error("no valid winner-cache entries" +
                (o.function.empty() ? std::string() : " of function '" + o.function + "'") +
                (o.version.empty() ? std::string() : " version '" + o.version + "'") + " in " +
                cache.root().string());
  }
  const auto t = lookup_table::from_entries(entries, o.op, o.top_k, {}, hashes, *format);
  // A hash given for a template that no exported choice has would be recorded nowhere.
  const std::vector<std::string> templates = t.templates();
  for (const auto &[id, hash] : hashes) {
    if (std::find(templates.begin(), templates.end(), id) == templates.end()) {
      std::string have;
      for (const auto &tid : templates) {
        have +=
            (have.empty() ? "" : ", ") + (tid.empty() ? std::string("(none)") : "'" + tid + "'");
      }
      throw error("--template-hash '" + id + "=" + hash +
                  "': no exported choice has the template '" + id +
                  "' (their templates: " + (have.empty() ? "none, nothing exported" : have) + ")");
    }
  }
  const std::string text = t.to_json();
  if (o.out.empty() || o.out == "-") {
    std::cout << text;
  } else {
    detail::write_file_atomically(o.out, text);
    std::cerr << "wrote " << t.size() << " keys to " << o.out << "\n";
  }
  return 0;
}

} // namespace tunekit::cli
