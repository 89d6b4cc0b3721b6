#pragma once
// Fixture of the tests that need a CUDA device: skips when none is visible, and gives each test its
// own stream.

#include <tunekit/cuda/device.hpp>
#include <tunekit/cuda/error.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace tunekit::cuda::test {

class gpu_test : public ::testing::Test {
protected:
  void SetUp() override {
    if (!device_available()) {
      GTEST_SKIP() << "no CUDA device visible";
    }
    TUNEKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (m_stream != nullptr) {
      static_cast<void>(cudaStreamSynchronize(m_stream));
      static_cast<void>(cudaStreamDestroy(m_stream));
    }
  }
  [[nodiscard]] cudaStream_t stream() const noexcept { return m_stream; }

private:
  cudaStream_t m_stream = nullptr;
};

/// A device allocation of `n` floats, freed with the object.
class device_buffer {
public:
  explicit device_buffer(std::size_t n) : m_n(n) {
    TUNEKIT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&m_ptr), n * sizeof(float)));
  }
  device_buffer(const device_buffer &) = delete;
  device_buffer &operator=(const device_buffer &) = delete;
  ~device_buffer() { static_cast<void>(cudaFree(m_ptr)); }
  [[nodiscard]] float *get() const noexcept { return m_ptr; }
  [[nodiscard]] std::size_t size() const noexcept { return m_n; }

private:
  float *m_ptr = nullptr;
  std::size_t m_n;
};

} // namespace tunekit::cuda::test
