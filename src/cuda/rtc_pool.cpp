#include "rtc_pool.hpp"

#include <algorithm>
#include <utility>

namespace tunekit::cuda::rtc_detail {

compile_pool::compile_pool(unsigned threads)
    : m_size(threads > 0 ? threads : std::max(1U, std::thread::hardware_concurrency())) {}

compile_pool::~compile_pool() {
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

void compile_pool::submit(std::function<void()> job) {
  {
    const std::lock_guard lock(m_mutex);
    m_jobs.push_back(std::move(job));
    // A thread more only while every thread is busy or has a job waiting for it.
    if (m_threads.size() < m_size && m_threads.size() < m_jobs.size() + m_busy) {
      m_threads.emplace_back([this] { work(); });
    }
  }
  m_cv.notify_one();
}

void compile_pool::work() {
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

} // namespace tunekit::cuda::rtc_detail
