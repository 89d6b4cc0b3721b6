#pragma once
// The candidates of one call (DESIGN.md, "The flow of one call"): the space with the call's pinned
// values applied, the key the tuner stores for the call, and what prune_fn keeps. Pruning is asked
// lazily, one index at a time and remembered, so that a stored answer costs one prune_fn call
// whatever the size of the space; a search first asks about every candidate (`prune_all`).

#include <tunekit/config_space.hpp>
#include <tunekit/detail/function_ref.hpp>
#include <tunekit/key.hpp>
#include <tunekit/tuner_options.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::detail {

class call_candidates final {
public:
  /// Throws `tunekit::error` when a pinned value is also a config field and the call does not
  /// allow it (`call_options::allow_arg_overwrite`). `tuner` names the tuner in that error.
  call_candidates(const std::string &tuner, const config_space &space, const key &input,
                  const call_options &o, function_ref<bool(const config &)> prune);

  /// key_fn's key (lookup table keys are built from it).
  [[nodiscard]] const key &input_key() const noexcept { return m_input; }
  /// The key the tuner stores: `stored_key(input, pinned)` (cache, artifact and memory identity).
  [[nodiscard]] const key &stored_key() const noexcept {
    return m_options.pinned.empty() ? m_input : m_stored;
  }
  [[nodiscard]] const config &pinned() const noexcept { return m_options.pinned; }
  /// "tuner 'x', key (...)" with the stored key: the context of the call's messages.
  [[nodiscard]] const std::string &context() const noexcept { return m_context; }

  /// The candidates: the space's configs, or with pinned values each config with them set (configs
  /// that become equal collapse into one). Built on first use.
  [[nodiscard]] const std::vector<config> &configs() const;
  [[nodiscard]] std::size_t size() const { return configs().size(); }
  [[nodiscard]] const config &operator[](std::size_t i) const { return configs()[i]; }
  /// The candidate equal to `c` with the pinned values set, fields in any order.
  [[nodiscard]] std::optional<std::size_t> find(const config &c) const;

  /// Whether prune_fn keeps candidate `i`, asked once. An exception of prune_fn counts as not
  /// kept and is remembered as this rank's `failure`.
  [[nodiscard]] bool kept(std::size_t i);
  /// Asks prune_fn about every candidate not asked yet, up to the first failure.
  void prune_all();
  /// After `prune_all`: one flag per candidate.
  [[nodiscard]] const std::vector<bool> &kept_list() const noexcept { return m_kept; }
  [[nodiscard]] std::size_t kept_count() const noexcept;
  /// Keeps only `choices` (a lookup table's several choices) of the kept candidates.
  void narrow_to(std::span<const std::size_t> choices);
  /// The first exception of prune_fn, as the text every rank raises.
  [[nodiscard]] const std::optional<std::string> &failure() const noexcept { return m_failure; }

  /// What the ranks vote on before a search: the stored key, the space's digest (the pinned values
  /// are in the key) and one `+` or `-` per candidate.
  [[nodiscard]] std::string vote_text(std::string_view space_digest) const;

private:
  enum class verdict : unsigned char { unknown, kept, pruned };

  const config_space &m_space;
  const call_options &m_options;
  function_ref<bool(const config &)> m_prune;
  const key &m_input;
  key m_stored; // with pinned values only
  std::string m_context;
  mutable std::optional<std::vector<config>> m_pinned_configs;
  std::vector<verdict> m_verdicts;
  std::vector<bool> m_kept;
  std::optional<std::string> m_failure;
};

/// Config fields the caller pins are refused (naming the field) unless `allow_arg_overwrite`.
void check_pins(const std::string &tuner, const config_space &space, const call_options &o);

/// `c` with the pinned values set.
[[nodiscard]] config with_pins(config c, const config &pinned);

} // namespace tunekit::detail
