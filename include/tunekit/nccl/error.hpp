#pragma once
/// \file nccl/error.hpp
/// NCCL return codes as errors. Every NCCL call tunekit makes goes through `check`, which throws
/// `tunekit::error` naming the call, the result and, when a communicator is given, NCCL's own
/// description of its last error.

#include <tunekit/error.hpp>

#include <nccl.h>

#include <string>
#include <string_view>

namespace tunekit::nccl {

/// The result's name, number and text: `ncclInvalidArgument (4): invalid argument (run with
/// NCCL_DEBUG=WARN for details)`.
[[nodiscard]] std::string describe(ncclResult_t result);

/// Throws `tunekit::error` for `result`: `tunekit::nccl: <call> failed: <describe(result)>`, with
/// `ncclGetLastError(comm)` appended when `comm` is not null and NCCL has something to say.
[[noreturn]] void throw_error(ncclResult_t result, std::string_view call,
                              ncclComm_t comm = nullptr);

/// Checks the return code of an NCCL call; throws as `throw_error` unless it is `ncclSuccess`.
///
/// \code
/// tunekit::nccl::check(ncclCommCount(comm, &size), "ncclCommCount", comm);
/// \endcode
inline void check(ncclResult_t result, std::string_view call, ncclComm_t comm = nullptr) {
  if (result != ncclSuccess) {
    throw_error(result, call, comm);
  }
}

/// The NCCL library tunekit runs with (`ncclGetVersion`), as "major.minor.patch": "2.28.9".
[[nodiscard]] std::string version();

} // namespace tunekit::nccl
