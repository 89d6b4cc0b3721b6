#pragma once
/// \file winner_cache.hpp
/// The winner cache on disk: `<root>/autotune/<function>/<digest>.json`, one entry per (function
/// identity, hardware, key), with a tuning log `<digest>.log` beside it. Entries are written
/// atomically (temp file in the same directory, then rename) and validated when read: a corrupt,
/// truncated, wrong-schema or mismatched entry is reported and skipped, never trusted.

#include <tunekit/config.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/load_result.hpp>
#include <tunekit/measure.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

/// What happened to one candidate of a search.
enum class candidate_status {
  ok,           ///< measured; its time is valid
  failed,       ///< it threw or its launch failed; `reason` says why
  wrong_result, ///< it ran but the correctness check rejected its output
  pruned,       ///< prune_fn removed it; never run
};
[[nodiscard]] std::string_view to_string(candidate_status s) noexcept;

/// One candidate of a search, as measured.
struct candidate_record {
  tunekit::config config;
  candidate_status status = candidate_status::ok;
  /// The policy's statistic in milliseconds; +infinity unless `status` is ok.
  double time_ms = std::numeric_limits<double>::infinity();
  sample_stats stats{};
  std::string reason;
  /// Time spent preparing it before it could run (its compile), when a preparer said.
  std::optional<double> prepare_ms{};
  /// The rank that measured it when the parallel split gave it to one rank (absent when every
  /// rank measured it). Entries of schema `/1` said so only in `reason` ("measured on rank N",
  /// "failed on rank N"); their reader sets it from there.
  std::optional<int> measured_on{};
};

/// The re-rank of a search's leaders, when one ran (`rerank_settings`).
struct rerank_record {
  double band = 0; ///< leaders were within (1 + band) x the search's best score
  int rounds = 0;
  int runs = 0; ///< timed runs of each leader per round (after one untimed run)
  /// The leaders, as indices into `cache_entry::candidates`, best (by the search) first.
  std::vector<std::size_t> leaders{};
  /// Per leader: its re-rank runs of every round on this rank (a leader that failed in the
  /// re-rank: count 0).
  std::vector<sample_stats> stats{};
  /// Per leader: the policy's statistic of those runs, worst rank counting; +infinity for a
  /// leader that failed on any rank.
  std::vector<double> scores{};
  std::size_t winner_before = 0; ///< the search's winner, an index into `candidates`
};

/// How a search chose its candidates, when a strategy did (the space was larger than the budget).
struct search_record {
  std::string strategy;   ///< "hybrid", "tpe", ...
  std::uint64_t seed = 0; ///< the strategy's seed
  std::size_t max_evaluations = 0;
  double max_time_s = 0;    ///< 0: no wall-time limit
  std::size_t patience = 0; ///< 0: none
  std::size_t batch_size = 1;
  std::size_t lookahead = 0;   ///< proposals made ahead of the batch measured
  std::size_t space_size = 0;  ///< kept candidates the strategy chose among
  std::size_t evaluations = 0; ///< distinct candidates measured
  std::string stop;            ///< why it stopped: evaluations, time, patience, exhausted
  std::size_t transferred =
      0; ///< start points and transfer points (other devices or keys) measured
  /// The measured candidates in the order they were measured: indices into
  /// `cache_entry::candidates` (which lists them in candidate order). Empty in entries written
  /// before it was recorded.
  std::vector<std::size_t> order{};
  friend bool operator==(const search_record &, const search_record &) = default;
};

/// The candidates a search chose from. The entry lists only the kept ones (pruned configs are
/// counted, not listed), so a cache hit costs the same whatever the size of the space.
struct space_record {
  std::size_t size = 0;   ///< candidates of the call (the space with any pinned values applied)
  std::size_t pruned = 0; ///< of them, removed by prune_fn
  /// SHA-256 of the space's configs (templates and canonical text, in order; docs/cache.md).
  std::string digest;
  std::size_t winner = 0; ///< the winner's position among the `size` candidates
  /// The index in `cache_entry::candidates` of the call's first candidate (the default, what the
  /// speed-up is taken over), when it was measured; absent in entries written before it was
  /// recorded.
  std::optional<std::size_t> default_candidate{};
  friend bool operator==(const space_record &, const space_record &) = default;
};

/// The name and code identity of a tuned function.
struct function_identity {
  std::string name;
  /// A hash of the tuned code or an explicit version string.
  std::string version;
  friend bool operator==(const function_identity &, const function_identity &) = default;
};

/// One winner cache entry.
struct cache_entry {
  static constexpr std::string_view schema = "tunekit.winner_cache/2";
  /// The schema before `candidate_record::measured_on`; still read.
  static constexpr std::string_view schema_v1 = "tunekit.winner_cache/1";

