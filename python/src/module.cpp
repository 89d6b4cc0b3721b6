/// \file module.cpp
/// `tunekit._core`: the C++ core as the Python package sees it. The decorators themselves live in
/// Python (python/tunekit/); this module gives them the tuner (resolution chain, search, agreement,
/// winner cache), the contextual tuner, the cache reader and the hardware and launcher identity.
/// Python objects take part through small adapters: a communicator (torch.distributed, mpi4py), a
/// measurer (CUDA events through PyTorch, a test's deterministic costs) and a log sink.
///
/// Every call from Python holds the GIL for its whole length, so the adapters may call back into
/// Python without taking it again.

#include <tunekit/communicator.hpp>
#include <tunekit/config.hpp>
#include <tunekit/config_space.hpp>
#include <tunekit/contextual.hpp>
#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/launcher.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/process_context.hpp>
#include <tunekit/tuner.hpp>
#include <tunekit/version.hpp>
#include <tunekit/winner_cache.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace tunekit::python {
namespace {

// ---- values, keys and configs ----------------------------------------------------------------

std::string py_type_name(nb::handle h) { return nb::cast<std::string>(nb::type_name(h.type())); }

value to_value(nb::handle h, const std::string &what);

// A nested tuple of a key (a shape, a stride) is one string value: its canonical text, e.g.
// `(1024, 1024)`, with the elements written as `value::to_string` writes them.
std::string nested_text(nb::handle seq, const std::string &what) {
  std::string out = "(";
  bool first = true;
  for (nb::handle item : seq) {
    if (!first) {
      out += ", ";
    }
    first = false;
    if (nb::isinstance<nb::tuple>(item) || nb::isinstance<nb::list>(item)) {
      out += nested_text(item, what);
    } else {
      out += to_value(item, what).to_string();
    }
  }
  if (nb::len(seq) == 1) {
    out += ",";
  }
  return out + ")";
}

value to_value(nb::handle h, const std::string &what) {
  if (PyBool_Check(h.ptr())) {
    return value(h.ptr() == Py_True);
  }
  if (PyLong_Check(h.ptr()) || (!PyFloat_Check(h.ptr()) && PyIndex_Check(h.ptr()))) {
    int overflow = 0;
    nb::object as_int = nb::steal(PyNumber_Index(h.ptr()));
    const long long v = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
    if (overflow != 0) {
      throw error(what + ": the integer " + nb::cast<std::string>(nb::str(h)) +
                  " is outside the int64 range");
    }
    return value(static_cast<std::int64_t>(v));
  }
  if (PyFloat_Check(h.ptr())) {
    return value(PyFloat_AsDouble(h.ptr())); // throws for NaN and infinities
  }
  if (PyUnicode_Check(h.ptr())) {
    return value(nb::cast<std::string>(h));
  }
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) {
    return value(nested_text(h, what));
  }
  throw nb::type_error((what + ": a value of type '" + py_type_name(h) +
                        "' is not an int, float, bool, str or tuple of them")
                           .c_str());
}

nb::object from_value(const value &v) {
  switch (v.type()) {
  case value_type::int64:
    return nb::int_(v.as_int());
  case value_type::float64:
    return nb::float_(v.as_double());
  case value_type::boolean:
    return nb::bool_(v.as_bool());
  case value_type::string:
    break;
  }
  return nb::str(v.as_string().c_str(), v.as_string().size());
}

key to_key(nb::handle h) {
  key k;
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) {
    for (nb::handle item : h) {
      k.push_back(to_value(item, "key_fn's key"));
    }
  } else {
    k.push_back(to_value(h, "key_fn's key"));
  }
  return k;
}

nb::tuple key_to_py(const key &k) {
  nb::list out;
  for (std::size_t i = 0; i < k.size(); ++i) {
    out.append(from_value(k[i]));
  }
  return nb::tuple(out);
}

