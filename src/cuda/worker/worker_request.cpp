#include "worker_request.hpp"

#include "json_io.hpp"

#include <tunekit/error.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace tunekit::cuda::worker {

namespace {

using detail::json;

[[noreturn]] void bad(const std::string &what, const std::string &why) {
  throw error("request field " + what + " " + why);
}

std::vector<std::string> strings(const json &j, const std::string &what) {
  if (!j.is_array()) {
    bad(what, "must be an array of strings");
  }
  std::vector<std::string> out;
  for (const auto &s : j) {
    if (!s.is_string()) {
      bad(what, "must be an array of strings");
    }
    out.push_back(s.get<std::string>());
  }
  return out;
}

dim3 dims3(const json &r, const char *name) {
  const auto it = r.find(name);
  const std::string what = std::string("request.") + name;
  if (it == r.end()) {
    bad(what, "is missing");
  }
  if (!it->is_array() || it->empty() || it->size() > 3) {
    bad(what, "must be an array of 1 to 3 positive integers");
  }
  std::array<unsigned, 3> v{1, 1, 1};
  for (std::size_t i = 0; i < it->size(); ++i) {
    const auto &x = (*it)[i];
    if (!x.is_number_integer() || x.get<std::int64_t>() < 1 ||
        x.get<std::int64_t>() > std::numeric_limits<int>::max()) {
      bad(what, "must be an array of 1 to 3 positive integers");
    }
    v[i] = static_cast<unsigned>(x.get<std::int64_t>());
  }
  return dim3(v[0], v[1], v[2]);
}

template <class T> scalar_arg scalar(T value) {
  scalar_arg s;
  static_assert(sizeof(T) <= 8);
  std::memcpy(s.bytes.data(), &value, sizeof(T));
  s.size = sizeof(T);
  return s;
}

argument parse_argument(const json &a, const std::string &what) {
  if (!a.is_object() || a.size() < 1) {
    bad(what, "must be an object such as {\"buffer\": 1024} or {\"i32\": 5}");
  }
  if (const auto b = a.find("buffer"); b != a.end()) {
    if (!b->is_number_unsigned() || b->get<std::uint64_t>() == 0) {
      bad(what + ".buffer", "must be a positive number of bytes");
    }
    buffer_arg buf;
    buf.bytes = b->get<std::size_t>();
    if (const auto f = a.find("fill"); f != a.end()) {
      if (f->is_string() && f->get<std::string>() == "uniform_f32") {
        if (buf.bytes % 4 != 0) {
          bad(what + ".fill", "\"uniform_f32\" needs a multiple of 4 bytes");
        }
        buf.byte.reset();
      } else if (f->is_number_unsigned() && f->get<std::uint64_t>() <= 255) {
        buf.byte = static_cast<unsigned char>(f->get<std::uint64_t>());
      } else {
        bad(what + ".fill", "must be a byte (0-255) or \"uniform_f32\"");
      }
    }
    return buf;
  }
  if (a.size() != 1) {
    bad(what, "must hold one scalar such as {\"i32\": 5}");
  }
  const auto only = a.begin();
  const std::string type = only.key();
  const json &v = only.value();
  const std::string w = what + "." + type;
  if (type == "f32" || type == "f64") {
    if (!v.is_number()) {
      bad(w, "must be a number");
    }
    return type == "f32" ? scalar(v.get<float>()) : scalar(v.get<double>());
  }
  if (!v.is_number_integer()) {
    bad(w, "must be an integer");
  }
  const bool is_unsigned = v.is_number_unsigned();
  const auto u = v.get<std::uint64_t>();
  const auto s = v.get<std::int64_t>();
  if (type == "i32") {
    if (is_unsigned ? u > std::numeric_limits<std::int32_t>::max()
                    : s < std::numeric_limits<std::int32_t>::min()) {
      bad(w, "is out of range");
    }
    return scalar(static_cast<std::int32_t>(s));
  }
  if (type == "u32") {
    if (!is_unsigned || u > std::numeric_limits<std::uint32_t>::max()) {
      bad(w, "is out of range");
    }
    return scalar(static_cast<std::uint32_t>(u));
  }
  if (type == "i64") {
    if (is_unsigned && u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      bad(w, "is out of range");
    }
    return scalar(s);
  }
  if (type == "u64") {
    if (!is_unsigned) {
      bad(w, "is out of range");
    }
    return scalar(u);
  }
  bad(what, "has an unknown type \"" + type + "\" (buffer, i32, u32, i64, u64, f32, f64)");
}

program_spec parse_program(const json &p) {
  if (!p.is_object()) {
    bad("request.program", "must be an object");
  }
  program_spec s;
  s.entry = detail::string_member(p, "entry", "request.program");
  const auto text = p.find("source");
  const auto file = p.find("source_file");
  if ((text == p.end()) == (file == p.end())) {
    bad("request.program", "needs one of \"source\" and \"source_file\"");
  }
  if (text != p.end()) {
    if (!text->is_string()) {
      bad("request.program.source", "must be a string");
    }
    s.source.text = text->get<std::string>();
    s.source.name = p.value("name", s.entry + ".cu");
  } else {
    if (!file->is_string()) {
      bad("request.program.source_file", "must be a string");
    }
    s.source = kernel_source::from_file(file->get<std::string>());
  }
  if (const auto o = p.find("options"); o != p.end()) {
    s.options = strings(*o, "request.program.options");
  }
  if (const auto d = p.find("include_dirs"); d != p.end()) {
    for (auto &dir : strings(*d, "request.program.include_dirs")) {
      s.include_dirs.emplace_back(dir);
    }
  }
  if (const auto h = p.find("headers"); h != p.end()) {
    if (!h->is_array()) {
      bad("request.program.headers", "must be an array of {\"name\", \"text\"}");
    }
    for (const auto &x : *h) {
      s.headers.push_back({detail::string_member(x, "name", "request.program.headers[]"),
                           detail::string_member(x, "text", "request.program.headers[]")});
    }
  }
  if (const auto a = p.find("arch"); a != p.end()) {
    if (!a->is_string()) {
      bad("request.program.arch", "must be a string");
    }
    s.arch = a->get<std::string>();
  }
  json id = p;
  id.erase("name");
  if (file != p.end()) {
    id["source"] = s.source.text; // the file's contents now
    id.erase("source_file");
  }
  s.identity = detail::dump(id);
  return s;
}

} // namespace

