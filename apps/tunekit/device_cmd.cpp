// `tunekit device`: the identity and hardware digest of the host and each visible device.

#include "commands.hpp"
#include "devices.hpp"

#include "json_io.hpp"

#include <tunekit/artifact.hpp>
#include <tunekit/hardware.hpp>

#include <iostream>

namespace tunekit::cli {

using detail::json;

namespace {

// The hardware's fields, its digest (what cache entries bind to), its text and its identity
// (what artifacts bind to).
json hardware_json(const hardware_info &hw) {
  json j = detail::to_json(hw);
  j["digest"] = hw.digest();
  j["text"] = hw.to_string();
  const auto d = device_identity::of(hw);
  j["identity"] = json{{"name", d.name}, {"arch", d.arch}, {"units", d.units}};
  return j;
}

} // namespace

int device(const device_options &o) {
  std::string note;
  const hardware_info host = host_hardware();
  const auto accel = accelerators(note);
  if (o.json) {
    json j{{"host", hardware_json(host)}, {"devices", json::array()}};
    for (const auto &hw : accel) {
      j["devices"].push_back(hardware_json(hw));
    }
    if (!note.empty()) {
      j["note"] = note;
    }
    j["tunekit"] = version();
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "host    " << host.to_string() << "\n        digest " << host.digest() << "\n";
  for (std::size_t i = 0; i < accel.size(); ++i) {
    std::cout << accel[i].kind << " " << i << "  " << accel[i].to_string() << "\n        digest "
              << accel[i].digest() << "\n";
  }
  if (!note.empty()) {
    std::cout << "(" << note << ")\n";
  }
  return 0;
}

} // namespace tunekit::cli
