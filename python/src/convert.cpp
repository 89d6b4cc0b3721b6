/// \file convert.cpp
/// Python objects <-> the core's values, keys, configs and hardware identity.

#include "binding.hpp"

#include <tunekit/error.hpp>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>

namespace tunekit::python {

std::string py_type_name(nb::handle h) { return nb::cast<std::string>(nb::type_name(h.type())); }

namespace {

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

} // namespace

value to_value(nb::handle h, const std::string &what) {
  // A NumPy scalar (numpy.int64, numpy.float32, numpy.bool_): the Python value it holds.
  if (!PyLong_Check(h.ptr()) && !PyFloat_Check(h.ptr()) && nb::hasattr(h, "item") &&
      nb::hasattr(h, "ndim") && nb::hasattr(h.type(), "__module__") &&
      nb::cast<std::string>(nb::str(h.type().attr("__module__"))) == "numpy" &&
      nb::cast<long>(nb::int_(h.attr("ndim"))) == 0) {
    nb::object v = h.attr("item")();
    if (!v.type().is(h.type())) {
      return to_value(v, what);
    }
  }
  if (PyBool_Check(h.ptr())) {
    return value(h.ptr() == Py_True);
  }
  if (PyLong_Check(h.ptr()) || (!PyFloat_Check(h.ptr()) && PyIndex_Check(h.ptr()))) {
    nb::object as_int = nb::steal(PyNumber_Index(h.ptr()));
    if (as_int.is_valid()) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
      if (overflow != 0) {
        throw error(what + ": the integer " + nb::cast<std::string>(nb::str(h)) +
                    " is outside the int64 range");
      }
      return value(static_cast<std::int64_t>(v));
    }
    PyErr_Clear(); // an index that is not one (an array of several values): said below
  }
  if (PyFloat_Check(h.ptr())) {
    const double d = PyFloat_AsDouble(h.ptr());
    if (!std::isfinite(d)) {
      throw error(what + " is " + nb::cast<std::string>(nb::repr(h)) + ": a value must be finite");
    }
    return value(d);
  }
  if (PyUnicode_Check(h.ptr())) {
    return value(nb::cast<std::string>(h));
  }
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) {
    return value(nested_text(h, what));
  }
  const std::string type = py_type_name(h);
  std::string hint;
  std::string lower = type;
  for (char &ch : lower) {
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  if (lower.find("dtype") != std::string::npos) {
    hint = "; pass str(x.dtype)";
  } else if (nb::hasattr(h, "shape") && nb::hasattr(h, "dtype")) {
    hint = "; pass its shape and dtype (tuple(x.shape), str(x.dtype)), not the array";
  }
  throw nb::type_error((what + ": a value of type '" + type +
                        "' is not an int, float, bool, str or tuple of them" + hint)
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
  const std::string &s = v.as_string();
  PyObject *text = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), nullptr);
  if (text != nullptr) {
    return nb::steal(text);
  }
  PyErr_Clear(); // a string of other bytes (a Latin-1 name read from a file): its bytes
  return nb::bytes(s.data(), s.size());
}

nb::str text_to_py(const std::string &text) {
  PyObject *s =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (s == nullptr) {
    throw nb::python_error();
  }
  return nb::steal<nb::str>(s);
}

key to_key(nb::handle h, const std::string &tuner) {
  const std::string who = tuner.empty() ? "key_fn's key" : "tuner '" + tuner + "': key_fn's key";
  key k;
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) {
    for (nb::handle item : h) {
      k.push_back(to_value(item, who + "[" + std::to_string(k.size()) + "]"));
    }
  } else {
    k.push_back(to_value(h, who));
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

config to_config(const nb::dict &d, const std::string &what) {
  config c;
  for (auto [name, v] : d) {
    if (!PyUnicode_Check(name.ptr())) {
      throw nb::type_error(
          (what + ": field names must be strings, not '" + py_type_name(name) + "'").c_str());
    }
    const std::string n = nb::cast<std::string>(name);
    c.set(n, to_value(v, what + "['" + n + "']"));
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

} // namespace tunekit::python
