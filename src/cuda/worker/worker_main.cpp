// tunekit-cuda-worker: the worker of `tunekit::isolated_measurer` for runtime-compiled kernels, and
// with `--compile` the compile worker of `tunekit::cuda::compile_options::worker` (NVRTC only).
// Reads one request per line on stdin (worker_request.hpp has the format), compiles the kernel
// through the compile cache the parent uses (`kernel_cache::from_env`), allocates the buffers once,
// runs the policy's warmup and timed runs with CUDA events on a stream of its own, and replies
// {"times_ms": [...]}. A failure that leaves the context usable (a compile error, too many
// resources) replies {"error": ...}; one that poisons it (an illegal address) replies
// {"error": ..., "fatal": true} and exits, and the parent starts a new worker.

#include "rtc_nvrtc.hpp"
#include "worker_request.hpp"

#include <tunekit/cuda/error.hpp>
#include <tunekit/cuda/rtc.hpp>
#include <tunekit/error.hpp>
#include <tunekit/measure.hpp>

#include <nlohmann/json.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace tunekit::cuda;
using namespace tunekit::cuda::worker;

// Definitions and template arguments of the configs seen, as the requests gave them; the program's
// functions read them when it compiles a config.
struct per_config {
  std::map<std::string, std::vector<definition>> definitions;
  std::map<std::string, std::vector<std::string>> template_args;
};

struct program_slot {
  std::shared_ptr<per_config> given = std::make_shared<per_config>();
  std::unique_ptr<kernel_program> program;
};

struct device_buffer {
  void *ptr = nullptr;
  buffer_arg spec;
};

