#pragma once
// An owning device allocation of `n` elements, freed with the object.

#include <tunekit/cuda/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

namespace example {

template <class T> class device_array {
public:
  explicit device_array(std::size_t n) : m_size(n) {
    void *p = nullptr;
    tunekit::cuda::check(cudaMalloc(&p, n * sizeof(T)),
                         "allocating " + std::to_string(n * sizeof(T)) + " bytes");
    m_ptr = static_cast<T *>(p);
  }
  device_array(const device_array &) = delete;
  device_array &operator=(const device_array &) = delete;
  device_array(device_array &&o) noexcept
      : m_ptr(std::exchange(o.m_ptr, nullptr)), m_size(std::exchange(o.m_size, 0)) {}
  device_array &operator=(device_array &&) = delete;
  ~device_array() { static_cast<void>(cudaFree(m_ptr)); }

  [[nodiscard]] T *get() const noexcept { return m_ptr; }
  [[nodiscard]] std::size_t size() const noexcept { return m_size; }
  [[nodiscard]] std::size_t bytes() const noexcept { return m_size * sizeof(T); }

private:
  T *m_ptr = nullptr;
  std::size_t m_size = 0;
};

/// A stream created non-blocking and destroyed with the object.
class stream {
public:
  stream() { TUNEKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking)); }
  stream(const stream &) = delete;
  stream &operator=(const stream &) = delete;
  ~stream() { static_cast<void>(cudaStreamDestroy(m_stream)); }
  [[nodiscard]] cudaStream_t get() const noexcept { return m_stream; }

private:
  cudaStream_t m_stream = nullptr;
};

} // namespace example