config to_config(const nb::dict &d, std::size_t index) {
  config c;
  for (auto [name, v] : d) {
    if (!PyUnicode_Check(name.ptr())) {
      throw nb::type_error(("config_space[" + std::to_string(index) +
                            "]: field names must be strings, not '" + py_type_name(name) + "'")
                               .c_str());
    }
    const std::string n = nb::cast<std::string>(name);
    c.set(n, to_value(v, "config_space[" + std::to_string(index) + "]['" + n + "']"));
  }
  return c;
}

nb::dict config_to_py(const config &c) {
  nb::dict d;
  for (const auto &f : c) {
    d[nb::str(f.name.c_str(), f.name.size())] = from_value(f.value);
  }
  return d;
}

hardware_info to_hardware(const nb::dict &d) {
  hardware_info hw;
  hw.kind = nb::cast<std::string>(d["kind"]);
  hw.name = nb::cast<std::string>(d["name"]);
  hw.arch = nb::cast<std::string>(d["arch"]);
  hw.units = nb::cast<std::int64_t>(d["units"]);
  hw.count = nb::cast<std::int64_t>(d["count"]);
  return hw;
}

nb::dict hardware_to_py(const hardware_info &hw) {
  nb::dict d;
  d["kind"] = hw.kind;
  d["name"] = hw.name;
  d["arch"] = hw.arch;
  d["units"] = hw.units;
  d["count"] = hw.count;
  d["digest"] = hw.digest();
  return d;
}

// The Python type of `fatal_candidate_error` (set when the module is initialised): a measurer
// written in Python lets it through from `run()`, and the adapter turns it back into the C++ one
// so that the search stops.
PyObject *g_fatal_type = nullptr;

// ---- adapters --------------------------------------------------------------------------------

/// A communicator implemented in Python: an object with `rank()`, `size()`, `local_rank()`,
/// `all_reduce_max(list) -> list`, `all_reduce_min(list) -> list`, `broadcast(bytes, root) ->
/// bytes` and `barrier()` (tunekit.Communicator; torch.distributed and mpi4py ones ship with the
/// package). Rank, size and local rank are read once.
class py_communicator final : public communicator {
public:
  explicit py_communicator(nb::object obj)
      : m_obj(std::move(obj)), m_rank(nb::cast<int>(m_obj.attr("rank")())),
        m_size(nb::cast<int>(m_obj.attr("size")())),
        m_local_rank(nb::cast<int>(m_obj.attr("local_rank")())) {
    if (m_size < 1 || m_rank < 0 || m_rank >= m_size || m_local_rank < 0) {
      throw error("communicator " + py_type_name(m_obj) + ": rank " + std::to_string(m_rank) +
                  " of size " + std::to_string(m_size) + " (local rank " +
                  std::to_string(m_local_rank) + ") is not a valid identity");
    }
  }
  [[nodiscard]] int rank() const override { return m_rank; }
  [[nodiscard]] int size() const override { return m_size; }
  [[nodiscard]] int local_rank() const override { return m_local_rank; }
  void all_reduce_max(std::span<double> values) override { reduce("all_reduce_max", values); }
  void all_reduce_min(std::span<double> values) override { reduce("all_reduce_min", values); }
  void broadcast(std::span<std::byte> bytes, int root) override {
    nb::bytes in(bytes.data(), bytes.size());
    nb::object out = m_obj.attr("broadcast")(in, root);
    const nb::bytes got(out);
    if (got.size() != bytes.size()) {
      throw error("communicator " + py_type_name(m_obj) + ": broadcast returned " +
                  std::to_string(got.size()) + " bytes, not " + std::to_string(bytes.size()));
    }
    if (!bytes.empty()) {
      std::memcpy(bytes.data(), got.c_str(), bytes.size());
    }
  }
  void barrier() override { m_obj.attr("barrier")(); }

private:
  void reduce(const char *op, std::span<double> values) {
    nb::list in;
    for (double v : values) {
      in.append(v);
    }
    nb::object out = m_obj.attr(op)(in);
    const auto got = nb::cast<std::vector<double>>(out);
    if (got.size() != values.size()) {
      throw error("communicator " + py_type_name(m_obj) + ": " + op + " returned " +
                  std::to_string(got.size()) + " values, not " + std::to_string(values.size()));
    }
    std::copy(got.begin(), got.end(), values.begin());
  }

