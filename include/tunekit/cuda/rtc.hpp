#pragma once
/// \file rtc.hpp
/// Runtime-compiled kernels: tune a CUDA kernel whose parameters are compile-time constants over
/// thousands of configs without instantiating any of them ahead of time.
///
/// A `kernel_program` holds a kernel's source and how a config becomes compile-time values
/// (`-D` definitions, template arguments). It compiles each config with NVRTC for the device's
/// architecture on a pool of CPU threads, keeps every binary in the compile cache on disk
/// (`rtc_cache.hpp`), and loads each one once with the driver API. A `runtime_kernel` adds the
/// launch: grid, block and dynamic shared memory as functions of the config and the arguments,
/// launched with `cuLaunchKernel` on the caller's stream. It is an ordinary launcher
/// `(args..., const tunekit::config&)`, so it plugs into `autotune` and `make_tunable_kernel`.
///
/// \code
/// auto program = std::make_shared<tunekit::cuda::kernel_program>(tunekit::cuda::kernel_definition{
///     .source = tunekit::cuda::kernel_source::from_file("scale.cu"), .entry = "scale"});
/// // Once per config (not per call): what the launch needs from the config.
/// auto block_of = [](const tunekit::config &c) { return int(c.get_int("BLOCK")); };
/// auto scale = tunekit::cuda::make_runtime_kernel<const float *, float *, int, cudaStream_t>(
///     program, block_of, [](const int &block, const float *, float *, int n, cudaStream_t) {
///       return tunekit::cuda::launch_dims{.grid = dim3((n + block - 1) / block), .block =
///       dim3(block)};
///     });
/// // version: the program's digest (a source edit retunes); preparer: compiles ahead while the
/// // GPU measures.
/// auto options = tunekit::cuda::make_tuner_options(program, {.stream = stream});
/// auto tuned = tunekit::autotune("scale", space, key_fn, tunekit::keep_all{}, scale, options);
/// tuned(x, y, n, stream);
/// \endcode
///
/// The compile path (NVRTC, the cache, the pool) needs no GPU and no driver: with
/// `compile_options::arch` set it runs on a build machine. The driver is loaded at the first
/// launch, through the CUDA runtime (`cudaGetDriverEntryPointByVersion`), so linking this backend
/// never requires `libcuda`.

#include <tunekit/config.hpp>
#include <tunekit/cuda/rtc_cache.hpp>
#include <tunekit/log.hpp>
#include <tunekit/measure.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tunekit::cuda {

/// A kernel's source text and the name NVRTC uses for it in messages.
struct kernel_source {
  std::string name;
  std::string text;
  /// Reads `path`; the name is its file name. Throws `tunekit::error` naming the path when it
  /// cannot be read.
  [[nodiscard]] static kernel_source from_file(const std::filesystem::path &path);
};

/// A header given as text: `#include "tiles.h"` finds it without the file system.
struct named_header {
  std::string name;
  std::string text;
};

/// A compile-time value: `-DNAME=VALUE` (`-DNAME` when the value is empty).
struct definition {
  std::string name;
  std::string value;
  friend bool operator==(const definition &, const definition &) = default;
};

/// `-D` definitions of every field of `c`: ints in decimal, doubles in shortest round-trip form,
/// bools as 1 or 0, strings verbatim. The default of `kernel_definition::definitions`.
[[nodiscard]] std::vector<definition> config_definitions(const config &c);

/// What to compile and how a config becomes compile-time values.
struct kernel_definition {
  kernel_source source;
  /// The `__global__` function to launch (with `template_args`: the template's name). Found
  /// through an NVRTC name expression, so it need not be `extern "C"`.
  std::string entry;
  /// Headers given as text; part of the compile cache key.
  std::vector<named_header> headers{};
  /// Directories searched by `#include`; the contents of every file under them are part of the
  /// compile cache key (read once, when the program is made).
  std::vector<std::filesystem::path> include_dirs{};
  /// Directories searched by `#include` whose files are not hashed: headers that change only with
  /// the CUDA toolkit (whose NVRTC version is part of the key).
  std::vector<std::filesystem::path> system_include_dirs{};
  /// Further NVRTC options, e.g. `-use_fast_math`, `-std=c++20`, `-lineinfo`.
  std::vector<std::string> options{};
  /// The config's preprocessor definitions; empty: `config_definitions`.
  std::function<std::vector<definition>(const config &)> definitions{};
  /// The config's template arguments of `entry` (e.g. `{"128", "float"}` launches
  /// `entry<128, float>`); unset, or no arguments for a config: `entry` as it is (not a template).
  std::function<std::vector<std::string>(const config &)> template_args{};
};

