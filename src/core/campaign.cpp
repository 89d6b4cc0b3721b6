// The end of an offline campaign (docs/shapes.md, "Offline campaigns"): the artifacts and the
// lookup table of exactly the campaign's keys, written once by rank 0 from the winner cache
// entries, and what rank 0 wrote handed to every rank.

#include "agreement.hpp"
#include "cache_entry.hpp"
#include "json_io.hpp"
#include "os.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/campaign.hpp>
#include <tunekit/error.hpp>
#include <tunekit/log.hpp>
#include <tunekit/shapes.hpp>
#include <tunekit/winner_cache.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tunekit {

namespace {

std::string owner(const tuner &t) { return "campaign of tuner '" + t.name() + "'"; }

std::string artifact_name_of(const tuner &t, const campaign_artifacts &a) {
  return a.name.empty() ? t.options().artifact.name : a.name;
}

void say(const tuner &t, log_level level, const std::string &msg) {
  const auto &process = t.options().process;
  if (process && process->log) {
    process->log(level, msg);
  }
}

// The key a call of `k` is stored under: its input values in the tuner's buckets, then its
// pinned pairs (what `tuner::cache_path` names).
key in_buckets(const tuner &t, const key &k) {
  const auto &buckets = t.options().shapes.buckets;
  if (buckets.empty()) {
    return k;
  }
  const stored_key_parts parts = split_stored_key(k);
  try {
    return stored_key(bucket_key(parts.input, buckets), parts.pinned);
  } catch (const error &e) {
    throw error("tuner '" + t.name() + "': " + e.what());
  }
}

// What rank 0 hands the other ranks: a list of strings, each its length (8 bytes) then its
// bytes, so that any path or key text goes through unchanged.
void put(std::string &out, const std::string &s) {
  const auto n = static_cast<std::uint64_t>(s.size());
  char len[sizeof n];
  std::memcpy(len, &n, sizeof n);
  out.append(len, sizeof n);
  out += s;
}

class reader {
public:
  explicit reader(const std::string &text) : m_text(text) {}
  std::string next() {
    std::uint64_t n = 0;
    if (m_text.size() - m_at < sizeof n) {
      throw error("campaign: the outputs rank 0 sent are truncated");
    }
    std::memcpy(&n, m_text.data() + m_at, sizeof n);
    m_at += sizeof n;
    if (m_text.size() - m_at < n) {
      throw error("campaign: the outputs rank 0 sent are truncated");
    }
    std::string s = m_text.substr(m_at, static_cast<std::size_t>(n));
    m_at += static_cast<std::size_t>(n);
    return s;
  }
  std::size_t count() { return static_cast<std::size_t>(std::stoull(next())); }

private:
  const std::string &m_text;
  std::size_t m_at = 0;
};

std::string encode(const campaign_outputs &o) {
  std::string out;
  put(out, "ok");
  put(out, o.table.string());
  put(out, std::to_string(o.artifacts.size()));
  for (const auto &p : o.artifacts) {
    put(out, p.string());
  }
  put(out, std::to_string(o.missing.size()));
  for (const auto &m : o.missing) {
    put(out, detail::dump(detail::to_json(m.key)));
    put(out, m.why);
  }
  return out;
}

campaign_outputs decode(const std::string &text, const std::string &who) {
  reader in(text);
  const std::string status = in.next();
  if (status != "ok") {
    throw error(who + ": rank 0 could not write the campaign's outputs: " + in.next());
  }
  campaign_outputs o;
  o.table = in.next();
  for (std::size_t i = 0, n = in.count(); i < n; ++i) {
    o.artifacts.emplace_back(in.next());
  }
  for (std::size_t i = 0, n = in.count(); i < n; ++i) {
    campaign_missing m;
    m.key = detail::key_from_json(detail::parse(in.next(), "campaign key"), "campaign key");
    m.why = in.next();
    o.missing.push_back(std::move(m));
  }
  return o;
}

// Every rank gets rank 0's `text` (its length first, then its bytes).
void broadcast_text(communicator &comm, std::string &text, const std::string &what) {
  auto n = static_cast<std::uint64_t>(text.size());
  detail::collective(what, "the broadcast of the outputs' size",
                     [&] { comm.broadcast(std::as_writable_bytes(std::span(&n, 1)), 0); });
  text.resize(static_cast<std::size_t>(n));
  if (n > 0) {
    detail::collective(what, "the broadcast of the outputs", [&] {
      comm.broadcast(std::as_writable_bytes(std::span(text.data(), text.size())), 0);
    });
  }
}

void warn_missing(const tuner &t, const campaign_outputs &o, std::size_t keys) {
  if (o.missing.empty()) {
    return;
  }
  const bool one = o.missing.size() == 1;
  std::string msg = owner(t);
  msg += ": ";
  msg += std::to_string(o.missing.size());
  msg += " of its ";
  msg += std::to_string(keys);
  msg += keys == 1 ? " key" : " keys";
  msg += one ? " has" : " have";
  msg += " no usable winner cache entry, so ";
  msg += one ? "it is" : "they are";
  msg += " in none of its outputs (a key answered by nearest-key serving, a lookup table, an "
         "artifact or a default is not searched):";
  constexpr std::size_t shown = 10;
  for (std::size_t i = 0; i < o.missing.size() && i < shown; ++i) {
    msg += i == 0 ? " " : "; ";
    msg += o.missing[i].key.to_string();
    msg += " (";
    msg += o.missing[i].why;
    msg += ")";
  }
  if (o.missing.size() > shown) {
    msg += "; and ";
    msg += std::to_string(o.missing.size() - shown);
    msg += " more";
  }
  say(t, log_level::warning, msg);
}

} // namespace

