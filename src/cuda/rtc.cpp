#include <tunekit/cuda/rtc.hpp>

#include <tunekit/cuda/error.hpp>
#include <tunekit/error.hpp>
#include <tunekit/isolation.hpp>

#include "../core/sha256.hpp"
#include "rtc_driver.hpp"
#include "rtc_nvrtc.hpp"

#include <nlohmann/json.hpp>
#include <nvrtc.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <stdlib.h>

namespace tunekit::cuda {

namespace {

using rtc_detail::check_nvrtc;
using rtc_detail::first_lines;
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::string read_text(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw error("cannot read " + path.string());
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    throw error("cannot read " + path.string());
  }
  return text;
}

// (relative path, SHA-256) of every file under `dir`, sorted.
nlohmann::json hash_tree(const std::filesystem::path &dir) {
  constexpr std::size_t max_files = 20000;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw error("include directory " + dir.string() + " does not exist or is not a directory");
  }
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) {
      files.push_back(it->path());
      if (files.size() > max_files) {
        throw error("include directory " + dir.string() + " holds more than " +
                    std::to_string(max_files) +
                    " files; list it in system_include_dirs (not hashed) instead");
      }
    }
  }
  if (ec) {
    throw error("cannot list include directory " + dir.string() + ": " + ec.message());
  }
  std::sort(files.begin(), files.end());
  nlohmann::json out = nlohmann::json::array();
  for (const auto &f : files) {
    out.push_back(
        {f.lexically_relative(dir).generic_string(), tunekit::detail::sha256_hex(read_text(f))});
  }
  return out;
}

std::string value_text(const value &v) {
  switch (v.type()) {
  case value_type::int64:
    return std::to_string(v.as_int());
  case value_type::float64: {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v.as_double());
    return std::string(buf, r.ptr);
  }
  case value_type::boolean:
    return v.as_bool() ? "1" : "0";
  case value_type::string:
    return v.as_string();
  }
  return {};
}

// A queue of compile jobs served by threads started at the first job.
class compile_pool {
public:
  explicit compile_pool(unsigned threads)
      : m_size(threads > 0 ? threads : std::max(1U, std::thread::hardware_concurrency())) {}
  compile_pool(const compile_pool &) = delete;
  compile_pool &operator=(const compile_pool &) = delete;
  ~compile_pool() {
    {
      const std::lock_guard lock(m_mutex);
      m_stop = true;
      m_jobs.clear();
    }
    m_cv.notify_all();
    for (auto &t : m_threads) {
      t.join();
    }
  }

  void submit(std::function<void()> job) {
    {
      const std::lock_guard lock(m_mutex);
      m_jobs.push_back(std::move(job));
      if (m_threads.size() < m_size && m_threads.size() < m_jobs.size() + m_busy) {
        m_threads.emplace_back([this] { work(); });
      }
    }
    m_cv.notify_one();
  }

  [[nodiscard]] unsigned size() const noexcept { return m_size; }

private:
  void work() {
    std::unique_lock lock(m_mutex);
    for (;;) {
      m_cv.wait(lock, [&] { return m_stop || !m_jobs.empty(); });
      if (m_stop) {
        return;
      }
      auto job = std::move(m_jobs.front());
      m_jobs.pop_front();
      ++m_busy;
      lock.unlock();
      job(); // never throws: a job records its own failure
      lock.lock();
      --m_busy;
    }
  }

  unsigned m_size;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<std::function<void()>> m_jobs;
  std::vector<std::thread> m_threads;
  std::size_t m_busy = 0;
  bool m_stop = false;
};

// The driver's launch function, set when the driver is loaded (before any function is).
std::atomic<decltype(&::cuLaunchKernel)> g_launch{nullptr};

} // namespace

std::string_view to_string(compile_status s) noexcept {
  switch (s) {
  case compile_status::pending:
    return "pending";
  case compile_status::compiled:
    return "compiled";
  case compile_status::cache_hit:
    return "cache_hit";
  case compile_status::failed:
    return "failed";
  }
  return "unknown";
}

kernel_source kernel_source::from_file(const std::filesystem::path &path) {
  return kernel_source{path.filename().string(), read_text(path)};
}