  nb::object m_obj;
  int m_rank;
  int m_size;
  int m_local_rank;
};

std::unique_ptr<py_communicator> make_communicator(const nb::object &obj) {
  if (obj.is_none()) {
    return nullptr;
  }
  return std::make_unique<py_communicator>(obj);
}

/// One run of the candidate being measured, callable from Python only while the measurer's
/// `measure` is running.
struct run_handle {
  detail::function_ref<void()> *fn = nullptr;
  void operator()() const {
    if (fn == nullptr) {
      throw error("a measurer's run() was called after its measure() returned");
    }
    (*fn)();
  }
};

/// What a Python measurer is told about the candidate it times.
struct measure_request {
  std::string tuner;
  nb::tuple key;
  nb::dict config;
  std::size_t index = 0;
  std::size_t count = 0;
  double best_ms = 0;
  int warmup = 0;
  int runs = 0;
};

/// A measurer implemented in Python: `measure(run, request) -> list of milliseconds`, one per
/// timed run, and a `name`.
class py_measurer final : public measurer {
public:
  explicit py_measurer(nb::object obj)
      : m_obj(std::move(obj)), m_name(nb::cast<std::string>(nb::str(m_obj.attr("name")))) {}
  [[nodiscard]] std::vector<double> measure(const candidate_info &info,
                                            detail::function_ref<void()> run,
                                            const measure_policy &policy) override {
    measure_request r;
    r.tuner = std::string(info.tuner);
    r.key = key_to_py(info.key);
    r.config = config_to_py(info.config);
    r.index = info.index;
    r.count = info.count;
    r.best_ms = info.best_ms;
    r.warmup = policy.warmup;
    r.runs = policy.runs;
    nb::object handle = nb::cast(run_handle{&run});
    struct invalidate {
      nb::handle h;
      ~invalidate() { nb::inst_ptr<run_handle>(h)->fn = nullptr; }
    } guard{handle};
    try {
      nb::object out = m_obj.attr("measure")(handle, r);
      return nb::cast<std::vector<double>>(out);
    } catch (nb::python_error &e) {
      if (g_fatal_type != nullptr && e.matches(g_fatal_type)) {
        throw fatal_candidate_error(e.what());
      }
      throw;
    }
  }
  [[nodiscard]] std::string name() const override { return m_name; }

private:
  nb::object m_obj;
  std::string m_name;
};

/// A log sink that hands INFO lines and warnings to a Python callable `log(level, message)`,
/// level "info" or "warning".
log_sink python_sink(nb::object fn) {
  auto shared = std::make_shared<nb::object>(std::move(fn));
  return [shared](log_level level, std::string_view text) {
    (*shared)(level == log_level::info ? "info" : "warning", nb::str(text.data(), text.size()));
  };
}

process_context make_process(const nb::object &log) {
  process_context p = process_context::from_env();
  if (!log.is_none()) {
    p.log = python_sink(log);
  }
  return p;
}

// ---- the tuner -------------------------------------------------------------------------------

