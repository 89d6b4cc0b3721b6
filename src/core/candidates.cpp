#include "candidates.hpp"

#include <tunekit/error.hpp>
#include <tunekit/winner_cache.hpp>

#include <algorithm>
#include <exception>

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

config with_pins(config c, const config &pinned) {
  for (const auto &f : pinned) {
    c.set(f.name, f.value);
  }
  return c;
}

call_candidates::call_candidates(const std::string &tuner, const config_space &space,
                                 const key &input, const call_options &o,
                                 function_ref<bool(const config &)> prune)
    : m_space(space), m_options(o), m_prune(prune), m_input(input),
      m_stored(o.pinned.empty() ? key{} : tunekit::stored_key(input, o.pinned)),
      m_context("tuner '" + tuner + "', key " + stored_key().to_string()) {
  check_pins(tuner, space, o);
}

const std::vector<config> &call_candidates::configs() const {
  if (m_options.pinned.empty()) {
    return m_space.configs();
  }
  if (!m_pinned_configs) {
    std::vector<config> out;
    for (const auto &c : m_space) {
      config p = with_pins(c, m_options.pinned);
      if (std::find(out.begin(), out.end(), p) == out.end()) {
        out.push_back(std::move(p));
      }
    }
    m_pinned_configs = std::move(out);
  }
  return *m_pinned_configs;
}

std::optional<std::size_t> call_candidates::find(const config &c) const {
  const config wanted = with_pins(c, m_options.pinned);
  const std::vector<config> &all = configs();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].same_fields(wanted)) {
      return i;
    }
  }
  return std::nullopt;
}

bool call_candidates::kept(std::size_t i) {
  if (m_verdicts.empty()) {
    m_verdicts.assign(size(), verdict::unknown);
  }
  if (m_verdicts[i] == verdict::unknown) {
    bool keep = false;
    try {
      keep = m_prune((*this)[i]);
    } catch (const std::exception &e) {
      if (!m_failure) {
        m_failure =
            m_context + ": prune_fn threw for [" + (*this)[i].to_string() + "]: " + e.what();
      }
    }
    m_verdicts[i] = keep ? verdict::kept : verdict::pruned;
  }
  return m_verdicts[i] == verdict::kept;
}

void call_candidates::prune_all() {
  m_kept.assign(size(), false);
  for (std::size_t i = 0; i < m_kept.size() && !m_failure; ++i) {
    m_kept[i] = kept(i);
  }
}

std::size_t call_candidates::kept_count() const noexcept {
  return static_cast<std::size_t>(std::count(m_kept.begin(), m_kept.end(), true));
}

void call_candidates::narrow_to(std::span<const std::size_t> choices) {
  std::vector<bool> among(m_kept.size(), false);
  for (const std::size_t i : choices) {
    among[i] = m_kept[i];
  }
  m_kept = std::move(among);
}

std::string call_candidates::vote_text(std::string_view space_digest) const {
  // The space is named by its digest, so the text grows by one byte per candidate.
  std::string text = stored_key().to_string();
  text += '|';
  text += space_digest;
  text += '|';
  text.reserve(text.size() + m_kept.size());
  for (const bool k : m_kept) {
    text += k ? '+' : '-';
  }
  return text;
}

} // namespace tunekit::detail