namespace detail {

void forget_resolved_alone(tuner &t, const std::vector<key> &calls) {
  std::vector<key> stored;
  for (const key &k : calls) {
    stored.push_back(k);
    stored.push_back(in_buckets(t, k));
  }
  t.forget(stored);
}

} // namespace detail

void check_campaign_outputs(const tuner &t, const campaign_artifacts &artifacts,
                            const campaign_table &table) {
  if (artifacts.dir.empty() && table.path.empty()) {
    return;
  }
  if (!t.options().use_disk_cache) {
    throw error(owner(t) +
                ": its artifacts and lookup table are written from the winner cache, which the "
                "tuner does not use (use_disk_cache is false)");
  }
  if (!artifacts.dir.empty()) {
    const std::string name = artifact_name_of(t, artifacts);
    if (name.empty()) {
      throw error(owner(t) +
                  ": artifacts need a name: give the campaign one or set the tuner's artifact "
                  "name");
    }
    if (!is_valid_artifact_name(name)) {
      throw error(owner(t) + ": invalid artifact name '" + name +
                  "': use 1-64 letters, digits, '.', '_' or '-'");
    }
    const device_identity dev = device_identity::of(t.hardware());
    if (!dev.complete()) {
      throw error(owner(t) + ": cannot write artifact '" + name +
                  "': the device identity is incomplete (" + t.hardware().to_string() + ")");
    }
  }
  if (!table.path.empty() && table.top_k == 0) {
    throw error(owner(t) + ": the lookup table needs a top_k of at least 1");
  }
}

