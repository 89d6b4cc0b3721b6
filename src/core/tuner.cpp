#include "sha256.hpp"
#include "timestamp.hpp"
#include "winner_map.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/error.hpp>
#include <tunekit/lookup_table.hpp>
#include <tunekit/tuner.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>
#include <unordered_map>

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
  case source::disabled:
    return "disabled";
  }
  return "unknown";
}

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

std::string format_ms(double ms) {
  if (!std::isfinite(ms)) {
    return "inf";
  }
  std::ostringstream s;
  s.precision(4);
  s << ms << " ms";
  return s.str();
}

// A 64-bit digest split into two doubles that hold it exactly (for MIN/MAX agreement checks).
void digest_words(const std::string &text, double out[2]) {
  const std::string hex = detail::sha256_hex(text);
  out[0] = static_cast<double>(std::stoull(hex.substr(0, 12), nullptr, 16));
  out[1] = static_cast<double>(std::stoull(hex.substr(12, 12), nullptr, 16));
}

// Index of the candidate equal to `c` up to the order of its fields, or -1.
std::ptrdiff_t index_of_equivalent(const std::vector<config> &cands, const config &c) {
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const config &d = cands[i];
    if (d.template_id() == c.template_id() && d.size() == c.size() &&
        std::all_of(d.begin(), d.end(), [&](const field &f) {
          const value *v = c.find(f.name);
          return v != nullptr && *v == f.value;
        })) {
      return static_cast<std::ptrdiff_t>(i);
    }
  }
  return -1;
}

} // namespace

struct tuner::impl {
  std::string name;
  config_space space;
  tuner_options opts;
  environment env;
  hardware_info hw;
  dependencies deps;
  log_sink log;
  std::shared_ptr<tunekit::measurer> meas;
  winner_cache cache;
  single_process_communicator single;
  launcher_info launcher;
  mutable std::mutex rank_log_mutex;
  mutable std::ofstream rank_log; // <log_dir>/rank-<r>.log, opened on first use (several ranks)
  mutable bool rank_log_failed = false;

  std::shared_ptr<const lookup_table> table; // opts.lookup_table, else the file env names
  std::vector<std::string> templates;        // the template ids of the space

  std::atomic<bool> armed{false};
  std::unordered_map<key, config> deferred; // deferred mode, before arm: key -> default config
  std::vector<key> recorded;                // the same keys, in first-call order

  detail::winner_map memory;

  std::mutex resolve_mutex; // one resolution (and so one search) at a time
  std::atomic<source> last{source::search};
  std::atomic<std::size_t> searches{0};
  std::optional<cache_entry> last_search;

  impl(std::string n, config_space s, tuner_options o)
      : name(std::move(n)), space(std::move(s)), opts(std::move(o)),
        env(opts.env ? *opts.env : environment::from_env()),
        hw(opts.hardware ? *opts.hardware : host_hardware()), deps(core_dependencies()),
        log(opts.log ? opts.log : default_log_sink()), meas(opts.measurer), cache(env.cache_dir),
        launcher(opts.launcher ? *opts.launcher : launcher_info::from_env()),
        armed(opts.mode == tuning_mode::eager) {
    for (const auto &[k, v] : opts.dependencies) {
      deps[k] = v;
    }
    if (!meas) {
      meas = std::make_shared<host_measurer>();
    }
    table = opts.lookup_table;
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
  }

  [[nodiscard]] std::string context(const key &k) const {
    return "tuner '" + name + "', key " + k.to_string();
  }
  // With several ranks, verbose lines reach the sink (the console) only from local rank 0, and
  // every rank keeps all of them in its own log file.
  void info(const std::string &msg) const {
    if (!launcher.multi_rank()) {
      log(log_level::info, msg);
      return;
    }
    if (launcher.local_rank == 0) {
      log(log_level::info, "rank " + std::to_string(launcher.rank) + ": " + msg);
    }
    to_rank_log(msg);
  }
  void warn(const std::string &msg) const {
    if (!launcher.multi_rank()) {
      log(log_level::warning, msg);
      return;
    }
    log(log_level::warning, "rank " + std::to_string(launcher.rank) + ": " + msg);
    to_rank_log("WARNING " + msg);
  }
  void to_rank_log(const std::string &text) const {
    const std::lock_guard lock(rank_log_mutex);
    if (rank_log_failed) {
      return;
    }
    if (!rank_log.is_open()) {
      std::error_code ec;
      std::filesystem::create_directories(env.log_dir, ec);
      rank_log.open(env.log_dir / launcher.log_file_name(), std::ios::app);
      if (!rank_log) {
        rank_log_failed = true;
        log(log_level::warning, "rank " + std::to_string(launcher.rank) + ": cannot write " +
                                    (env.log_dir / launcher.log_file_name()).string() +
                                    "; per-rank log lines are dropped");
        return;
      }
    }
    rank_log << detail::utc_timestamp() << " tuner '" << name << "' " << text << '\n';
    rank_log.flush();
  }

