#pragma once
// The devices `tunekit device` reports beside the host. Implemented by devices_cuda.cpp when the
// cuda backend is built, else by devices_none.cpp, so the command never depends on CUDA.

#include <tunekit/hardware.hpp>

#include <string>
#include <vector>

namespace tunekit::cli {

/// The accelerators of this machine, one `hardware_info` each; `note` says why there are none
/// (no backend built, no device visible).
std::vector<hardware_info> accelerators(std::string &note);

} // namespace tunekit::cli
