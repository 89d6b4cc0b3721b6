#include "agreement.hpp"
#include "format.hpp"
#include "rank_log.hpp"
#include "resolve.hpp"
#include "search.hpp"
#include "sha256.hpp"
#include "timestamp.hpp"
#include "transfer.hpp"
#include "winner_map.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/error.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tuner.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <unordered_map>

namespace tunekit {

struct tuner::impl {
  std::string name;
  config_space space;
  tuner_options opts;
  environment env;
  hardware_info hw;
  dependencies deps;
  std::shared_ptr<tunekit::measurer> meas;
  winner_cache cache;
  single_process_communicator single;
  detail::rank_log log;

  std::shared_ptr<const lookup_table> table; // opts.table.lookup_table, else the file env names
  std::vector<std::string> templates;        // the template ids of the space
  std::string space_digest;                  // see docs/cache.md, "space"

  std::atomic<bool> armed{false};
  std::unordered_map<key, config> deferred; // deferred mode, before arm: key -> default config
  std::vector<key> recorded;                // the same keys, in first-call order

  detail::winner_map memory;

  std::mutex resolve_mutex; // one resolution (and so one search) at a time
  std::atomic<source> last{source::search};
  std::atomic<std::size_t> searches{0};
  std::optional<cache_entry> last_search;

  impl(std::string n, config_space s, tuner_options o, std::atomic<std::uint64_t> &generation)
      : name(std::move(n)), space(std::move(s)), opts(std::move(o)), env(opts.process->env),
        hw(opts.hardware ? *opts.hardware : host_hardware()), deps(core_dependencies()),
        meas(opts.measurer), cache(env.cache_dir),
        log(opts.process->log, opts.process->launcher, env.log_dir, "tuner '" + name + "'"),
        armed(opts.mode == tuning_mode::eager), memory(generation) {
    for (const auto &[k, v] : opts.dependencies) {
      deps[k] = v;
    }
    if (!meas) {
      meas = std::make_shared<host_measurer>();
    }
    table = opts.table.lookup_table;
    if (!table && !env.lookup_table.empty()) {
      try {
        table = std::make_shared<const lookup_table>(lookup_table::load(env.lookup_table));
      } catch (const error &e) {
        throw error("tuner '" + name + "': TUNEKIT_LOOKUP_TABLE: " + e.what());
      }
    }
    for (const auto &c : space) {
      if (std::find(templates.begin(), templates.end(), c.template_id()) == templates.end()) {
        templates.push_back(c.template_id());
      }
    }
    space_digest = digest_of(space);
  }

  // Every config's template and canonical text, in order: the same configs give the same digest
  // however the space was built (a product here, an explicit list in the Python package).
  static std::string digest_of(const config_space &space) {
    std::string text;
    for (const auto &c : space) {
      text += c.template_id();
      text += '\x1f';
      text += c.to_string();
      text += '\x1e';
    }
    return detail::sha256_hex(text);
  }

  [[nodiscard]] std::string context(const key &k) const {
    return "tuner '" + name + "', key " + k.to_string();
  }

  [[nodiscard]] detail::resolve_sources sources() const {
    return {name, opts, env, cache, hw, deps, table.get(), templates, space, space_digest, log};
  }

  // The call's communicator, else the tuner's, else the registered default, else this process.
  communicator &pick(communicator *call) {
    communicator *c = call != nullptr ? call : opts.comm;
    if (c == nullptr) {
      c = default_communicator();
    }
    return c != nullptr ? *c : single;
  }

  // Deferred mode before arm: record the key and hand out the default config (default_fn's,
  // else the space's first).
  const config &defer(const key &k, const key &pinned_key, const call_options &o,
                      const detail::function_ref<config()> *default_fn) {
    auto it = deferred.find(pinned_key);
    if (it == deferred.end()) {
      config c = detail::with_pins(space[0], o.pinned);
      if (default_fn != nullptr) {
        const std::vector<config> cands = detail::pinned_candidates(space, o.pinned);
        const std::vector<bool> kept(cands.size(), true);
        const std::string what = context(pinned_key);
        const detail::resolve_call call{k, pinned_key, o, cands, kept, default_fn, false, what};
        c = cands[detail::from_default(sources(), call)->index];
      }
      it = deferred.emplace(pinned_key, std::move(c)).first;
      recorded.push_back(pinned_key);
    }
    return it->second;
  }