  // The call's communicator, else the tuner's, else the registered default, else this process.
  communicator &pick(communicator *call) {
    communicator *c = call != nullptr ? call : opts.comm;
    if (c == nullptr) {
      c = default_communicator();
    }
    return c != nullptr ? *c : single;
  }

  // Runs one collective step; a timeout names the step and what it was about.
  template <class F> static void collective(const std::string &what, const char *step, F &&f) {
    try {
      f();
    } catch (const communicator_timeout &e) {
      throw communicator_timeout(what + ": " + step + " timed out: " + e.what());
    }
  }

  // Deferred mode before arm: record the key and hand out the default config (default_fn's,
  // else the space's first).
  const config &defer(const key &k2, const call_options &o,
                      const detail::function_ref<config()> *default_fn) {
    auto it = deferred.find(k2);
    if (it == deferred.end()) {
      config c = with_pins(space[0], o);
      if (default_fn != nullptr) {
        const std::vector<config> cands = candidates(o);
        c = cands[static_cast<std::size_t>(from_default(k2, o, cands, *default_fn))];
      }
      it = deferred.emplace(k2, std::move(c)).first;
      recorded.push_back(k2);
    }
    return it->second;
  }

  // Config fields the caller pins: refused unless allow_arg_overwrite.
  void check_pins(const call_options &o) const {
    if (o.allow_arg_overwrite) {
      return;
    }
    for (const auto &f : o.pinned) {
      if (space.has_field(f.name)) {
        throw error("tuner '" + name + "': the argument '" + f.name +
                    "' is also a config field; pass allow_arg_overwrite to let the argument "
                    "win (that field is then not tuned)");
      }
    }
  }

  [[nodiscard]] static config with_pins(config c, const call_options &o) {
    for (const auto &f : o.pinned) {
      c.set(f.name, f.value);
    }
    return c;
  }

  // The space with the pinned values applied; configs that become equal collapse into one.
  [[nodiscard]] std::vector<config> candidates(const call_options &o) const {
    if (o.pinned.empty()) {
      return space.configs();
    }
    std::vector<config> out;
    for (const auto &c : space) {
      config p = with_pins(c, o);
      if (std::find(out.begin(), out.end(), p) == out.end()) {
        out.push_back(std::move(p));
      }
    }
    return out;
  }

  const config &remember(const key &k, const config &c) { return memory.insert(k, c); }
  [[nodiscard]] const config *recall(const key &k) const noexcept { return memory.find(k); }

  // A proposal from the winner cache, or -1.
  std::ptrdiff_t from_cache(const key &k, const std::vector<config> &cands,
                            const std::vector<bool> &kept) const {
    // Nothing kept: the prune error comes after agreement; no cache warning before it.
    if (!opts.use_disk_cache || env.always_tune ||
        std::find(kept.begin(), kept.end(), true) == kept.end()) {
      return -1;
    }
    const function_identity id{name, opts.version};
    const auto r = cache.load(id, hw, k);
    if (!r.problem.empty()) {
      warn("skipping winner cache entry " + r.path.string() + ": " + r.problem + "; retuning");
      return -1;
    }
    if (!r.entry) {
      return -1;
    }
    const auto it = std::find(cands.begin(), cands.end(), r.entry->winner);
    if (it == cands.end() || !kept[static_cast<std::size_t>(it - cands.begin())]) {
      warn("skipping winner cache entry " + r.path.string() + ": its winner (" +
           r.entry->winner.to_string() + ") is not among the current candidates; retuning");
      return -1;
    }
    if (r.entry->dependencies != deps) {
      std::string diff;
      for (const auto &[dep, ver] : deps) {
        auto found = r.entry->dependencies.find(dep);
        const std::string old = found == r.entry->dependencies.end() ? "none" : found->second;
        if (old != ver) {
          diff += (diff.empty() ? "" : ", ") + dep + " " + old + " -> " + ver;
        }
      }
      for (const auto &[dep, ver] : r.entry->dependencies) {
        if (!deps.contains(dep)) {
          diff += (diff.empty() ? "" : ", ") + dep + " " + ver + " -> none";
        }
      }
      if (env.version_check) {
        warn("winner cache entry " + r.path.string() + " was recorded with other dependencies (" +
             diff + "); retuning (TUNEKIT_VERSION_CHECK=1)");
        return -1;
      }
      warn("winner cache entry " + r.path.string() + " was recorded with other dependencies (" +
           diff + "); using it (set TUNEKIT_VERSION_CHECK=1 to retune)");
    }
    return it - cands.begin();
  }

