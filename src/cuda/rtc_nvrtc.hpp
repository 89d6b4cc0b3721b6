#pragma once
// NVRTC in this process and in a compile worker process (rtc_nvrtc.cpp). Internal to the CUDA
// backend.

#include <tunekit/cuda/rtc.hpp>
#include <tunekit/isolation.hpp>

#include <nvrtc.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::cuda::rtc_detail {

/// Throws `tunekit::error` "<context>: <NVRTC's error>" unless `r` is NVRTC_SUCCESS.
void check_nvrtc(nvrtcResult r, std::string_view context);

/// The first `max_lines` non-blank lines of a compiler's log.
[[nodiscard]] std::string first_lines(std::string_view log, std::size_t max_lines);

/// Compiles `name_expression` of `d` with NVRTC in a worker process (protocol in rtc_nvrtc.cpp),
/// its binary passed through the file `out`. A compile error, the worker's death or its deadline
/// throw `tunekit::error` with the reason; the worker is started again at the next request.
[[nodiscard]] nvrtc_output
compile_in_worker(worker_process &worker, const kernel_definition &d,
                  const std::vector<std::string> &options, const std::string &name_expression,
                  bool cubin, const std::string &description, const std::string &target,
                  const std::filesystem::path &out, std::chrono::milliseconds deadline);

} // namespace tunekit::cuda::rtc_detail
