#pragma once
/// \file tuner_options.hpp
/// The vocabulary of a tuned call: which source answered (`source`), when a tuner may search
/// (`tuning_mode`), the per-call options, and the options fixed when a tuner is built (search
/// settings, lookup table, artifacts). The stages of a call (resolution, search, transfer) include
/// this header, never `tuner.hpp`.

#include <tunekit/communicator.hpp>
#include <tunekit/config.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/process_context.hpp>
#include <tunekit/shapes.hpp>
#include <tunekit/strategy/run_search.hpp>
#include <tunekit/winner_cache.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

/// Which source answered a call ("provenance").
enum class source {
  memory,         ///< in-process winner
  cache,          ///< winner cache on disk
  artifact,       ///< reviewed deployment artifact
  table,          ///< lookup table entry
  nearest,        ///< the winner of the nearest known key (`miss_policy::nearest`)
  default_config, ///< the tuner's default function
  search,         ///< measured now
  table_search,   ///< measured now, among the several choices the lookup table names
  disabled,       ///< the space's first config: `autotune=false`, `off`, a `cached` miss
};
[[nodiscard]] std::string_view to_string(source s) noexcept;

/// When a tuner may search.
enum class tuning_mode {
  /// The first call of a key that no stored winner answers searches.
  eager,
  /// Calls record their keys and run the default config (the default function's when the tuned
  /// function has one, else the space's first; source `default_config`), with no
  /// collective and no measurement, until `tuner::arm` has been called on every rank; from then
  /// on the tuner behaves as in eager mode. For multi-rank jobs whose ranks reach readiness at
  /// different times: the application picks the synchronised moment.
  deferred,
};

/// How much a call may do to find its config: `TUNEKIT_AUTOTUNE` (`environment::autotune`) for
/// every call of a tuner, `call_options::effort` for one call (docs/function_tuner.md, "Effort:
/// TUNEKIT_AUTOTUNE").
enum class effort : std::uint8_t {
  /// The default function's config (source `default_config`), else the space's first (source
  /// `disabled`), with the pinned values: nothing stored, nothing measured, no collective.
  off,
  /// What is stored (memory, cache, artifact, lookup table, default; with several ranks, after
  /// their vote), never a measurement: when nothing answers on every rank, the space's first config
  /// (source `disabled`), not remembered, so a later call with more effort still tunes.
  cached,
  /// A search within a small budget: at most `quick_max_evaluations` candidates, each with at most
  /// `quick_warmup` warmup and `quick_runs` timed runs. Its winner is stored like any other.
  quick,
  /// The configured budget and measurement policy (the default).
  full,
};
/// "off", "cached", "quick" or "full".
[[nodiscard]] std::string_view to_string(effort e) noexcept;
/// The effort a name gives (`off`, `cached`, `quick`, `full`, any case); nullopt for anything else.
[[nodiscard]] std::optional<effort> parse_effort(std::string_view name) noexcept;

/// The most candidates a `quick` search measures: its `max_evaluations` is the configured one's
/// when smaller, else this.
inline constexpr std::size_t quick_max_evaluations = 32;
/// The most warmup runs and timed runs of each candidate of a `quick` search (the configured
/// policy's when smaller).
inline constexpr int quick_warmup = 1;
inline constexpr int quick_runs = 3;

/// Per-call options, with the seed's meaning.
struct call_options {
  /// false: run the space's first config; no key, no pruning, no measurement. Stronger than
  /// `effort`.
  bool autotune = true;
  /// INFO lines on stdout: the key, the source that answered, candidate timings, the winner.
  bool verbose = false;
  /// A pinned value that is also a config field is an error naming the field unless this is set;
  /// with it the pinned value wins and that field is not tuned.
  bool allow_arg_overwrite = false;
  /// How much this call may do (see `effort`); nullopt: the tuner's environment's
  /// (`TUNEKIT_AUTOTUNE`, default `full`).
  std::optional<tunekit::effort> effort{};
  /// Ranks to agree with; null: the tuner's communicator, else `default_communicator()`, else a
  /// single process.
  communicator *comm = nullptr;
  /// Values the caller fixes (the C++ form of keyword arguments): merged into the config passed to
  /// the function and appended to the key.
  config pinned{};
};

