#pragma once
/// \file error.hpp
/// CUDA error handling for tuning. Every CUDA call's return code goes through `check` (or the
/// `TUNEKIT_CUDA_CHECK` macro), which throws with the CUDA error's name and text. What it throws
/// depends on what the error means for a search:
///
/// - errors that only fail the candidate that caused them (too many resources, invalid launch
///   configuration, too much shared memory, out of memory) throw `tunekit::error`; the tuner
///   records the message as the candidate's failure reason, scores it +infinity and goes on;
/// - errors that leave the context unusable (illegal or misaligned address, launch failure, device
///   assert, hardware faults) and errors that make the device unusable (no device, driver too old)
///   throw `tunekit::fatal_candidate_error`; the tuner stops at once and rethrows it naming the
///   candidate, because no later measurement could be trusted.

#include <tunekit/error.hpp>

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

namespace tunekit::cuda {

/// What a CUDA error means for a search.
enum class error_class {
  candidate, ///< only this candidate failed; the context is still usable
  fatal,     ///< the context or device cannot be trusted any more; tuning must stop
};

/// "candidate" or "fatal".
[[nodiscard]] std::string_view to_string(error_class c) noexcept;

/// Classifies a CUDA error code by its documented meaning. Sticky errors (those after which "any
/// further CUDA work will return the same error") and errors that leave no usable device are
/// `fatal`; every other code, `cudaSuccess` included, is `candidate`.
[[nodiscard]] error_class classify(cudaError_t code) noexcept;

/// The error's name, number and text:
/// `cudaErrorLaunchOutOfResources (701): too many resources requested for launch`.
[[nodiscard]] std::string describe(cudaError_t code);

/// Throws for `code`: `tunekit::fatal_candidate_error` when `classify(code)` is fatal, else
/// `tunekit::error`. The message is `<context>: <describe(code)>` (or `describe(code)` alone when
/// `context` is empty).
[[noreturn]] void throw_error(cudaError_t code, std::string_view context = {});

/// Checks the return code of a CUDA call; throws as `throw_error` unless it is `cudaSuccess`.
///
/// \code
/// tunekit::cuda::check(cudaMalloc(&p, bytes), "allocating the input");
/// \endcode
inline void check(cudaError_t code, std::string_view context = {}) {
  if (code != cudaSuccess) {
    throw_error(code, context);
  }
}

/// Checks a kernel launch just made on this thread (`cudaGetLastError`, which also clears a
/// non-sticky error so that it is not reported again by a later call).
void check_launch(std::string_view context = {});

/// Waits for `stream` and checks what it reports: errors of asynchronous work (an illegal address
/// in a kernel) only surface here.
void check_stream(cudaStream_t stream, std::string_view context = {});

} // namespace tunekit::cuda

#define TUNEKIT_CUDA_DETAIL_STR2(x) #x
#define TUNEKIT_CUDA_DETAIL_STR(x) TUNEKIT_CUDA_DETAIL_STR2(x)

/// Checks a CUDA call and names it with its file and line in the error:
/// `TUNEKIT_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream));`
#define TUNEKIT_CUDA_CHECK(call)                                                                   \
  ::tunekit::cuda::check((call), #call " (" __FILE__ ":" TUNEKIT_CUDA_DETAIL_STR(__LINE__) ")")
