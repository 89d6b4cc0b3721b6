#pragma once
// How a `kernel_program` turns one config's compile into a binary: the `compiler` interface and its
// two members, NVRTC in this process (rtc_compiler_in_process.cpp) and NVRTC in compile worker
// processes (rtc_compiler_workers.cpp). The program picks one when it is made, from
// `compile_options::worker`. Internal to the CUDA backend.

#include "rtc_nvrtc.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace tunekit::cuda::rtc_detail {

/// Compiles configs of one program's source. Called from every compile thread at once.
class compiler {
public:
  compiler() = default;
  compiler(const compiler &) = delete;
  compiler &operator=(const compiler &) = delete;
  virtual ~compiler() = default;

  /// The binary of `job`; throws `tunekit::error` with the reason (the first lines of NVRTC's log
  /// for a compile error).
  [[nodiscard]] virtual nvrtc_output compile(const nvrtc_job &job) = 0;
};

/// NVRTC in this process. NVRTC serialises the compiles of one process, so several threads
/// overlap little.
[[nodiscard]] std::unique_ptr<compiler> make_in_process_compiler(nvrtc_source source);

/// NVRTC in worker processes started with `command` (`tunekit-cuda-worker --compile`): each compile
/// thread takes an idle worker or starts one, so that compiles scale with processes; a worker past
/// `deadline` on one config is killed and that config fails.
[[nodiscard]] std::unique_ptr<compiler> make_worker_compiler(nvrtc_source source,
                                                             std::vector<std::string> command,
                                                             std::chrono::milliseconds deadline);

} // namespace tunekit::cuda::rtc_detail
