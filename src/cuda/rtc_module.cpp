#include "rtc_module.hpp"

#include "rtc_nvrtc.hpp"

#include <array>
#include <cstring>

namespace tunekit::cuda::rtc_detail {

namespace {

// The entry point's limits, from its attributes and the device's opt-in shared memory.
void read_limits(const driver_api &d, CUfunction fn, loaded_function &f, const std::string &what) {
  int value = 0;
  check_driver(d.func_get_attribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn), what);
  f.max_threads = value;
  check_driver(d.func_get_attribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, fn), what);
  f.registers = value;
  check_driver(d.func_get_attribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn), what);
  f.static_shared = static_cast<std::size_t>(value);
  check_driver(d.func_get_attribute(&value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fn),
               what);
  f.max_dynamic_shared.store(static_cast<std::size_t>(value));
  CUdevice device = 0;
  check_driver(d.ctx_get_device(&device), what);
  check_driver(
      d.device_get_attribute(&value, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device),
      what);
  const auto optin = static_cast<std::size_t>(value);
  f.optin_dynamic_shared = optin > f.static_shared ? optin - f.static_shared : 0;
}

} // namespace

loaded_module::loaded_module(const std::string &binary, const std::string &lowered_name,
                             const std::string &description, const std::string &target) {
  const auto &d = driver();
  use_runtime_context();
  const std::string what = "loading " + description + " (" + target + ")";
  std::string jit_log(8192, '\0');
  std::array<CUjit_option, 2> jit_opts{CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  std::array<void *, 2> jit_vals{jit_log.data(), reinterpret_cast<void *>(jit_log.size())};
  const CUresult r =
      d.module_load_data_ex(&m_module, binary.data(), static_cast<unsigned>(jit_opts.size()),
                            jit_opts.data(), jit_vals.data());
  if (r != CUDA_SUCCESS) {
    jit_log.resize(std::strlen(jit_log.c_str()));
    throw_driver_error(r, jit_log.empty() ? what : what + ": " + first_lines(jit_log, 8));
  }
  m_function.name = description;
  CUfunction fn = nullptr;
  try {
    check_driver(d.module_get_function(&fn, m_module, lowered_name.c_str()), what);
    read_limits(d, fn, m_function, what);
  } catch (...) {
    static_cast<void>(d.module_unload(m_module));
    throw;
  }
  m_function.function = fn;
  // The launch goes through the driver that loaded the function.
  m_function.launch_kernel = reinterpret_cast<void (*)()>(d.launch_kernel);
}

loaded_module::~loaded_module() { static_cast<void>(driver().module_unload(m_module)); }

} // namespace tunekit::cuda::rtc_detail