std::vector<definition> config_definitions(const config &c) {
  std::vector<definition> out;
  out.reserve(c.size());
  for (const auto &f : c) {
    out.push_back(definition{f.name, value_text(f.value)});
  }
  return out;
}

std::string nvrtc_version() {
  int major = 0;
  int minor = 0;
  check_nvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<int> nvrtc_supported_archs() {
  int n = 0;
  check_nvrtc(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(n));
  check_nvrtc(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::string compile_target(std::string_view arch) {
  std::string_view digits = arch;
  for (const std::string_view prefix : {"sm_", "compute_"}) {
    if (digits.starts_with(prefix)) {
      digits.remove_prefix(prefix.size());
      break;
    }
  }
  std::string suffix;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    suffix = digits.back();
    digits.remove_suffix(1);
  }
  int number = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size() ||
      number <= 0) {
    throw error("'" + std::string(arch) + "' is not a CUDA architecture (expected e.g. sm_90)");
  }
  const auto archs = nvrtc_supported_archs();
  if (std::find(archs.begin(), archs.end(), number) != archs.end()) {
    return "sm_" + std::to_string(number) + suffix;
  }
  const auto below = std::find_if(archs.rbegin(), archs.rend(), [&](int a) { return a < number; });
  if (below == archs.rend()) {
    std::string list;
    for (const int a : archs) {
      if (!list.empty()) {
        list += ' ';
      }
      list += std::to_string(a);
    }
    throw error("NVRTC " + nvrtc_version() + " cannot compile for " + std::string(arch) +
                " (it supports " + list + ")");
  }
  // Newer than this NVRTC: PTX of the newest architecture it knows, compiled by the driver.
  return "compute_" + std::to_string(*below);
}

namespace {

// A private directory for compile workers' binaries.
std::filesystem::path make_scratch_dir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "tunekit-compile-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw error("compile worker: cannot make a directory " + pattern + ": " + std::strerror(errno));
  }
  return pattern;
}

} // namespace

// ---------------------------------------------------------------------------------------------

struct kernel_program::impl {
  struct build {
    std::string key;
    std::string description;
    std::string name_expression;
    std::vector<std::string> config_options;
    std::mutex mutex;
    std::condition_variable done_cv;
    enum class phase { fresh, queued, running, done } state = phase::fresh;
    compile_status status = compile_status::pending;
    double compile_ms = 0;
    double wait_ms = 0;
    std::string binary;
    std::string lowered_name;
    std::string reason;
    // Loading, under `load_mutex` of the program.
    std::unique_ptr<rtc_detail::loaded_function> loaded;
    CUmodule module = nullptr;
  };

  impl(kernel_definition d, compile_options o)
      : definition(std::move(d)), options(std::move(o)),
        log(options.log ? options.log : default_log_sink()), nvrtc(nvrtc_version()),
        pool(std::in_place, options.threads) {
    if (definition.entry.empty()) {
      throw error("kernel_program of " + definition.source.name + ": no entry point given");
    }
    if (options.use_cache) {
      cache = options.cache ? options.cache
                            : std::make_shared<const kernel_cache>(kernel_cache::from_env(log));
    }
    nlohmann::json headers = nlohmann::json::array();
    for (const auto &h : definition.headers) {
      headers.push_back({h.name, h.text});
    }
    nlohmann::json trees = nlohmann::json::array();
    for (const auto &dir : definition.include_dirs) {
      trees.push_back(hash_tree(dir));
    }
    const nlohmann::json identity = {
        {"schema", "tunekit.kernel_program/1"},
        {"source_name", definition.source.name},
        {"source", definition.source.text},
        {"entry", definition.entry},
        {"headers", headers},
        {"include_files", trees},
        {"options", definition.options},
    };
    digest = tunekit::detail::sha256_hex(identity.dump());
  }

  ~impl() {
    // Stop compiling first: jobs refer to this object.
    pool.reset();
    idle_workers.clear();
    if (!scratch.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(scratch, ec);
    }
    for (auto &[key, b] : by_key) {
      if (b->module != nullptr) {
        static_cast<void>(rtc_detail::driver().module_unload(b->module));
      }
    }
  }

