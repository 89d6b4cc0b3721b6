#include "queue.hpp"

#include <nlohmann/json.hpp>

#include <utility>

namespace tunekit::serve::detail {

response text_response(int status, std::string body) {
  return response{status, std::move(body), "text/plain"};
}

std::future<response> request_queue::submit(std::shared_ptr<job> j) {
  auto answer = j->answer.get_future();
  std::string refused;
  {
    const std::lock_guard lock(m_mutex);
    if (!m_accepting) {
      refused = "tunekit::serve: the worker has stopped";
    } else if (!j->stop && m_queue.size() >= m_max_queued) {
      refused = "tunekit::serve: " + std::to_string(m_queue.size()) +
                " requests are already queued (options::max_queued)";
      ++m_rejected;
      m_last_error = refused;
    } else {
      m_queue.push_back(j);
    }
  }
  if (!refused.empty()) {
    j->answer.set_value(text_response(503, refused));
  } else {
    m_wake.notify_one();
  }
  return answer;
}

std::shared_ptr<job> request_queue::next(std::chrono::steady_clock::time_point until) {
  std::unique_lock lock(m_mutex);
  m_wake.wait_until(lock, until, [this] { return !m_queue.empty(); });
  if (m_queue.empty()) {
    return nullptr;
  }
  auto j = std::move(m_queue.front());
  m_queue.pop_front();
  return j;
}

void request_queue::push_front(std::shared_ptr<job> j) {
  const std::lock_guard lock(m_mutex);
  m_queue.push_front(std::move(j));
}

void request_queue::finish_request(std::uint64_t sequence, const response &r, bool failed) {
  const std::lock_guard lock(m_mutex);
  m_served = sequence + 1;
  if (failed) {
    ++m_failed;
    m_last_error = r.body;
  }
}

void request_queue::note_rejected(const std::string &reason) {
  const std::lock_guard lock(m_mutex);
  ++m_rejected;
  m_last_error = reason;
}

void request_queue::note_error(const std::string &what) {
  const std::lock_guard lock(m_mutex);
  m_last_error = what;
}

void request_queue::set_state(std::string state) {
  const std::lock_guard lock(m_mutex);
  m_state = std::move(state);
}

std::deque<std::shared_ptr<job>> request_queue::close(std::string state) {
  std::deque<std::shared_ptr<job>> left;
  const std::lock_guard lock(m_mutex);
  m_accepting = false;
  m_state = std::move(state);
  left.swap(m_queue);
  return left;
}

std::string request_queue::health(int ranks) const {
  nlohmann::json j;
  const std::lock_guard lock(m_mutex);
  j["state"] = m_state;
  j["ranks"] = ranks;
  j["requests_served"] = m_served;
  j["requests_failed"] = m_failed;
  j["requests_rejected"] = m_rejected;
  j["queued"] = m_queue.size();
  j["last_error"] = m_last_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(m_last_error);
  return j.dump();
}

} // namespace tunekit::serve::detail