/// How a `kernel_program` compiles.
struct compile_options {
  /// Architecture to compile for, `sm_90`; empty: the current device's (read once, at the first
  /// compile, on the calling thread). Give it where there is no device.
  std::string arch{};
  /// The compile cache; null: `kernel_cache::from_env(log)`. Ignored when `use_cache` is false.
  std::shared_ptr<const kernel_cache> cache{};
  /// false: compile every config, read and write nothing on disk.
  bool use_cache = true;
  /// Compile threads; 0: `std::thread::hardware_concurrency()`. Started at the first `prepare`.
  unsigned threads = 0;
  /// A compile worker program and its arguments, e.g. `{"/usr/bin/tunekit-cuda-worker",
  /// "--compile"}`: each compile thread then hands its configs to a worker process of its own,
  /// started at its first config. NVRTC serialises the compiles of one process (with 16 threads
  /// each compile took 17 times as long on the H200 machine), so processes are what scales; a
  /// compiler crash also fails only its config. Empty: NVRTC in this process.
  std::vector<std::string> worker{};
  /// The most a worker may take for one config; past it the worker is killed and the config fails.
  std::chrono::milliseconds worker_deadline{std::chrono::minutes(10)};
  /// Warnings (skipped cache files, NVRTC warnings are not reported); default `default_log_sink()`.
  log_sink log{};
};

/// How a config's compile ended.
enum class compile_status {
  pending,   ///< scheduled by `prepare`, not finished yet
  compiled,  ///< compiled by NVRTC now
  cache_hit, ///< read from the compile cache
  failed,    ///< NVRTC rejected it; `reason` starts with its log
};
[[nodiscard]] std::string_view to_string(compile_status s) noexcept;

/// What compiling one config cost, for the tuning log: compile time apart from measure time.
struct compile_record {
  tunekit::config config;
  compile_status status = compile_status::pending;
  /// NVRTC time, or the time to read and check the cached binary, in milliseconds.
  double compile_ms = 0;
  /// Time launches of this config spent waiting for its compile (the GPU idle), in milliseconds.
  double wait_ms = 0;
  /// Compile cache key (SHA-256 of the inputs).
  std::string key;
  /// `sm_90` (cubin) or `compute_90` (PTX, compiled by the driver at load).
  std::string target;
  std::size_t binary_bytes = 0;
  /// Why it failed (the first lines of the NVRTC log, then what was compiled).
  std::string reason;
};

/// Totals over the configs a program has seen.
struct compile_summary {
  std::size_t configs = 0;
  std::size_t compiled = 0;
  std::size_t cache_hits = 0;
  std::size_t failed = 0;
  std::size_t pending = 0;
  double compile_ms = 0; ///< sum over configs of `compile_record::compile_ms` (CPU time)
  double wait_ms = 0;    ///< sum of `compile_record::wait_ms` (time the launching thread waited)
};

/// NVRTC's version, "13.0".
[[nodiscard]] std::string nvrtc_version();
/// The architectures this NVRTC compiles cubins for (`nvrtcGetSupportedArchs`), e.g. 75 ... 121.
[[nodiscard]] std::vector<int> nvrtc_supported_archs();
/// What to compile for an architecture (`sm_90`, `90`): `sm_90` when NVRTC supports it (a cubin),
/// else `compute_<highest supported below it>` (PTX, compiled by the driver at load). Throws
/// `tunekit::error` for a malformed name or one older than every supported architecture.
[[nodiscard]] std::string compile_target(std::string_view arch);

