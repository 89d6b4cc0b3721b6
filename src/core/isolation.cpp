// Isolated measurement: the isolated measurer's side of the worker protocol (isolation.hpp) over
// the core's child process (os.hpp).

#include "json_io.hpp"
#include "os.hpp"

#include <tunekit/error.hpp>
#include <tunekit/isolation.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

namespace tunekit {

namespace {

std::string shorten(std::string_view s, std::size_t n = 120) {
  std::string out(s.substr(0, n));
  if (s.size() > n) {
    out += "...";
  }
  return out;
}

} // namespace

// --- isolated_measurer --------------------------------------------------------------------------

isolated_measurer::isolated_measurer(isolated_options options)
    : m_options(std::move(options)),
      m_worker(std::make_unique<detail::child_process>(m_options.command, m_options.stderr_lines)) {
  if (m_options.deadline.count() <= 0) {
    throw error("isolated_measurer: the deadline must be positive, not " +
                std::to_string(m_options.deadline.count()) + " ms");
  }
}

isolated_measurer::~isolated_measurer() = default;

std::vector<double> isolated_measurer::measure(const candidate_info &info,
                                               detail::function_ref<void()> /*run*/,
                                               const measure_policy &policy) {
  using detail::json;
  json req{{"config", detail::to_json(info.config)},
           {"key", detail::to_json(info.key)},
           {"policy", detail::to_json(policy)},
           {"best_ms", std::isfinite(info.best_ms) ? json(info.best_ms) : json(nullptr)},
           {"request", nullptr}};
  if (m_options.request) {
    const std::string text = m_options.request(info);
    json extra = json::parse(text, nullptr, false);
    if (extra.is_discarded()) {
      throw error("isolated_options::request gave text that is not JSON: '" + shorten(text) + "'");
    }
    req["request"] = std::move(extra);
  }
  const std::string line = req.dump(-1, ' ', false, json::error_handler_t::replace);

  const std::lock_guard lock(m_mutex);
  const std::string reply_text = m_worker->request(line, m_options.deadline);
  auto broken = [&](const std::string &what) {
    m_worker->stop(std::chrono::milliseconds(0)); // out of step with the protocol: start afresh
    return error("the worker's reply " + what + ": '" + shorten(reply_text) + "'");
  };
  const json reply = json::parse(reply_text, nullptr, false);
  if (reply.is_discarded() || !reply.is_object()) {
    throw broken("is not a JSON object");
  }
  if (const auto it = reply.find("error"); it != reply.end()) {
    if (!it->is_string()) {
      throw broken("has an error that is not a string");
    }
    const auto fatal = reply.find("fatal");
    if (fatal != reply.end() && fatal->is_boolean() && fatal->get<bool>()) {
      m_worker->stop(std::chrono::seconds(5)); // it exits after this reply
    }
    throw error(it->get<std::string>());
  }
  const auto times = reply.find("times_ms");
  if (times == reply.end() || !times->is_array() || times->empty()) {
    throw broken("has neither \"times_ms\" (a non-empty array) nor \"error\"");
  }
  std::vector<double> samples;
  samples.reserve(times->size());
  for (const auto &t : *times) {
    if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() < 0) {
      throw broken("has a time that is not a finite number >= 0");
    }
    samples.push_back(t.get<double>());
  }
  if (samples.size() > static_cast<std::size_t>(std::max(policy.runs, 1))) {
    throw broken("has " + std::to_string(samples.size()) + " times for " +
                 std::to_string(policy.runs) + " runs");
  }
  return samples;
}

std::size_t isolated_measurer::worker_starts() const {
  const std::lock_guard lock(m_mutex);
  return m_worker->starts();
}

int isolated_measurer::worker_pid() const {
  const std::lock_guard lock(m_mutex);
  return m_worker->pid();
}

void isolated_measurer::stop_worker() {
  const std::lock_guard lock(m_mutex);
  m_worker->stop();
}

} // namespace tunekit