  impl(const impl &) = delete;
  impl &operator=(const impl &) = delete;

  const std::string &resolve_target() {
    const std::lock_guard lock(target_mutex);
    if (target.empty()) {
      std::string arch = options.arch;
      if (arch.empty()) {
        int device = 0;
        int major = 0;
        int minor = 0;
        const std::string what = "compiling " + definition.entry +
                                 ": reading the current device's architecture (set "
                                 "compile_options::arch, e.g. \"sm_90\", to compile without one)";
        check(cudaGetDevice(&device), what);
        check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), what);
        check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), what);
        arch = "sm_" + std::to_string(major) + std::to_string(minor);
      }
      target = compile_target(arch);
    }
    return target;
  }

  // The build of `c`, made on first sight (its key computed here, once per config).
  std::shared_ptr<build> entry(const config &c) {
    const std::string text = c.to_string();
    {
      const std::lock_guard lock(mutex);
      if (auto it = by_config.find(text); it != by_config.end()) {
        return it->second;
      }
    }
    const std::string &tgt = resolve_target();
    auto b = std::make_shared<build>();
    const auto defs = definition.definitions ? definition.definitions(c) : config_definitions(c);
    nlohmann::json defs_json = nlohmann::json::array();
    for (const auto &d : defs) {
      b->config_options.push_back("-D" + d.name + (d.value.empty() ? "" : "=" + d.value));
      defs_json.push_back({d.name, d.value});
    }
    b->name_expression = definition.entry;
    // No arguments for this config: the entry is named as it is (a kernel that is not a
    // template; `saxpy<>` would not parse).
    if (const auto args =
            definition.template_args ? definition.template_args(c) : std::vector<std::string>{};
        !args.empty()) {
      b->name_expression += "<";
      for (std::size_t i = 0; i < args.size(); ++i) {
        if (i > 0) {
          b->name_expression += ", ";
        }
        b->name_expression += args[i];
      }
      b->name_expression += ">";
    }
    b->description = b->name_expression + " [" + text + "]";
    const nlohmann::json key_json = {
        {"schema", "tunekit.kernel_key/1"},
        {"program", digest},
        {"nvrtc", nvrtc},
        {"target", tgt},
        {"definitions", defs_json},
        {"name_expression", b->name_expression},
    };
    b->key = tunekit::detail::sha256_hex(key_json.dump());

    const std::lock_guard lock(mutex);
    if (auto it = by_config.find(text); it != by_config.end()) {
      return it->second; // another thread made it meanwhile
    }
    auto [kit, fresh] = by_key.try_emplace(b->key, b);
    order.emplace_back(c, kit->second);
    by_config.emplace(text, kit->second);
    return kit->second;
  }

  std::vector<std::string> nvrtc_options(const build &b) const {
    std::vector<std::string> o;
    o.push_back("--gpu-architecture=" + target); // sm_XY: a cubin; compute_XY: PTX
    for (const auto &dir : definition.include_dirs) {
      o.push_back("--include-path=" + dir.string());
    }
    for (const auto &dir : definition.system_include_dirs) {
      o.push_back("--include-path=" + dir.string());
    }
    o.insert(o.end(), definition.options.begin(), definition.options.end());
    o.insert(o.end(), b.config_options.begin(), b.config_options.end());
    return o;
  }

  // NVRTC on `b`, in this process or in a compile worker (one per compile thread at a time).
  rtc_detail::nvrtc_output compile(const build &b) {
    const bool cubin = target.starts_with("sm_");
    if (options.worker.empty()) {
      return rtc_detail::run_nvrtc(definition, nvrtc_options(b), b.name_expression, cubin,
                                   b.description, target);
    }
    std::unique_ptr<worker_process> w;
    std::filesystem::path dir;
    {
      const std::lock_guard lock(workers_mutex);
      if (!idle_workers.empty()) {
        w = std::move(idle_workers.back());
        idle_workers.pop_back();
      }
      if (scratch.empty()) {
        scratch = make_scratch_dir();
      }
      dir = scratch;
    }
    if (!w) {
      w = std::make_unique<worker_process>(options.worker);
    }
    struct give_back {
      impl &self;
      std::unique_ptr<worker_process> &worker;
      give_back(impl &s, std::unique_ptr<worker_process> &w) : self(s), worker(w) {}
      give_back(const give_back &) = delete;
      give_back &operator=(const give_back &) = delete;
      ~give_back() {
        const std::lock_guard lock(self.workers_mutex);
        self.idle_workers.push_back(std::move(worker));
      }
    } back(*this, w);
    return rtc_detail::compile_in_worker(*w, definition, nvrtc_options(b), b.name_expression, cubin,
                                         b.description, target, dir / (b.key + ".bin"),
                                         options.worker_deadline);
  }

  // Compiles `b` (or reads it from the cache) on this thread; records the outcome. Never throws.
  void work(build &b) {
    const auto t0 = clock_type::now();
    std::string binary;
    std::string lowered;
    std::string reason;
    compile_status status = compile_status::failed;
    try {
      if (cache) {
        if (auto hit = cache->load(b.key, target)) {
          binary = std::move(hit->binary);
          lowered = std::move(hit->lowered_name);
          status = compile_status::cache_hit;
        }
      }
      if (status != compile_status::cache_hit) {
        auto out = compile(b);
        binary = std::move(out.binary);
        lowered = std::move(out.lowered_name);
        status = compile_status::compiled;
        if (cache) {
          try {
            cache->store(
                kernel_binary{b.key, target, lowered, b.description, binary, ms_since(t0), nvrtc});
          } catch (const std::exception &e) {
            log(log_level::warning, std::string("compile cache: ") + e.what());
          }
        }
      }
    } catch (const std::exception &e) {
      status = compile_status::failed;
      reason = e.what();
    }
    const double elapsed = ms_since(t0);
    {
      const std::lock_guard lock(b.mutex);
      b.binary = std::move(binary);
      b.lowered_name = std::move(lowered);
      b.reason = std::move(reason);
      b.status = status;
      b.compile_ms = elapsed;
      b.state = build::phase::done;
    }
    b.done_cv.notify_all();
  }

  // Compiles `b` now or waits for the thread compiling it; throws when it failed.
  void finish(build &b) {
    std::unique_lock lock(b.mutex);
    if (b.state != build::phase::done) {
      const auto t0 = clock_type::now();
      if (b.state == build::phase::running) {
        b.done_cv.wait(lock, [&] { return b.state == build::phase::done; });
      } else {
        b.state = build::phase::running; // claimed: a queued job finds it taken
        lock.unlock();
        work(b);
        lock.lock();
      }
      b.wait_ms += ms_since(t0);
    }
    if (b.status == compile_status::failed) {
      throw error(b.reason);
    }
  }

  compile_record record_of(const config &c, build &b) const {
    const std::lock_guard lock(b.mutex);
    compile_record r;
    r.config = c;
    r.status = b.state == build::phase::done ? b.status : compile_status::pending;
    r.compile_ms = b.compile_ms;
    r.wait_ms = b.wait_ms;
    r.key = b.key;
    r.target = target;
    r.binary_bytes = b.binary.size();
    r.reason = b.reason;
    return r;
  }

  rtc_detail::loaded_function &load(build &b) {
    const std::lock_guard lock(load_mutex);
    if (b.loaded) {
      return *b.loaded;
    }
    const auto &d = rtc_detail::driver();
    g_launch.store(d.launch_kernel, std::memory_order_relaxed);
    rtc_detail::use_runtime_context();
    const std::string what = "loading " + b.description + " (" + target + ")";
    std::string jit_log(8192, '\0');
    std::array<CUjit_option, 2> jit_opts{CU_JIT_ERROR_LOG_BUFFER,
                                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    std::array<void *, 2> jit_vals{jit_log.data(), reinterpret_cast<void *>(jit_log.size())};
    CUmodule module = nullptr;
    const CUresult r =
        d.module_load_data_ex(&module, b.binary.data(), static_cast<unsigned>(jit_opts.size()),
                              jit_opts.data(), jit_vals.data());
    if (r != CUDA_SUCCESS) {
      jit_log.resize(std::strlen(jit_log.c_str()));
      rtc_detail::throw_driver_error(r, jit_log.empty() ? what
                                                        : what + ": " + first_lines(jit_log, 8));
    }
    auto f = std::make_unique<rtc_detail::loaded_function>();
    f->name = b.description;
    CUfunction fn = nullptr;
    try {
      rtc_detail::check_driver(d.module_get_function(&fn, module, b.lowered_name.c_str()), what);
      int value = 0;
      rtc_detail::check_driver(
          d.func_get_attribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn), what);
      f->max_threads = value;
      rtc_detail::check_driver(d.func_get_attribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, fn), what);
      f->registers = value;
      rtc_detail::check_driver(
          d.func_get_attribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn), what);
      f->static_shared = static_cast<std::size_t>(value);
      rtc_detail::check_driver(
          d.func_get_attribute(&value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fn), what);
      f->max_dynamic_shared.store(static_cast<std::size_t>(value));
      CUdevice device = 0;
      rtc_detail::check_driver(d.ctx_get_device(&device), what);
      rtc_detail::check_driver(
          d.device_get_attribute(&value, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                 device),
          what);
      const auto optin = static_cast<std::size_t>(value);
      f->optin_dynamic_shared = optin > f->static_shared ? optin - f->static_shared : 0;
    } catch (...) {
      static_cast<void>(d.module_unload(module));
      throw;
    }
    f->function = fn;
    b.module = module;
    b.loaded = std::move(f);
    return *b.loaded;
  }

  kernel_definition definition;
  compile_options options;
  log_sink log;
  std::string nvrtc;
  std::shared_ptr<const kernel_cache> cache;
  std::string digest;
  std::mutex target_mutex;
  std::string target;
  mutable std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<build>> by_config;
  std::unordered_map<std::string, std::shared_ptr<build>> by_key;
  std::vector<std::pair<config, std::shared_ptr<build>>> order;
  std::mutex load_mutex;
  // Compile workers (compile_options::worker) not in use, and the directory where they leave
  // binaries (made at the first worker compile, removed with the program).
  std::mutex workers_mutex;
  std::vector<std::unique_ptr<worker_process>> idle_workers;
  std::filesystem::path scratch;
  // Last: destroyed (joined) first, while everything its jobs use still exists.
  std::optional<compile_pool> pool;
};

