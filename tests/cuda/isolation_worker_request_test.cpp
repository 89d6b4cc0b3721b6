// The requests of tunekit-cuda-worker (src/cuda/worker/worker_request.hpp): what a request line
// becomes, and a clear error naming the field for each malformed one. No GPU needed.

#include "worker_request.hpp"

#include <tunekit/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using tunekit::cuda::worker::buffer_arg;
using tunekit::cuda::worker::parse_request;
using tunekit::cuda::worker::scalar_arg;

namespace {

// A request whose "request" member is `inner`.
std::string line(const std::string &inner) {
  return R"({"config": {"BLOCK": 256, "VEC": 4}, "key": [4096],
             "policy": {"warmup": 2, "runs": 7, "statistic": "median"},
             "best_ms": 0.5, "request": )" +
         inner + "}";
}

const std::string program = R"("program": {"source": "__global__ void k() {}", "entry": "k"})";

std::string error_of(const std::string &text) {
  try {
    static_cast<void>(parse_request(text));
  } catch (const tunekit::error &e) {
    return e.what();
  }
  return {};
}

template <class T> T scalar_value(const scalar_arg &s) {
  T v{};
  EXPECT_EQ(s.size, sizeof(T));
  std::memcpy(&v, s.bytes.data(), sizeof(T));
  return v;
}

} // namespace

TEST(cuda_worker_request, a_full_request_parses) {
  const auto r = parse_request(line(R"({"program": {"source": "__global__ void k() {}",
      "name": "k.cu", "entry": "k", "options": ["-std=c++17"], "arch": "sm_90",
      "headers": [{"name": "t.h", "text": "#define T 1"}]},
    "definitions": [["BLOCK", "256"], ["FAST", ""]], "template_args": ["256", "float"],
    "grid": [16, 2], "block": [256], "shared_bytes": 1024,
    "args": [{"buffer": 4096, "fill": 7}, {"buffer": 64, "fill": "uniform_f32"}, {"buffer": 8},
             {"i32": -5}, {"u32": 4000000000}, {"i64": -9000000000}, {"u64": 18000000000000000000},
             {"f32": 1.5}, {"f64": 0.25}]})"));
  EXPECT_EQ(r.config.get_int("BLOCK"), 256);
  EXPECT_EQ(r.policy.warmup, 2);
  EXPECT_EQ(r.policy.runs, 7);
  EXPECT_EQ(r.policy.stat, tunekit::statistic::median);
  EXPECT_EQ(r.best_ms, 0.5);
  EXPECT_EQ(r.program.entry, "k");
  EXPECT_EQ(r.program.source.name, "k.cu");
  EXPECT_EQ(r.program.options, (std::vector<std::string>{"-std=c++17"}));
  EXPECT_EQ(r.program.arch, "sm_90");
  ASSERT_EQ(r.program.headers.size(), 1U);
  EXPECT_EQ(r.program.headers[0].text, "#define T 1");
  ASSERT_TRUE(r.definitions.has_value());
  EXPECT_EQ(*r.definitions,
            (std::vector<tunekit::cuda::definition>{{"BLOCK", "256"}, {"FAST", ""}}));
  EXPECT_EQ(*r.template_args, (std::vector<std::string>{"256", "float"}));
  EXPECT_EQ(r.dims.grid.x, 16U);
  EXPECT_EQ(r.dims.grid.y, 2U);
  EXPECT_EQ(r.dims.grid.z, 1U);
  EXPECT_EQ(r.dims.block.x, 256U);
  EXPECT_EQ(r.dims.shared_bytes, 1024U);
  ASSERT_EQ(r.args.size(), 9U);
  EXPECT_EQ(std::get<buffer_arg>(r.args[0]), (buffer_arg{.bytes = 4096, .byte = 7}));
  EXPECT_EQ(std::get<buffer_arg>(r.args[1]), (buffer_arg{.bytes = 64, .byte = std::nullopt}));
  EXPECT_EQ(std::get<buffer_arg>(r.args[2]), (buffer_arg{.bytes = 8, .byte = 0}));
  EXPECT_EQ(scalar_value<std::int32_t>(std::get<scalar_arg>(r.args[3])), -5);
  EXPECT_EQ(scalar_value<std::uint32_t>(std::get<scalar_arg>(r.args[4])), 4000000000U);
  EXPECT_EQ(scalar_value<std::int64_t>(std::get<scalar_arg>(r.args[5])), -9000000000LL);
  EXPECT_EQ(scalar_value<std::uint64_t>(std::get<scalar_arg>(r.args[6])), 18000000000000000000ULL);
  EXPECT_EQ(scalar_value<float>(std::get<scalar_arg>(r.args[7])), 1.5F);
  EXPECT_EQ(scalar_value<double>(std::get<scalar_arg>(r.args[8])), 0.25);
}

