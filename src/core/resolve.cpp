#include "resolve.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/error.hpp>

#include <algorithm>

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

} // namespace tunekit

namespace tunekit::detail {

void check_pins(const std::string &tuner, const config_space &space, const call_options &o) {
  if (o.allow_arg_overwrite) {
    return;
  }
  for (const auto &f : o.pinned) {
    if (space.has_field(f.name)) {
      throw error("tuner '" + tuner + "': the argument '" + f.name +
                  "' is also a config field; pass allow_arg_overwrite to let the argument "
                  "win (that field is then not tuned)");
    }
  }
}

std::vector<config> pinned_candidates(const config_space &space, const config &pinned) {
  if (pinned.empty()) {
    return space.configs();
  }
  std::vector<config> out;
  for (const auto &c : space) {
    config p = with_pins(c, pinned);
    if (std::find(out.begin(), out.end(), p) == out.end()) {
      out.push_back(std::move(p));
    }
  }
  return out;
}

config with_pins(config c, const config &pinned) {
  for (const auto &f : pinned) {
    c.set(f.name, f.value);
  }
  return c;
}

std::optional<std::size_t> index_of_equivalent(const std::vector<config> &cands, const config &c) {
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (cands[i].same_fields(c)) {
      return i;
    }
  }
  return std::nullopt;
}

stored_answer stored_proposal(const resolve_sources &s, const resolve_call &c) {
  if (s.env.always_tune) {
    return {};
  }
  // The table is read even when the cache or an artifact answers: should the ranks disagree, all
  // of them search among the same choices, so their candidate lists stay equal.
  std::string table_key;
  std::vector<std::string> table_warnings;
  const std::vector<std::size_t> choices = table_choices(s, c, table_key, table_warnings);
  // Reported only when no earlier source answered (so a cache hit stays quiet).
  auto table_used = [&] {
    for (const auto &w : table_warnings) {
      s.log.warn(w);
    }
    if (c.verbose && !choices.empty()) {
      s.log.info(c.what + ": lookup table key '" + table_key + "' gives " +
                 std::to_string(choices.size()) + (choices.size() == 1 ? " choice" : " choices"));
    }
  };
  stored_answer out;
  if (choices.size() > 1) {
    out.search_among.emplace(c.kept.size(), false);
    for (auto i : choices) {
      (*out.search_among)[i] = true;
    }
  }
  if ((out.answer = c.cache_judged ? c.cached : from_cache(s, c)) ||
      (out.answer = from_artifact(s, c))) {
    return out;
  }
  table_used();
  if (!choices.empty()) {
    if (choices.size() == 1) {
      out.answer = proposal{choices[0], source::table};
    }
    return out;
  }
  out.answer = from_default(s, c);
  return out;
}

