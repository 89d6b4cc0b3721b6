/// \file table.cpp
/// Lookup tables from Python: `export_table` writes a table from the winner cache's entries (what
/// `tunekit table export` does), in tunekit's key format or PyTorch Inductor's; `campaign_check`
/// and `campaign_finish` are the end of `tunekit.campaign`: the artifacts and the lookup table of
/// the campaign's keys, written by the core as the C++ `tunekit::campaign` writes them.

#include "binding.hpp"

#include <tunekit/campaign.hpp>
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

// The outputs a campaign asks for, from `tunekit.campaign`'s keywords.
struct campaign_ask {
  campaign_artifacts artifacts;
  campaign_table table;
};

campaign_ask campaign_ask_of(const std::optional<std::string> &artifact_dir,
                             const std::optional<std::string> &artifact_name,
                             const std::optional<std::string> &table_path,
                             const std::optional<std::string> &op, std::size_t top_k,
                             const std::optional<nb::dict> &params,
                             const std::optional<std::map<std::string, std::string>> &hashes,
                             const std::optional<std::string> &key_format) {
  campaign_ask a;
  a.artifacts.dir = artifact_dir.value_or(std::string{});
  a.artifacts.name = artifact_name.value_or(std::string{});
  a.table.path = table_path.value_or(std::string{});
  a.table.op = op;
  a.table.top_k = top_k;
  if (params) {
    a.table.params = to_config(*params, "campaign: table_params");
  }
  a.table.template_hashes = hashes;
  if (key_format) {
    const auto format = parse_table_key_format(*key_format);
    if (!format) {
      throw nb::value_error(
          ("campaign: table_key_format must be 'tunekit' or 'inductor', not '" + *key_format + "'")
              .c_str());
    }
    a.table.key_format = *format;
  }
  return a;
}

void campaign_check(py_tuner &t, const std::optional<std::string> &artifact_dir,
                    const std::optional<std::string> &artifact_name,
                    const std::optional<std::string> &table_path,
                    const std::optional<std::string> &op, std::size_t top_k,
                    const std::optional<nb::dict> &params,
                    const std::optional<std::map<std::string, std::string>> &hashes,
                    const std::optional<std::string> &key_format) {
  const campaign_ask a = campaign_ask_of(artifact_dir, artifact_name, table_path, op, top_k, params,
                                         hashes, key_format);
  check_campaign_outputs(t.get(), a.artifacts, a.table);
}

// `keys`: one (key, pinned dict or None) per call, as the tuner stores them before bucketing.
std::vector<key> stored_keys(py_tuner &t, const nb::list &keys) {
  std::vector<key> stored;
  stored.reserve(keys.size());
  for (nb::handle item : keys) {
    const auto pair = nb::cast<nb::tuple>(item);
    const nb::object pinned = pair[1];
    stored.push_back(t.stored(pair[0], pinned.is_none()
                                           ? std::optional<nb::dict>{}
                                           : std::optional(nb::cast<nb::dict>(pinned))));
  }
  return stored;
}

nb::dict campaign_finish(py_tuner &t, const nb::list &keys, const nb::object &comm,
                         const std::optional<std::string> &artifact_dir,
                         const std::optional<std::string> &artifact_name,
                         const std::optional<std::string> &table_path,
                         const std::optional<std::string> &op, std::size_t top_k,
                         const std::optional<nb::dict> &params,
                         const std::optional<std::map<std::string, std::string>> &hashes,
                         const std::optional<std::string> &key_format, bool verbose) {
  const campaign_ask a = campaign_ask_of(artifact_dir, artifact_name, table_path, op, top_k, params,
                                         hashes, key_format);
  const std::vector<key> stored = stored_keys(t, keys);
  const std::unique_ptr<communicator> c = make_communicator(comm);
  single_process_communicator alone;
  const campaign_outputs w = detail::finish_campaign(
      t.get(), c ? *c : static_cast<communicator &>(alone), stored, a.artifacts, a.table, verbose);
  nb::list artifacts;
  for (const auto &p : w.artifacts) {
    artifacts.append(p.string());
  }
  nb::list missing;
  for (const auto &m : w.missing) {
    missing.append(nb::make_tuple(key_to_py(m.key), text_to_py(m.why)));
  }
  nb::dict out;
  out["artifacts"] = artifacts;
  out["table"] = w.table.empty() ? nb::none() : nb::cast(w.table.string());
  out["missing"] = missing;
  return out;
}

// After a split campaign: `keys` (as in campaign_finish) that this rank resolved alone leave the
// tuner's memory (`detail::forget_resolved_alone`).
void campaign_forget(py_tuner &t, const nb::list &keys) {
  const std::vector<key> stored = stored_keys(t, keys);
  detail::forget_resolved_alone(t.get(), stored);
}

} // namespace

void bind_table(nb::module_ &m) {
  m.def("campaign_forget", &campaign_forget, "tuner"_a, "keys"_a,
        "After a split campaign: drops the keys this rank resolved alone from the tuner's memory, "
        "so that every rank resolves every key of the campaign the same way on its next call.");
  m.def("campaign_check", &campaign_check, "tuner"_a, "artifact_dir"_a.none(),
        "artifact_name"_a.none(), "table"_a.none(), "op"_a.none(), "top_k"_a, "params"_a.none(),
        "template_hashes"_a.none(), "key_format"_a.none(),
        "Raises when a campaign's outputs cannot be written, before anything is tuned.");
  m.def("campaign_finish", &campaign_finish, "tuner"_a, "keys"_a, "comm"_a.none(),
        "artifact_dir"_a.none(), "artifact_name"_a.none(), "table"_a.none(), "op"_a.none(),
        "top_k"_a, "params"_a.none(), "template_hashes"_a.none(), "key_format"_a.none(),
        "verbose"_a,
        "The end of a campaign on every rank: rank 0 writes the artifacts and the lookup table "
        "of `keys` from the winner cache; every rank returns what it wrote.");
  m.def("export_table", &export_table, "root"_a, "function"_a = "", "version"_a = "", "op"_a = "",
        "top_k"_a = 1, "params"_a = nb::none(),
        "template_hashes"_a = std::map<std::string, std::string>{}, "key_format"_a = "tunekit",
        "A lookup table (JSON text) of the winner cache entries under `root`.");
}

} // namespace tunekit::python
