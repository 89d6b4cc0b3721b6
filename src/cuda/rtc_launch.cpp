// The launch of a runtime-compiled kernel with its limit checks, and `runtime_kernel`'s slots
// behind their lock-free look-up.

#include <tunekit/cuda/rtc.hpp>
#include <tunekit/error.hpp>

#include "rtc_driver.hpp"

#include <map>
#include <mutex>
#include <unordered_map>

namespace tunekit::cuda::rtc_detail {

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
  const auto launch_kernel = reinterpret_cast<decltype(&::cuLaunchKernel)>(f.launch_kernel);
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

struct launch_slots::impl {
  std::mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<launch_slot>> slots;
  // Kept alive as long as the slots: a launching thread may hold one.
  std::map<std::pair<const config *, const launch_slot *>, std::unique_ptr<address>> addresses;
};

launch_slots::launch_slots() : m_impl(std::make_unique<impl>()) {}

launch_slots::~launch_slots() = default;

const launch_slot &
launch_slots::find_slow(const config &c, std::size_t h,
                        const std::function<std::unique_ptr<launch_slot>()> &make) {
  const std::lock_guard lock(m_impl->mutex);
  const std::string text = c.to_string();
  auto it = m_impl->slots.find(text);
  if (it == m_impl->slots.end()) {
    it = m_impl->slots.emplace(text, make()).first;
  }
  // One entry per (address, slot): bounded even when a caller builds its config anew on the stack
  // for every call.
  auto &e = m_impl->addresses[{&c, it->second.get()}];
  if (!e) {
    e = std::make_unique<address>(address{&c, it->second.get()});
  }
  m_recent[h].store(e.get(), std::memory_order_release);
  return *it->second;
}

} // namespace tunekit::cuda::rtc_detail