  // The serving sources after the winner cache: artifact, lookup table, default (none of them
  // under TUNEKIT_ALWAYS_TUNE=1). Returns the proposal and sets `from`; several table choices
  // restrict `kept` to them instead (the search then measures those only).
  std::ptrdiff_t serve(const key &k, const key &k2, const call_options &o,
                       const std::vector<config> &cands, std::vector<bool> &kept,
                       const detail::function_ref<config()> *default_fn, std::ptrdiff_t proposal,
                       source &from, bool verbose) const {
    if (env.always_tune) {
      return proposal;
    }
    if (proposal < 0) {
      proposal = from_artifact(k2, o, cands, kept);
      from = source::artifact;
    }
    const std::vector<std::size_t> choices = from_table(k, o, cands, kept, verbose);
    if (choices.size() > 1) {
      std::vector<bool> only(kept.size(), false);
      for (auto i : choices) {
        only[i] = true;
      }
      kept = std::move(only);
    }
    if (proposal < 0 && !choices.empty()) {
      from = source::table;
      return choices.size() == 1 ? static_cast<std::ptrdiff_t>(choices[0]) : -1;
    }
    if (proposal < 0 && default_fn != nullptr) {
      from = source::default_config;
      return from_default(k2, o, cands, *default_fn);
    }
    return proposal;
  }

  std::ptrdiff_t from_artifact(const key &k2, const call_options &o,
                               const std::vector<config> &cands,
                               const std::vector<bool> &kept) const {
    if (opts.artifact_name.empty() || env.artifact_dir.empty()) {
      return -1;
    }
    const auto r = load_artifact(env.artifact_dir, opts.artifact_name, k2, device_identity::of(hw));
    std::string problem = r.problem;
    std::ptrdiff_t i = -1;
    if (problem.empty() && !r.found) {
      problem = "no such file";
    }
    if (problem.empty()) {
      problem = artifact_config_problem(r.found->config, space, o.pinned, opts.key_names);
    }
    if (problem.empty()) {
      i = index_of_equivalent(cands, with_pins(r.found->config, o));
      problem = i < 0                                ? "its config is not a candidate of this call"
                : !kept[static_cast<std::size_t>(i)] ? "prune_fn rejects its config for this call"
                                                     : "";
    }
    if (!problem.empty()) {
      warn(context(k2) + ": ignoring artifact " + r.path.string() + ": " + problem);
      return -1;
    }
    return i;
  }

  // The kept candidates the lookup table names for this call: device-specific key first.
  std::vector<std::size_t> from_table(const key &k, const call_options &o,
                                      const std::vector<config> &cands,
                                      const std::vector<bool> &kept, bool verbose) const {
    if (!table) {
      return {};
    }
    config params = opts.table_params;
    for (const auto &f : o.pinned) {
      params.set(f.name, f.value);
    }
    const std::string p = table_params(params);
    const std::string op = opts.op_name.empty() ? name : opts.op_name;
    for (const std::string &tk : {table_key(hw.name, k, p, op), table_key("", k, p, op)}) {
      const auto *entries = table->find(tk);
      if (entries == nullptr) {
        continue;
      }
      std::vector<std::size_t> out;
      for (const auto &e : *entries) {
        const std::string &id = e.choice.template_id();
        if (std::find(templates.begin(), templates.end(), id) == templates.end()) {
          continue; // a template this tuner does not have
        }
        const auto h = opts.template_hashes.find(id);
        if (!e.template_hash.empty() && h != opts.template_hashes.end() &&
            h->second != e.template_hash) {
          warn("lookup table key '" + tk + "': dropping stale entry [" + e.choice.to_string() +
               "]: its template_hash " + e.template_hash + " is not the current " + h->second);
          continue;
        }
        const std::ptrdiff_t i = index_of_equivalent(cands, with_pins(e.choice, o));
        if (i < 0) {
          warn("lookup table key '" + tk + "': dropping entry [" + e.choice.to_string() +
               "]: not a config of the space");
          continue;
        }
        const auto u = static_cast<std::size_t>(i);
        if (kept[u] && std::find(out.begin(), out.end(), u) == out.end()) {
          out.push_back(u);
        }
      }
      if (!out.empty()) {
        if (verbose) {
          info(context(k) + ": lookup table key '" + tk + "' gives " + std::to_string(out.size()) +
               (out.size() == 1 ? " choice" : " choices"));
        }
        return out;
      }
    }
    return {};
  }