candidate_request parse_request(std::string_view line) {
  const json j = detail::parse(line, "the request");
  if (!j.is_object()) {
    throw error("the request is not a JSON object");
  }
  candidate_request r;
  r.config = detail::config_from_json(detail::member(j, "config", json::value_t::object, "request"),
                                      "config");
  r.policy = detail::policy_from_json(detail::member(j, "policy", json::value_t::object, "request"),
                                      "policy");
  r.best_ms = std::numeric_limits<double>::infinity();
  if (const auto b = j.find("best_ms"); b != j.end() && !b->is_null()) {
    if (!b->is_number()) {
      bad("best_ms", "must be a number or null");
    }
    r.best_ms = b->get<double>();
  }
  const auto it = j.find("request");
  if (it == j.end() || !it->is_object()) {
    bad("request", "must be an object (the kernel to run)");
  }
  const json &q = *it;
  r.program = parse_program(detail::member(q, "program", json::value_t::object, "request"));
  if (const auto d = q.find("definitions"); d != q.end()) {
    if (!d->is_array()) {
      bad("request.definitions", "must be an array of [name, value] pairs");
    }
    std::vector<definition> defs;
    for (const auto &x : *d) {
      if (!x.is_array() || x.size() != 2 || !x[0].is_string() || !x[1].is_string()) {
        bad("request.definitions", "must be an array of [name, value] pairs of strings");
      }
      defs.push_back({x[0].get<std::string>(), x[1].get<std::string>()});
    }
    r.definitions = std::move(defs);
  }
  if (const auto t = q.find("template_args"); t != q.end()) {
    r.template_args = strings(*t, "request.template_args");
  }
  r.dims.grid = dims3(q, "grid");
  r.dims.block = dims3(q, "block");
  if (const auto s = q.find("shared_bytes"); s != q.end()) {
    if (!s->is_number_unsigned() || s->get<std::uint64_t>() > std::numeric_limits<int>::max()) {
      bad("request.shared_bytes", "must be a number of bytes");
    }
    r.dims.shared_bytes = s->get<unsigned>();
  }
  if (const auto a = q.find("args"); a != q.end()) {
    if (!a->is_array()) {
      bad("request.args", "must be an array");
    }
    for (std::size_t i = 0; i < a->size(); ++i) {
      r.args.push_back(parse_argument((*a)[i], "request.args[" + std::to_string(i) + "]"));
    }
  }
  return r;
}

} // namespace tunekit::cuda::worker
