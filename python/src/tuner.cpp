/// \file tuner.cpp
/// `tunekit._core.Tuner`: the core's tuner of one decorated function. Python keeps its configs in
/// a list and passes indices; the core works with configs. The index of every config is hashed
/// once, so mapping the core's configs back costs O(1) per config and pruning N candidates O(N).

#include "binding.hpp"

#include <tunekit/config_space.hpp>
#include <tunekit/error.hpp>
#include <tunekit/shapes.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <utility>

namespace tunekit::python {

using namespace nb::literals;

std::size_t config_hash::operator()(const config &c) const noexcept {
  std::size_t h = std::hash<std::string>{}(c.template_id());
  for (const auto &f : c) {
    for (const std::size_t part : {std::hash<std::string>{}(f.name), f.value.hash()}) {
      h ^= part + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    }
  }
  return h;
}

namespace {

// `c` without the fields `pinned` names.
config without(const config &c, const config &pinned) {
  std::vector<field> kept;
  kept.reserve(c.size());
  for (const auto &f : c) {
    if (!pinned.contains(f.name)) {
      kept.push_back(f);
    }
  }
  config out(std::move(kept));
  out.set_template_id(c.template_id());
  return out;
}

config pinned_of(const std::optional<nb::dict> &pinned) {
  return pinned ? to_config(*pinned, "pinned values") : config{};
}

} // namespace

namespace {

// The options dict `tunekit.AutoTuner` builds: every key is known, read once and typed.
class option_reader {
public:
  explicit option_reader(const nb::dict &d) : m_d(d) {
    for (auto [k, v] : d) {
      static_cast<void>(v);
      m_unread.insert(nb::cast<std::string>(k));
    }
  }
  template <class T> T get(const char *name, T fallback) {
    if (!m_d.contains(name)) {
      return fallback;
    }
    m_unread.erase(name);
    nb::object v = m_d[name];
    if (v.is_none()) {
      return fallback;
    }
    try {
      return nb::cast<T>(v);
    } catch (const nb::cast_error &) {
      throw nb::type_error(
          ("autotune: option '" + std::string(name) + "' cannot be a '" + py_type_name(v) + "'")
              .c_str());
    }
  }
  nb::object object(const char *name) {
    if (!m_d.contains(name)) {
      return nb::none();
    }
    m_unread.erase(name);
    return m_d[name];
  }
  void finish() const {
    if (!m_unread.empty()) {
      throw nb::type_error(("autotune: unknown option '" + *m_unread.begin() + "'").c_str());
    }
  }

private:
  const nb::dict &m_d;
  std::set<std::string> m_unread;
};

statistic to_statistic(const std::string &name) {
  for (const statistic s : {statistic::mean, statistic::median, statistic::min}) {
    if (name == to_string(s)) {
      return s;
    }
  }
  throw nb::value_error(
      ("autotune: statistic must be 'mean', 'median' or 'min', not '" + name + "'").c_str());
}

// A config of the space or a start config: its `template_id` key, a str, is the config's template
// (what lookup tables match), not a field.
config to_space_config(const nb::dict &d, const std::string &what) {
  if (!d.contains("template_id")) {
    return to_config(d, what);
  }
  nb::dict fields;
  for (auto [k, v] : d) {
    if (!nb::isinstance<nb::str>(k) || nb::cast<std::string>(k) != "template_id") {
      fields[k] = v;
    }
  }
  nb::object id = d["template_id"];
  if (!nb::isinstance<nb::str>(id)) {
    throw nb::type_error(
        (what + "['template_id'] is a '" + py_type_name(id) + "', not a str").c_str());
  }
  config c = to_config(fields, what);
  c.set_template_id(nb::cast<std::string>(id));
  return c;
}

std::vector<config> to_configs(const nb::object &list, const char *what) {
  std::vector<config> out;
  if (list.is_none()) {
    return out;
  }
  for (nb::handle c : list) {
    const std::string where = std::string(what) + "[" + std::to_string(out.size()) + "]";
    if (!nb::isinstance<nb::dict>(c)) {
      throw nb::type_error((where + " is a '" + py_type_name(c) + "', not a dict").c_str());
    }
    out.push_back(to_space_config(nb::borrow<nb::dict>(c), where));
  }
  return out;
}

// A `candidate_preparer` written in Python: `prepare(indices)` starts preparing the configs of
// the space at those indices (a compile pool) without waiting; `prepare_ms(index)` is the
// milliseconds spent on one, or None. Each call takes the GIL: the core calls them from the
// tuning thread, with or without it.
class py_preparer final : public candidate_preparer {
public:
  explicit py_preparer(nb::object obj) : m_obj(std::move(obj)) {}
  void bind(std::function<std::optional<std::size_t>(const config &)> index) {
    m_index = std::move(index);
  }
  void prepare(std::span<const config> configs) override {
    const nb::gil_scoped_acquire gil;
    nb::list indices;
    for (const auto &c : configs) {
      if (const auto i = m_index(c)) {
        indices.append(*i);
      }
    }
    if (nb::len(indices) > 0) {
      m_obj.attr("prepare")(indices);
    }
  }
  [[nodiscard]] std::optional<double> prepare_ms(const config &c) const override {
    const nb::gil_scoped_acquire gil;
    const auto i = m_index(c);
    if (!i) {
      return std::nullopt;
    }
    nb::object ms = m_obj.attr("prepare_ms")(*i);
    if (ms.is_none()) {
      return std::nullopt;
    }
    return nb::cast<double>(ms);
  }

private:
  nb::object m_obj;
  std::function<std::optional<std::size_t>(const config &)> m_index;
};

// Measurements made before, outside the winner cache, written in Python (a reader of another
// tuner's files): `name` says where they come from; `find(key)` returns a list of
// (index, time_ms, reason): a config of the space by its index, its time in milliseconds (None:
// it failed, and `reason` says why). The core calls `find` once per search, with or without the
// GIL.
class py_prior final : public prior_measurements {
public:
  explicit py_prior(nb::object obj) : m_obj(std::move(obj)) {}
  void bind(const config_space *space) { m_space = space; }
  [[nodiscard]] std::string name() const override {
    const nb::gil_scoped_acquire gil;
    return nb::cast<std::string>(m_obj.attr("name"));
  }
  [[nodiscard]] std::vector<candidate_record> find(const key &k) const override {
    const nb::gil_scoped_acquire gil;
    std::vector<candidate_record> out;
    try {
      nb::object found = m_obj.attr("find")(key_to_py(k));
      for (nb::handle item : found) {
        const auto [index, ms, reason] =
            nb::cast<std::tuple<std::size_t, std::optional<double>, std::string>>(item);
        if (index >= m_space->size()) {
          throw error("measurement of config #" + std::to_string(index) + ", not one of the " +
                      std::to_string(m_space->size()) + " configs of the space");
        }
        candidate_record r;
        r.config = (*m_space)[index];
        if (ms) {
          r.time_ms = *ms;
        } else {
          r.status = candidate_status::failed;
        }
        r.reason = reason;
        out.push_back(std::move(r));
      }
    } catch (nb::python_error &e) {
      throw error(e.what());
    } catch (const nb::cast_error &) {
      throw error("find(key) must return a list of (index, time_ms or None, reason)");
    }
    return out;
  }

private:
  nb::object m_obj;
  const config_space *m_space = nullptr;
};

// The key buckets as tunekit's Python side passes them: a list of (position, rule, argument)
// with rule "pow2" (argument None), "edges" (a list of ints) or "multiple" (an int).
std::vector<key_bucket> to_buckets(const nb::object &list) {
  std::vector<key_bucket> out;
  if (list.is_none()) {
    return out;
  }
  for (nb::handle item : list) {
    const auto t = nb::cast<std::tuple<std::size_t, std::string, nb::object>>(item);
    const auto &[position, rule, arg] = t;
    if (rule == "pow2") {
      out.push_back(key_bucket::pow2(position));
    } else if (rule == "edges") {
      out.push_back(key_bucket::at_edges(position, nb::cast<std::vector<std::int64_t>>(arg)));
    } else if (rule == "multiple") {
      out.push_back(key_bucket::round_up(position, nb::cast<std::int64_t>(arg)));
    } else {
      throw nb::value_error(
          ("autotune: key bucket rule '" + rule + "' is not one of pow2, edges, multiple").c_str());
    }
  }
  return out;
}

} // namespace

py_tuner::py_tuner(std::string name, const nb::list &configs, std::string version,
                   const nb::dict &options) {
  std::vector<config> space = to_configs(configs, "config_space");
  option_reader r(options);
  tuner_options o;
  o.version = std::move(version);
  const nb::object measurer = r.object("measurer");
  const nb::object host_sync = r.object("host_sync");
  if (!measurer.is_none()) {
    o.measurer = make_measurer(measurer);
  } else if (!host_sync.is_none()) {
    auto sync = std::make_shared<nb::object>(host_sync);
    o.measurer = std::make_shared<host_measurer>([sync] { (*sync)(); });
  }
  o.policy.warmup = r.get("warmup", o.policy.warmup);
  o.policy.runs = r.get("runs", o.policy.runs);
  o.policy.stat = to_statistic(r.get<std::string>("statistic", "mean"));
  o.policy.early_stop_factor = r.get("early_stop_factor", o.policy.early_stop_factor);
  o.policy.early_stop_after = r.get("early_stop_after", o.policy.early_stop_after);
  o.use_disk_cache = r.get("use_disk_cache", o.use_disk_cache);
  if (const auto hw = r.get<std::optional<nb::dict>>("hardware", std::nullopt)) {
    o.hardware = to_hardware(*hw);
  }
  o.dependencies = r.get("dependencies", std::map<std::string, std::string>{});
  o.process = make_process(r.object("log"));

  search_settings &ss = o.search;
  ss.strategy = r.get("strategy", std::string{});
  ss.budget.max_evaluations = r.get("max_evaluations", ss.budget.max_evaluations);
  ss.budget.max_time = std::chrono::duration<double>(r.get("max_time_s", 0.0));
  ss.budget.patience = r.get("patience", ss.budget.patience);
  ss.seed = r.get("seed", ss.seed);
  ss.batch_size = r.get("batch_size", ss.batch_size);
  ss.lookahead = r.get("lookahead", ss.lookahead);
  ss.start_configs = to_configs(r.object("start_configs"), "start_configs");
  ss.transfer_from_cache = r.get("transfer_from_cache", ss.transfer_from_cache);
  ss.rerank.band = r.get("rerank_band", ss.rerank.band);
  ss.rerank.max_leaders = r.get("rerank_leaders", ss.rerank.max_leaders);
  ss.rerank.rounds = r.get("rerank_rounds", ss.rerank.rounds);
  ss.rerank.runs = r.get("rerank_runs", ss.rerank.runs);
  if (!(ss.rerank.band >= 0) || ss.rerank.rounds < 0 || ss.rerank.runs < 0) {
    throw nb::value_error("autotune: rerank must have a band >= 0 (0: off), rounds >= 0 and "
                          "runs >= 0 (0: the policy's)");
  }

  o.artifact.name = r.get("artifact_name", std::string{});
  o.artifact.key_names = r.get("key_names", std::vector<std::string>{});

  if (const auto path = r.get<std::optional<std::string>>("lookup_table_path", std::nullopt)) {
    o.table.lookup_table = std::make_shared<const lookup_table>(lookup_table::load(*path));
  }
  if (const auto text = r.get<std::optional<std::string>>("lookup_table_json", std::nullopt)) {
    o.table.lookup_table = std::make_shared<const lookup_table>(lookup_table::from_json(*text));
  }
  o.table.op_name = r.get("op_name", std::string{});
  if (const auto params = r.get<std::optional<nb::dict>>("table_params", std::nullopt)) {
    o.table.params = to_config(*params, "table_params");
  }
  o.table.template_hashes = r.get("template_hashes", std::map<std::string, std::string>{});
  const auto key_format = r.get<std::string>("table_key_format", "tunekit");
  if (const auto f = parse_table_key_format(key_format)) {
    o.table.key_format = *f;
  } else {
    throw nb::value_error(
        ("autotune: table_key_format must be 'tunekit' or 'inductor', not '" + key_format + "'")
            .c_str());
  }

  o.shapes.buckets = to_buckets(r.object("key_buckets"));
  o.shapes.nearest_over = r.get("nearest_over", std::vector<std::size_t>{});
  if (const auto miss = r.get<std::string>("on_miss", "tune"); miss == "nearest") {
    o.shapes.on_miss = miss_policy::nearest;
  } else if (miss != "tune") {
    throw nb::value_error(
        ("autotune: on_miss must be 'tune' or 'nearest', not '" + miss + "'").c_str());
  }

  o.mode = r.get("deferred", false) ? tuning_mode::deferred : tuning_mode::eager;
  o.parallel_split = r.get("parallel_split", false);
  std::shared_ptr<py_preparer> preparer;
  if (nb::object p = r.object("preparer"); !p.is_none()) {
    preparer = std::make_shared<py_preparer>(std::move(p));
    o.preparer = preparer;
  }
  std::shared_ptr<py_prior> prior;
  if (nb::object m = r.object("prior"); !m.is_none()) {
    prior = std::make_shared<py_prior>(std::move(m));
    o.prior = prior;
  }
  r.finish();

  m_tuner = std::make_unique<tuner>(std::move(name), config_space(std::move(space)), std::move(o));
  const config_space &sp = m_tuner->space();
  m_index.reserve(sp.size());
  for (std::size_t i = 0; i < sp.size(); ++i) {
    m_index.emplace(sp[i], i);
  }
  if (prior) {
    prior->bind(&sp);
  }
  if (preparer) {
    preparer->bind([this](const config &c) -> std::optional<std::size_t> {
      const auto it = m_index.find(c);
      return it == m_index.end() ? std::nullopt : std::optional<std::size_t>(it->second);
    });
  }
}

const py_tuner::index_map &py_tuner::indices_without(const config &pinned) {
  if (pinned.empty()) {
    return m_index;
  }
  std::vector<std::string> names;
  for (const auto &f : pinned) {
    names.push_back(f.name);
  }
  std::sort(names.begin(), names.end());
  auto [it, added] = m_pinned_index.try_emplace(std::move(names));
  if (added) {
    const config_space &s = m_tuner->space();
    it->second.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      it->second.emplace(without(s[i], pinned), i); // the first config keeps its place
    }
  }
  return it->second;
}

