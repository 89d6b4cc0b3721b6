/// \file adapters.cpp
/// Python objects in the core's roles: a communicator (torch.distributed, mpi4py), a measurer
/// (CUDA events through PyTorch, a test's deterministic costs) and a log sink.

#include "binding.hpp"

#include <tunekit/error.hpp>
#include <tunekit/isolation.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>

namespace tunekit::python {

namespace {

// The Python type of `fatal_candidate_error` (set when the module is initialised): a measurer
// written in Python lets it through from `run()`, and the adapter turns it back into the C++ one
// so that the search stops.
PyObject *g_fatal_type = nullptr;

/// A communicator implemented in Python (tunekit.Communicator; torch.distributed and mpi4py ones
/// ship with the package). Rank, size and local rank are read once.
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
  // Each collective takes the GIL: the serving worker calls them with it released.
  void all_reduce_max(std::span<double> values) override {
    const nb::gil_scoped_acquire gil;
    reduce("all_reduce_max", values);
  }
  void all_reduce_min(std::span<double> values) override {
    const nb::gil_scoped_acquire gil;
    reduce("all_reduce_min", values);
  }
  void broadcast(std::span<std::byte> bytes, int root) override {
    const nb::gil_scoped_acquire gil;
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
  void barrier() override {
    const nb::gil_scoped_acquire gil;
    m_obj.attr("barrier")();
  }

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

/// One run of the candidate being measured, callable from Python only while the measurer's
/// `measure` is running.
struct run_handle {
  const detail::function_ref<void()> *fn = nullptr;
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
  /// `reset()` before each run, untimed (see `candidate_info::reset`), or None.
  nb::object reset;
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
    r.reset = info.reset != nullptr ? nb::cast(run_handle{info.reset}) : nb::none();
    struct invalidate {
      nb::handle h;
      ~invalidate() {
        if (h.is_valid() && !h.is_none()) {
          nb::inst_ptr<run_handle>(h)->fn = nullptr;
        }
      }
    } guard{handle}, reset_guard{r.reset};
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

} // namespace

std::unique_ptr<communicator> make_communicator(const nb::object &obj) {
  if (obj.is_none()) {
    return nullptr;
  }
  return std::make_unique<py_communicator>(obj);
}

std::shared_ptr<measurer> make_measurer(nb::object obj) {
  if (nb::isinstance<isolated_handle>(obj)) {
    return nb::cast<isolated_handle &>(obj).meas;
  }
  return std::make_shared<py_measurer>(std::move(obj));
}

process_context make_process(const nb::object &log) {
  process_context p = process_context::from_env();
  if (!log.is_none()) {
    p.log = python_sink(log);
  }
  return p;
}

void set_fatal_candidate_type(PyObject *type) noexcept { g_fatal_type = type; }

void bind_adapters(nb::module_ &m) {
  nb::class_<isolated_handle>(
      m, "IsolatedMeasurer",
      "Times every candidate in a worker program that tunekit starts, and starts again after a "
      "candidate crashed it or ran past its deadline (tunekit::isolated_measurer).")
      .def(
          "__init__",
          [](isolated_handle *self, std::vector<std::string> command, double deadline_s,
             const nb::object &request, std::size_t stderr_lines, std::string name) {
            isolated_options o;
            o.command = std::move(command);
            o.deadline = std::chrono::milliseconds(static_cast<long long>(deadline_s * 1000.0));
            o.stderr_lines = stderr_lines;
            o.name = std::move(name);
            if (!request.is_none()) {
              auto fn = std::make_shared<nb::object>(request);
              o.request = [fn](const candidate_info &info) {
                // Called from the tuner's thread, which holds the GIL during a Python call.
                nb::object out = (*fn)(key_to_py(info.key), config_to_py(info.config));
                return nb::cast<std::string>(out);
              };
            }
            new (self) isolated_handle{std::make_shared<isolated_measurer>(std::move(o))};
          },
          nb::arg("command"), nb::kw_only(), nb::arg("deadline_s") = 30.0,
          nb::arg("request").none() = nb::none(), nb::arg("stderr_lines") = 8,
          nb::arg("name") = "isolated")
      .def_prop_ro("name", [](const isolated_handle &h) { return h.meas->name(); })
      .def_prop_ro("worker_starts",
                   [](const isolated_handle &h) { return h.meas->worker_starts(); })
      .def_prop_ro("worker_pid", [](const isolated_handle &h) { return h.meas->worker_pid(); })
      .def("stop_worker", [](isolated_handle &h) { h.meas->stop_worker(); });

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
      .def_ro("runs", &measure_request::runs)
      .def_ro("reset", &measure_request::reset,
              "Call it before each run, outside the timed region, when it is not None: it puts "
              "back the arguments the function writes.");
}

} // namespace tunekit::python
