#pragma once
/// \file isolation.hpp
/// Isolated measurement: candidates are timed by a worker process that tunekit starts, and starts
/// again after a candidate crashed it or ran past its deadline. A candidate that poisons its
/// process (a CUDA illegal address) or never finishes then fails alone, with the reason (the
/// signal, the worker's error text, the deadline), and the search goes on.
///
/// The worker is a separate program (after CUDA is initialised a forked child cannot use CUDA,
/// and the parent's device pointers mean nothing in another process), so it owns its data. It
/// reads one request per line on stdin and writes one reply per line on stdout:
///
///   request: {"config": {"BLOCK": 256, ...}, "key": [4096, "float"],
///             "policy": {"warmup": 5, "runs": 10, "statistic": "mean",
///                        "early_stop_factor": 2, "early_stop_after": 2},  (both only when on)
///             "best_ms": 1.5 or null,
///             "request": <what `isolated_options::request` made, or null>}
///   reply:   {"times_ms": [0.41, 0.40, ...]}           one time per timed run, milliseconds
///        or  {"error": "text", "fatal": true|false}    the candidate failed; fatal: the worker
///                                                      exits after this reply (its state is
///                                                      broken, e.g. a poisoned CUDA context)
///
/// The worker does the warmup and timed runs itself with the policy it is sent. stderr is free
/// for diagnostics: its last lines go into the reason when the worker dies.

#include <tunekit/measure.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tunekit {

namespace detail {
class child_process;
} // namespace detail

/// How an `isolated_measurer` runs its worker.
struct isolated_options {
  /// The worker program and its arguments.
  std::vector<std::string> command;
  /// The most one candidate (its warmup and timed runs, and the worker's start) may take; past
  /// it the worker is killed and the candidate scores +inf. Must be positive.
  std::chrono::milliseconds deadline{std::chrono::seconds(30)};
  /// What the worker is told about the candidate beside its config and the policy: JSON text (a
  /// kernel's description, the problem size from the key). Empty function: null.
  std::function<std::string(const candidate_info &)> request{};
  /// Lines of the worker's stderr kept for the reason when it dies.
  std::size_t stderr_lines = 8;
  /// Recorded in cache entries as the measurer's name.
  std::string name = "isolated";
};

/// A measurer that times every candidate in a worker process (protocol above). A candidate the
/// worker fails, crashes on, or takes too long for throws `tunekit::error` with the reason, so the
/// tuner records it as failed (+inf) and measures the next one with a new worker. The tuned
/// function's `run` is never called while tuning: the worker runs the candidate (so a correctness
/// check in the tuning process has no output to read; the worker checks and replies an error).
/// Thread-safe (requests are serialised).
class isolated_measurer final : public measurer {
public:
  /// Throws `tunekit::error` for an empty command or a deadline that is not positive.
  explicit isolated_measurer(isolated_options options);
  ~isolated_measurer() override;
  [[nodiscard]] std::vector<double> measure(const candidate_info &info,
                                            detail::function_ref<void()> run,
                                            const measure_policy &policy) override;
  [[nodiscard]] std::string name() const override { return m_options.name; }

  /// Workers started so far (1 + restarts).
  [[nodiscard]] std::size_t worker_starts() const;
  /// The running worker's process id, or 0.
  [[nodiscard]] int worker_pid() const;
  /// Ends the worker now (the next candidate starts a new one).
  void stop_worker();

private:
  isolated_options m_options;
  mutable std::mutex m_mutex;
  std::unique_ptr<detail::child_process> m_worker;
};

} // namespace tunekit