  function_identity function;
  tunekit::key key;
  hardware_info hardware;
  tunekit::dependencies dependencies;
  tunekit::config winner;
  std::size_t winner_index = 0; ///< index of the winner in `candidates`
  std::vector<candidate_record> candidates;
  measure_policy policy;
  std::string measurer;
  int world_size = 1;
  std::string timestamp; ///< UTC, ISO 8601
  /// The tuner's key buckets when the entry was recorded (`describe_buckets`); empty: none. The
  /// key is the bucketed one. An entry recorded with other buckets is not used.
  std::string key_buckets{};
  /// Set when a strategy searched part of the space; `candidates` then holds the measured ones.
  std::optional<search_record> search{};
  /// Set when the search's leaders were re-ranked; `winner` is then the re-rank's.
  std::optional<rerank_record> rerank{};
  /// The space the candidates came from (absent in entries of older versions, which listed the
  /// pruned candidates too).
  std::optional<space_record> space{};
};

/// The entry's valid candidates, fastest first (ties keep the candidates' order), at most `k`:
/// what a lookup table or a search on another device takes from it.
[[nodiscard]] std::vector<const candidate_record *> fastest_candidates(const cache_entry &e,
                                                                       std::size_t k);

/// The tuning log written beside an entry (`<digest>.log`): identity, key, hardware, policy, one
/// line per candidate with its time or failure, the winner and the search's wall time.
[[nodiscard]] std::string tuning_log(const cache_entry &e, double seconds);

/// Serialises an entry to its JSON text (types kept exactly).
[[nodiscard]] std::string to_json(const cache_entry &e);
/// Parses and validates an entry; throws `tunekit::error` saying what is wrong with it.
[[nodiscard]] cache_entry cache_entry_from_json(std::string_view text);

/// The two parts of the key a tuner stores: the values of `key_fn`, then one pair
/// (`"pinned NAME"`, value) per value the call pinned, in the order they were pinned.
struct stored_key_parts {
  tunekit::key input;
  tunekit::config pinned;
};
/// The key a tuner stores for `input` with `pinned` values: `input` followed by one
/// (`"pinned NAME"`, value) pair per pinned field.
[[nodiscard]] key stored_key(const key &input, const config &pinned);
/// Splits a stored key into its input values and pinned values (the inverse of `stored_key`).
/// Marker pairs are read from the end of the key, so a `key_fn` whose own last values look like a
/// marker pair ("pinned X", v) cannot be told apart from a pinned call.
[[nodiscard]] stored_key_parts split_stored_key(const key &stored);

/// The digest naming an entry: SHA-256 over function identity, hardware digest and canonical key.
[[nodiscard]] std::string cache_digest(const function_identity &fn, const hardware_info &hw,
                                       const key &k);

class winner_cache final {
public:
  /// `root` is the cache directory (e.g. `environment::cache_dir`).
  explicit winner_cache(std::filesystem::path root);

  [[nodiscard]] const std::filesystem::path &root() const noexcept { return m_root; }
  /// `<root>/autotune/<function name, made file-safe>`.
  [[nodiscard]] std::filesystem::path function_dir(std::string_view function) const;
  [[nodiscard]] std::filesystem::path entry_path(const function_identity &fn,
                                                 const hardware_info &hw, const key &k) const;

  /// The entry of (fn, hw, k): found, missing, or a file that exists but was not used (unreadable,
  /// invalid, recorded for another identity), with `detail` saying why.
  [[nodiscard]] load_result<cache_entry> load(const function_identity &fn, const hardware_info &hw,
                                              const key &k) const;

  /// Writes the entry (and `log_text` as the tuning log beside it) atomically; returns its path.
  /// Throws `tunekit::error` naming the path when it cannot be written.
  std::filesystem::path store(const cache_entry &e, std::string_view log_text) const;

  /// Every `*.json` entry file, optionally of one function.
  [[nodiscard]] std::vector<std::filesystem::path> list(std::string_view function = {}) const;

  /// The entry stored in the file `path` (e.g. one of `list()`), validated: readable, a valid
  /// entry, and named by its own identity (`<cache_digest>.json`). Never throws for a bad file: the
  /// status says whether it was missing, unreadable, invalid or misnamed (`identity_mismatch`).
  [[nodiscard]] static load_result<cache_entry> read(const std::filesystem::path &path);

  /// Removes the entries of `function` (every entry when empty) and their tuning logs; returns the
  /// entry files it removed. Throws `tunekit::error` naming a file that cannot be removed.
  std::vector<std::filesystem::path> remove(std::string_view function = {}) const;

private:
  std::filesystem::path m_root;
};

} // namespace tunekit