kernel_program::kernel_program(kernel_definition definition, compile_options options)
    : m_impl(std::make_unique<impl>(std::move(definition), std::move(options))) {}

kernel_program::~kernel_program() = default;

const kernel_definition &kernel_program::definition() const noexcept { return m_impl->definition; }

const std::string &kernel_program::digest() const noexcept { return m_impl->digest; }

std::string kernel_program::target() { return m_impl->resolve_target(); }

void kernel_program::prepare(std::span<const config> configs) {
  impl &s = *m_impl;
  for (const auto &c : configs) {
    auto b = s.entry(c);
    {
      const std::lock_guard lock(b->mutex);
      if (b->state != impl::build::phase::fresh) {
        continue;
      }
      b->state = impl::build::phase::queued;
    }
    s.pool->submit([&s, b] {
      {
        const std::lock_guard lock(b->mutex);
        if (b->state != impl::build::phase::queued) {
          return; // a launch claimed it meanwhile
        }
        b->state = impl::build::phase::running;
      }
      s.work(*b);
    });
  }
}

compile_record kernel_program::compile(const config &c) {
  auto b = m_impl->entry(c);
  m_impl->finish(*b);
  return m_impl->record_of(c, *b);
}

std::optional<compile_record> kernel_program::record(const config &c) const {
  std::shared_ptr<impl::build> b;
  {
    const std::lock_guard lock(m_impl->mutex);
    const auto it = m_impl->by_config.find(c.to_string());
    if (it == m_impl->by_config.end()) {
      return std::nullopt;
    }
    b = it->second;
  }
  return m_impl->record_of(c, *b);
}

