/// \file triton_launch.cpp
/// `tunekit._core.TritonLaunch`: the resolved launch of a `tunekit.triton.Autotuner`, in C.
/// `launch[grid]` (what `Autotuner.__getitem__` returns) is a callable bound to the grid; calling
/// it with the kernel's arguments all positional builds Triton's key (the `key=[...]` arguments,
/// then `str(arg.dtype)` of every argument that has a dtype), looks it up in the autotuner's
/// `cache` and calls `fn.run(*args, grid=grid, warmup=False, **config.all_kwargs())` with the
/// winner's keywords taken once per config, setting `best_config` as Triton does. Every other
/// launch (a kernel argument passed by keyword, a key not in `cache`, a config with a `pre_hook`,
/// an unhashable key) goes to `slow(*args, grid=grid, warmup=False, **kwargs)`, the autotuner's
/// Python `run`.

#include "binding.hpp"

#include <Python.h>

#include <array>
#include <cstddef>
#include <unordered_map>
#include <vector>

namespace tunekit::python {

namespace {

/// How the fast path launches one config: its `all_kwargs()` as values and names, with the
/// launch's own `grid` and `warmup` in front; `usable` false for a config with a `pre_hook`.
struct recipe {
  PyObject *config = nullptr; // strong: keeps the address from being reused
  PyObject *values = nullptr; // tuple of the keyword values, grid and warmup excluded
  PyObject *names = nullptr;  // tuple: "grid", "warmup", then the keywords' names
  bool usable = false;
};

struct state_object {
  PyObject_HEAD PyObject *owner;      // the Autotuner (its `cache` is read at each launch)
  PyObject *fn_run;                   // owner.fn.run
  PyObject *slow;                     // owner.run
  PyObject *arg_names;                // frozenset of the kernel's argument names
  PyObject *dtype_texts;              // dtype -> str(dtype)
  std::vector<Py_ssize_t> *positions; // of the key's arguments
  std::unordered_map<PyObject *, recipe> *recipes;
  Py_ssize_t n_names;
};

struct bound_object {
  PyObject_HEAD vectorcallfunc vectorcall;
  state_object *state;
  PyObject *grid;
};

PyObject *g_str_cache = nullptr;
PyObject *g_str_configs = nullptr;
PyObject *g_str_dtype = nullptr;
PyObject *g_str_best_config = nullptr;
PyObject *g_str_all_kwargs = nullptr;
PyObject *g_str_pre_hook = nullptr;
PyObject *g_str_grid = nullptr;
PyObject *g_str_warmup = nullptr;
PyObject *g_launch_names = nullptr; // ("grid", "warmup")
PyObject *g_empty = nullptr;        // ()

// A small stack of call arguments (16 in place, more on the heap).
class arg_stack {
public:
  explicit arg_stack(std::size_t n) {
    if (n > m_small.size()) {
      m_big.resize(n);
      m_data = m_big.data();
    }
  }
  PyObject **data() { return m_data; }

private:
  std::array<PyObject *, 16> m_small{};
  std::vector<PyObject *> m_big;
  PyObject **m_data = m_small.data();
};

// fn(*args, **kwargs, grid=grid, warmup=False, **dict(zip(names[2:], values))): `names` is
// ("grid", "warmup", *the config's keyword names).
PyObject *launch_with(PyObject *fn, bound_object *self, PyObject *const *args, std::size_t nargs,
                      PyObject *kwnames, PyObject *values, PyObject *names) {
  const std::size_t nkw =
      kwnames != nullptr ? static_cast<std::size_t>(PyTuple_GET_SIZE(kwnames)) : 0;
  const auto nconf = static_cast<std::size_t>(PyTuple_GET_SIZE(values));
  arg_stack stack(nargs + nkw + 2 + nconf);
  PyObject **s = stack.data();
  for (std::size_t i = 0; i < nargs + nkw; ++i) {
    s[i] = args[i];
  }
  s[nargs + nkw] = self->grid;
  s[nargs + nkw + 1] = Py_False;
  for (std::size_t i = 0; i < nconf; ++i) {
    s[nargs + nkw + 2 + i] = PyTuple_GET_ITEM(values, static_cast<Py_ssize_t>(i));
  }
  PyObject *all = names;
  if (nkw > 0) { // the launch's own keywords in front
    all = PyTuple_New(static_cast<Py_ssize_t>(nkw + 2 + nconf));
    if (all == nullptr) {
      return nullptr;
    }
    for (std::size_t i = 0; i < nkw + 2 + nconf; ++i) {
      PyObject *n = i < nkw ? PyTuple_GET_ITEM(kwnames, static_cast<Py_ssize_t>(i))
                            : PyTuple_GET_ITEM(names, static_cast<Py_ssize_t>(i - nkw));
      Py_INCREF(n);
      PyTuple_SET_ITEM(all, static_cast<Py_ssize_t>(i), n);
    }
  } else {
    Py_INCREF(all);
  }
  PyObject *out = PyObject_Vectorcall(fn, s, nargs, all);
  Py_DECREF(all);
  return out;
}

// slow(*args, grid=grid, warmup=False, **kwargs): the autotuner's Python run.
PyObject *call_slow(bound_object *self, PyObject *const *args, std::size_t nargs,
                    PyObject *kwnames) {
  return launch_with(self->state->slow, self, args, nargs, kwnames, g_empty, g_launch_names);
}

// The recipe of `config`, built at its first fast launch; nullptr with an exception set when its
// keywords cannot be read.
const recipe *recipe_of(state_object *st, PyObject *config) {
  const auto it = st->recipes->find(config);
  if (it != st->recipes->end()) {
    return &it->second;
  }
  recipe r;
  PyObject *hook = PyObject_GetAttr(config, g_str_pre_hook);
  if (hook == nullptr) {
    PyErr_Clear();
  } else {
    r.usable = hook == Py_None;
    Py_DECREF(hook);
  }
  if (r.usable) {
    PyObject *kw = PyObject_CallMethodNoArgs(config, g_str_all_kwargs);
    if (kw == nullptr) {
      return nullptr;
    }
    if (!PyDict_Check(kw)) {
      Py_DECREF(kw);
      r.usable = false;
    } else {
      const Py_ssize_t n = PyDict_GET_SIZE(kw);
      r.values = PyTuple_New(n);
      r.names = PyTuple_New(n + 2);
      if (r.values == nullptr || r.names == nullptr) {
        Py_XDECREF(r.values);
        Py_XDECREF(r.names);
        Py_DECREF(kw);
        return nullptr;
      }
      Py_INCREF(g_str_grid);
      PyTuple_SET_ITEM(r.names, 0, g_str_grid);
      Py_INCREF(g_str_warmup);
      PyTuple_SET_ITEM(r.names, 1, g_str_warmup);
      Py_ssize_t pos = 0;
      Py_ssize_t i = 0;
      PyObject *k = nullptr;
      PyObject *v = nullptr;
      while (PyDict_Next(kw, &pos, &k, &v) != 0) {
        Py_INCREF(k);
        PyTuple_SET_ITEM(r.names, i + 2, k);
        Py_INCREF(v);
        PyTuple_SET_ITEM(r.values, i, v);
        ++i;
      }
      Py_DECREF(kw);
    }
  }
  Py_INCREF(config);
  r.config = config;
  return &st->recipes->emplace(config, r).first->second;
}

// Appends str(arg.dtype) for every argument with a dtype; false with an exception set on an error
// other than a missing attribute.
bool append_dtypes(state_object *st, PyObject *key, PyObject *const *args, std::size_t nargs) {
  const std::size_t n = std::min(nargs, static_cast<std::size_t>(st->n_names));
  for (std::size_t i = 0; i < n; ++i) {
    PyObject *a = args[i];
    if (a == Py_None || PyLong_CheckExact(a) || PyFloat_CheckExact(a) || PyBool_Check(a) ||
        PyUnicode_CheckExact(a)) {
      continue; // no dtype
    }
    PyObject *dtype = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
    const int found = PyObject_GetOptionalAttr(a, g_str_dtype, &dtype);
#else
    const int found = _PyObject_LookupAttr(a, g_str_dtype, &dtype);
#endif
    if (found < 0) {
      return false;
    }
    if (dtype == nullptr) {
      continue;
    }
    PyObject *text = PyDict_GetItemWithError(st->dtype_texts, dtype); // borrowed
    if (text != nullptr) {
      Py_INCREF(text);
    } else {
      if (PyErr_Occurred()) {
        PyErr_Clear(); // an unhashable dtype: its text, not remembered
      }
      text = PyObject_Str(dtype);
      if (text == nullptr) {
        Py_DECREF(dtype);
        return false;
      }
      if (PyDict_SetItem(st->dtype_texts, dtype, text) < 0) {
        PyErr_Clear();
      }
    }
    Py_DECREF(dtype);
    const int added = PyList_Append(key, text);
    Py_DECREF(text);
    if (added < 0) {
      return false;
    }
  }
  return true;
}

// The config `cache` holds for this launch (a new reference), nullptr without an exception when
// the launch must take the slow path.
PyObject *cached_config(state_object *st, PyObject *const *args, std::size_t nargs) {
  // One config: Triton launches it without a key (read each time: contextual_autotune swaps
  // `configs` while it runs candidates).
  PyObject *configs = PyObject_GetAttr(st->owner, g_str_configs);
  if (configs == nullptr) {
    return nullptr;
  }
  if (PyList_Check(configs) && PyList_GET_SIZE(configs) == 1) {
    PyObject *only = PyList_GET_ITEM(configs, 0);
    Py_INCREF(only);
    Py_DECREF(configs);
    return only;
  }
  Py_DECREF(configs);
  PyObject *list = PyList_New(0);
  if (list == nullptr) {
    return nullptr;
  }
  for (const Py_ssize_t p : *st->positions) {
    if (static_cast<std::size_t>(p) < nargs && PyList_Append(list, args[p]) < 0) {
      Py_DECREF(list);
      return nullptr;
    }
  }
  if (!append_dtypes(st, list, args, nargs)) {
    Py_DECREF(list);
    return nullptr;
  }
  PyObject *key = PyList_AsTuple(list);
  Py_DECREF(list);
  if (key == nullptr) {
    return nullptr;
  }
  PyObject *cache = PyObject_GetAttr(st->owner, g_str_cache);
  if (cache == nullptr) {
    Py_DECREF(key);
    return nullptr;
  }
  PyObject *config = nullptr;
  if (PyDict_Check(cache)) {
    config = PyDict_GetItemWithError(cache, key); // borrowed
    if (config == nullptr && PyErr_Occurred()) {
      PyErr_Clear(); // an unhashable key: the slow path says what is wrong
    }
    Py_XINCREF(config);
  }
  Py_DECREF(cache);
  Py_DECREF(key);
  return config;
}

PyObject *bound_vectorcall(PyObject *callable, PyObject *const *args, std::size_t nargsf,
                           PyObject *kwnames) {
  auto *self = reinterpret_cast<bound_object *>(callable);
  state_object *st = self->state;
  const auto nargs = static_cast<std::size_t>(PyVectorcall_NARGS(nargsf));
  const std::size_t nkw =
      kwnames != nullptr ? static_cast<std::size_t>(PyTuple_GET_SIZE(kwnames)) : 0;
  for (std::size_t i = 0; i < nkw; ++i) {
    const int named =
        PySet_Contains(st->arg_names, PyTuple_GET_ITEM(kwnames, static_cast<Py_ssize_t>(i)));
    if (named != 0) { // a kernel argument by keyword (or an error): Python's run
      return named < 0 ? nullptr : call_slow(self, args, nargs, kwnames);
    }
  }
  PyObject *config = cached_config(st, args, nargs);
  if (config == nullptr) {
    return PyErr_Occurred() ? nullptr : call_slow(self, args, nargs, kwnames);
  }
  const recipe *r = recipe_of(st, config);
  if (r == nullptr || !r->usable) {
    Py_DECREF(config);
    return r == nullptr ? nullptr : call_slow(self, args, nargs, kwnames);
  }
  const int set = PyObject_SetAttr(st->owner, g_str_best_config, config);
  Py_DECREF(config);
  if (set < 0) {
    return nullptr;
  }
  // Held for the call: a launch that calls forget() must not free what it is launched with.
  PyObject *values = r->values;
  PyObject *names = r->names;
  Py_INCREF(values);
  Py_INCREF(names);
  PyObject *out = launch_with(st->fn_run, self, args, nargs, kwnames, values, names);
  Py_DECREF(values);
  Py_DECREF(names);
  return out;
}

// ---- the types ---------------------------------------------------------------------------------

PyTypeObject state_type = {PyVarObject_HEAD_INIT(nullptr, 0)};
PyTypeObject bound_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

void clear_recipes(state_object *st) {
  if (st->recipes == nullptr) {
    return;
  }
  std::unordered_map<PyObject *, recipe> old;
  old.swap(*st->recipes);
  for (auto &[k, r] : old) {
    Py_XDECREF(r.config);
    Py_XDECREF(r.values);
    Py_XDECREF(r.names);
  }
}

int state_traverse(PyObject *obj, visitproc visit, void *arg) {
  auto *self = reinterpret_cast<state_object *>(obj);
  Py_VISIT(self->owner);
  Py_VISIT(self->fn_run);
  Py_VISIT(self->slow);
  Py_VISIT(self->arg_names);
  Py_VISIT(self->dtype_texts);
  if (self->recipes != nullptr) {
    for (auto &[k, r] : *self->recipes) {
      Py_VISIT(r.config);
    }
  }
  return 0;
}

int state_clear(PyObject *obj) {
  auto *self = reinterpret_cast<state_object *>(obj);
  Py_CLEAR(self->owner);
  Py_CLEAR(self->fn_run);
  Py_CLEAR(self->slow);
  Py_CLEAR(self->arg_names);
  Py_CLEAR(self->dtype_texts);
  clear_recipes(self);
  return 0;
}

void state_dealloc(PyObject *obj) {
  auto *self = reinterpret_cast<state_object *>(obj);
  PyObject_GC_UnTrack(obj);
  state_clear(obj);
  delete self->positions;
  delete self->recipes;
  Py_TYPE(obj)->tp_free(obj);
}

PyObject *state_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyObject *owner = nullptr;
  PyObject *fn_run = nullptr;
  PyObject *slow = nullptr;
  PyObject *positions = nullptr;
  PyObject *arg_names = nullptr;
  static const char *names[] = {"owner", "fn_run", "slow", "positions", "arg_names", nullptr};
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO!O:TritonLaunch", const_cast<char **>(names),
                                  &owner, &fn_run, &slow, &PyTuple_Type, &positions,
                                  &arg_names) == 0) {
    return nullptr;
  }
  if (PyCallable_Check(fn_run) == 0 || PyCallable_Check(slow) == 0) {
    PyErr_SetString(PyExc_TypeError, "TritonLaunch: fn_run and slow must be callable");
    return nullptr;
  }
  std::vector<Py_ssize_t> pos;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(positions); ++i) {
    const Py_ssize_t p = PyLong_AsSsize_t(PyTuple_GET_ITEM(positions, i));
    if (p < 0) {
      if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "TritonLaunch: a key position is negative");
      }
      return nullptr;
    }
    pos.push_back(p);
  }
  PyObject *name_set = PyFrozenSet_New(arg_names);
  if (name_set == nullptr) {
    return nullptr;
  }
  PyObject *texts = PyDict_New();
  if (texts == nullptr) {
    Py_DECREF(name_set);
    return nullptr;
  }
  auto *self = reinterpret_cast<state_object *>(type->tp_alloc(type, 0));
  if (self == nullptr) {
    Py_DECREF(name_set);
    Py_DECREF(texts);
    return nullptr;
  }
  Py_INCREF(owner);
  Py_INCREF(fn_run);
  Py_INCREF(slow);
  self->owner = owner;
  self->fn_run = fn_run;
  self->slow = slow;
  self->arg_names = name_set;
  self->dtype_texts = texts;
  self->n_names = PySet_GET_SIZE(name_set);
  self->positions = new std::vector<Py_ssize_t>(std::move(pos));
  self->recipes = new std::unordered_map<PyObject *, recipe>();
  return reinterpret_cast<PyObject *>(self);
}