std::uint64_t next(std::uint64_t &state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

class worker_state {
public:
  worker_state() { check(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "stream"); }

  std::vector<double> run(const candidate_request &r) {
    kernel_program &program = program_of(r);
    rtc_detail::loaded_function &f = program.load(r.config);
    std::vector<void *> params;
    params.reserve(r.args.size());
    for (std::size_t i = 0; i < r.args.size(); ++i) {
      if (const auto *b = std::get_if<buffer_arg>(&r.args[i])) {
        params.push_back(&buffer(i, *b).ptr);
      } else {
        params.push_back(const_cast<unsigned char *>(std::get<scalar_arg>(r.args[i]).bytes.data()));
      }
    }
    auto launch = [&] {
      rtc_detail::launch(f, r.dims.grid, r.dims.block, r.dims.shared_bytes, m_stream,
                         params.data());
    };
    for (int i = 0; i < r.policy.warmup; ++i) {
      launch();
    }
    check(cudaStreamSynchronize(m_stream), "after the warmup runs");
    // As event_measurer does: the timed runs are queued back to back between their events, and
    // the worker waits only where the early-stop check falls and after the last run.
    const auto runs = static_cast<std::size_t>(std::max(r.policy.runs, 0));
    while (m_events.size() < 2 * runs) {
      m_events.push_back(make_event());
    }
    std::vector<double> times;
    std::size_t read = 0;
    auto collect = [&](std::size_t upto) {
      check(cudaEventSynchronize(m_events[2 * upto - 1]), "running the kernel");
      for (; read < upto; ++read) {
        float ms = 0;
        check(cudaEventElapsedTime(&ms, m_events[2 * read], m_events[2 * read + 1]),
              "reading the events");
        times.push_back(static_cast<double>(ms));
      }
    };
    for (std::size_t i = 0; i < runs; ++i) {
      check(cudaEventRecord(m_events[2 * i], m_stream), "recording the start event");
      launch();
      check(cudaEventRecord(m_events[2 * i + 1], m_stream), "recording the stop event");
      if (tunekit::early_stop_due(r.policy, r.best_ms, i + 1)) {
        collect(i + 1);
        if (tunekit::stop_early(r.policy, r.best_ms, times)) {
          return times;
        }
      }
    }
    if (runs > 0) {
      collect(runs);
    }
    return times;
  }

private:
  kernel_program &program_of(const candidate_request &r) {
    auto &slot = m_programs[r.program.identity];
    if (!slot.program) {
      kernel_definition d{.source = r.program.source,
                          .entry = r.program.entry,
                          .headers = r.program.headers,
                          .include_dirs = r.program.include_dirs,
                          .options = r.program.options};
      d.definitions = [given = slot.given](const tunekit::config &c) {
        const auto it = given->definitions.find(c.to_string());
        return it != given->definitions.end() ? it->second : config_definitions(c);
      };
      d.template_args = [given = slot.given](const tunekit::config &c) {
        const auto it = given->template_args.find(c.to_string());
        return it != given->template_args.end() ? it->second : std::vector<std::string>{};
      };
      slot.program = std::make_unique<kernel_program>(
          std::move(d), compile_options{.arch = r.program.arch, .threads = 1});
    }
    const std::string c = r.config.to_string();
    if (r.definitions) {
      slot.given->definitions[c] = *r.definitions;
    }
    if (r.template_args) {
      slot.given->template_args[c] = *r.template_args;
    }
    return *slot.program;
  }

  device_buffer &buffer(std::size_t position, const buffer_arg &spec) {
    auto &b = m_buffers[position];
    if (b.ptr != nullptr && b.spec == spec) {
      return b;
    }
    if (b.ptr != nullptr) {
      check(cudaFree(b.ptr), "freeing a buffer");
      b.ptr = nullptr;
    }
    check(cudaMalloc(&b.ptr, spec.bytes), "allocating " + std::to_string(spec.bytes) + " bytes");
    b.spec = spec;
    if (spec.byte) {
      check(cudaMemset(b.ptr, *spec.byte, spec.bytes), "filling a buffer");
    } else {
      std::vector<float> host(spec.bytes / sizeof(float));
      std::uint64_t state = 0x7475'6e65'6b69'7400ULL + position;
      for (auto &x : host) {
        x = static_cast<float>(static_cast<double>(next(state) >> 11U) * 0x1.0p-52 - 1.0);
      }
      check(cudaMemcpy(b.ptr, host.data(), spec.bytes, cudaMemcpyHostToDevice), "filling a buffer");
    }
    return b;
  }

  cudaStream_t m_stream = nullptr;
  std::vector<cudaEvent_t> m_events; // start and stop of each timed run
  std::map<std::string, program_slot> m_programs;
  std::map<std::size_t, device_buffer> m_buffers;

  static cudaEvent_t make_event() {
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), "creating an event");
    return e;
  }
};

void reply(const nlohmann::json &j) { std::cout << j.dump() << std::endl; }

} // namespace

int main(int argc, char **argv) {
  std::ios::sync_with_stdio(false);
  if (argc == 2 && std::string_view(argv[1]) == "--compile") {
    // The compile worker of `compile_options::worker`: NVRTC only, no device needed. Where a
    // driver is installed NVRTC loads it and starts it (cuInit) at the first compile: in each of
    // sixteen workers that is a start-up contending on the driver's locks (a fifth to a third
    // of their time on the H200 machine) beside the process that measures. The worker hides every
    // device from itself, so the driver finds none; NVRTC's binaries are the same byte for byte.
    ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
    return rtc_detail::serve_compiles(std::cin, std::cout);
  }
  if (argc != 1) {
    std::cerr << "usage: tunekit-cuda-worker [--compile]" << std::endl;
    return 2;
  }
  std::unique_ptr<worker_state> state;
  std::string line;
  while (std::getline(std::cin, line)) {
    try {
      const candidate_request r = parse_request(line);
      if (!state) {
        state = std::make_unique<worker_state>();
      }
      reply({{"times_ms", state->run(r)}});
    } catch (const tunekit::fatal_candidate_error &e) {
      reply({{"error", e.what()}, {"fatal", true}});
      std::cerr << "tunekit-cuda-worker: " << e.what() << "; exiting" << std::endl;
      return 1; // the context is poisoned: the parent starts a new worker
    } catch (const std::exception &e) {
      reply({{"error", e.what()}, {"fatal", false}});
    }
  }
  return 0;
}