/// The re-rank of a search's leaders (docs/search.md, "The re-rank of the leaders"): after the
/// search, the measured candidates whose score is within `band` of the best, where their runs or
/// the best's show noise (not every run took the same time), are measured again,
/// interleaved (A B C, B C A, C A B, ...), each time after one untimed run; the policy's statistic
/// over those runs decides among them, and the entry records it. The search itself keeps the
/// policy's runs per candidate.
struct rerank_settings {
  /// Relative band: candidates with a score at most (1 + band) x the best are leaders. 0: no
  /// re-rank.
  double band = 0.03;
  /// The most leaders re-measured (the best first); fewer than 2 leaders: no re-rank.
  std::size_t max_leaders = 4;
  /// Rounds; each measures every leader once, starting one further each round.
  int rounds = 3;
  /// Timed runs of a leader per round; 0: the policy's `runs`.
  int runs = 0;
};

/// How a search chooses what to measure. Kept spaces within `budget.max_evaluations` are measured
/// whole (exhaustive search, the seeds' behaviour); larger ones are searched by `strategy` within
/// the budget. A `max_time` or `patience` limit holds for a space that fits too: `strategy` then
/// orders it, and the search stops by the limit or once every candidate is measured. See
/// docs/search.md.
struct search_settings {
  /// A name `make_strategy` knows; empty: `default_strategy_name` ("hybrid").
  std::string strategy{};
  /// Evaluations, wall time and patience; the space is searched exhaustively when the kept
  /// candidates fit in `max_evaluations` and neither `max_time` nor `patience` is set.
  search_budget budget{.max_evaluations = 1000};
  /// Seed of the strategy (the same on every rank; recorded up to 2^63 - 1).
  std::uint64_t seed = 0;
  /// Candidates measured between two decisions of the strategy (and prepared together by a
  /// `candidate_preparer`). Every rank must use the same.
  std::size_t batch_size = 1;
  /// Proposals made ahead of the batch being measured (0: none; `search_options::lookahead`): a
  /// `candidate_preparer` gets them when they are proposed, so that their preparation (a compile)
  /// runs while the device measures. The strategy learns a little later in return. Every rank must
  /// use the same. With the parallel split (N ranks), N times as many are made ahead and each rank
  /// is handed its own share of them as they are made: each keeps this many of its own preparing,
  /// as one rank alone does, though it measures only a share of each batch.
  std::size_t lookahead = 0;
  /// Configs to measure first (e.g. the winners of other devices from artifacts or lookup
  /// tables); those that are not kept candidates are skipped.
  std::vector<config> start_configs{};
  /// Also start from the winners (and runners-up not one parameter from a faster one taken, see
  /// `distinct_best`: three per entry) that the winner cache holds for this function on other
  /// hardware or for other keys (this hardware's entries first, the nearest key first in each; see
  /// docs/search.md, Transfer). With several ranks, rank 0's list is used.
  bool transfer_from_cache = false;
  /// The re-rank of the leaders after the search (on by default; `band = 0` turns it off).
  rerank_settings rerank{};
};

/// The lookup table of a tuner and how its keys are built (see docs/lookup_tables.md).
struct table_options {
  /// Lookup table of this tuner; null: the file `env.lookup_table` names, read when the tuner is
  /// built (none when that is empty).
  std::shared_ptr<const tunekit::lookup_table> lookup_table{};
  /// Op name ending the lookup table keys; empty: the tuner's name.
  std::string op_name{};
  /// Additional params of the lookup table keys (the call's pinned values are added to them).
  config params{};
  /// template_id -> current source hash of that template; a table entry recorded with another
  /// hash is dropped with a warning.
  std::map<std::string, std::string> template_hashes{};
  /// How the input key and params of the keys this tuner looks up are written: tunekit's
  /// canonical text, or PyTorch Inductor's (a key of one string value is the input key as it
  /// stands; see `table_key_format`).
  table_key_format key_format = table_key_format::tunekit;
};

