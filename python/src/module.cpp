/// \file module.cpp
/// `tunekit._core`: the C++ core as the Python package sees it. The decorators themselves live in
/// Python (python/tunekit/); this module gives them the tuner (resolution chain, search, agreement,
/// winner cache; tuner.cpp), the contextual tuner (contextual.cpp), the cache reader (entry.cpp)
/// and the hardware, launcher and environment identity. Python objects take part through small
/// adapters (adapters.cpp): a communicator, a measurer and a log sink. This file is the module
/// table: the exception types and the functions that need no state.

#include "binding.hpp"

#include "os.hpp" // src/core: the reader of whole files

#include <tunekit/environment.hpp>
#include <tunekit/error.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/launcher.hpp>
#include <tunekit/version.hpp>

namespace nb = nanobind;
using namespace nb::literals;

namespace {

nb::dict environment_to_py(const tunekit::environment &e) {
  nb::dict d;
  d["cache_dir"] = e.cache_dir.string();
  d["always_tune"] = e.always_tune;
  d["version_check"] = e.version_check;
  d["verbose"] = e.verbose;
  d["progress"] = e.progress;
  d["autotune"] = e.autotune; // TUNEKIT_AUTOTUNE as written
  d["artifact_dir"] = e.artifact_dir.string();
  d["lookup_table"] = e.lookup_table.string();
  d["log_dir"] = e.log_dir.string();
  return d;
}

} // namespace

NB_MODULE(_core, m) {
  using namespace tunekit;
  using namespace tunekit::python;
  m.doc() = "tunekit's C++ core, as the tunekit package uses it";
  m.attr("__version__") = TUNEKIT_VERSION_STRING;
  // Tuners live in module-level caches and decorated functions until the interpreter ends;
  // their teardown order is not a leak worth reporting.
  nb::set_leak_warnings(false);

  // Subclasses after their base: the most derived type a C++ exception matches is the one raised.
  static nb::exception<error> tk_error(m, "Error", PyExc_RuntimeError);
  static nb::exception<communicator_timeout> tk_timeout(m, "CommunicatorTimeout", tk_error.ptr());
  static nb::exception<fatal_candidate_error> tk_fatal(m, "FatalCandidateError", tk_error.ptr());
  static nb::exception<no_valid_config_error> tk_no_valid(m, "NoValidConfigError", tk_error.ptr());
  set_fatal_candidate_type(tk_fatal.ptr());

  bind_adapters(m);
  bind_tuner(m);
  bind_contextual(m);
  bind_cache(m);
  bind_table(m);
  bind_hot(m);
  bind_triton_launch(m);
#ifdef TUNEKIT_PYTHON_SERVE
  bind_serve(m);
#endif

  m.def(
      "key", [](nb::handle k) { return key_to_py(to_key(k)); },
      "The key as the core stores it (nested tuples become their text).");
  m.def("key_text", [](nb::handle k) { return to_key(k).to_string(); });
  m.def("host_hardware", [] { return hardware_to_py(host_hardware()); });
  m.def("hardware_digest", [](const nb::dict &d) { return to_hardware(d).digest(); });
  m.def("core_dependencies", [] { return core_dependencies(); });
  m.def(
      "read_file",
      [](const std::string &path) {
        std::string why;
        auto bytes = tunekit::detail::read_file(path, &why);
        if (!bytes) {
          throw nb::value_error((path + " " + why).c_str());
        }
        return nb::bytes(bytes->data(), bytes->size());
      },
      "path"_a,
      "The bytes of a regular file, as the core reads its files: a FIFO, device or directory is "
      "refused without blocking, and so is a file over TUNEKIT_MAX_FILE_SIZE (ValueError naming "
      "the path and why).");
  m.def(
      "environment", [] { return environment_to_py(environment::from_env()); },
      "Every TUNEKIT_* setting as the core reads it now (environment::from_env).");
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
}