  // Forced tuning with an artifact name and directory writes the winner's artifact.
  [[nodiscard]] bool writes_artifact() const {
    return env.always_tune && !opts.artifact.name.empty() && !env.artifact_dir.empty();
  }
  void write_artifact(const cache_entry &e, const call_options &o) const {
    const std::size_t input_values = e.key.size() - 2 * o.pinned.size();
    try {
      const auto path = store_artifact(env.artifact_dir,
                                       make_artifact(opts.artifact.name, e,
                                                     opts.artifact.key_names.size() == input_values
                                                         ? opts.artifact.key_names
                                                         : std::vector<std::string>{}));
      log.info(context(e.key) + ": wrote artifact " + path.string());
    } catch (const error &err) {
      throw error(context(e.key) +
                  ": forced tuning could not write its artifact, so the winner is not cached: " +
                  err.what());
    }
  }

  // Step 6: measure, pick, record. Only local rank 0 writes the shared winner cache.
  const config &search(const key &k, const std::vector<config> &cands,
                       const std::vector<bool> &kept, communicator &comm, const call_options &o,
                       bool verbose, detail::function_ref<void(const config &)> run,
                       detail::function_ref<bool(const config &)> check) {
    const std::string what = context(k);
    if (writes_artifact() && !device_identity::of(hw).complete()) {
      throw error(what + ": forced tuning cannot write artifact '" + opts.artifact.name +
                  "': the device identity is incomplete (" + hw.to_string() + ")");
    }
    if (verbose) {
      log.info(what + ": searching " + std::to_string(std::count(kept.begin(), kept.end(), true)) +
               " of " + std::to_string(cands.size()) + " configs" +
               (env.always_tune ? " (TUNEKIT_ALWAYS_TUNE=1)" : ""));
    }
    const auto n_kept = static_cast<std::size_t>(std::count(kept.begin(), kept.end(), true));
    std::vector<config> start;
    if (n_kept > opts.search.budget.max_evaluations) {
      start = detail::start_configs(opts.search, cache, {name, opts.version}, hw, k, cands, kept,
                                    opts.use_disk_cache, comm, context(k));
    }
    const bool declared = o.pinned.empty();
    auto found = detail::measure_and_pick(
        {name, what, k, cands, kept, comm, opts.parallel_split, *meas, opts.policy, run, check, log,
         verbose, opts.search, opts.preparer.get(), start,
         declared ? space.parameters() : std::vector<parameter>{}, env.progress});
    cache_entry e;
    e.function = {name, opts.version};
    e.key = k;
    e.hardware = hw;
    e.dependencies = deps;
    e.winner = found.records[found.winner].config;
    // Only the kept candidates are listed; the pruned ones are counted (docs/cache.md).
    const std::size_t winner_at =
        static_cast<std::size_t>(std::find(cands.begin(), cands.end(), e.winner) - cands.begin());
    e.space = space_record{cands.size(), cands.size() - n_kept, space_digest, winner_at};
    for (auto &r : found.records) {
      if (r.status != candidate_status::pruned) {
        if (&r == &found.records[found.winner]) {
          e.winner_index = e.candidates.size();
        }
        e.candidates.push_back(std::move(r));
      }
    }
    e.policy = opts.policy;
    e.measurer = meas->name();
    e.world_size = comm.size();
    e.timestamp = detail::utc_timestamp();
    e.search = found.strategy;
    const std::string text = tuning_log(e, found.seconds);

    if (verbose) {
      log.info(what + ": winner [" + e.winner.to_string() + "] " +
               detail::format_ms(e.candidates[e.winner_index].time_ms) + " after measuring " +
               std::to_string(found.measured) + " candidates in " +
               detail::format_ms(found.seconds * 1e3));
    }
    log.file("search\n" + text);
    // A rank that was late for the search's last reduction learns here that the others gave up,
    // before it stores anything.
    detail::confirm(comm, what);
    if (writes_artifact()) {
      // Every rank writes the same bytes atomically, so each one fails clearly on its own; a
      // failure means nothing is cached.
      write_artifact(e, o);
    }
    if (opts.use_disk_cache && comm.local_rank() == 0) {
      try {
        const auto path = cache.store(e, text);
        if (verbose) {
          log.info(what + ": stored winner in " + path.string());
        }
      } catch (const error &err) {
        log.warn(what + ": could not store the winner: " + err.what());
      }
    }
    const config &stored = memory.insert(k, e.winner).cfg;
    last_search = std::move(e);
    ++searches;
    return stored;
  }
};

tuner::tuner(std::string name, config_space space, tuner_options options) {
  if (name.empty()) {
    throw error("a tuner needs a name");
  }
  if (space.empty()) {
    throw error("tuner '" + name + "': the config space is empty");
  }
  if (!options.artifact.name.empty() && !is_valid_artifact_name(options.artifact.name)) {
    throw error("tuner '" + name + "': invalid artifact name '" + options.artifact.name +
                "': use 1-64 letters, digits, '.', '_' or '-'");
  }
  if (options.policy.runs < 1 || options.policy.warmup < 0) {
    throw error("tuner '" + name +
                "': the measurement policy needs at least one timed run and "
                "no negative warmup");
  }
  if (!(options.policy.early_stop_factor == 0 || options.policy.early_stop_factor >= 1) ||
      !std::isfinite(options.policy.early_stop_factor) || options.policy.early_stop_after < 1) {
    throw error("tuner '" + name +
                "': the measurement policy's early stop needs a factor of 0 (off) or at least 1 "
                "and at least one run before it");
  }
  if (!options.process) {
    options.process = process_context::from_env();
  }
  if (!options.process->log) {
    options.process->log = default_log_sink();
  }
  m = std::make_unique<impl>(std::move(name), std::move(space), std::move(options), m_generation);
}

tuner::~tuner() = default;

const std::string &tuner::name() const noexcept { return m->name; }
const config_space &tuner::space() const noexcept { return m->space; }
const tuner_options &tuner::options() const noexcept { return m->opts; }
const lookup_table *tuner::table() const noexcept { return m->table.get(); }
const environment &tuner::env() const noexcept { return m->env; }
function_identity tuner::identity() const { return {m->name, m->opts.version}; }
const hardware_info &tuner::hardware() const noexcept { return m->hw; }
std::filesystem::path tuner::cache_path(const key &k) const {
  return m->cache.entry_path(identity(), m->hw, k);
}

const config *tuner::find(const key &k) const noexcept {
  const detail::winner *w = m->memory.find(k);
  return w != nullptr ? &w->cfg : nullptr;
}

const detail::winner *tuner::find_winner(const key &k, bool hot) const noexcept {
  if (!hot) {
    return m->memory.find(k);
  }
  if (m->env.verbose) {
    return nullptr;
  }
  // The generation is read before the lookup: see winner_map.
  const std::uint64_t generation = m_generation.load(std::memory_order_acquire);
  const detail::winner *w = m->memory.find(k);
  if (w != nullptr) {
    w->verified.store(generation, std::memory_order_relaxed);
    if (m->last.load(std::memory_order_relaxed) != source::memory) {
      m->last.store(source::memory, std::memory_order_relaxed);
    }
  }
  return w;
}

// The resolution chain (DESIGN.md): memory, the deferred default, then the stored sources
// (cache, artifact, table, default) agreed across ranks, else a search.
const config &tuner::resolve(const key &k, const call_options &o,
                             detail::function_ref<bool(const config &)> prune,
                             detail::function_ref<void(const config &)> run,
                             detail::function_ref<bool(const config &)> check,
                             const detail::function_ref<config()> *default_fn) {
  impl &state = *m;
  const std::lock_guard lock(state.resolve_mutex);
  const bool verbose = o.verbose || state.env.verbose;
  detail::check_pins(state.name, state.space, o);
  key pinned_key = k;
  for (const auto &f : o.pinned) {
    pinned_key.push_back(value("pinned " + f.name)); // marked, so no key_fn value can look like it
    pinned_key.push_back(f.value);
  }
  const std::string what = state.context(pinned_key);
  auto answered = [&](const config &c, source from, std::string_view how) -> const config & {
    state.last = from;
    if (verbose) {
      state.log.info(what + ": " + std::string(how) + " -> [" + c.to_string() + "]");
    }
    return c;
  };

  // 1. memory
  if (const detail::winner *w = state.memory.find(pinned_key)) {
    return answered(w->cfg, source::memory, "memory");
  }
  // Deferred mode before arm: no collective, no measurement, no memory entry.
  if (!state.armed.load()) {
    return answered(state.defer(k, pinned_key, o, default_fn), source::default_config,
                    "deferred (not armed)");
  }

  communicator &comm = state.pick(o.comm);
  auto key_disagreement = [&] {
    state.log.warn("tuner '" + state.name + "': this rank's key is " + pinned_key.to_string());
    return error("tuner '" + state.name +
                 "': the ranks do not agree on the key or the candidate list (does key_fn or "
                 "prune_fn depend on the rank?)");
  };

  // 2. The winner cache first: a hit needs neither the pruning of the whole space nor its
  // candidate list, so it costs the same whatever the size of the space.
  detail::cache_lookup cached;
  cached.judged = false;
  if (o.pinned.empty()) {
    cached = detail::cached_winner(state.sources(), pinned_key, prune);
  }
  const auto cached_index = cached.answer ? std::optional(cached.answer->index) : std::nullopt;
  const detail::vote first =
      detail::agree(comm, what, "agreement on the key and the cache proposal",
                    pinned_key.to_string() + "|" + state.space_digest, cached_index);
  if (!first.same_text) {
    throw key_disagreement();
  }
  if (cached.answer && first.same_proposal) {
    const config &c = state.memory.insert(pinned_key, state.space[cached.answer->index]).cfg;
    return answered(c, source::cache, to_string(source::cache));
  }

  // The full chain: prune every candidate, then artifact, table, default, else a search.
  std::vector<config> pinned_cands;
  if (!o.pinned.empty()) {
    pinned_cands = detail::pinned_candidates(state.space, o.pinned);
  }
  const std::vector<config> &cands = o.pinned.empty() ? state.space.configs() : pinned_cands;
  std::vector<bool> kept(cands.size());
  // A failure of prune_fn is this rank's ballot: it still votes, so the others raise with it.
  std::optional<std::string> failure;
  for (std::size_t i = 0; i < cands.size() && !failure; ++i) {
    try {
      kept[i] = prune(cands[i]);
    } catch (const std::exception &e) {
      failure = what + ": prune_fn threw for [" + cands[i].to_string() + "]: " + e.what();
    }
  }

  // 2-5. cache (judged above unless values are pinned), artifact, table, default
  detail::stored_answer stored;
  if (!failure) {
    const detail::resolve_call call{k,          pinned_key, o,    cands,         kept,
                                    default_fn, verbose,    what, cached.judged, cached.answer};
    stored = detail::stored_proposal(state.sources(), call);
    if (stored.search_among) {
      kept = *stored.search_among;
    }
  }

  // Agreement comes before any error of this rank's own, so that the ranks fail together.
  // The space is named by its digest (the pinned values are in the key), so the text grows by
  // one byte per candidate.
  std::string text = pinned_key.to_string() + "|" + state.space_digest + "|";
  text.reserve(text.size() + cands.size());
  for (std::size_t i = 0; i < cands.size(); ++i) {
    text += kept[i] ? '+' : '-';
  }
  const auto own = stored.answer ? std::optional(stored.answer->index) : std::nullopt;
  const detail::vote v = detail::agree(
      comm, what, "agreement on the candidate list and the stored proposal", text, own, failure);
  if (!v.same_text) {
    throw key_disagreement();
  }
  if (std::find(kept.begin(), kept.end(), true) == kept.end()) {
    throw error(what + ": prune_fn removed all " + std::to_string(cands.size()) +
                " configs; it must keep at least one");
  }
  if (stored.answer && v.same_proposal) {
    const config &c = state.memory.insert(pinned_key, cands[stored.answer->index]).cfg;
    return answered(c, stored.answer->from, to_string(stored.answer->from));
  }

  // 6. search (among the table's choices when it named several)
  const config &c = state.search(pinned_key, cands, kept, comm, o, verbose, run, check);
  state.last = stored.search_among ? source::table_search : source::search;
  return c;
}

config tuner::disabled_config(const call_options &o) const {
  detail::check_pins(m->name, m->space, o);
  return detail::with_pins(m->space[0], o.pinned);
}

void tuner::key_fn_failed(std::exception_ptr e, const call_options *o) const {
  std::string failure = "tuner '" + m->name + "': key_fn threw";
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::exception &ex) {
    failure += std::string(": ") + ex.what();
  } catch (...) {
    failure += " an unknown exception";
  }
  // In a tuning call the other ranks may be resolving their key: this rank votes "I failed" so
  // that they raise with it instead of waiting (no collective before arm in deferred mode).
  if (o != nullptr && m->armed.load()) {
    const std::lock_guard lock(m->resolve_mutex);
    communicator &comm = m->pick(o->comm);
    static_cast<void>(detail::agree(comm, "tuner '" + m->name + "'",
                                    "agreement on the key and the cache proposal", "", std::nullopt,
                                    failure));
  }
  throw error(failure);
}

source tuner::last_source() const noexcept { return m->last.load(); }
std::size_t tuner::searches() const noexcept { return m->searches.load(); }

std::optional<cache_entry> tuner::last_search() const {
  const std::lock_guard lock(m->resolve_mutex);
  return m->last_search;
}

void tuner::forget() { m->memory.clear(); }

void tuner::arm(communicator *comm) {
  impl &state = *m;
  const std::lock_guard lock(state.resolve_mutex);
  communicator &c = state.pick(comm);
  if (c.size() > 1) {
    detail::collective("tuner '" + state.name + "'", "deferred arm rendezvous",
                       [&] { c.barrier(); });
  }
  state.armed.store(true);
  if (state.env.verbose) {
    state.log.info("tuner '" + state.name + "': armed after recording " +
                   std::to_string(state.recorded.size()) + " keys; their next calls tune");
  }
}

bool tuner::armed() const noexcept { return m->armed.load(); }

std::vector<key> tuner::recorded_keys() const {
  const std::lock_guard lock(m->resolve_mutex);
  return m->recorded;
}

measurer &tuner::measurer() const noexcept { return *m->meas; }

const config &tuner::remember(const key &k, const config &c) { return m->memory.insert(k, c).cfg; }

} // namespace tunekit
