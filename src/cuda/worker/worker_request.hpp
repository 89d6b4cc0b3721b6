#pragma once
// The requests of tunekit-cuda-worker, the isolated measurer's worker for runtime-compiled kernels
// (tunekit/isolation.hpp has the protocol). A request line carries the candidate's config and the
// measurement policy, and in its "request" member what to run:
//
//   {"program": {"source": "<kernel text>", "name": "scale.cu"}    (or "source_file": "<path>")
//               "entry": "scale", "options": ["-std=c++17"], "arch": "sm_90",
//               "headers": [{"name": "tile.h", "text": "..."}], "include_dirs": ["/path"]},
//    "definitions": [["BLOCK", "256"], ["USE_X", ""]],    optional; default: the config's fields
//    "template_args": ["256", "float"],                   optional; default: none
//    "grid": [64, 1, 1], "block": [256, 1, 1], "shared_bytes": 0,
//    "args": [{"buffer": 4194304, "fill": 0}, {"buffer": 4194304, "fill": "uniform_f32"},
//             {"i32": 1048576}, {"f32": 2.0}]}
//
// Only "program.entry", one of "program.source"/"program.source_file", "grid" and "block" are
// required. Buffers are device allocations of the given bytes, made once per worker and argument
// position and filled once: with a byte (0-255, `cudaMemset`) or "uniform_f32" (floats in
// [-1, 1) from a fixed seed). Scalars: i32, u32, i64, u64, f32, f64.

#include <tunekit/config.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/measure.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tunekit::cuda::worker {

/// A device buffer argument.
struct buffer_arg {
  std::size_t bytes = 0;
  /// The byte every byte is set to; nullopt: "uniform_f32".
  std::optional<unsigned char> byte = 0;
  friend bool operator==(const buffer_arg &, const buffer_arg &) = default;
};

/// A scalar argument: its bytes as the kernel reads them.
struct scalar_arg {
  std::array<unsigned char, 8> bytes{};
  std::size_t size = 0;
};

using argument = std::variant<buffer_arg, scalar_arg>;

/// What to compile.
struct program_spec {
  kernel_source source;
  std::string entry;
  std::vector<named_header> headers;
  std::vector<std::string> options;
  std::vector<std::filesystem::path> include_dirs;
  std::string arch;
  /// Identifies the program among those a worker keeps (its fields, serialised).
  std::string identity;
};

/// One parsed request.
struct candidate_request {
  tunekit::config config;
  measure_policy policy;
  double best_ms = 0; ///< +infinity when there is none
  program_spec program;
  std::optional<std::vector<definition>> definitions;
  std::optional<std::vector<std::string>> template_args;
  launch_dims dims;
  std::vector<argument> args;
};

/// Parses a request line; throws `tunekit::error` naming the field that is missing or wrong.
/// Reads "program.source_file" when given.
[[nodiscard]] candidate_request parse_request(std::string_view line);

} // namespace tunekit::cuda::worker