  std::ptrdiff_t from_default(const key &k2, const call_options &o,
                              const std::vector<config> &cands,
                              const detail::function_ref<config()> &fn) const {
    config c;
    try {
      c = with_pins(fn(), o);
    } catch (const std::exception &e) {
      throw error(context(k2) + ": default_fn threw: " + e.what());
    }
    const std::ptrdiff_t i = index_of_equivalent(cands, c);
    if (i < 0) {
      throw error(context(k2) + ": default_fn gave [" + c.to_string() +
                  "], which is not a config of the space");
    }
    return i;
  }

  // Forced tuning with an artifact name and directory: writes the winner's artifact atomically.
  [[nodiscard]] bool writes_artifact() const {
    return env.always_tune && !opts.artifact_name.empty() && !env.artifact_dir.empty();
  }
  void write_artifact(const key &k2, const call_options &o, const config &winner) const {
    artifact a;
    a.name = opts.artifact_name;
    a.key = k2;
    if (opts.key_names.size() == k2.size()) {
      a.key_names = opts.key_names;
    }
    a.device = device_identity::of(hw);
    a.config.set_template_id(winner.template_id());
    for (const auto &f : winner) {
      if (!o.pinned.contains(f.name)) {
        a.config.set(f.name, f.value);
      }
    }
    try {
      const auto path = store_artifact(env.artifact_dir, a);
      info(context(k2) + ": wrote artifact " + path.string());
    } catch (const error &e) {
      throw error(context(k2) + ": forced tuning could not write its artifact, so the winner is " +
                  "not cached: " + e.what());
    }
  }

  // Ranks agree on the key and candidate list, then on the proposal. Returns the agreed proposal
  // index or -1 (search together).
  std::ptrdiff_t agree(communicator &comm, const key &k, const std::vector<config> &cands,
                       const std::vector<bool> &kept, std::ptrdiff_t proposal) const {
    if (comm.size() <= 1) {
      return proposal;
    }
    std::string text = k.to_string();
    for (std::size_t i = 0; i < cands.size(); ++i) {
      text += "|" + std::string(kept[i] ? "+" : "-") + cands[i].to_string();
    }
    double lo[3];
    digest_words(text, lo);
    lo[2] = static_cast<double>(proposal);
    double hi[3] = {lo[0], lo[1], lo[2]};
    collective(context(k), "agreement on the key, candidate list and cache proposal", [&] {
      comm.all_reduce_min(lo);
      comm.all_reduce_max(hi);
    });
    if (lo[0] != hi[0] || lo[1] != hi[1]) {
      warn("tuner '" + name + "': this rank's key is " + k.to_string());
      throw error("tuner '" + name +
                  "': the ranks do not agree on the key or the candidate list (does key_fn or "
                  "prune_fn depend on the rank?)");
    }
    return lo[2] == hi[2] ? proposal : -1;
  }

