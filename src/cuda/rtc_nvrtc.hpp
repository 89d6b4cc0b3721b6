#pragma once
// NVRTC in this process and in a compile worker process (rtc_nvrtc.cpp): the compile of one config
// as plain text in, binary out. Internal to the CUDA backend; it knows nothing of programs,
// configs or the compile cache.

#include "../core/os.hpp"

#include <nvrtc.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tunekit::cuda::rtc_detail {

/// The text NVRTC compiles: the kernel's source and the headers given as text, (name, text) each.
struct nvrtc_source {
  std::string name;
  std::string text;
  std::vector<std::pair<std::string, std::string>> headers;
};

/// One config's compile.
struct nvrtc_job {
  std::vector<std::string> options; ///< every NVRTC option, the `-D` definitions included
  std::string name_expression;      ///< `entry` or `entry<64, float>`
  bool cubin = true;                ///< a cubin (`sm_XY` target), else PTX (`compute_XY`)
  std::string description;          ///< `entry [BLOCK=64]`, for messages
  std::string target;               ///< `sm_90` or `compute_90`, for messages
};

/// What NVRTC made of one config.
struct nvrtc_output {
  std::string binary; ///< cubin or PTX
  std::string lowered_name;
};

/// Throws `tunekit::error` "<context>: <NVRTC's error>" unless `r` is NVRTC_SUCCESS.
void check_nvrtc(nvrtcResult r, std::string_view context);

/// The first `max_lines` non-blank lines of a compiler's log.
[[nodiscard]] std::string first_lines(std::string_view log, std::size_t max_lines);

/// Compiles `job` of `source` with NVRTC in this process. Throws `tunekit::error` with the first
/// lines of NVRTC's log.
[[nodiscard]] nvrtc_output run_nvrtc(const nvrtc_source &source, const nvrtc_job &job);

/// Compiles `job` of `source` with NVRTC in a worker process (protocol in rtc_nvrtc.cpp), its
/// binary passed through the file `out`. A compile error, the worker's death or its deadline throw
/// `tunekit::error` with the reason; the worker is started again at the next request.
[[nodiscard]] nvrtc_output compile_in_worker(tunekit::detail::child_process &worker,
                                             const nvrtc_source &source, const nvrtc_job &job,
                                             const std::filesystem::path &out,
                                             std::chrono::milliseconds deadline);

/// The compile worker's loop (`tunekit-cuda-worker --compile`, see `compile_options::worker`):
/// one request per line on `in`, one reply per line on `out`, until `in` ends. Returns 0.
int serve_compiles(std::istream &in, std::ostream &out);

} // namespace tunekit::cuda::rtc_detail
