// A kernel program's public face: its identity, prepare and compile, records and loading, over
// the builds of rtc_program.cpp.

#include <tunekit/cuda/rtc.hpp>

#include "rtc_hash.hpp"
#include "rtc_program.hpp"

namespace tunekit::cuda {

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
  return kernel_source{path.filename().string(), rtc_detail::read_text(path)};
}

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

} // namespace tunekit::cuda