class py_tuner {
public:
  py_tuner(std::string name, const nb::list &configs, std::string version,
           const nb::object &measurer, const nb::object &host_sync, bool use_disk_cache, int warmup,
           int runs, const std::optional<nb::dict> &hardware,
           const std::map<std::string, std::string> &deps, const nb::object &log) {
    std::vector<config> space;
    std::size_t i = 0;
    for (nb::handle c : configs) {
      if (!nb::isinstance<nb::dict>(c)) {
        throw nb::type_error(
            ("config_space[" + std::to_string(i) + "] is a '" + py_type_name(c) + "', not a dict")
                .c_str());
      }
      space.push_back(to_config(nb::borrow<nb::dict>(c), i++));
    }
    tuner_options o;
    o.version = std::move(version);
    if (!measurer.is_none()) {
      o.measurer = std::make_shared<py_measurer>(measurer);
    } else if (!host_sync.is_none()) {
      auto sync = std::make_shared<nb::object>(host_sync);
      o.measurer = std::make_shared<host_measurer>([sync] { (*sync)(); });
    }
    o.policy.warmup = warmup;
    o.policy.runs = runs;
    o.use_disk_cache = use_disk_cache;
    if (hardware) {
      o.hardware = to_hardware(*hardware);
    }
    o.dependencies = deps;
    o.process = make_process(log);
    m_tuner =
        std::make_unique<tuner>(std::move(name), config_space(std::move(space)), std::move(o));
  }

  /// Resolves `key` and returns the index of the config in the space. `prune(i) -> bool` and
  /// `run(i)` take indices of the space.
  std::size_t resolve(nb::handle key_obj, const nb::object &prune, const nb::object &run,
                      bool verbose, const nb::object &comm) {
    const key k = to_key(key_obj);
    const auto c = make_communicator(comm);
    call_options o;
    o.verbose = verbose;
    o.comm = c.get();
    const config_space &space = m_tuner->space();
    auto index = [&](const config &cfg) {
      const auto i = space.index_of(cfg);
      if (i < 0) {
        throw error("tuner '" + m_tuner->name() + "': [" + cfg.to_string() +
                    "] is not a config of the space");
      }
      return static_cast<std::size_t>(i);
    };
    auto prune_fn = [&](const config &cfg) -> bool {
      return prune.is_none() || nb::cast<bool>(nb::bool_(prune(index(cfg))));
    };
    // Ctrl-C (or SystemExit) in a candidate stops tuning and reaches the caller as itself, not as
    // that candidate's failure: every later run fails at once and the interrupt is raised again.
    std::optional<nb::python_error> interrupt;
    auto run_fn = [&](const config &cfg) {
      if (interrupt) {
        throw fatal_candidate_error("interrupted");
      }
      try {
        run(index(cfg));
      } catch (nb::python_error &e) {
        if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) {
          interrupt.emplace(e);
          throw fatal_candidate_error("interrupted");
        }
        throw;
      }
    };
    auto check_fn = [](const config &) { return true; };
    std::size_t out = 0;
    try {
      out = index(m_tuner->resolve(k, o, prune_fn, run_fn, check_fn));
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

  [[nodiscard]] std::optional<std::size_t> find(nb::handle key_obj) const {
    const config *c = m_tuner->find(to_key(key_obj));
    if (c == nullptr) {
      return std::nullopt;
    }
    return static_cast<std::size_t>(m_tuner->space().index_of(*c));
  }

  tuner &get() { return *m_tuner; }

private:
  std::unique_ptr<tuner> m_tuner;
};

// ---- the contextual tuner --------------------------------------------------------------------

struct py_plan {
  contextual_tuner::plan p;
  std::size_t index = 0;
  [[nodiscard]] bool timed() const { return p.timed; }
};

class py_contextual {
public:
  py_contextual(bool is_dist, int n_repeat, int n_warmup, const nb::object &comm, bool verbose,
                const nb::object &log)
      : m_comm(make_communicator(comm)) {
    contextual_options o;
    o.is_dist = is_dist;
    o.n_repeat = n_repeat;
    o.n_warmup = n_warmup;
    o.comm = m_comm.get();
    o.verbose = verbose;
    o.process = make_process(log);
    m_ctx = std::make_unique<contextual_tuner>(std::move(o));
  }

  /// The plan of one launch of `t`'s kernel with `key`, or None when the run must be abandoned
  /// (every candidate of this kernel failed; `finish` reports it).
  std::optional<py_plan> plan_launch(py_tuner &t, nb::handle key_obj) {
    try {
      py_plan out;
      out.p = m_ctx->plan_launch(t.get(), to_key(key_obj));
      out.index = static_cast<std::size_t>(t.get().space().index_of(*out.p.cfg));
      return out;
    } catch (const detail::abandon_run &) {
      return std::nullopt;
    }
  }