std::size_t py_tuner::index_of(const config &c, const config &pinned) {
  const index_map &map = indices_without(pinned);
  const auto it = pinned.empty() ? map.find(c) : map.find(without(c, pinned));
  if (it == map.end()) {
    throw error("tuner '" + m_tuner->name() + "': [" + c.to_string() +
                "] is not a config of the space");
  }
  return it->second;
}

std::size_t py_tuner::resolve(nb::handle key_obj, const nb::object &prune, const nb::object &run,
                              bool verbose, const nb::object &comm,
                              const std::optional<nb::dict> &pinned, bool allow_arg_overwrite,
                              const nb::object &default_fn, const nb::object &reset,
                              const std::optional<std::string> &effort) {
  const key k = to_key(key_obj, m_tuner->name());
  const auto c = make_communicator(comm);
  call_options o;
  if (effort) {
    o.effort = parse_effort(*effort);
    if (!o.effort) {
      throw nb::value_error(("tuner '" + m_tuner->name() +
                             "': effort must be off, cached, quick or full, not '" + *effort + "'")
                                .c_str());
    }
  }
  o.verbose = verbose;
  o.comm = c.get();
  o.pinned = pinned_of(pinned);
  o.allow_arg_overwrite = allow_arg_overwrite;
  auto prune_fn = [&](const config &cfg) -> bool {
    return prune.is_none() || nb::cast<bool>(nb::bool_(prune(index_of(cfg, o.pinned))));
  };
  // Ctrl-C (or SystemExit) in a candidate stops tuning and reaches the caller as itself, not as
  // that candidate's failure: every later run fails at once and the interrupt is raised again.
  std::optional<nb::python_error> interrupt;
  auto guarded = [&](const nb::object &fn, const config &cfg) {
    if (interrupt) {
      throw fatal_candidate_error("interrupted");
    }
    try {
      fn(index_of(cfg, o.pinned));
    } catch (nb::python_error &e) {
      if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) {
        interrupt.emplace(e);
        throw fatal_candidate_error("interrupted");
      }
      throw;
    }
  };
  auto run_fn = [&](const config &cfg) { guarded(run, cfg); };
  auto reset_fn = [&](const config &cfg) { guarded(reset, cfg); };
  const detail::function_ref<void(const config &)> reset_ref(reset_fn);
  auto check_fn = [](const config &) { return true; };
  // The default: a dict of the space (described), from the call's arguments.
  auto dflt = [&]() -> config {
    nb::object d = default_fn();
    if (!nb::isinstance<nb::dict>(d)) {
      throw error("tuner '" + m_tuner->name() + "': default returned a '" + py_type_name(d) +
                  "', not a config dict");
    }
    return to_space_config(nb::borrow<nb::dict>(d), "the default config");
  };
  const detail::function_ref<config()> dflt_ref(dflt);
  std::size_t out = 0;
  try {
    out = index_of(m_tuner->resolve(k, o, prune_fn, run_fn, check_fn,
                                    default_fn.is_none() ? nullptr : &dflt_ref,
                                    reset.is_none() ? nullptr : &reset_ref),
                   o.pinned);
  } catch (const std::exception &) {
    if (interrupt) {
      throw nb::python_error(*interrupt);
    }
    throw;
  }
  if (interrupt) {
    throw nb::python_error(*interrupt);
  }
  return out;
}

