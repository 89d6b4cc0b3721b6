#pragma once
/// \file binding.hpp
/// What the parts of `tunekit._core` share: the conversions between Python objects and the core's
/// values, keys, configs, hardware and cache entries (convert.cpp, entry.cpp), the adapters that
/// let Python objects act as a communicator, a measurer and a log sink (adapters.cpp), the tuner
/// binding (tuner.cpp), and one `bind_*` function per part that the module table (module.cpp)
/// calls.
///
/// Every call from Python holds the GIL for its whole length, so the adapters may call back into
/// Python without taking it again.

#include <tunekit/communicator.hpp>
#include <tunekit/config.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/isolation.hpp>
#include <tunekit/key.hpp>
#include <tunekit/measure.hpp>
#include <tunekit/process_context.hpp>
#include <tunekit/tuner.hpp>
#include <tunekit/winner_cache.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tunekit::python {

namespace nb = nanobind;

// ---- conversions (convert.cpp) ---------------------------------------------------------------

/// The name of the type of `h`, for messages.
[[nodiscard]] std::string py_type_name(nb::handle h);
/// An int, float, bool, str or (nested) tuple or list as a value; `what` names it in errors. A
/// nested tuple is one string value, its canonical text (`(1024, 1024)`).
[[nodiscard]] value to_value(nb::handle h, const std::string &what);
/// A value as a Python int, float, bool or str; a string that is not UTF-8 becomes `bytes`.
[[nodiscard]] nb::object from_value(const value &v);
/// Free text (a reason, a parser's message) as a str; bytes that are not UTF-8 become `\xNN`.
[[nodiscard]] nb::str text_to_py(const std::string &text);
/// `key_fn`'s result (a value or a tuple or list of them) as a key; `tuner` names the tuner in
/// errors, which also name the value's position.
[[nodiscard]] key to_key(nb::handle h, const std::string &tuner = {});
[[nodiscard]] nb::tuple key_to_py(const key &k);
/// A dict of field names to values as a config; `what` names it in errors (`config_space[3]`).
[[nodiscard]] config to_config(const nb::dict &d, const std::string &what);
[[nodiscard]] nb::dict config_to_py(const config &c);
[[nodiscard]] hardware_info to_hardware(const nb::dict &d);
[[nodiscard]] nb::dict hardware_to_py(const hardware_info &hw);

// ---- cache entries (entry.cpp) ---------------------------------------------------------------

/// A winner cache entry as plain Python data: every field of `cache_entry`, typed.
[[nodiscard]] nb::dict entry_to_py(const cache_entry &e);
/// A load result as `{"status", "detail", "path", "entry", "record", "log_path"}` (see
/// tunekit.read_entry).
[[nodiscard]] nb::dict load_result_to_py(const load_result<cache_entry> &r);

// ---- adapters (adapters.cpp) -----------------------------------------------------------------

/// A communicator over a Python object with `rank()`, `size()`, `local_rank()`,
/// `all_reduce_max(list)`, `all_reduce_min(list)`, `broadcast(bytes, root)` and `barrier()`;
/// null for None.
[[nodiscard]] std::unique_ptr<communicator> make_communicator(const nb::object &obj);
/// `tunekit.IsolatedMeasurer`: the core's isolated measurer, held by Python.
struct isolated_handle {
  std::shared_ptr<isolated_measurer> meas;
};
/// A measurer over a Python object with `measure(run, request) -> list of milliseconds` and a
/// `name`, or the core's measurer an `IsolatedMeasurer` holds.
[[nodiscard]] std::shared_ptr<measurer> make_measurer(nb::object obj);
/// The process context from the environment, its log going to `log(level, message)` unless None.
[[nodiscard]] process_context make_process(const nb::object &log);
/// The Python type that a measurer lets through from `run()` to stop the search
/// (`FatalCandidateError`); the measurer adapter turns it back into `fatal_candidate_error`.
void set_fatal_candidate_type(PyObject *type) noexcept;

// ---- the tuner (tuner.cpp) -------------------------------------------------------------------

/// Hashes a config by its template and its fields in order, consistently with `==`.
struct config_hash {
  [[nodiscard]] std::size_t operator()(const config &c) const noexcept;
};

/// The tuner of one decorated function, with the index of every config of its space. The core
/// hands back configs (the winner, the candidate to run or prune); Python holds indices into its
/// own list. Both directions are O(1).
class py_tuner {
public:
  /// `options`: what `tunekit.AutoTuner` passes (measurer, policy, search settings, artifact,
  /// table, identity, mode); an unknown key is a TypeError.
  py_tuner(std::string name, const nb::list &configs, std::string version, const nb::dict &options);

  /// Resolves `key` with the pinned values `pinned` and returns the index of the winner in the
  /// space. `prune(i) -> bool`, `run(i)` and `reset(i)` take indices of the space; `default()`
  /// returns a config dict of the space (or None for no default); `reset` None: nothing to reset.
  std::size_t resolve(nb::handle key_obj, const nb::object &prune, const nb::object &run,
                      bool verbose, const nb::object &comm, const std::optional<nb::dict> &pinned,
                      bool allow_arg_overwrite, const nb::object &default_fn,
                      const nb::object &reset, const std::optional<std::string> &effort);

  /// The index of the in-process winner of `key` (with `pinned`), or None.
  [[nodiscard]] std::optional<std::size_t> find(nb::handle key_obj,
                                                const std::optional<nb::dict> &pinned);
  /// The key the core stores for `key` with `pinned` (`stored_key`).
  [[nodiscard]] key stored(nb::handle key_obj, const std::optional<nb::dict> &pinned) const;

  /// The index of the space config that `c` is, or of the first one that gives `c` once the
  /// fields named in `pinned` are set to the caller's values. Throws `tunekit::error` when there
  /// is none.
  [[nodiscard]] std::size_t index_of(const config &c, const config &pinned = {});

  tuner &get() { return *m_tuner; }

private:
  using index_map = std::unordered_map<config, std::size_t, config_hash>;
  const index_map &indices_without(const config &pinned);

  std::unique_ptr<tuner> m_tuner;
  index_map m_index;
  // Per set of pinned names: the space's configs without those fields -> the first index.
  std::map<std::vector<std::string>, index_map> m_pinned_index;
};

// ---- the module's parts ----------------------------------------------------------------------

void bind_adapters(nb::module_ &m);      ///< Run, MeasureRequest
void bind_tuner(nb::module_ &m);         ///< Tuner
void bind_contextual(nb::module_ &m);    ///< Plan, ContextualTuner
void bind_cache(nb::module_ &m);         ///< cache_dir, read_entry, entry_path, list/remove_entries
void bind_table(nb::module_ &m);         ///< export_table
void bind_hot(nb::module_ &m);           ///< HotFunction
void bind_triton_launch(nb::module_ &m); ///< TritonLaunch
void bind_serve(nb::module_ &m);         ///< ServeWorker (where tunekit::serve is built)

} // namespace tunekit::python
