/// \file hot.cpp
/// `tunekit._core.HotFunction`: the function `tunekit.autotune` returns. A resolved call is, in C,
/// one vectorcall of `key_fn` with the caller's positional arguments, one dict lookup of the key
/// and one vectorcall of the function with those arguments and the winner's fields as keyword
/// arguments; no tuple or dict is built. Every other call (keyword arguments, a key not in the
/// dict, a key that cannot be hashed) goes to the Python slow path `slow(args, kwargs[, key])`.
///
/// The dict maps a key to a recipe `(fn, values, names)`: the function, the winner's field values
/// and their names (a tuple of str), which tunekit's Python side builds once per winner. Like a
/// Python function it has a `__dict__` (for `functools.update_wrapper` and tunekit's attributes)
/// and binds as a method when it is a class attribute.

#include "binding.hpp"

#include <Python.h>

#include <array>
#include <cstddef>
#include <vector>

namespace tunekit::python {

namespace {

struct hot_object {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject *key_fn;
  PyObject *memo;
  PyObject *slow;
  PyObject *dict;
  PyObject *weakrefs;
};

// The slow path with the call as Python sees it: `slow(args, kwargs)`, or `slow(args, {}, key)`
// after a miss.
PyObject *call_slow(hot_object *self, PyObject *const *args, std::size_t nargs, PyObject *kwnames,
                    PyObject *key) {
  PyObject *tuple = PyTuple_New(static_cast<Py_ssize_t>(nargs));
  if (tuple == nullptr) {
    return nullptr;
  }
  for (std::size_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), args[i]);
  }
  PyObject *kwargs = PyDict_New();
  if (kwargs == nullptr) {
    Py_DECREF(tuple);
    return nullptr;
  }
  if (kwnames != nullptr) {
    const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nkw; ++i) {
      if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i),
                         args[nargs + static_cast<std::size_t>(i)]) < 0) {
        Py_DECREF(tuple);
        Py_DECREF(kwargs);
        return nullptr;
      }
    }
  }
  PyObject *out = key != nullptr
                      ? PyObject_CallFunctionObjArgs(self->slow, tuple, kwargs, key, nullptr)
                      : PyObject_CallFunctionObjArgs(self->slow, tuple, kwargs, nullptr);
  Py_DECREF(tuple);
  Py_DECREF(kwargs);
  return out;
}

// fn(*args, **dict(zip(names, values))) without building either.
PyObject *call_recipe(PyObject *recipe, PyObject *const *args, std::size_t nargs) {
  PyObject *fn = PyTuple_GET_ITEM(recipe, 0);
  PyObject *values = PyTuple_GET_ITEM(recipe, 1);
  PyObject *names = PyTuple_GET_ITEM(recipe, 2);
  const auto nkw = static_cast<std::size_t>(PyTuple_GET_SIZE(values));
  const std::size_t total = nargs + nkw;
  std::array<PyObject *, 16> small{};
  std::vector<PyObject *> big;
  PyObject **stack = small.data();
  if (total > small.size()) {
    big.resize(total);
    stack = big.data();
  }
  for (std::size_t i = 0; i < nargs; ++i) {
    stack[i] = args[i];
  }
  for (std::size_t i = 0; i < nkw; ++i) {
    stack[nargs + i] = PyTuple_GET_ITEM(values, static_cast<Py_ssize_t>(i));
  }
  return PyObject_Vectorcall(fn, stack, nargs, nkw > 0 ? names : nullptr);
}