namespace rtc_detail {

/// A loaded entry point and the limits read from its attributes. Made once per config.
struct loaded_function {
  void *function = nullptr; ///< CUfunction
  /// The driver's `cuLaunchKernel` (type-erased: this header does not include cuda.h), set when
  /// the function is loaded.
  void (*launch_kernel)() = nullptr;
  int max_threads = 0;                            ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  int registers = 0;                              ///< CU_FUNC_ATTRIBUTE_NUM_REGS
  std::size_t static_shared = 0;                  ///< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  std::atomic<std::size_t> max_dynamic_shared{0}; ///< dynamic bytes allowed now (48 KiB default)
  std::size_t optin_dynamic_shared = 0; ///< dynamic bytes the device allows after opting in
  std::string name;                     ///< entry point and config, for messages
};

/// Launches `f`: checks the block against its limits (throwing `tunekit::error` before launching
/// a config that cannot run), raises the dynamic shared memory limit when needed, and checks
/// `cuLaunchKernel`'s result as `check` does.
void launch(loaded_function &f, const dim3 &grid, const dim3 &block, unsigned shared_bytes,
            cudaStream_t stream, void **params);

template <class T>
inline constexpr bool is_stream_v = std::is_same_v<std::decay_t<T>, cudaStream_t>;

/// What a `runtime_kernel` keeps for one config: the config and its loaded entry point (the
/// kernel adds what its launch needs from the config).
struct launch_slot {
  launch_slot(const config &c, loaded_function &f) : cfg(c), function(&f) {}
  launch_slot(const launch_slot &) = delete;
  launch_slot &operator=(const launch_slot &) = delete;
  virtual ~launch_slot() = default;
  config cfg;
  loaded_function *function;
};

/// A `runtime_kernel`'s slots, one per config's contents, found on the launch path by the config's
/// address: a lock-free look at one of `ways` recent addresses, checked against the config's
/// contents; a miss takes a lock (and makes the slot on the config's first launch).
class launch_slots final {
public:
  launch_slots();
  launch_slots(const launch_slots &) = delete;
  launch_slots &operator=(const launch_slots &) = delete;
  ~launch_slots();

  /// The slot of `c`. On a miss (under the lock), `make()` makes it when no slot has `c`'s
  /// contents yet; when `make` throws nothing is kept, so the next launch of `c` fails the same
  /// way.
  template <class Make> const launch_slot &find(const config &c, Make &&make) {
    const std::size_t h = (reinterpret_cast<std::uintptr_t>(&c) >> 4) % ways;
    const address *e = m_recent[h].load(std::memory_order_acquire);
    if (e != nullptr && e->cfg == &c && e->slot->cfg == c) [[likely]] {
      return *e->slot;
    }
    return find_slow(c, h, make);
  }

private:
  struct address {
    const config *cfg;
    const launch_slot *slot;
  };
  static constexpr std::size_t ways = 16;

  const launch_slot &find_slow(const config &c, std::size_t h,
                               const std::function<std::unique_ptr<launch_slot>()> &make);

  struct impl;
  std::unique_ptr<impl> m_impl;
  std::array<std::atomic<const address *>, ways> m_recent{};
};

} // namespace rtc_detail

/// A kernel source compiled per config: NVRTC on a thread pool, the compile cache on disk, one
/// loaded module per config. Thread-safe. Share it (`std::shared_ptr`) between the launchers that
/// use it.
class kernel_program final {
public:
  /// Reads the files under `definition.include_dirs` (for the cache key); throws `tunekit::error`
  /// naming a directory that cannot be read. Compiles nothing yet.
  explicit kernel_program(kernel_definition definition, compile_options options = {});
  /// Drops compiles not started, waits for running ones, unloads the modules.
  ~kernel_program();
  kernel_program(const kernel_program &) = delete;
  kernel_program &operator=(const kernel_program &) = delete;

  [[nodiscard]] const kernel_definition &definition() const noexcept;
  /// SHA-256 of the source, the headers, the files under the include directories and the
  /// options: pass it as `tuner_options::version` so that editing the kernel retunes.
  [[nodiscard]] const std::string &digest() const noexcept;
  /// The compile target (`sm_90`, or `compute_XY` for PTX); reads the device's architecture on
  /// first use when `compile_options::arch` is empty.
  [[nodiscard]] std::string target();