  const config &search(const key &k, const std::vector<config> &cands,
                       const std::vector<bool> &kept, communicator &comm, bool verbose,
                       detail::function_ref<void(const config &)> run,
                       detail::function_ref<bool(const config &)> check,
                       const std::function<void(const config &)> &before_store = {}) {
    const auto start = std::chrono::steady_clock::now();
    const std::size_t n_kept = static_cast<std::size_t>(std::count(kept.begin(), kept.end(), true));
    // Parallel split: kept candidate j is measured by rank j % size only.
    const int rank = comm.rank();
    const bool split = opts.parallel_split && comm.size() > 1;
    std::vector<int> owner(cands.size(), rank);
    std::size_t n_mine = n_kept;
    if (split) {
      std::size_t j = 0;
      n_mine = 0;
      for (std::size_t i = 0; i < cands.size(); ++i) {
        if (kept[i]) {
          owner[i] = static_cast<int>(j++ % static_cast<std::size_t>(comm.size()));
          n_mine += owner[i] == rank ? 1 : 0;
        }
      }
    }
    std::vector<candidate_record> records(cands.size());
    std::vector<double> times(cands.size(), infinity);
    std::optional<fatal_candidate_error> fatal;
    std::size_t done = 0;
    std::ptrdiff_t best = -1;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      candidate_record &r = records[i];
      r.config = cands[i];
      if (!kept[i]) {
        r.status = candidate_status::pruned;
        continue;
      }
      if (owner[i] != rank) {
        times[i] = -infinity; // another rank's; the MAX reduction brings its time
        continue;
      }
      if (fatal) {
        continue; // stop measuring, but still take part in the reduction below
      }
      const config &c = cands[i];
      try {
        auto run_once = [&] { run(c); };
        const auto samples =
            meas->measure(candidate_info{name, k, c, done, n_mine}, run_once, opts.policy);
        r.stats = summarize(samples);
        if (!check(c)) {
          r.status = candidate_status::wrong_result;
          r.reason = "wrong result";
        } else {
          r.status = candidate_status::ok;
          r.time_ms = r.stats.score(opts.policy.stat);
        }
      } catch (const fatal_candidate_error &e) {
        fatal.emplace(context(k) + ": candidate #" + std::to_string(i) + " (" + c.to_string() +
                      ") failed and left the device unusable; " + "tuning stopped: " + e.what());
        if (comm.size() <= 1) {
          throw *fatal;
        }
        continue;
      } catch (const std::exception &e) {
        r.status = candidate_status::failed;
        r.reason = e.what();
      } catch (...) {
        r.status = candidate_status::failed;
        r.reason = "unknown exception";
      }
      times[i] = r.time_ms;
      ++done;
      if (std::isfinite(r.time_ms) &&
          (best < 0 || r.time_ms < times[static_cast<std::size_t>(best)])) {
        best = static_cast<std::ptrdiff_t>(i);
      }
      if (verbose) {
        std::string line = context(k) + ": candidate " + std::to_string(done) + "/" +
                           std::to_string(n_kept) + " [" + c.to_string() + "] ";
        line += r.status == candidate_status::ok
                    ? format_ms(r.time_ms)
                    : std::string(to_string(r.status)) + ": " + r.reason;
        if (best >= 0) {
          line += "; best so far " + format_ms(times[static_cast<std::size_t>(best)]) + " [" +
                  cands[static_cast<std::size_t>(best)].to_string() + "]";
        }
        info(line);
      }
    }