TEST(cuda_worker_request, defaults_and_program_identity) {
  const auto r = parse_request(line("{" + program + R"(, "grid": [1], "block": [32]})"));
  EXPECT_FALSE(r.definitions.has_value());
  EXPECT_FALSE(r.template_args.has_value());
  EXPECT_TRUE(r.args.empty());
  EXPECT_EQ(r.program.source.name, "k.cu");
  EXPECT_TRUE(r.program.arch.empty());
  // The same program under another name is the same program; other options make another one.
  const auto named = parse_request(line(
      R"({"program": {"source": "__global__ void k() {}", "entry": "k", "name": "x.cu"},
          "grid": [1], "block": [32]})"));
  EXPECT_EQ(named.program.identity, r.program.identity);
  const auto other = parse_request(line(
      R"({"program": {"source": "__global__ void k() {}", "entry": "k", "options": ["-G"]},
          "grid": [1], "block": [32]})"));
  EXPECT_NE(other.program.identity, r.program.identity);
  // No best score yet.
  const auto first = parse_request(R"({"config": {"B": 1}, "policy": {"warmup": 0, "runs": 1,
      "statistic": "min"}, "best_ms": null, "request": {)" +
                                   program + R"(, "grid": [1], "block": [1]}})");
  EXPECT_TRUE(std::isinf(first.best_ms));
}

TEST(cuda_worker_request, the_source_file_is_read) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tunekit-worker-request-" + std::to_string(::getpid()) + ".cu");
  std::ofstream(path) << "__global__ void k() {}\n";
  const auto r = parse_request(line(R"({"program": {"source_file": ")" + path.string() +
                                    R"(", "entry": "k"}, "grid": [1], "block": [1]})"));
  EXPECT_EQ(r.program.source.text, "__global__ void k() {}\n");
  EXPECT_EQ(r.program.source.name, path.filename().string());
  std::filesystem::remove(path);
  EXPECT_NE(error_of(line(R"({"program": {"source_file": ")" + path.string() +
                          R"(", "entry": "k"}, "grid": [1], "block": [1]})")),
            "");
}

TEST(cuda_worker_request, malformed_requests_name_the_field) {
  EXPECT_NE(error_of("{").find("the request"), std::string::npos);
  EXPECT_NE(error_of("not json").find("the request"), std::string::npos);
  EXPECT_EQ(error_of("[1]"), "the request is not a JSON object");
  EXPECT_EQ(error_of(line("null")), "request field request must be an object (the kernel to run)");
  EXPECT_EQ(error_of(line(R"({"program": {"entry": "k"}, "grid": [1], "block": [1]})")),
            "request field request.program needs one of \"source\" and \"source_file\"");
  EXPECT_EQ(error_of(line("{" + program + R"(, "block": [1]})")),
            "request field request.grid is missing");
  EXPECT_EQ(error_of(line("{" + program + R"(, "grid": [0], "block": [1]})")),
            "request field request.grid must be an array of 1 to 3 positive integers");
  EXPECT_EQ(error_of(line("{" + program + R"(, "grid": [1,1,1,1], "block": [1]})")),
            "request field request.grid must be an array of 1 to 3 positive integers");
  const std::string dims = R"(, "grid": [1], "block": [1], "args": )";
  EXPECT_EQ(error_of(line("{" + program + dims + R"([{"i16": 1}]})")),
            "request field request.args[0] has an unknown type \"i16\" (buffer, i32, u32, i64, "
            "u64, f32, f64)");
  EXPECT_EQ(error_of(line("{" + program + dims + R"([{"f32": 1}, {"i32": 3000000000}]})")),
            "request field request.args[1].i32 is out of range");
  EXPECT_EQ(error_of(line("{" + program + dims + R"([{"u32": -1}]})")),
            "request field request.args[0].u32 is out of range");
  EXPECT_EQ(error_of(line("{" + program + dims + R"([{"i32": 1.5}]})")),
            "request field request.args[0].i32 must be an integer");
  EXPECT_EQ(error_of(line("{" + program + dims + R"([{"buffer": 6, "fill": "uniform_f32"}]})")),
            "request field request.args[0].fill \"uniform_f32\" needs a multiple of 4 bytes");
  EXPECT_EQ(error_of(line("{" + program + dims + R"([{"buffer": 8, "fill": 300}]})")),
            "request field request.args[0].fill must be a byte (0-255) or \"uniform_f32\"");
  EXPECT_EQ(error_of(line("{" + program + dims + R"([{"buffer": 0}]})")),
            "request field request.args[0].buffer must be a positive number of bytes");
  EXPECT_EQ(
      error_of(line("{" + program + R"(, "grid": [1], "block": [1], "definitions": [["A"]]})")),
      "request field request.definitions must be an array of [name, value] pairs of strings");
}
