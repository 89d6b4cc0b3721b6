/// \file contextual.cpp
/// `tunekit._core.ContextualTuner`: the core's contextual tuner, driven by
/// python/tunekit/_contextual.py, which runs the outer function and takes over the launches of
/// its Triton autotuners.

#include "binding.hpp"

#include <tunekit/contextual.hpp>

#include <utility>

namespace tunekit::python {

using namespace nb::literals;

namespace {

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
      out.index = t.index_of(*out.p.cfg);
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
    return t.index_of(*c);
  }

  contextual_tuner &get() { return *m_ctx; }

private:
  std::unique_ptr<communicator> m_comm;
  std::unique_ptr<contextual_tuner> m_ctx;
};

} // namespace

void bind_contextual(nb::module_ &m) {
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
}

} // namespace tunekit::python