namespace {

// The entry of `pinned` when the cache is on and the entry is valid and recorded for this space;
// a rejected one is reported.
std::optional<cache_entry> load_entry(const resolve_sources &s, const key &pinned,
                                      std::filesystem::path &path) {
  if (!s.opts.use_disk_cache) {
    return std::nullopt;
  }
  auto r = s.cache.load({s.name, s.opts.version}, s.hw, pinned);
  path = r.path;
  if (r.rejected()) {
    s.log.warn("skipping winner cache entry " + r.path.string() + ": " + r.detail + "; retuning");
  }
  if (!r.found()) {
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

void winner_gone(const resolve_sources &s, const std::filesystem::path &path, const config &w) {
  s.log.warn("skipping winner cache entry " + path.string() + ": its winner (" + w.to_string() +
             ") is not among the current candidates; retuning");
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

} // namespace

cache_lookup cached_winner(const resolve_sources &s, const key &pinned,
                           function_ref<bool(const config &)> prune) {
  if (s.env.always_tune) {
    return {};
  }
  std::filesystem::path path;
  const auto e = load_entry(s, pinned, path);
  if (!e) {
    return {};
  }
  if (!e->space) {
    return {std::nullopt, false};
  }
  const std::size_t at = e->space->winner;
  if (e->space->size != s.space.size() || at >= s.space.size() || !(s.space[at] == e->winner)) {
    winner_gone(s, path, e->winner);
    return {};
  }
  // A winner pruned for this call is left to `from_cache`, after the full pruning: when nothing
  // is kept at all that error comes first, with no warning about the entry before it. An error of
  // prune_fn is met again there too, and voted with.
  try {
    if (!prune(s.space[at])) {
      return {std::nullopt, false};
    }
  } catch (const std::exception &) {
    return {std::nullopt, false};
  }
  if (!dependencies_allow(s, path, *e)) {
    return {};
  }
  return {proposal{at, source::cache}};
}

std::optional<proposal> from_cache(const resolve_sources &s, const resolve_call &c) {
  // Nothing kept: the prune error comes after agreement; no cache warning before it.
  if (std::find(c.kept.begin(), c.kept.end(), true) == c.kept.end()) {
    return std::nullopt;
  }
  std::filesystem::path path;
  const auto e = load_entry(s, c.pinned, path);
  if (!e) {
    return std::nullopt;
  }
  const auto it = std::find(c.candidates.begin(), c.candidates.end(), e->winner);
  const auto i = static_cast<std::size_t>(it - c.candidates.begin());
  if (it == c.candidates.end() || !c.kept[i]) {
    winner_gone(s, path, e->winner);
    return std::nullopt;
  }
  if (!dependencies_allow(s, path, *e)) {
    return std::nullopt;
  }
  return proposal{i, source::cache};
}

std::optional<proposal> from_artifact(const resolve_sources &s, const resolve_call &c) {
  if (s.opts.artifact.name.empty() || s.env.artifact_dir.empty()) {
    return std::nullopt;
  }
  const auto r =
      load_artifact(s.env.artifact_dir, s.opts.artifact.name, c.pinned, device_identity::of(s.hw));
  std::string problem = r.found() ? "" : r.rejected() ? r.detail : "no such file";
  std::optional<std::size_t> i;
  if (problem.empty()) {
    problem =
        artifact_config_problem(r.value->config, s.space, c.o.pinned, s.opts.artifact.key_names);
  }
  if (problem.empty()) {
    i = index_of_equivalent(c.candidates, with_pins(r.value->config, c.o.pinned));
    problem = !i            ? "its config is not a candidate of this call"
              : !c.kept[*i] ? "prune_fn rejects its config for this call"
                            : "";
  }
  if (!problem.empty()) {
    s.log.warn(c.what + ": ignoring artifact " + r.path.string() + ": " + problem);
    return std::nullopt;
  }
  return proposal{*i, source::artifact};
}

std::vector<std::size_t> table_choices(const resolve_sources &s, const resolve_call &c,
                                       std::string &table_key, std::vector<std::string> &warnings) {
  if (s.table == nullptr) {
    return {};
  }
  config params = s.opts.table.params;
  for (const auto &f : c.o.pinned) {
    params.set(f.name, f.value);
  }
  const std::string p = table_params(params);
  const std::string op = s.opts.table.op_name.empty() ? s.name : s.opts.table.op_name;
  for (const std::string &tk :
       {tunekit::table_key(s.hw.name, c.k, p, op), tunekit::table_key("", c.k, p, op)}) {
    const auto *entries = s.table->find(tk);
    if (entries == nullptr) {
      continue;
    }
    std::vector<std::size_t> out;
    for (const auto &e : *entries) {
      const std::string &id = e.choice.template_id();
      if (std::find(s.templates.begin(), s.templates.end(), id) == s.templates.end()) {
        continue; // a template this tuner does not have
      }
      const auto h = s.opts.table.template_hashes.find(id);
      if (!e.template_hash.empty() && h != s.opts.table.template_hashes.end() &&
          h->second != e.template_hash) {
        warnings.push_back("lookup table key '" + tk + "': dropping stale entry [" +
                           e.choice.to_string() + "]: its template_hash " + e.template_hash +
                           " is not the current " + h->second);
        continue;
      }
      const auto i = index_of_equivalent(c.candidates, with_pins(e.choice, c.o.pinned));
      if (!i) {
        warnings.push_back("lookup table key '" + tk + "': dropping entry [" +
                           e.choice.to_string() + "]: not a config of the space");
        continue;
      }
      if (c.kept[*i] && std::find(out.begin(), out.end(), *i) == out.end()) {
        out.push_back(*i);
      }
    }
    if (!out.empty()) {
      table_key = tk;
      return out;
    }
  }
  return {};
}

std::optional<proposal> from_default(const resolve_sources & /*s*/, const resolve_call &c) {
  if (c.default_fn == nullptr) {
    return std::nullopt;
  }
  config d;
  try {
    d = with_pins((*c.default_fn)(), c.o.pinned);
  } catch (const std::exception &e) {
    throw error(c.what + ": default_fn threw: " + e.what());
  }
  const auto i = index_of_equivalent(c.candidates, d);
  if (!i) {
    throw error(c.what + ": default_fn gave [" + d.to_string() +
                "], which is not a config of the space");
  }
  return proposal{*i, source::default_config};
}

} // namespace tunekit::detail
