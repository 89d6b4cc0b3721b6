#include "agreement.hpp"
#include "cache_entry.hpp"
#include "candidates.hpp"
#include "nearest.hpp"
#include "rank_log.hpp"
#include "resolve.hpp"
#include "search.hpp"
#include "winner_map.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/error.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tuner.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <limits>
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
  std::string buckets;                       // describe_buckets(opts.shapes.buckets)
  std::string measured_by;                   // meas->name(): what the entries' `measurer` must be
  detail::known_keys known;                  // for nearest-key serving

  effort env_effort = effort::full; // TUNEKIT_AUTOTUNE, read when the tuner is built
  bool hot_misses = false;          // no hot-path hits: TUNEKIT_VERBOSE=1 or TUNEKIT_AUTOTUNE=off
  std::deque<config> held;          // pinned configs served unremembered (off, a cached miss)

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
    measured_by = meas->name();
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
    space_digest = detail::space_digest(space);
    buckets = describe_buckets(opts.shapes.buckets);
    if (const auto e = parse_effort(env.autotune)) {
      env_effort = *e;
    } else if (!env.autotune.empty()) {
      log.warn("tuner '" + name + "': TUNEKIT_AUTOTUNE='" + env.autotune +
               "' is not one of off, cached, quick, full; using full");
    }
    hot_misses = env.verbose || env_effort == effort::off;
  }

  // The call's effort, else the environment's.
  [[nodiscard]] effort level_of(const call_options &o) const {
    return o.effort.value_or(env_effort);
  }

  // A config served without being remembered (effort off, a cached miss): candidate i itself when
  // the call pins nothing (it is the space's), else one copy kept per distinct config.
  const config &unremembered(const detail::call_candidates &cands, std::size_t i) {
    if (cands.pinned().empty()) {
      return cands[i];
    }
    const auto it = std::find(held.begin(), held.end(), cands[i]);
    return it != held.end() ? *it : held.emplace_back(cands[i]);
  }

  [[nodiscard]] std::string context(const key &k) const {
    return "tuner '" + name + "', key " + k.to_string();
  }

  // Forced tuning searches the whole kept space: no lookup table answers or narrows it.
  [[nodiscard]] detail::resolve_sources sources() {
    const bool nearest = opts.shapes.on_miss == miss_policy::nearest && !env.always_tune;
    if (nearest && opts.use_disk_cache) {
      known.scan_once(cache, {name, opts.version}, hw, space_digest, buckets, measured_by);
    }
    return {name,
            opts,
            env,
            cache,
            hw,
            deps,
            env.always_tune ? nullptr : table.get(),
            templates,
            space,
            space_digest,
            buckets,
            measured_by,
            log,
            nearest ? &known : nullptr};
  }

  // Remembers the winner of stored key `k` (and, when a stored source or a search gave it, keeps
  // `k` among the keys nearest-key serving compares).
  const config &keep(const key &k, const config &c, source from) {
    const config &stored = memory.insert(k, c).cfg;
    if (from != source::nearest && from != source::default_config) {
      known.add(k, stored);
    }
    return stored;
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
  const config &defer(detail::call_candidates &cands,
                      const detail::function_ref<config()> *default_fn) {
    auto it = deferred.find(cands.stored_key());
    if (it == deferred.end()) {
      config c = detail::with_pins(space[0], cands.pinned());
      if (const auto d = detail::from_default({cands, default_fn, false})) {
        c = cands[d->index];
      }
      it = deferred.emplace(cands.stored_key(), std::move(c)).first;
      recorded.push_back(cands.stored_key());
    }
    return it->second;
  }

  // One vote of the ranks (agreement comes before any error of this rank's own, so that the ranks
  // fail together): a prune_fn failure is this rank's ballot, and ranks holding another key or
  // candidate list all raise the same error.
  detail::vote vote(communicator &comm, const detail::call_candidates &cands, const char *step,
                    const std::string &text, std::optional<std::size_t> proposal) const {
    const detail::vote v =
        detail::agree(comm, cands.context(), step, text, proposal, cands.failure());
    if (!v.same_text) {
      log.warn("tuner '" + name + "': this rank's key is " + cands.stored_key().to_string());
      throw error("tuner '" + name +
                  "': the ranks do not agree on the key or the candidate list (does key_fn or "
                  "prune_fn depend on the rank?)");
    }
    return v;
  }

  // Forced tuning with an artifact name and directory writes the winner's artifact.
  [[nodiscard]] bool writes_artifact() const {
    return env.always_tune && !opts.artifact.name.empty() && !env.artifact_dir.empty();
  }
  void write_artifact(const cache_entry &e, const detail::call_candidates &cands) const {
    const std::size_t input_values = cands.input_key().size();
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

  // What a search takes instead of measuring (docs/shapes.md): the measurements of an entry of
  // this key recorded for another config space (the space changed) with the same policy,
  // measurer, buckets and dependencies, then the tuner's prior measurements of the configs the
  // entry does not hold. Never under forced tuning.
  [[nodiscard]] std::vector<candidate_record>
  reusable(const detail::call_candidates &cands, const measure_policy &policy, bool verbose) const {
    std::vector<candidate_record> out;
    if (env.always_tune) {
      return out;
    }
    if (opts.use_disk_cache) {
      const auto r = cache.load({name, opts.version}, hw, cands.stored_key());
      if (r.found()) {
        const cache_entry &e = *r.value;
        if (e.space && e.space->digest != space_digest && e.policy == policy &&
            e.measurer == measured_by && e.key_buckets == buckets &&
            dependency_diff(e.dependencies, deps).empty()) {
          for (const auto &c : e.candidates) {
            if (c.status != candidate_status::pruned) {
              out.push_back(c);
            }
          }
          if (verbose && !out.empty()) {
            log.info(cands.context() + ": the space changed; " + std::to_string(out.size()) +
                     " candidates measured before are taken from " + r.path.string());
          }
        }
      }
    }
    if (opts.prior) {
      take_prior(cands, verbose, out);
    }
    return out;
  }

  // The prior measurements of the call's key, appended to `out` for the configs it lacks.
  void take_prior(const detail::call_candidates &cands, bool verbose,
                  std::vector<candidate_record> &out) const {
    const std::string from = opts.prior->name();
    std::vector<candidate_record> found;
    try {
      found = opts.prior->find(cands.stored_key());
    } catch (const std::exception &e) {
      log.warn(cands.context() + ": the measurements of " + from +
               " could not be read, so every candidate is measured: " + e.what());
      return;
    }
    // Each kept candidate of the call that the entry's measurements lack takes the first usable
    // record of its config.
    std::unordered_multimap<std::string, candidate_record *> by_text;
    for (auto &r : found) {
      const bool ok = r.status == candidate_status::ok;
      if ((ok && std::isfinite(r.time_ms) && r.time_ms >= 0) ||
          r.status == candidate_status::failed) {
        by_text.emplace(r.config.to_string(), &r);
      }
    }
    const auto same = [](const config &a, const config &b) {
      return a == b && a.template_id() == b.template_id();
    };
    const std::size_t from_entry = out.size();
    std::size_t taken = 0;
    const std::vector<bool> &kept = cands.kept_list();
    for (std::size_t i = 0; i < cands.size() && !by_text.empty(); ++i) {
      if (!kept[i]) {
        continue;
      }
      const config &c = cands[i];
      const auto [lo, hi] = by_text.equal_range(c.to_string());
      const auto it =
          std::find_if(lo, hi, [&](const auto &kv) { return same(kv.second->config, c); });
      if (it == hi ||
          std::any_of(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(from_entry),
                      [&](const candidate_record &o) { return same(o.config, c); })) {
        continue;
      }
      candidate_record r = std::move(*it->second);
      by_text.erase(it);
      if (r.status == candidate_status::ok) {
        const sample_stats none{};
        if (r.stats.mean == none.mean && r.stats.median == none.median && r.stats.max == none.max) {
          r.stats = {r.time_ms, r.time_ms, r.time_ms, r.time_ms, 0};
        }
        if (r.reason.empty()) {
          r.reason = "measured before: " + from;
        }
      } else {
        r.time_ms = std::numeric_limits<double>::infinity();
        std::string reason = "measured before: " + from;
        if (!r.reason.empty()) {
          reason += ": ";
          reason += r.reason;
        }
        r.reason = std::move(reason);
      }
      out.push_back(std::move(r));
      ++taken;
    }
    if (verbose && taken > 0) {
      log.info(cands.context() + ": " + std::to_string(taken) + " measurements made before are " +
               "taken from " + from);
    }
  }

  // Step 6 and what follows it: the search, then the entry recorded, agreed, written (the
  // artifact under forced tuning; the winner cache on local rank 0 only) and remembered.
  const config &search_and_store(detail::call_candidates &cands, communicator &comm, bool verbose,
                                 detail::function_ref<void(const config &)> run,
                                 detail::function_ref<bool(const config &)> check,
                                 const detail::function_ref<void(const config &)> *reset,
                                 effort level) {
    const std::string &what = cands.context();
    if (writes_artifact() && !device_identity::of(hw).complete()) {
      throw error(what + ": forced tuning cannot write artifact '" + opts.artifact.name +
                  "': the device identity is incomplete (" + hw.to_string() + ")");
    }
    const std::vector<bool> &kept = cands.kept_list();
    const function_identity fn{name, opts.version};
    const detail::search_effort budget = detail::search_effort_of(level, opts.search, opts.policy);
    const std::vector<candidate_record> reused = reusable(cands, budget.policy, verbose);
    detail::search_result found = detail::search(
        {.tuner = name,
         .what = what,
         .k = cands.stored_key(),
         .candidates = cands.configs(),
         .kept = kept,
         .comm = comm,
         .parallel_split = opts.parallel_split,
         .settings = budget.settings,
         .declared = cands.pinned().empty() ? space.parameters() : std::vector<parameter>{},
         .forced = env.always_tune,
         .measure = {*meas, budget.policy, run, check, opts.preparer.get(), reset},
         .transfer = {cache, opts.use_disk_cache, fn, hw},
         .output = {.log = log, .verbose = verbose, .progress = env.progress},
         .reused = &reused});
    const double seconds = found.seconds;
    cache_entry e = detail::make_entry({fn, cands.stored_key(), hw, deps, budget.policy,
                                        meas->name(), comm.size(), cands.size(),
                                        cands.size() - cands.kept_count(), space_digest, buckets},
                                       std::move(found));
    const std::string text = tuning_log(e, seconds);
    log.file("search\n" + text);
    // A rank that was late for the search's last reduction learns here that the others gave up,
    // before it stores anything.
    detail::confirm(comm, what);
    if (writes_artifact()) {
      // Every rank writes the same bytes atomically, so each one fails clearly on its own; a
      // failure means nothing is cached.
      write_artifact(e, cands);
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
    const config &stored = keep(e.key, e.winner, source::search);
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
  check_buckets(name, options.shapes.buckets);
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
  if (!m->opts.shapes.buckets.empty()) {
    // The entry is the bucket's: a stored key is its input values, then the pinned pairs.
    const stored_key_parts parts = split_stored_key(k);
    key in_buckets;
    try {
      in_buckets = bucket_key(parts.input, m->opts.shapes.buckets);
    } catch (const error &e) {
      throw error("tuner '" + m->name + "': " + e.what());
    }
    return m->cache.entry_path(identity(), m->hw, stored_key(in_buckets, parts.pinned));
  }
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
  if (m->hot_misses) {
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

// The resolution chain (DESIGN.md): memory, the deferred default, the stored sources agreed
// across ranks, else a search.
const config &tuner::resolve(const key &k, const call_options &o,
                             detail::function_ref<bool(const config &)> prune,
                             detail::function_ref<void(const config &)> run,
                             detail::function_ref<bool(const config &)> check,
                             const detail::function_ref<config()> *default_fn,
                             const detail::function_ref<void(const config &)> *reset) {
  impl &state = *m;
  const std::lock_guard lock(state.resolve_mutex);
  const bool verbose = o.verbose || state.env.verbose;
  // The key in its buckets (docs/shapes.md): what every source is asked about and what is stored.
  const bool bucketed = !state.opts.shapes.buckets.empty();
  key in_buckets;
  if (bucketed) {
    try {
      in_buckets = bucket_key(k, state.opts.shapes.buckets);
    } catch (const error &e) {
      throw error("tuner '" + state.name + "': " + e.what());
    }
  }
  detail::call_candidates cands(state.name, state.space, bucketed ? in_buckets : k, o, prune);
  const key &stored = cands.stored_key();
  auto answered = [&](const config &c, source from, std::string_view how) -> const config & {
    state.last = from;
    if (verbose) {
      state.log.info(cands.context() + ": " + std::string(how) + " -> [" + c.to_string() + "]");
    }
    return c;
  };
  // A winner remembered under the bucket's key is remembered under the call's own key too, so
  // that the next call with that key is found without bucketing it (`find_winner`).
  auto also_exact = [&](const config &c) -> const config & {
    if (bucketed) {
      const key exact = stored_key(k, cands.pinned());
      if (!(exact == stored) && state.memory.find(exact) == nullptr) {
        state.memory.insert(exact, c);
      }
    }
    return c;
  };

  // 0. effort off: the default function's config, else the space's first (nothing stored, measured
  // or agreed)
  const effort level = state.level_of(o);
  if (level == effort::off) {
    const auto d = detail::from_default({cands, default_fn, verbose});
    return answered(state.unremembered(cands, d ? d->index : 0),
                    d ? source::default_config : source::disabled,
                    d ? "effort off: default" : "effort off: first config");
  }

  // 1. memory, then deferred mode before arm (no collective, no measurement, no memory entry)
  if (const detail::winner *w = state.memory.find(stored)) {
    return answered(also_exact(w->cfg), source::memory, "memory");
  }
  if (!state.armed.load()) {
    return answered(state.defer(cands, default_fn), source::default_config, "deferred (not armed)");
  }

  // 2-5. cache, artifact, table, default; served when every rank holds the same answer
  communicator &comm = state.pick(o.comm);
  const auto answer = detail::stored_proposal(state.sources(), {cands, default_fn, verbose});
  const detail::vote first = state.vote(comm, cands, "agreement on the key and the stored proposal",
                                        stored.to_string() + "|" + state.space_digest,
                                        answer ? std::optional(answer->index) : std::nullopt);
  if (answer && first.same_proposal) {
    const std::string how = answer->nearest_to ? "nearest key " + answer->nearest_to->to_string()
                                               : std::string(to_string(answer->from));
    return answered(also_exact(state.keep(stored, cands[answer->index], answer->from)),
                    answer->from, how);
  }

  // effort cached: no stored answer held by every rank, and no search; the first config is not
  // remembered, so that a call with more effort still tunes
  if (level == effort::cached) {
    return answered(state.unremembered(cands, 0), source::disabled,
                    "effort cached, no stored answer: first config");
  }

  // 6. search every kept candidate (among the table's choices when it names several)
  cands.prune_all();
  const bool among = !detail::table_narrowing(state.sources(), cands).empty();
  static_cast<void>(state.vote(comm, cands, "agreement on the candidate list",
                               cands.vote_text(state.space_digest), std::nullopt));
  if (cands.kept_count() == 0) {
    throw error(cands.context() + ": prune_fn removed all " + std::to_string(cands.size()) +
                " configs; it must keep at least one");
  }
  const config &c =
      also_exact(state.search_and_store(cands, comm, verbose, run, check, reset, level));
  if (reset != nullptr) {
    (*reset)(c); // the candidates' last run wrote the arguments the winner's call reads
  }
  state.last = among ? source::table_search : source::search;
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
  if (o != nullptr && m->armed.load() && m->level_of(*o) != effort::off) {
    const std::lock_guard lock(m->resolve_mutex);
    communicator &comm = m->pick(o->comm);
    static_cast<void>(detail::agree(comm, "tuner '" + m->name + "'",
                                    "agreement on the key and the stored proposal", "",
                                    std::nullopt, failure));
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

void tuner::forget(const std::vector<key> &keys) { m->memory.erase(keys); }

void tuner::seed(const key &k, const config &c) {
  const stored_key_parts parts = split_stored_key(k);
  const config bare = [&] {
    std::vector<field> kept;
    for (const auto &f : c) {
      if (!parts.pinned.contains(f.name)) {
        kept.push_back(f);
      }
    }
    config out(std::move(kept));
    out.set_template_id(c.template_id());
    return out;
  }();
  if (std::find(m->space.begin(), m->space.end(), bare) == m->space.end()) {
    throw error(m->context(k) + ": seed: [" + c.to_string() + "] is not a config of the space");
  }
  key stored = k;
  if (!m->opts.shapes.buckets.empty()) {
    try {
      stored = stored_key(bucket_key(parts.input, m->opts.shapes.buckets), parts.pinned);
    } catch (const error &e) {
      throw error("tuner '" + m->name + "': seed: " + e.what());
    }
  }
  const std::lock_guard lock(m->resolve_mutex);
  static_cast<void>(m->keep(stored, c, source::table));
}

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