std::optional<std::size_t> py_tuner::find(nb::handle key_obj,
                                          const std::optional<nb::dict> &pinned) {
  const config p = pinned_of(pinned);
  const config *c = m_tuner->find(stored_key(to_key(key_obj, m_tuner->name()), p));
  if (c == nullptr) {
    return std::nullopt;
  }
  return index_of(*c, p);
}

key py_tuner::stored(nb::handle key_obj, const std::optional<nb::dict> &pinned) const {
  return stored_key(to_key(key_obj, m_tuner->name()), pinned_of(pinned));
}

void bind_tuner(nb::module_ &m) {
  nb::class_<py_tuner>(m, "Tuner", "The type-erased tuner of one decorated function.")
      .def(nb::init<std::string, const nb::list &, std::string, const nb::dict &>(), "name"_a,
           "configs"_a, "version"_a, "options"_a = nb::dict())
      .def("resolve", &py_tuner::resolve, "key"_a, "prune"_a.none(), "run"_a, "verbose"_a = false,
           "comm"_a.none() = nb::none(), "pinned"_a = nb::none(), "allow_arg_overwrite"_a = false,
           "default"_a.none() = nb::none(), "reset"_a.none() = nb::none(), "effort"_a = nb::none())
      .def(
          "arm",
          [](py_tuner &t, const nb::object &comm) {
            const auto c = make_communicator(comm);
            t.get().arm(c.get());
          },
          "comm"_a.none() = nb::none())
      .def_prop_ro("armed", [](py_tuner &t) { return t.get().armed(); })
      .def("recorded_keys",
           [](py_tuner &t) {
             nb::list out;
             for (const key &k : t.get().recorded_keys()) {
               out.append(key_to_py(k));
             }
             return out;
           })
      .def("find", &py_tuner::find, "key"_a, "pinned"_a = nb::none())
      .def(
          "cache_path",
          [](py_tuner &t, nb::handle k, const std::optional<nb::dict> &pinned) {
            return t.get().cache_path(t.stored(k, pinned)).string();
          },
          "key"_a, "pinned"_a = nb::none())
      .def("last_source", [](py_tuner &t) { return std::string(to_string(t.get().last_source())); })
      .def("searches", [](py_tuner &t) { return t.get().searches(); })
      .def("last_search",
           [](py_tuner &t) -> std::optional<std::string> {
             auto e = t.get().last_search();
             return e ? std::optional(to_json(*e)) : std::nullopt;
           })
      .def("forget", [](py_tuner &t) { t.get().forget(); })
      .def(
          "seed",
          [](py_tuner &t, nb::handle k, std::size_t index) {
            if (index >= t.get().space().size()) {
              throw nb::index_error();
            }
            t.get().seed(t.stored(k, std::nullopt), t.get().space()[index]);
          },
          "key"_a, "index"_a,
          "Takes config `index` as the in-process winner of `key` without measuring.")
      .def_prop_ro("name", [](py_tuner &t) { return t.get().name(); })
      .def_prop_ro("version", [](py_tuner &t) { return t.get().options().version; })
      .def_prop_ro("size", [](py_tuner &t) { return t.get().space().size(); })
      .def_prop_ro("hardware", [](py_tuner &t) { return hardware_to_py(t.get().hardware()); })
      .def_prop_ro("cache_dir", [](py_tuner &t) { return t.get().env().cache_dir.string(); })
      .def_prop_ro(
          "effort",
          [](py_tuner &t) {
            const auto e = parse_effort(t.get().env().autotune);
            return std::string(to_string(e.value_or(effort::full)));
          },
          "TUNEKIT_AUTOTUNE as the tuner read it (full when unset or unknown).")
      .def_prop_ro(
          "every_call_verbose", [](py_tuner &t) { return t.get().env().verbose; },
          "TUNEKIT_VERBOSE as the tuner read it: every call reports its source.")
      .def("config", [](py_tuner &t, std::size_t i) {
        if (i >= t.get().space().size()) {
          throw nb::index_error();
        }
        return config_to_py(t.get().space()[i]);
      });
}

} // namespace tunekit::python
