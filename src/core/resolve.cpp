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
    const config &d = cands[i];
    if (d.template_id() == c.template_id() && d.size() == c.size() &&
        std::all_of(d.begin(), d.end(), [&](const field &f) {
          const value *v = c.find(f.name);
          return v != nullptr && *v == f.value;
        })) {
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
  if ((out.answer = from_cache(s, c)) || (out.answer = from_artifact(s, c))) {
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

std::optional<proposal> from_cache(const resolve_sources &s, const resolve_call &c) {
  // Nothing kept: the prune error comes after agreement; no cache warning before it.
  if (!s.opts.use_disk_cache || std::find(c.kept.begin(), c.kept.end(), true) == c.kept.end()) {
    return std::nullopt;
  }
  const auto r = s.cache.load({s.name, s.opts.version}, s.hw, c.pinned);
  if (r.rejected()) {
    s.log.warn("skipping winner cache entry " + r.path.string() + ": " + r.detail + "; retuning");
  }
  if (!r.found()) {
    return std::nullopt;
  }
  const auto it = std::find(c.candidates.begin(), c.candidates.end(), r.value->winner);
  const auto i = static_cast<std::size_t>(it - c.candidates.begin());
  if (it == c.candidates.end() || !c.kept[i]) {
    s.log.warn("skipping winner cache entry " + r.path.string() + ": its winner (" +
               r.value->winner.to_string() + ") is not among the current candidates; retuning");
    return std::nullopt;
  }
  const std::string diff = dependency_diff(r.value->dependencies, s.deps);
  if (!diff.empty()) {
    const std::string head =
        "winner cache entry " + r.path.string() + " was recorded with other dependencies (" + diff;
    if (s.env.version_check) {
      s.log.warn(head + "); retuning (TUNEKIT_VERSION_CHECK=1)");
      return std::nullopt;
    }
    s.log.warn(head + "); using it (set TUNEKIT_VERSION_CHECK=1 to retune)");
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