    // Worst rank counts; a candidate invalid anywhere is invalid everywhere. With the split, each
    // candidate's time comes from the one rank that measured it.
    // A fatal failure still takes part, with every candidate invalid, so that the other ranks
    // end with "no valid config" instead of waiting for it.
    if (fatal) {
      std::fill(times.begin(), times.end(), infinity);
    }
    collective(context(k), "reduction of the candidate timings",
               [&] { comm.all_reduce_max(times); });
    if (fatal) {
      throw *fatal;
    }
    std::ptrdiff_t winner = -1;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      if (kept[i] && owner[i] != rank) {
        const std::string on = "rank " + std::to_string(owner[i]);
        const bool ok = std::isfinite(times[i]);
        records[i].status = ok ? candidate_status::ok : candidate_status::failed;
        records[i].reason = ok ? "measured on " + on : "failed on " + on;
      } else if (records[i].status == candidate_status::ok && !std::isfinite(times[i])) {
        records[i].status = candidate_status::failed;
        records[i].reason = "failed on another rank";
      }
      if (std::isfinite(times[i])) {
        records[i].time_ms = times[i];
        if (winner < 0 || times[i] < times[static_cast<std::size_t>(winner)]) {
          winner = static_cast<std::ptrdiff_t>(i);
        }
      }
    }
    if (winner < 0) {
      std::string msg = context(k) + ": no valid config among " + std::to_string(n_kept) +
                        " measured candidates:";
      for (const auto &r : records) {
        if (r.status != candidate_status::pruned) {
          msg += "\n  [" + r.config.to_string() + "] " + std::string(to_string(r.status)) + ": " +
                 r.reason;
        }
      }
      throw error(msg);
    }

    cache_entry e;
    e.function = {name, opts.version};
    e.key = k;
    e.hardware = hw;
    e.dependencies = deps;
    e.winner_index = static_cast<std::size_t>(winner);
    e.winner = cands[e.winner_index];
    e.candidates = std::move(records);
    e.policy = opts.policy;
    e.measurer = meas->name();
    e.world_size = comm.size();
    e.timestamp = detail::utc_timestamp();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    if (verbose) {
      info(context(k) + ": winner [" + e.winner.to_string() + "] " +
           format_ms(e.candidates[e.winner_index].time_ms) + " after measuring " +
           std::to_string(n_kept) + " candidates in " + format_ms(seconds * 1e3));
    }
    if (launcher.multi_rank()) {
      to_rank_log("search\n" + tuning_log(e, seconds));
    }
    if (before_store) {
      before_store(e.winner); // may throw: then nothing is cached
    }
    if (opts.use_disk_cache && comm.local_rank() == 0) {
      try {
        const auto path = cache.store(e, tuning_log(e, seconds));
        if (verbose) {
          info(context(k) + ": stored winner in " + path.string());
        }
      } catch (const error &err) {
        warn(context(k) + ": could not store the winner: " + err.what());
      }
    }
    const config &stored = remember(k, e.winner);
    last_search = std::move(e);
    ++searches;
    return stored;
  }

  [[nodiscard]] std::string tuning_log(const cache_entry &e, double seconds) const {
    std::ostringstream s;
    s << e.timestamp << " tuner '" << name << "' version '" << opts.version << "'\n"
      << "key " << e.key.to_string() << "\nhardware " << e.hardware.to_string() << "\n"
      << "measurer " << e.measurer << ", " << opts.policy.warmup << " warmup + " << opts.policy.runs
      << " timed runs, " << to_string(opts.policy.stat) << "\n";
    for (std::size_t i = 0; i < e.candidates.size(); ++i) {
      const auto &r = e.candidates[i];
      s << "#" << i << " [" << r.config.to_string() << "] " << to_string(r.status);
      if (r.status == candidate_status::ok) {
        s << " " << format_ms(r.time_ms) << " (min " << format_ms(r.stats.min) << ", max "
          << format_ms(r.stats.max) << ", stddev " << format_ms(r.stats.stddev) << ")";
      } else if (!r.reason.empty()) {
        s << ": " << r.reason;
      }
      s << "\n";
    }
    s << "winner #" << e.winner_index << " [" << e.winner.to_string() << "] after "
      << format_ms(seconds * 1e3) << "\n";
    return s.str();
  }
};

