#include "resolve.hpp"
#include "cache_entry.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/error.hpp>

#include <algorithm>
#include <cctype>

namespace tunekit {

std::string_view to_string(source s) noexcept {
  switch (s) {
  case source::memory:
    return "memory";
  case source::cache:
    return "cache";
  case source::artifact:
    return "artifact";
  case source::table:
    return "table";
  case source::nearest:
    return "nearest";
  case source::default_config:
    return "default";
  case source::search:
    return "search";
  case source::table_search:
    return "table_search";
  case source::disabled:
    return "disabled";
  }
  return "unknown";
}

std::string_view to_string(effort e) noexcept {
  switch (e) {
  case effort::off:
    return "off";
  case effort::cached:
    return "cached";
  case effort::quick:
    return "quick";
  case effort::full:
    return "full";
  }
  return "unknown";
}

std::optional<effort> parse_effort(std::string_view name) noexcept {
  for (const effort e : {effort::off, effort::cached, effort::quick, effort::full}) {
    const std::string_view n = to_string(e);
    if (std::equal(name.begin(), name.end(), n.begin(), n.end(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == b;
        })) {
      return e;
    }
  }
  return std::nullopt;
}

} // namespace tunekit

namespace tunekit::detail {

namespace {

// The entry of the call when the cache is on and the entry is valid and recorded for this space;
// a rejected one is reported.
std::optional<cache_entry> load_entry(const resolve_sources &s, const key &stored,
                                      std::filesystem::path &path) {
  if (!s.opts.use_disk_cache) {
    return std::nullopt;
  }
  auto r = s.cache.load({s.name, s.opts.version}, s.hw, stored);
  path = r.path;
  if (r.rejected()) {
    s.log.warn("skipping winner cache entry " + r.path.string() + ": " + r.detail + "; retuning");
  }
  if (!r.found()) {
    return std::nullopt;
  }
  if (r.value->key_buckets != s.buckets) {
    std::string text = "skipping winner cache entry ";
    text += r.path.string();
    text += ": it was recorded with ";
    text += r.value->key_buckets.empty() ? "no key buckets" : "the key buckets ";
    text += r.value->key_buckets;
    text += ", not ";
    text += s.buckets.empty() ? "none" : s.buckets;
    text += "; retuning";
    s.log.warn(text);
    return std::nullopt;
  }
  if (timed_another_way(*r.value, s.measurer)) {
    s.log.warn("skipping winner cache entry " + r.path.string() +
               ": its candidates were timed by the measurer '" + r.value->measurer +
               "', this tuner's is '" + s.measurer +
               "' (CUDA-graph timing and eager timing pick differently); retuning");
    return std::nullopt;
  }
  if (r.value->space && r.value->space->digest != s.space_digest) {
    s.log.warn("skipping winner cache entry " + r.path.string() +
               ": it was recorded for another config space (" +
               std::to_string(r.value->space->size) + " candidates); retuning");
    return std::nullopt;
  }
  return std::move(r.value);
}

// Whether an entry recorded with other dependencies is used (reported either way).
bool dependencies_allow(const resolve_sources &s, const std::filesystem::path &path,
                        const cache_entry &e) {
  const std::string diff = dependency_diff(e.dependencies, s.deps);
  if (diff.empty()) {
    return true;
  }
  const std::string head =
      "winner cache entry " + path.string() + " was recorded with other dependencies (" + diff;
  if (s.env.version_check) {
    s.log.warn(head + "); retuning (TUNEKIT_VERSION_CHECK=1)");
    return false;
  }
  s.log.warn(head + "); using it (set TUNEKIT_VERSION_CHECK=1 to retune)");
  return true;
}

// Step 2: the winner cache entry of this call, if it is valid and its winner is still kept. The
// winner is found at the position the entry records (entries of older versions record none and
// are searched by value), and prune_fn is asked about that one config only, so a hit costs the
// same whatever the size of the space.
std::optional<proposal> from_cache(const resolve_sources &s, call_candidates &c) {
  std::filesystem::path path;
  const auto e = load_entry(s, c.stored_key(), path);
  if (!e) {
    return std::nullopt;
  }
  std::optional<std::size_t> at;
  if (e->space) {
    const std::size_t i = e->space->winner;
    if (e->space->size == c.size() && i < c.size() && c[i] == e->winner) {
      at = i;
    }
  } else {
    const auto it = std::find(c.configs().begin(), c.configs().end(), e->winner);
    if (it != c.configs().end()) {
      at = static_cast<std::size_t>(it - c.configs().begin());
    }
  }
  if (at && !c.kept(*at) && !c.failure()) {
    // Its winner is pruned for this call. When prune_fn keeps nothing at all, that error comes
    // after the vote, with no warning about the entry before it.
    c.prune_all();
    if (c.kept_count() == 0) {
      return std::nullopt;
    }
  }
  if (!at || !c.kept(*at)) {
    if (!c.failure()) { // a prune_fn error is raised by the vote instead
      s.log.warn("skipping winner cache entry " + path.string() + ": its winner (" +
                 e->winner.to_string() + ") is not among the current candidates; retuning");
    }
    return std::nullopt;
  }
  if (!dependencies_allow(s, path, *e)) {
    return std::nullopt;
  }
  return proposal{*at, source::cache};
}

// Step 3: the reviewed artifact of this call (artifact name and directory set).
std::optional<proposal> from_artifact(const resolve_sources &s, call_candidates &c) {
  if (s.opts.artifact.name.empty() || s.env.artifact_dir.empty()) {
    return std::nullopt;
  }
  const auto r = load_artifact(s.env.artifact_dir, s.opts.artifact.name, c.stored_key(),
                               device_identity::of(s.hw));
  std::string problem = r.found() ? "" : r.rejected() ? r.detail : "no such file";
  std::optional<std::size_t> i;
  if (problem.empty()) {
    problem =
        artifact_config_problem(r.value->config, s.space, c.pinned(), s.opts.artifact.key_names);
  }
  if (problem.empty()) {
    i = c.find(r.value->config);
    problem = !i            ? "its config is not a candidate of this call"
              : !c.kept(*i) ? "prune_fn rejects its config for this call"
                            : "";
  }
  if (!problem.empty()) {
    if (!c.failure()) {
      s.log.warn(c.context() + ": ignoring artifact " + r.path.string() + ": " + problem);
    }
    return std::nullopt;
  }
  return proposal{*i, source::artifact};
}

// What the lookup table says about this call: the kept candidates it names (device-specific key
// first), the key that named them, and the entries it dropped.
struct table_lookup {
  std::vector<std::size_t> choices;
  std::string key;
  std::vector<std::string> warnings;
};

table_lookup lookup(const resolve_sources &s, call_candidates &c) {
  table_lookup out;
  if (s.table == nullptr) {
    return out;
  }
  config params = with_pins(s.opts.table.params, c.pinned());
  const table_key_format fmt = s.opts.table.key_format;
  const std::string p = table_params(params, fmt);
  const std::string op = s.opts.table.op_name.empty() ? s.name : s.opts.table.op_name;
  for (const std::string &tk : {tunekit::table_key(s.hw.name, c.input_key(), p, op, fmt),
                                tunekit::table_key("", c.input_key(), p, op, fmt)}) {
    const auto *entries = s.table->find(tk);
    if (entries == nullptr) {
      continue;
    }
    for (const auto &e : *entries) {
      const std::string &id = e.choice.template_id();
      if (std::find(s.templates.begin(), s.templates.end(), id) == s.templates.end()) {
        continue; // a template this tuner does not have
      }
      const auto h = s.opts.table.template_hashes.find(id);
      if (!e.template_hash.empty() && h != s.opts.table.template_hashes.end() &&
          h->second != e.template_hash) {
        out.warnings.push_back("lookup table key '" + tk + "': dropping stale entry [" +
                               e.choice.to_string() + "]: its template_hash " + e.template_hash +
                               " is not the current " + h->second);
        continue;
      }
      const auto i = c.find(e.choice);
      if (!i) {
        out.warnings.push_back("lookup table key '" + tk + "': dropping entry [" +
                               e.choice.to_string() + "]: not a config of the space");
        continue;
      }
      if (c.kept(*i) &&
          std::find(out.choices.begin(), out.choices.end(), *i) == out.choices.end()) {
        out.choices.push_back(*i);
      }
    }
    if (!out.choices.empty()) {
      out.key = tk;
      return out;
    }
  }
  return out;
}

} // namespace

std::optional<proposal> stored_proposal(const resolve_sources &s, const resolve_call &c) {
  if (s.env.always_tune) {
    return std::nullopt;
  }
  call_candidates &cands = c.candidates;
  if (auto p = from_cache(s, cands)) {
    return p;
  }
  if (cands.failure()) {
    return std::nullopt;
  }
  if (auto p = from_artifact(s, cands)) {
    return p;
  }
  if (cands.failure()) {
    return std::nullopt;
  }
  const table_lookup t = lookup(s, cands);
  for (const auto &w : t.warnings) {
    s.log.warn(w);
  }
  if (c.verbose && !t.choices.empty()) {
    s.log.info(cands.context() + ": lookup table key '" + t.key + "' gives " +
               std::to_string(t.choices.size()) + (t.choices.size() == 1 ? " choice" : " choices"));
  }
  if (t.choices.size() == 1) {
    return proposal{t.choices[0], source::table};
  }
  if (!t.choices.empty() || cands.failure()) {
    return std::nullopt; // several choices: a search among them
  }
  if (s.known != nullptr) {
    if (auto near = s.known->nearest(cands, s.opts.shapes.nearest_over)) {
      if (c.verbose) {
        s.log.info(cands.context() + ": nothing stored; the nearest key with a winner is " +
                   near->second.to_string());
      }
      return proposal{near->first, source::nearest, std::move(near->second)};
    }
  }
  return from_default(c);
}

std::vector<std::size_t> table_narrowing(const resolve_sources &s, call_candidates &c) {
  table_lookup t = lookup(s, c);
  if (t.choices.size() < 2) {
    return {};
  }
  c.narrow_to(t.choices);
  return std::move(t.choices);
}

search_effort search_effort_of(effort level, const search_settings &settings,
                               const measure_policy &policy) {
  search_effort out{settings, policy};
  if (level == effort::quick) {
    out.settings.budget.max_evaluations =
        std::min(settings.budget.max_evaluations, quick_max_evaluations);
    out.policy.warmup = std::min(policy.warmup, quick_warmup);
    out.policy.runs = std::min(policy.runs, quick_runs);
    out.settings.rerank.band = 0; // a quick search is not re-measured
  }
  return out;
}

std::optional<proposal> from_default(const resolve_call &c) {
  if (c.default_fn == nullptr) {
    return std::nullopt;
  }
  config d;
  try {
    d = with_pins((*c.default_fn)(), c.candidates.pinned());
  } catch (const std::exception &e) {
    throw error(c.candidates.context() + ": default_fn threw: " + e.what());
  }
  const auto i = c.candidates.find(d);
  if (!i) {
    throw error(c.candidates.context() + ": default_fn gave [" + d.to_string() +
                "], which is not a config of the space");
  }
  return proposal{*i, source::default_config};
}

} // namespace tunekit::detail
