#include "rtc_program.hpp"

#include <tunekit/error.hpp>

#include "rtc_hash.hpp"
#include "rtc_target.hpp"
#include "rtc_values.hpp"

#include <chrono>

namespace tunekit::cuda {

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// The compiler of `compile_options::worker`: NVRTC in worker processes, or in this one.
std::unique_ptr<rtc_detail::compiler> make_compiler(const kernel_definition &d,
                                                    const compile_options &o) {
  rtc_detail::nvrtc_source source{d.source.name, d.source.text, {}};
  for (const auto &h : d.headers) {
    source.headers.emplace_back(h.name, h.text);
  }
  if (o.worker.empty()) {
    return rtc_detail::make_in_process_compiler(std::move(source));
  }
  return rtc_detail::make_worker_compiler(std::move(source), o.worker, o.worker_deadline);
}

} // namespace

kernel_program::impl::impl(kernel_definition d, compile_options o)
    : definition(std::move(d)), options(std::move(o)),
      log(options.log ? options.log : default_log_sink()), nvrtc(nvrtc_version()),
      compiler(make_compiler(definition, options)), pool(std::in_place, options.threads) {
  if (definition.entry.empty()) {
    throw error("kernel_program of " + definition.source.name + ": no entry point given");
  }
  if (options.use_cache) {
    cache = options.cache ? options.cache
                          : std::make_shared<const kernel_cache>(kernel_cache::from_env(log));
  }
  digest = rtc_detail::program_digest(definition);
}

kernel_program::impl::~impl() {
  // Stop compiling first: jobs refer to this object.
  pool.reset();
  compiler.reset();
}

const std::string &kernel_program::impl::resolve_target() {
  const std::lock_guard lock(target_mutex);
  if (target.empty()) {
    target = compile_target(options.arch.empty() ? rtc_detail::current_device_arch(definition.entry)
                                                 : options.arch);
  }
  return target;
}

std::shared_ptr<kernel_program::impl::build> kernel_program::impl::entry(const config &c) {
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
  b->job.name_expression = rtc_detail::name_expression(
      definition.entry,
      definition.template_args ? definition.template_args(c) : std::vector<std::string>{});
  b->job.options = rtc_detail::nvrtc_options(definition, tgt, rtc_detail::define_options(defs));
  b->job.cubin = tgt.starts_with("sm_");
  b->job.description = b->job.name_expression + " [" + text + "]";
  b->job.target = tgt;
  b->key = rtc_detail::config_key(digest, nvrtc, tgt, defs, b->job.name_expression);

  const std::lock_guard lock(mutex);
  if (auto it = by_config.find(text); it != by_config.end()) {
    return it->second; // another thread made it meanwhile
  }
  auto [kit, fresh] = by_key.try_emplace(b->key, b);
  order.emplace_back(c, kit->second);
  by_config.emplace(text, kit->second);
  return kit->second;
}

void kernel_program::impl::work(build &b) {
  const auto t0 = clock_type::now();
  std::string binary;
  std::string lowered;
  std::string reason;
  compile_status status = compile_status::failed;
  try {
    if (cache) {
      if (auto hit = cache->load(b.key, target); hit.found()) {
        binary = std::move(hit.value->binary);
        lowered = std::move(hit.value->lowered_name);
        status = compile_status::cache_hit;
      }
    }
    if (status != compile_status::cache_hit) {
      auto out = compiler->compile(b.job);
      binary = std::move(out.binary);
      lowered = std::move(out.lowered_name);
      status = compile_status::compiled;
      if (cache) {
        try {
          cache->store(kernel_binary{b.key, target, lowered, b.job.description, binary,
                                     ms_since(t0), nvrtc});
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

void kernel_program::impl::finish(build &b) {
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

compile_record kernel_program::impl::record_of(const config &c, build &b) const {
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

rtc_detail::loaded_function &kernel_program::impl::load(build &b) {
  const std::lock_guard lock(load_mutex);
  if (!b.loaded) {
    b.loaded = std::make_unique<rtc_detail::loaded_module>(b.binary, b.lowered_name,
                                                           b.job.description, target);
  }
  return b.loaded->function();
}

} // namespace tunekit::cuda
