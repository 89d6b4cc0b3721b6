/// \file tuner.cpp
/// `tunekit._core.Tuner`: the core's tuner of one decorated function. Python keeps its configs in
/// a list and passes indices; the core works with configs. The index of every config is hashed
/// once, so mapping the core's configs back costs O(1) per config and pruning N candidates O(N).

#include "binding.hpp"

#include <tunekit/config_space.hpp>
#include <tunekit/error.hpp>

#include <algorithm>
#include <exception>
#include <functional>
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

py_tuner::py_tuner(std::string name, const nb::list &configs, std::string version,
                   const nb::object &measurer, const nb::object &host_sync, bool use_disk_cache,
                   int warmup, int runs, const std::optional<nb::dict> &hardware,
                   const std::map<std::string, std::string> &deps, const nb::object &log) {
  std::vector<config> space;
  for (nb::handle c : configs) {
    const std::string what = "config_space[" + std::to_string(space.size()) + "]";
    if (!nb::isinstance<nb::dict>(c)) {
      throw nb::type_error((what + " is a '" + py_type_name(c) + "', not a dict").c_str());
    }
    space.push_back(to_config(nb::borrow<nb::dict>(c), what));
  }
  tuner_options o;
  o.version = std::move(version);
  if (!measurer.is_none()) {
    o.measurer = make_measurer(measurer);
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
  m_tuner = std::make_unique<tuner>(std::move(name), config_space(std::move(space)), std::move(o));
  const config_space &s = m_tuner->space();
  m_index.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    m_index.emplace(s[i], i);
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
                              const std::optional<nb::dict> &pinned, bool allow_arg_overwrite) {
  const key k = to_key(key_obj);
  const auto c = make_communicator(comm);
  call_options o;
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
  auto run_fn = [&](const config &cfg) {
    if (interrupt) {
      throw fatal_candidate_error("interrupted");
    }
    try {
      run(index_of(cfg, o.pinned));
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
    out = index_of(m_tuner->resolve(k, o, prune_fn, run_fn, check_fn), o.pinned);
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
  const config *c = m_tuner->find(stored_key(to_key(key_obj), p));
  if (c == nullptr) {
    return std::nullopt;
  }
  return index_of(*c, p);
}

key py_tuner::stored(nb::handle key_obj, const std::optional<nb::dict> &pinned) const {
  return stored_key(to_key(key_obj), pinned_of(pinned));
}

void bind_tuner(nb::module_ &m) {
  nb::class_<py_tuner>(m, "Tuner", "The type-erased tuner of one decorated function.")
      .def(nb::init<std::string, const nb::list &, std::string, const nb::object &,
                    const nb::object &, bool, int, int, const std::optional<nb::dict> &,
                    const std::map<std::string, std::string> &, const nb::object &>(),
           "name"_a, "configs"_a, "version"_a, "measurer"_a.none() = nb::none(),
           "host_sync"_a.none() = nb::none(), "use_disk_cache"_a = true, "warmup"_a = 5,
           "runs"_a = 10, "hardware"_a = nb::none(),
           "dependencies"_a = std::map<std::string, std::string>{}, "log"_a.none() = nb::none())
      .def("resolve", &py_tuner::resolve, "key"_a, "prune"_a.none(), "run"_a, "verbose"_a = false,
           "comm"_a.none() = nb::none(), "pinned"_a = nb::none(), "allow_arg_overwrite"_a = false)
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
      .def_prop_ro("name", [](py_tuner &t) { return t.get().name(); })
      .def_prop_ro("version", [](py_tuner &t) { return t.get().options().version; })
      .def_prop_ro("size", [](py_tuner &t) { return t.get().space().size(); })
      .def_prop_ro("hardware", [](py_tuner &t) { return hardware_to_py(t.get().hardware()); })
      .def_prop_ro("cache_dir", [](py_tuner &t) { return t.get().env().cache_dir.string(); })
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