tuner::tuner(std::string name, config_space space, tuner_options options) {
  if (name.empty()) {
    throw error("a tuner needs a name");
  }
  if (space.empty()) {
    throw error("tuner '" + name + "': the config space is empty");
  }
  if (!options.artifact_name.empty() && !is_valid_artifact_name(options.artifact_name)) {
    throw error("tuner '" + name + "': invalid artifact_name '" + options.artifact_name +
                "': use 1-64 letters, digits, '.', '_' or '-'");
  }
  if (options.policy.runs < 1 || options.policy.warmup < 0) {
    throw error("tuner '" + name +
                "': the measurement policy needs at least one timed run and "
                "no negative warmup");
  }
  m = std::make_unique<impl>(std::move(name), std::move(space), std::move(options));
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

const config *tuner::find(const key &k, bool hot) const noexcept {
  if (!hot) {
    return m->recall(k);
  }
  if (m->env.verbose) {
    return nullptr;
  }
  const config *c = m->recall(k);
  if (c != nullptr && m->last.load(std::memory_order_relaxed) != source::memory) {
    m->last.store(source::memory, std::memory_order_relaxed);
  }
  return c;
}

const config &tuner::resolve(const key &k, const call_options &o,
                             detail::function_ref<bool(const config &)> prune,
                             detail::function_ref<void(const config &)> run,
                             detail::function_ref<bool(const config &)> check,
                             const detail::function_ref<config()> *default_fn) {
  impl &s = *m;
  const std::lock_guard lock(s.resolve_mutex);
  const bool verbose = o.verbose || s.env.verbose;
  s.check_pins(o);
  key k2 = k;
  for (const auto &f : o.pinned) {
    k2.push_back(value("pinned " + f.name)); // marked, so no key_fn value can look like it
    k2.push_back(f.value);
  }

  if (const config *c = s.recall(k2)) {
    s.last = source::memory;
    if (verbose) {
      s.info(s.context(k2) + ": memory -> [" + c->to_string() + "]");
    }
    return *c;
  }

  if (!s.armed.load()) {
    // Deferred mode before arm: no collective, no measurement, no memory entry.
    const config &c = s.defer(k2, o, default_fn);
    s.last = source::default_config;
    if (verbose) {
      s.info(s.context(k2) + ": deferred (not armed) -> [" + c.to_string() + "]");
    }
    return c;
  }

  communicator &comm = s.pick(o.comm);
  const std::vector<config> cands = s.candidates(o);
  std::vector<bool> kept(cands.size());
  for (std::size_t i = 0; i < cands.size(); ++i) {
    try {
      kept[i] = prune(cands[i]);
    } catch (const std::exception &e) {
      throw error(s.context(k2) + ": prune_fn threw for [" + cands[i].to_string() +
                  "]: " + e.what());
    }
  }

  // Agreement comes before any error of this rank's own, so that the ranks fail together.
  source from = source::cache;
  const std::ptrdiff_t own =
      s.serve(k, k2, o, cands, kept, default_fn, s.from_cache(k2, cands, kept), from, verbose);
  const std::ptrdiff_t proposal = s.agree(comm, k2, cands, kept, own);
  if (std::find(kept.begin(), kept.end(), true) == kept.end()) {
    throw error(s.context(k2) + ": prune_fn removed all " + std::to_string(cands.size()) +
                " configs; it must keep at least one");
  }
  if (proposal >= 0) {
    const config &c = s.remember(k2, cands[static_cast<std::size_t>(proposal)]);
    s.last = from;
    if (verbose) {
      s.info(s.context(k2) + ": " + std::string(to_string(from)) + " -> [" + c.to_string() + "]");
    }
    return c;
  }
  std::function<void(const config &)> before_store;
  if (s.writes_artifact()) {
    if (!device_identity::of(s.hw).complete()) {
      throw error(s.context(k2) + ": forced tuning cannot write artifact '" + s.opts.artifact_name +
                  "': the device identity is incomplete (" + s.hw.to_string() + ")");
    }
    // Every rank writes the same bytes atomically, so each one fails clearly on its own.
    before_store = [&](const config &w) { s.write_artifact(k2, o, w); };
  }

  if (verbose) {
    s.info(s.context(k2) + ": searching " +
           std::to_string(std::count(kept.begin(), kept.end(), true)) + " of " +
           std::to_string(cands.size()) + " configs" +
           (s.env.always_tune ? " (TUNEKIT_ALWAYS_TUNE=1)" : ""));
  }
  const config &c = s.search(k2, cands, kept, comm, verbose, run, check, before_store);
  s.last = from == source::table ? source::table : source::search;
  return c;
}

config tuner::disabled_config(const call_options &o) const {
  m->check_pins(o);
  return impl::with_pins(m->space[0], o);
}

void tuner::key_fn_failed(std::exception_ptr e) const {
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::exception &ex) {
    throw error("tuner '" + m->name + "': key_fn threw: " + ex.what());
  } catch (...) {
    throw error("tuner '" + m->name + "': key_fn threw an unknown exception");
  }
}

source tuner::last_source() const noexcept { return m->last.load(); }
std::size_t tuner::searches() const noexcept { return m->searches.load(); }

std::optional<cache_entry> tuner::last_search() const {
  const std::lock_guard lock(m->resolve_mutex);
  return m->last_search;
}

void tuner::forget() { m->memory.clear(); }

void tuner::arm(communicator *comm) {
  impl &s = *m;
  const std::lock_guard lock(s.resolve_mutex);
  communicator &c = s.pick(comm);
  if (c.size() > 1) {
    impl::collective("tuner '" + s.name + "'", "deferred arm rendezvous", [&] { c.barrier(); });
  }
  s.armed.store(true);
  if (s.env.verbose) {
    s.info("tuner '" + s.name + "': armed after recording " + std::to_string(s.recorded.size()) +
           " keys; their next calls tune");
  }
}

bool tuner::armed() const noexcept { return m->armed.load(); }

std::vector<key> tuner::recorded_keys() const {
  const std::lock_guard lock(m->resolve_mutex);
  return m->recorded;
}

measurer &tuner::measurer() const noexcept { return *m->meas; }

const config &tuner::remember(const key &k, const config &c) { return m->remember(k, c); }

} // namespace tunekit
