#include "rtc_values.hpp"

#include <charconv>

namespace tunekit::cuda {

namespace {

std::string value_text(const value &v) {
  switch (v.type()) {
  case value_type::int64:
    return std::to_string(v.as_int());
  case value_type::float64: {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v.as_double());
    return std::string(buf, r.ptr);
  }
  case value_type::boolean:
    return v.as_bool() ? "1" : "0";
  case value_type::string:
    return v.as_string();
  }
  return {};
}

} // namespace

std::vector<definition> config_definitions(const config &c) {
  std::vector<definition> out;
  out.reserve(c.size());
  for (const auto &f : c) {
    out.push_back(definition{f.name, value_text(f.value)});
  }
  return out;
}

namespace rtc_detail {

std::vector<std::string> define_options(const std::vector<definition> &defs) {
  std::vector<std::string> out;
  out.reserve(defs.size());
  for (const auto &d : defs) {
    out.push_back("-D" + d.name + (d.value.empty() ? "" : "=" + d.value));
  }
  return out;
}

std::string name_expression(const std::string &entry,
                            const std::vector<std::string> &template_args) {
  std::string out = entry;
  if (template_args.empty()) {
    return out;
  }
  out += "<";
  for (std::size_t i = 0; i < template_args.size(); ++i) {
    if (i > 0) {
      out += ", ";
    }
    out += template_args[i];
  }
  out += ">";
  return out;
}

std::vector<std::string> nvrtc_options(const kernel_definition &d, const std::string &target,
                                       const std::vector<std::string> &config_options) {
  std::vector<std::string> o;
  o.push_back("--gpu-architecture=" + target); // sm_XY: a cubin; compute_XY: PTX
  for (const auto &dir : d.include_dirs) {
    o.push_back("--include-path=" + dir.string());
  }
  for (const auto &dir : d.system_include_dirs) {
    o.push_back("--include-path=" + dir.string());
  }
  o.insert(o.end(), d.options.begin(), d.options.end());
  o.insert(o.end(), config_options.begin(), config_options.end());
  return o;
}

} // namespace rtc_detail

} // namespace tunekit::cuda