PyObject *hot_vectorcall(PyObject *callable, PyObject *const *args, std::size_t nargsf,
                         PyObject *kwnames) {
  auto *self = reinterpret_cast<hot_object *>(callable);
  const auto nargs = static_cast<std::size_t>(PyVectorcall_NARGS(nargsf));
  if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > 0) {
    return call_slow(self, args, nargs, kwnames, nullptr);
  }
  PyObject *key = PyObject_Vectorcall(self->key_fn, args, nargs, nullptr);
  if (key == nullptr) {
    return nullptr;
  }
  PyObject *recipe = PyDict_GetItemWithError(self->memo, key); // borrowed
  if (recipe == nullptr) {
    if (PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
        Py_DECREF(key);
        return nullptr;
      }
      PyErr_Clear(); // an unhashable key: the slow path says what is wrong with it
    }
    PyObject *out = call_slow(self, args, nargs, nullptr, key);
    Py_DECREF(key);
    return out;
  }
  Py_INCREF(recipe); // the dict may change during the call
  Py_DECREF(key);
  PyObject *out = call_recipe(recipe, args, nargs);
  Py_DECREF(recipe);
  return out;
}

int hot_traverse(PyObject *obj, visitproc visit, void *arg) {
  auto *self = reinterpret_cast<hot_object *>(obj);
  Py_VISIT(self->key_fn);
  Py_VISIT(self->memo);
  Py_VISIT(self->slow);
  Py_VISIT(self->dict);
  return 0;
}

int hot_clear(PyObject *obj) {
  auto *self = reinterpret_cast<hot_object *>(obj);
  Py_CLEAR(self->key_fn);
  Py_CLEAR(self->memo);
  Py_CLEAR(self->slow);
  Py_CLEAR(self->dict);
  return 0;
}

void hot_dealloc(PyObject *obj) {
  auto *self = reinterpret_cast<hot_object *>(obj);
  PyObject_GC_UnTrack(obj);
  if (self->weakrefs != nullptr) {
    PyObject_ClearWeakRefs(obj);
  }
  hot_clear(obj);
  Py_TYPE(obj)->tp_free(obj);
}

PyObject *hot_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyObject *key_fn = nullptr;
  PyObject *memo = nullptr;
  PyObject *slow = nullptr;
  static const char *names[] = {"key_fn", "memo", "slow", nullptr};
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O:HotFunction", const_cast<char **>(names),
                                  &key_fn, &PyDict_Type, &memo, &slow) == 0) {
    return nullptr;
  }
  if (PyCallable_Check(key_fn) == 0 || PyCallable_Check(slow) == 0) {
    PyErr_SetString(PyExc_TypeError, "HotFunction: key_fn and slow must be callable");
    return nullptr;
  }
  auto *self = reinterpret_cast<hot_object *>(type->tp_alloc(type, 0));
  if (self == nullptr) {
    return nullptr;
  }
  self->vectorcall = hot_vectorcall;
  Py_INCREF(key_fn);
  Py_INCREF(memo);
  Py_INCREF(slow);
  self->key_fn = key_fn;
  self->memo = memo;
  self->slow = slow;
  return reinterpret_cast<PyObject *>(self);
}

// As a class attribute it binds like a function does.
PyObject *hot_get(PyObject *self, PyObject *obj, PyObject * /*type*/) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

PyGetSetDef hot_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject hot_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

} // namespace

void bind_hot(nb::module_ &m) {
  hot_type.tp_name = "tunekit._core.HotFunction";
  hot_type.tp_basicsize = sizeof(hot_object);
  hot_type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  hot_type.tp_doc = "A tuned function: key_fn, one dict lookup and a call for a resolved key.";
  hot_type.tp_new = hot_new;
  hot_type.tp_dealloc = hot_dealloc;
  hot_type.tp_traverse = hot_traverse;
  hot_type.tp_clear = hot_clear;
  hot_type.tp_call = PyVectorcall_Call;
  hot_type.tp_vectorcall_offset = offsetof(hot_object, vectorcall);
  hot_type.tp_dictoffset = offsetof(hot_object, dict);
  hot_type.tp_weaklistoffset = offsetof(hot_object, weakrefs);
  hot_type.tp_descr_get = hot_get;
  hot_type.tp_getset = hot_getset;
  if (PyType_Ready(&hot_type) < 0) {
    throw nb::python_error();
  }
  Py_INCREF(&hot_type);
  m.attr("HotFunction") = nb::borrow(reinterpret_cast<PyObject *>(&hot_type));
}

} // namespace tunekit::python
