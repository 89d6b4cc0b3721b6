#pragma once
// The compile thread pool of a `kernel_program` (rtc_pool.cpp). Internal to the CUDA backend.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tunekit::cuda::rtc_detail {

/// A queue of compile jobs served by threads started as jobs arrive, up to `size()` of them.
/// Destroying the pool drops the jobs not started and joins the threads.
class compile_pool final {
public:
  /// `threads` 0: `std::thread::hardware_concurrency()`.
  explicit compile_pool(unsigned threads);
  compile_pool(const compile_pool &) = delete;
  compile_pool &operator=(const compile_pool &) = delete;
  ~compile_pool();

  /// Queues `job`, which must not throw (a job records its own failure).
  void submit(std::function<void()> job);

  [[nodiscard]] unsigned size() const noexcept { return m_size; }

private:
  void work();

  unsigned m_size;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<std::function<void()>> m_jobs;
  std::vector<std::thread> m_threads;
  std::size_t m_busy = 0;
  bool m_stop = false;
};

} // namespace tunekit::cuda::rtc_detail
