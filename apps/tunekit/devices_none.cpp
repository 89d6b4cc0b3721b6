#include "devices.hpp"

namespace tunekit::cli {

std::vector<hardware_info> accelerators(std::string &note) {
  note = "built without the cuda backend";
  return {};
}

} // namespace tunekit::cli
