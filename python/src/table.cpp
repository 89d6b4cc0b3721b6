/// \file table.cpp
/// Lookup tables from Python: `export_table` writes a table from the winner cache's entries (what
/// `tunekit table export` does), in tunekit's key format or PyTorch Inductor's.

#include "binding.hpp"

#include <tunekit/error.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/winner_cache.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tunekit::python {

using namespace nb::literals;

namespace {

// The table of the valid entries under `root` (of `function` and `version` when not empty) and
// the files skipped, as (path, why) pairs.
nb::dict export_table(const std::string &root, const std::string &function,
                      const std::string &version, const std::string &op, std::size_t top_k,
                      const std::optional<nb::dict> &params,
                      const std::map<std::string, std::string> &template_hashes,
                      const std::string &key_format) {
  const auto format = parse_table_key_format(key_format);
  if (!format) {
    throw nb::value_error(
        ("export_table: key_format must be 'tunekit' or 'inductor', not '" + key_format + "'")
            .c_str());
  }
  const config p = params ? to_config(*params, "export_table: table_params") : config{};
  std::vector<cache_entry> entries;
  nb::list skipped;
  for (const auto &path : winner_cache(root).list(function)) {
    auto r = winner_cache::read(path);
    if (!r.found()) {
      skipped.append(nb::make_tuple(path.string(), r.detail));
    } else if (version.empty() || r.value->function.version == version) {
      entries.push_back(std::move(*r.value));
    }
  }
  const lookup_table t =
      lookup_table::from_entries(entries, op, top_k, p, template_hashes, *format);
  nb::dict out;
  out["table"] = t.to_json();
  out["templates"] = t.templates();
  out["skipped"] = skipped;
  return out;
}

} // namespace

void bind_table(nb::module_ &m) {
  m.def("export_table", &export_table, "root"_a, "function"_a = "", "version"_a = "", "op"_a = "",
        "top_k"_a = 1, "params"_a = nb::none(),
        "template_hashes"_a = std::map<std::string, std::string>{}, "key_format"_a = "tunekit",
        "A lookup table (JSON text) of the winner cache entries under `root`.");
}

} // namespace tunekit::python