std::vector<compile_record> kernel_program::records() const {
  std::vector<std::pair<config, std::shared_ptr<impl::build>>> order;
  {
    const std::lock_guard lock(m_impl->mutex);
    order = m_impl->order;
  }
  std::vector<compile_record> out;
  out.reserve(order.size());
  for (const auto &[c, b] : order) {
    out.push_back(m_impl->record_of(c, *b));
  }
  return out;
}

compile_summary kernel_program::summary() const {
  compile_summary s;
  for (const auto &r : records()) {
    ++s.configs;
    switch (r.status) {
    case compile_status::pending:
      ++s.pending;
      break;
    case compile_status::compiled:
      ++s.compiled;
      break;
    case compile_status::cache_hit:
      ++s.cache_hits;
      break;
    case compile_status::failed:
      ++s.failed;
      break;
    }
    s.compile_ms += r.compile_ms;
    s.wait_ms += r.wait_ms;
  }
  return s;
}

rtc_detail::loaded_function &kernel_program::load(const config &c) {
  auto b = m_impl->entry(c);
  m_impl->finish(*b);
  return m_impl->load(*b);
}

namespace rtc_detail {

namespace {

[[gnu::noinline]] void raise_shared_limit(loaded_function &f, unsigned shared_bytes) {
  if (shared_bytes > f.optin_dynamic_shared) {
    throw error(f.name + ": " + std::to_string(shared_bytes) +
                " bytes of dynamic shared memory cannot launch (the device allows " +
                std::to_string(f.optin_dynamic_shared) + " beside its " +
                std::to_string(f.static_shared) + " static bytes)");
  }
  check_driver(driver().func_set_attribute(static_cast<CUfunction>(f.function),
                                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           static_cast<int>(shared_bytes)),
               "raising the dynamic shared memory limit of " + f.name);
  f.max_dynamic_shared.store(shared_bytes);
}

[[noreturn, gnu::noinline]] void too_many_threads(const loaded_function &f, std::size_t threads) {
  throw error(f.name + ": a block of " + std::to_string(threads) + " threads cannot launch: with " +
              std::to_string(f.registers) + " registers per thread the function allows at most " +
              std::to_string(f.max_threads));
}

} // namespace

void launch(loaded_function &f, const dim3 &grid, const dim3 &block, unsigned shared_bytes,
            cudaStream_t stream, void **params) {
  const std::size_t threads = std::size_t{block.x} * block.y * block.z;
  if (threads > static_cast<std::size_t>(f.max_threads)) [[unlikely]] {
    too_many_threads(f, threads);
  }
  if (shared_bytes > f.max_dynamic_shared.load(std::memory_order_relaxed)) [[unlikely]] {
    raise_shared_limit(f, shared_bytes);
  }
  const auto launch_kernel = g_launch.load(std::memory_order_relaxed);
  CUresult r = launch_kernel(static_cast<CUfunction>(f.function), grid.x, grid.y, grid.z, block.x,
                             block.y, block.z, shared_bytes, stream, params, nullptr);
  if (r == CUDA_ERROR_INVALID_CONTEXT) [[unlikely]] {
    // A thread that has not used CUDA yet: make the runtime's context current and retry once.
    use_runtime_context();
    r = launch_kernel(static_cast<CUfunction>(f.function), grid.x, grid.y, grid.z, block.x, block.y,
                      block.z, shared_bytes, stream, params, nullptr);
  }
  if (r != CUDA_SUCCESS) [[unlikely]] {
    throw_driver_error(r, "launching " + f.name);
  }
}

} // namespace rtc_detail

namespace {

class program_preparer final : public candidate_preparer {
public:
  explicit program_preparer(std::shared_ptr<kernel_program> program)
      : m_program(std::move(program)) {}
  void prepare(std::span<const config> configs) override { m_program->prepare(configs); }
  [[nodiscard]] std::optional<double> prepare_ms(const config &c) const override {
    const auto r = m_program->record(c);
    if (!r || r->status == compile_status::pending) {
      return std::nullopt;
    }
    return r->compile_ms;
  }

private:
  std::shared_ptr<kernel_program> m_program;
};

} // namespace

std::shared_ptr<candidate_preparer> preparer(std::shared_ptr<kernel_program> program) {
  if (!program) {
    throw error("tunekit::cuda::preparer: no kernel program");
  }
  return std::make_shared<program_preparer>(std::move(program));
}

} // namespace tunekit::cuda