  /// Schedules the compiles of `configs` on the pool, in order, and returns at once. Configs
  /// already compiled or scheduled are skipped. The tuner calls it with each batch it is about
  /// to measure when `tuner_options::preparer` is `preparer(program)`.
  void prepare(std::span<const config> configs);

  /// Compiles `c` now unless it is compiled or compiling (then waits for it), and returns its
  /// record. Throws `tunekit::error` when NVRTC rejects it; the message starts with the first
  /// lines of NVRTC's log. Needs no GPU when `compile_options::arch` is set.
  compile_record compile(const config &c);

  /// The record of `c`, or nothing when it was never prepared nor compiled.
  [[nodiscard]] std::optional<compile_record> record(const config &c) const;
  /// Every config's record, in the order they were first seen.
  [[nodiscard]] std::vector<compile_record> records() const;
  [[nodiscard]] compile_summary summary() const;

  /// The loaded entry point of `c`: compiles (or waits for) it, then loads the module into the
  /// current context once. Throws `tunekit::error` for a compile or load failure (the driver's
  /// failures classified as `check` does). Used by `runtime_kernel`.
  [[nodiscard]] rtc_detail::loaded_function &load(const config &c);

private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

/// The tuner's `candidate_preparer` over `program` (`tuner_options::preparer`): each batch the
/// tuner is about to measure is compiled ahead on the pool, and each candidate's compile time (or
/// the time to read its cached binary) is recorded beside its measured time.
[[nodiscard]] std::shared_ptr<candidate_preparer> preparer(std::shared_ptr<kernel_program> program);

/// Grid, block and dynamic shared memory of one launch.
struct launch_dims {
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  unsigned shared_bytes = 0;
};

/// A launcher `(args..., const config&)` of a `kernel_program`'s entry point. Every argument that
/// is not a `cudaStream_t` is passed to the kernel, in order (its type must match the kernel's
/// parameter); the first `cudaStream_t` argument is the stream it launches on (none: the legacy
/// default stream).
///
/// `Params` is what the launch needs from a config, computed once per config by `params_fn`;
/// `dims_fn(params, args...)` gives the launch dimensions on every call. So a resolved call looks
/// nothing up by name: the config's launch state is found by the config's address (checked
/// against its contents), then `cuLaunchKernel`. Copies share their state.
template <class Params, class... Args> class runtime_kernel final {
public:
  using params_fn = std::function<Params(const config &)>;
  using dims_fn = std::function<launch_dims(const Params &, const Args &...)>;

  runtime_kernel(std::shared_ptr<kernel_program> program, params_fn params, dims_fn dims)
      : m_state(std::make_shared<state>(std::move(program), std::move(params), std::move(dims))) {}

  /// Launches the config's entry point; compiles and loads it first when this is its first launch
  /// (waiting for a compile `prepare` started). Throws `tunekit::error` for a config that does
  /// not compile or cannot launch with its block and shared memory, and for launch errors
  /// (`tunekit::fatal_candidate_error` for those that break the context).
  void operator()(Args... args, const config &c) const {
    const slot &s = m_state->find(c);
    const launch_dims d = m_state->dims(s.params, args...);
    constexpr std::size_t count = (std::size_t{0} + ... + (rtc_detail::is_stream_v<Args> ? 0 : 1));
    std::array<void *, (count > 0 ? count : 1)> ptrs{};
    cudaStream_t stream = nullptr;
    bool have_stream = false;
    std::size_t i = 0;
    (
        [&](auto &a) {
          if constexpr (rtc_detail::is_stream_v<decltype(a)>) {
            if (!have_stream) {
              stream = a;
              have_stream = true;
            }
          } else {
            ptrs[i++] = const_cast<void *>(static_cast<const void *>(&a));
          }
        }(args),
        ...);
    rtc_detail::launch(*s.function, d.grid, d.block, d.shared_bytes, stream, ptrs.data());
  }

  /// Schedules the compiles of `configs` (see `kernel_program::prepare`).
  void prepare(std::span<const config> configs) const { m_state->program->prepare(configs); }
  [[nodiscard]] kernel_program &program() const noexcept { return *m_state->program; }
  /// The compile record of `c` (see `kernel_program::record`).
  [[nodiscard]] std::optional<compile_record> compile_info(const config &c) const {
    return m_state->program->record(c);
  }

private:
  struct slot final : rtc_detail::launch_slot {
    slot(const config &c, rtc_detail::loaded_function &f, Params p)
        : launch_slot(c, f), params(std::move(p)) {}
    Params params;
  };

  struct state {
    state(std::shared_ptr<kernel_program> p, params_fn pf, dims_fn df)
        : program(std::move(p)), params(std::move(pf)), dims(std::move(df)) {}

    const slot &find(const config &c) {
      return static_cast<const slot &>(slots.find(c, [this, &c] {
        // Compile and load before the slot exists, so that a failure leaves nothing behind and
        // the next launch of this config reports the same error.
        rtc_detail::loaded_function &f = program->load(c);
        return std::make_unique<slot>(c, f, params(c));
      }));
    }

    std::shared_ptr<kernel_program> program;
    params_fn params;
    dims_fn dims;
    rtc_detail::launch_slots slots;
  };

  std::shared_ptr<state> m_state;
};

namespace rtc_detail {
// What `make_runtime_kernel` checks of its callables (a static_assert names the one that does not
// fit): `F` callable with `A...`, returning a value (one convertible to `T`).
template <class F, class... A>
concept returns_value =
    std::is_invocable_v<F, A...> && !std::is_void_v<std::invoke_result_t<F, A...>>;
template <class T, class F, class... A>
concept invocable_to =
    std::is_invocable_v<F, A...> && std::is_convertible_v<std::invoke_result_t<F, A...>, T>;
/// What `make_runtime_kernel` returns when a static_assert stopped it (no launcher).
struct not_a_kernel {};
} // namespace rtc_detail

/// Makes a `runtime_kernel` of `program` for arguments `Args...` (given explicitly); `params_fn`
/// (`const config& -> Params`) runs once per config, `dims_fn(const Params&, const Args&...)
/// -> launch_dims` on every call.
///
/// \code
/// auto k = tunekit::cuda::make_runtime_kernel<const float *, float *, int, cudaStream_t>(
///     program, [](const tunekit::config &c) { return int(c.get_int("BLOCK")); },
///     [](const int &block, const float *, float *, int n, cudaStream_t) {
///       return tunekit::cuda::launch_dims{.grid = dim3((n + block - 1) / block),
///                                         .block = dim3(block)};
///     });
/// \endcode
template <class... Args, class ParamsFn, class DimsFn>
[[nodiscard]] auto make_runtime_kernel(std::shared_ptr<kernel_program> program, ParamsFn params_fn,
                                       DimsFn dims_fn) {
  constexpr bool params_fits = rtc_detail::returns_value<ParamsFn &, const config &>;
  static_assert(params_fits, "tunekit: make_runtime_kernel's params_fn must be callable as "
                             "params_fn(const tunekit::config&) and return the launch's Params; "
                             "see docs/runtime_compilation.md");
  if constexpr (params_fits) {
    using params = std::decay_t<std::invoke_result_t<ParamsFn &, const config &>>;
    constexpr bool dims_fits =
        rtc_detail::invocable_to<launch_dims, DimsFn &, const params &, const Args &...>;
    static_assert(dims_fits, "tunekit: make_runtime_kernel's dims_fn must be callable as "
                             "dims_fn(const Params&, const Args&...) and return "
                             "tunekit::cuda::launch_dims, Args being make_runtime_kernel's "
                             "template arguments; see docs/runtime_compilation.md");
    if constexpr (dims_fits) {
      return runtime_kernel<params, Args...>(std::move(program), std::move(params_fn),
                                             std::move(dims_fn));
    } else {
      return rtc_detail::not_a_kernel{};
    }
  } else {
    return rtc_detail::not_a_kernel{};
  }
}

} // namespace tunekit::cuda