campaign_outputs write_campaign_outputs(const tuner &t, const std::vector<key> &keys,
                                        const campaign_artifacts &artifacts,
                                        const campaign_table &table, bool verbose) {
  campaign_outputs out;
  if (artifacts.dir.empty() && table.path.empty()) {
    return out;
  }
  check_campaign_outputs(t, artifacts, table);
  const winner_cache cache(t.env().cache_dir);
  const std::string buckets = describe_buckets(t.options().shapes.buckets);
  const std::string space = detail::space_digest(t.space());
  const std::string measured_by = detail::tuner_access::measurer(t).name();
  std::vector<key> seen;
  std::vector<cache_entry> entries;
  for (const key &k : keys) {
    key stored = in_buckets(t, k);
    if (std::find(seen.begin(), seen.end(), stored) != seen.end()) {
      continue;
    }
    seen.push_back(stored);
    auto r = cache.load(t.identity(), t.hardware(), stored);
    std::string why;
    if (r.rejected()) {
      why = "its winner cache entry " + r.path.string() + " was not used: " + r.detail;
    } else if (!r.found()) {
      why = "no winner cache entry";
    } else if (r.value->key_buckets != buckets) {
      why = "its winner cache entry " + r.path.string() + " was recorded with ";
      why += r.value->key_buckets.empty() ? "no key buckets" : "the key buckets ";
      why += r.value->key_buckets;
    } else if (detail::timed_another_way(*r.value, measured_by)) {
      why = "its winner cache entry " + r.path.string() + " was timed by the measurer '" +
            r.value->measurer + "', not '" + measured_by + "'";
    } else if (r.value->space && r.value->space->digest != space) {
      why = "its winner cache entry " + r.path.string() + " was recorded for another config space";
    }
    if (!why.empty()) {
      out.missing.push_back({std::move(stored), std::move(why)});
      continue;
    }
    entries.push_back(std::move(*r.value));
  }

  // Everything is built before anything is written.
  std::vector<artifact> made;
  if (!artifacts.dir.empty()) {
    const std::string name = artifact_name_of(t, artifacts);
    const auto &names = t.options().artifact.key_names;
    for (const auto &e : entries) {
      // As forced tuning records them: the tuner's key names when they name key_fn's values.
      const std::size_t input_values = split_stored_key(e.key).input.size();
      made.push_back(make_artifact(
          name, e, names.size() == input_values ? names : std::vector<std::string>{}));
    }
  }
  std::string table_text;
  if (!table.path.empty()) {
    const table_options &own = t.options().table;
    const lookup_table lt = lookup_table::from_entries(
        entries, table.op.value_or(own.op_name), table.top_k, table.params.value_or(own.params),
        table.template_hashes.value_or(own.template_hashes),
        table.key_format.value_or(own.key_format));
    if (table.template_hashes) {
      // A hash given for a template that no choice has would be recorded nowhere.
      const std::vector<std::string> templates = lt.templates();
      for (const auto &[id, hash] : *table.template_hashes) {
        if (std::find(templates.begin(), templates.end(), id) == templates.end()) {
          throw error(owner(t) + ": the lookup table's template hash '" + id + "=" + hash +
                      "' names a template that no choice has");
        }
      }
    }
    table_text = lt.to_json();
  }

  for (const auto &a : made) {
    out.artifacts.push_back(store_artifact(artifacts.dir, a));
  }
  if (verbose && !artifacts.dir.empty()) {
    say(t, log_level::info,
        owner(t) + ": wrote " + std::to_string(out.artifacts.size()) + " artifacts to " +
            artifacts.dir.string());
  }
  if (!table.path.empty()) {
    detail::write_file_atomically(table.path, table_text);
    out.table = table.path;
    if (verbose) {
      say(t, log_level::info,
          owner(t) + ": wrote the lookup table " + table.path.string() + " (" +
              std::to_string(entries.size()) + " keys)");
    }
  }
  warn_missing(t, out, seen.size());
  return out;
}

namespace detail {

campaign_outputs finish_campaign(const tuner &t, communicator &comm, const std::vector<key> &keys,
                                 const campaign_artifacts &artifacts, const campaign_table &table,
                                 bool verbose) {
  if (artifacts.dir.empty() && table.path.empty()) {
    return {};
  }
  if (comm.size() <= 1) {
    return write_campaign_outputs(t, keys, artifacts, table, verbose);
  }
  const std::string what = owner(t);
  std::string text;
  campaign_outputs out;
  std::exception_ptr failed;
  if (comm.rank() == 0) {
    try {
      out = write_campaign_outputs(t, keys, artifacts, table, verbose);
      text = encode(out);
    } catch (const std::exception &e) {
      failed = std::current_exception();
      text.clear();
      put(text, "error");
      put(text, e.what());
    }
  }
  // The other ranks learn what rank 0 wrote, or that it failed, so that they return the same or
  // fail with it.
  broadcast_text(comm, text, what);
  if (comm.rank() == 0) {
    if (failed) {
      std::rethrow_exception(failed);
    }
    return out;
  }
  return decode(text, what);
}

} // namespace detail

} // namespace tunekit