  bool measure_launch(const py_plan &p, const nb::object &run) {
    auto fn = [&] { run(); };
    return m_ctx->measure_launch(p.p, fn);
  }

  /// The index of the best valid config so far of the plan's (kernel, key), or None.
  std::optional<std::size_t> fallback(py_tuner &t, const py_plan &p) const {
    const config *c = m_ctx->fallback(p.p);
    if (c == nullptr) {
      return std::nullopt;
    }
    return static_cast<std::size_t>(t.get().space().index_of(*c));
  }

  contextual_tuner &get() { return *m_ctx; }

private:
  std::unique_ptr<py_communicator> m_comm;
  std::unique_ptr<contextual_tuner> m_ctx;
};

nb::dict load_result_to_py(const load_result<cache_entry> &r) {
  nb::dict d;
  d["status"] = std::string(to_string(r.status));
  d["detail"] = r.detail;
  d["path"] = r.path.string();
  d["entry"] = r.value ? nb::object(nb::str(to_json(*r.value).c_str())) : nb::none();
  return d;
}

} // namespace
} // namespace tunekit::python

NB_MODULE(_core, m) {
  using namespace tunekit;
  using namespace tunekit::python;
  m.doc() = "tunekit's C++ core, as the tunekit package uses it";
  m.attr("__version__") = TUNEKIT_VERSION_STRING;
  // Tuners live in module-level caches and decorated functions until the interpreter ends;
  // their teardown order is not a leak worth reporting.
  nb::set_leak_warnings(false);

  static nb::exception<error> tk_error(m, "Error", PyExc_RuntimeError);
  static nb::exception<communicator_timeout> tk_timeout(m, "CommunicatorTimeout", tk_error.ptr());
  static nb::exception<fatal_candidate_error> tk_fatal(m, "FatalCandidateError", tk_error.ptr());
  g_fatal_type = tk_fatal.ptr();

  nb::class_<run_handle>(m, "Run", "One run of the candidate being measured.")
      .def("__call__", &run_handle::operator());

  nb::class_<measure_request>(m, "MeasureRequest",
                              "What a measurer is told about the candidate it times.")
      .def_ro("tuner", &measure_request::tuner)
      .def_ro("key", &measure_request::key)
      .def_ro("config", &measure_request::config)
      .def_ro("index", &measure_request::index)
      .def_ro("count", &measure_request::count)
      .def_ro("best_ms", &measure_request::best_ms)
      .def_ro("warmup", &measure_request::warmup)
      .def_ro("runs", &measure_request::runs);

  nb::class_<py_tuner>(m, "Tuner", "The type-erased tuner of one decorated function.")
      .def(nb::init<std::string, const nb::list &, std::string, const nb::object &,
                    const nb::object &, bool, int, int, const std::optional<nb::dict> &,
                    const std::map<std::string, std::string> &, const nb::object &>(),
           "name"_a, "configs"_a, "version"_a, "measurer"_a.none() = nb::none(),
           "host_sync"_a.none() = nb::none(), "use_disk_cache"_a = true, "warmup"_a = 5,
           "runs"_a = 10, "hardware"_a = nb::none(),
           "dependencies"_a = std::map<std::string, std::string>{}, "log"_a.none() = nb::none())
      .def("resolve", &py_tuner::resolve, "key"_a, "prune"_a.none(), "run"_a, "verbose"_a = false,
           "comm"_a.none() = nb::none())
      .def("find", &py_tuner::find, "key"_a)
      .def("cache_path",
           [](py_tuner &t, nb::handle k) { return t.get().cache_path(to_key(k)).string(); })
      .def("last_source", [](py_tuner &t) { return std::string(to_string(t.get().last_source())); })
      .def("searches", [](py_tuner &t) { return t.get().searches(); })
      .def("last_search",
           [](py_tuner &t) -> std::optional<std::string> {
             auto e = t.get().last_search();
             return e ? std::optional(to_json(*e)) : std::nullopt;
           })
      .def("forget", [](py_tuner &t) { t.get().forget(); })
      .def_prop_ro("name", [](py_tuner &t) { return t.get().name(); })
      .def_prop_ro("version", [](py_tuner &t) { return t.get().options().version; })
      .def_prop_ro("size", [](py_tuner &t) { return t.get().space().size(); })
      .def_prop_ro("hardware", [](py_tuner &t) { return hardware_to_py(t.get().hardware()); })
      .def_prop_ro("cache_dir", [](py_tuner &t) { return t.get().env().cache_dir.string(); })
      .def("config", [](py_tuner &t, std::size_t i) {
        if (i >= t.get().space().size()) {
          throw nb::index_error();
        }
        return config_to_py(t.get().space()[i]);
      });

  nb::class_<py_plan>(m, "Plan", "What one launch inside a contextual run does.")
      .def_ro("index", &py_plan::index)
      .def_prop_ro("timed", &py_plan::timed);

  nb::class_<py_contextual>(m, "ContextualTuner")
      .def(nb::init<bool, int, int, const nb::object &, bool, const nb::object &>(), "is_dist"_a,
           "n_repeat"_a, "n_warmup"_a, "comm"_a.none() = nb::none(), "verbose"_a = false,
           "log"_a.none() = nb::none())
      .def("begin", [](py_contextual &c) { c.get().begin(); })
      .def("plan_launch", &py_contextual::plan_launch, "tuner"_a, "key"_a)
      .def("measure_launch", &py_contextual::measure_launch, "plan"_a, "run"_a)
      .def("fallback", &py_contextual::fallback, "tuner"_a, "plan"_a)
      .def("after_run", [](py_contextual &c) { return c.get().after_run(); })
      .def("has_work", [](py_contextual &c) { return c.get().has_work(); })
      .def("finish", [](py_contextual &c) { c.get().finish(); })
      .def("abort", [](py_contextual &c) { c.get().abort(); })
      .def("last_winners", [](py_contextual &c) {
        nb::list out;
        for (const auto &[name, cfg] : c.get().last_winners()) {
          out.append(nb::make_tuple(name, config_to_py(cfg)));
        }
        return out;
      });

  m.def(
      "key", [](nb::handle k) { return key_to_py(to_key(k)); },
      "The key as the core stores it (nested tuples become their text).");
  m.def("key_text", [](nb::handle k) { return to_key(k).to_string(); });
  m.def("host_hardware", [] { return hardware_to_py(host_hardware()); });
  m.def("hardware_digest", [](const nb::dict &d) { return to_hardware(d).digest(); });
  m.def("core_dependencies", [] { return core_dependencies(); });
  m.def("cache_dir", [] { return environment::from_env().cache_dir.string(); });
  m.def("launcher", [] {
    const launcher_info l = launcher_info::from_env();
    nb::dict d;
    d["kind"] = std::string(to_string(l.kind));
    d["rank"] = l.rank;
    d["local_rank"] = l.local_rank;
    d["world_size"] = l.world_size;
    d["text"] = l.to_string();
    return d;
  });
  m.def(
      "read_entry",
      [](const std::string &path) { return load_result_to_py(winner_cache::read(path)); }, "path"_a,
      "Reads and validates one winner cache entry file.");
  m.def(
      "list_entries",
      [](const std::string &root, const std::string &function) {
        std::vector<std::string> out;
        for (const auto &p : winner_cache(root).list(function)) {
          out.push_back(p.string());
        }
        return out;
      },
      "root"_a, "function"_a = "");
  m.def(
      "remove_entries",
      [](const std::string &root, const std::string &function) {
        return winner_cache(root).remove(function).size();
      },
      "root"_a, "function"_a = "");
}