/// The offline artifacts of a tuner (see docs/artifacts.md).
struct artifact_options {
  /// Name of this tuner's artifacts (1-64 letters, digits, `.`, `_`, `-`; checked when the tuner
  /// is built). With `env.artifact_dir` set, a call without a winner serves the matching artifact;
  /// `TUNEKIT_ALWAYS_TUNE=1` writes it. Empty: no artifacts.
  std::string name{};
  /// Names of the key's values, in order (e.g. `{"N", "dtype"}`): recorded in artifacts, which may
  /// not set them. Optional.
  std::vector<std::string> key_names{};
};

/// Measurements made before and kept outside this tuner's winner cache, such as another
/// autotuner's files (Triton's `cache_results` files, `tunekit.triton`): a search takes them
/// instead of measuring those candidates again, and measures only the others (docs/shapes.md,
/// "Measurements made before").
class prior_measurements {
public:
  prior_measurements() = default;
  prior_measurements(const prior_measurements &) = delete;
  prior_measurements &operator=(const prior_measurements &) = delete;
  virtual ~prior_measurements() = default;
  /// Where they come from, for messages ("Triton cache_results").
  [[nodiscard]] virtual std::string name() const = 0;
  /// The records held for the stored key `k`: each a config of the space, status `ok` with its
  /// time in milliseconds or `failed` with its reason. Records of configs that are not kept
  /// candidates of the call, and `ok` records without a finite, non-negative time, are not taken.
  /// Empty: none. Called once per search, on every rank; with several ranks, a candidate is taken
  /// only when every rank holds a record of it. An exception is a warning, and the search measures
  /// every candidate.
  [[nodiscard]] virtual std::vector<candidate_record> find(const key &k) const = 0;
};

/// Options fixed when a tuner is built.
struct tuner_options {
  /// Code identity beside the name: a hash of the tuned code or an explicit version. Changing it
  /// makes every stored winner of this function a miss.
  std::string version{};
  /// Default: `host_measurer`.
  std::shared_ptr<tunekit::measurer> measurer{};
  measure_policy policy{};
  /// Which candidates a search measures (exhaustive within the budget, else a strategy).
  search_settings search{};
  /// Prepares candidates ahead of their measurement (e.g. compiles runtime-compiled kernels on a
  /// thread pool); null: nothing to prepare.
  std::shared_ptr<candidate_preparer> preparer{};
  /// Default: `host_hardware()`.
  std::optional<hardware_info> hardware{};
  /// Added to `core_dependencies()` in every cache entry (e.g. CUDA runtime and driver).
  tunekit::dependencies dependencies{};
  /// Default communicator of this tuner's calls; null: `default_communicator()` at each
  /// resolution, else a single process. Every rank of it must resolve the same keys in the same
  /// order (see docs/multi_rank.md).
  communicator *comm = nullptr;
  /// See `tuning_mode`.
  tuning_mode mode = tuning_mode::eager;
  /// Rank-local work only (no collective inside the tuned function): rank r measures every
  /// size-th kept candidate starting at r, the timings are gathered and all ranks pick the same
  /// winner, so N ranks search about N times faster. A candidate counts as valid when it passed on
  /// the rank that measured it. Off: every rank measures every candidate (worst rank counts).
  bool parallel_split = false;
  /// false: never read or write the winner cache on disk (in-process winners only).
  bool use_disk_cache = true;
  /// Environment, launcher and log sink; default: `process_context::from_env()`, read once when
  /// the tuner is built. With several ranks (`process->launcher`), verbose lines reach the log
  /// sink only on local rank 0 and every rank appends them to `<env.log_dir>/rank-<rank>.log`.
  std::optional<process_context> process{};
  /// Offline artifacts: name and key names.
  artifact_options artifact{};
  /// Lookup table and the parts of its keys.
  table_options table{};
  /// Key buckets and what a call does when nothing is stored for its key (docs/shapes.md).
  shape_options shapes{};
  /// Measurements made before, outside the winner cache; null: none.
  std::shared_ptr<const prior_measurements> prior{};
};

} // namespace tunekit