// launch[grid]: the launch bound to a grid.
PyObject *state_subscript(PyObject *obj, PyObject *grid) {
  auto *b = PyObject_GC_New(bound_object, &bound_type);
  if (b == nullptr) {
    return nullptr;
  }
  b->vectorcall = bound_vectorcall;
  Py_INCREF(obj);
  b->state = reinterpret_cast<state_object *>(obj);
  Py_INCREF(grid);
  b->grid = grid;
  PyObject_GC_Track(b);
  return reinterpret_cast<PyObject *>(b);
}

// Forgets the configs' keywords (after `configs` changed).
PyObject *state_forget(PyObject *obj, PyObject * /*unused*/) {
  clear_recipes(reinterpret_cast<state_object *>(obj));
  Py_RETURN_NONE;
}

PyMethodDef state_methods[] = {
    {"forget", state_forget, METH_NOARGS, "Forgets the configs' launch keywords."},
    {nullptr, nullptr, 0, nullptr}};

PyMappingMethods state_mapping = {nullptr, state_subscript, nullptr};

int bound_traverse(PyObject *obj, visitproc visit, void *arg) {
  auto *self = reinterpret_cast<bound_object *>(obj);
  Py_VISIT(self->state);
  Py_VISIT(self->grid);
  return 0;
}

