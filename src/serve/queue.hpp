#pragma once
// Rank 0's queue (private to tunekit::serve): requests from the HTTP threads wait here for their
// turn on the serving thread, beside the counters that `GET /health` reports.

#include <tunekit/serve.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>

namespace tunekit::serve::detail {

/// A request (or a stop) waiting on rank 0 for its turn.
struct job {
  bool stop = false;
  stop_reason reason = stop_reason::stop_request;
  std::string payload; // path then body
  std::size_t path_bytes = 0;
  std::promise<response> answer;
};

/// An answer with a plain-text body.
[[nodiscard]] response text_response(int status, std::string body);

/// Thread-safe: HTTP threads submit, the serving thread takes jobs and records outcomes.
class request_queue {
public:
  explicit request_queue(std::size_t max_queued) : m_max_queued(max_queued) {}

  /// Queues a job; answers it at once (503) when the worker no longer accepts or the queue is
  /// full.
  [[nodiscard]] std::future<response> submit(std::shared_ptr<job> j);
  /// The next job, or nullptr when none arrived before `until`.
  [[nodiscard]] std::shared_ptr<job> next(std::chrono::steady_clock::time_point until);
  /// Puts a job taken too late back at the front, for `close` to answer.
  void push_front(std::shared_ptr<job> j);

  /// Request `sequence` is done; `failed`: its handler threw on some rank (`r` says where).
  void finish_request(std::uint64_t sequence, const response &r, bool failed);
  /// A request refused before it reached the ranks (malformed, too large).
  void note_rejected(const std::string &reason);
  void note_error(const std::string &what);
  void set_state(std::string state);

  /// Stops accepting, sets the final state and hands back what is still queued.
  [[nodiscard]] std::deque<std::shared_ptr<job>> close(std::string state);

  /// `GET /health`'s JSON.
  [[nodiscard]] std::string health(int ranks) const;

private:
  std::size_t m_max_queued;
  mutable std::mutex m_mutex; // guards everything below
  std::condition_variable m_wake;
  std::deque<std::shared_ptr<job>> m_queue;
  bool m_accepting = true;
  std::string m_state = "starting";
  std::uint64_t m_served = 0;
  std::uint64_t m_failed = 0;
  std::uint64_t m_rejected = 0;
  std::string m_last_error;
};

} // namespace tunekit::serve::detail
