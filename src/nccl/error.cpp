#include <tunekit/nccl/error.hpp>

namespace tunekit::nccl {

namespace {

const char *result_name(ncclResult_t result) noexcept {
  switch (result) {
  case ncclSuccess:
    return "ncclSuccess";
  case ncclUnhandledCudaError:
    return "ncclUnhandledCudaError";
  case ncclSystemError:
    return "ncclSystemError";
  case ncclInternalError:
    return "ncclInternalError";
  case ncclInvalidArgument:
    return "ncclInvalidArgument";
  case ncclInvalidUsage:
    return "ncclInvalidUsage";
  case ncclRemoteError:
    return "ncclRemoteError";
  case ncclInProgress:
    return "ncclInProgress";
  default:
    return "ncclResult";
  }
}

} // namespace

std::string describe(ncclResult_t result) {
  const char *text = ncclGetErrorString(result);
  std::string out = result_name(result);
  out += " (" + std::to_string(static_cast<int>(result)) + "): ";
  out += text != nullptr ? text : "unrecognized result";
  return out;
}

void throw_error(ncclResult_t result, std::string_view call, ncclComm_t comm) {
  std::string msg = "tunekit::nccl: ";
  msg.append(call);
  msg += " failed: " + describe(result);
  if (comm != nullptr) {
    const char *last = ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') {
      msg += " (";
      msg += last;
      msg += ")";
    }
  }
  throw error(msg);
}

std::string version() {
  int v = 0;
  check(ncclGetVersion(&v), "ncclGetVersion");
  // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z since 2.9 (X * 1000 + Y * 100 + Z before).
  const int major = v >= 10000 ? v / 10000 : v / 1000;
  const int minor = v >= 10000 ? (v % 10000) / 100 : (v % 1000) / 100;
  const int patch = v % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

} // namespace tunekit::nccl