int bound_clear(PyObject *obj) {
  auto *self = reinterpret_cast<bound_object *>(obj);
  Py_CLEAR(self->state);
  Py_CLEAR(self->grid);
  return 0;
}

void bound_dealloc(PyObject *obj) {
  PyObject_GC_UnTrack(obj);
  bound_clear(obj);
  PyObject_GC_Del(obj);
}

PyObject *intern(const char *s) {
  PyObject *o = PyUnicode_InternFromString(s);
  if (o == nullptr) {
    throw nb::python_error();
  }
  return o;
}

} // namespace

void bind_triton_launch(nb::module_ &m) {
  g_str_cache = intern("cache");
  g_str_configs = intern("configs");
  g_str_dtype = intern("dtype");
  g_str_best_config = intern("best_config");
  g_str_all_kwargs = intern("all_kwargs");
  g_str_pre_hook = intern("pre_hook");
  g_str_grid = intern("grid");
  g_str_warmup = intern("warmup");
  g_launch_names = PyTuple_Pack(2, g_str_grid, g_str_warmup);
  g_empty = PyTuple_New(0);
  if (g_launch_names == nullptr || g_empty == nullptr) {
    throw nb::python_error();
  }

  state_type.tp_name = "tunekit._core.TritonLaunch";
  state_type.tp_basicsize = sizeof(state_object);
  state_type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  state_type.tp_doc = "The resolved launches of a tunekit.triton.Autotuner: launch[grid](*args).";
  state_type.tp_new = state_new;
  state_type.tp_dealloc = state_dealloc;
  state_type.tp_traverse = state_traverse;
  state_type.tp_clear = state_clear;
  state_type.tp_as_mapping = &state_mapping;
  state_type.tp_methods = state_methods;
  if (PyType_Ready(&state_type) < 0) {
    throw nb::python_error();
  }

  bound_type.tp_name = "tunekit._core.TritonBoundLaunch";
  bound_type.tp_basicsize = sizeof(bound_object);
  bound_type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  bound_type.tp_doc = "A Triton launch bound to its grid.";
  bound_type.tp_dealloc = bound_dealloc;
  bound_type.tp_traverse = bound_traverse;
  bound_type.tp_clear = bound_clear;
  bound_type.tp_call = PyVectorcall_Call;
  bound_type.tp_vectorcall_offset = offsetof(bound_object, vectorcall);
  if (PyType_Ready(&bound_type) < 0) {
    throw nb::python_error();
  }
  Py_INCREF(&state_type);
  m.attr("TritonLaunch") = nb::borrow(reinterpret_cast<PyObject *>(&state_type));
}

} // namespace tunekit::python
