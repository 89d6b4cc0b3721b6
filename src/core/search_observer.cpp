#include "search_observer.hpp"

#include <cmath>

#include "format.hpp"
#include "search.hpp"

namespace tunekit::detail {

void observer_list::search_started(const search_plan &plan) {
  for (auto *o : m_observers) {
    o->search_started(plan);
  }
}

void observer_list::batch_started(std::span<const config> prepared) {
  for (auto *o : m_observers) {
    o->batch_started(prepared);
  }
}

void observer_list::candidate_started(std::size_t index, const config &c) {
  for (auto *o : m_observers) {
    o->candidate_started(index, c);
  }
}

void observer_list::candidate_measured(std::size_t index, const candidate_record &r) {
  for (auto *o : m_observers) {
    o->candidate_measured(index, r);
  }
}

void observer_list::batch_reduced(std::span<const std::size_t> indices,
                                  std::span<const double> times, std::size_t others) {
  for (auto *o : m_observers) {
    o->batch_reduced(indices, times, others);
  }
}

void observer_list::search_finished(const search_result &result) {
  for (auto it = m_observers.rbegin(); it != m_observers.rend(); ++it) {
    (*it)->search_finished(result);
  }
}

void verbose_lines::line(const std::string &text) {
  if (m_progress != nullptr) {
    m_progress->interrupt();
  }
  m_log.info(text);
}

void verbose_lines::search_started(const search_plan &plan) {
  m_what = plan.what;
  m_planned = plan.planned;
  line(m_what + ": searching " + std::to_string(plan.kept) + " of " +
       std::to_string(plan.candidates) + " configs" +
       (plan.forced ? " (TUNEKIT_ALWAYS_TUNE=1)" : ""));
}

void verbose_lines::candidate_measured(std::size_t /*index*/, const candidate_record &r) {
  ++m_done;
  if (std::isfinite(r.time_ms) && r.time_ms < m_best_ms) {
    m_best = r.config;
    m_best_ms = r.time_ms;
  }
  std::string text = m_what + ": candidate " + std::to_string(m_done) + "/" +
                     std::to_string(m_planned) + " [" + r.config.to_string() + "] ";
  text += r.status == candidate_status::ok
              ? format_ms(r.time_ms) + (r.reason.empty() ? "" : " (" + r.reason + ")")
              : std::string(to_string(r.status)) + ": " + r.reason;
  if (m_best) {
    text += "; best so far " + format_ms(m_best_ms) + " [" + m_best->to_string() + "]";
  }
  line(text);
}

void verbose_lines::search_finished(const search_result &result) {
  const candidate_record &w = result.records[result.winner];
  if (result.rerank) {
    const rerank_record &r = *result.rerank;
    std::string text = m_what + ": re-ranked " + std::to_string(r.leaders.size()) + " leaders in " +
                       std::to_string(r.rounds) + " interleaved rounds of " +
                       std::to_string(r.runs) + " runs:";
    for (std::size_t l = 0; l < r.leaders.size(); ++l) {
      text += " [";
      text += result.records[r.leaders[l]].config.to_string();
      text += "] ";
      text += std::isfinite(r.scores[l]) ? format_ms(r.scores[l]) : std::string("failed");
    }
    if (r.winner_before != result.winner) {
      text += "; the re-rank's winner replaces [";
      text += result.records[r.winner_before].config.to_string();
      text += "]";
    }
    line(text);
  }
  line(m_what + ": winner [" + w.config.to_string() + "] " + format_ms(w.time_ms) +
       " after measuring " + std::to_string(result.records.size()) + " candidates in " +
       format_ms(result.seconds * 1e3));
}

void progress_lines::batch_started(std::span<const config> prepared) {
  m_progress.begin_batch(prepared);
}

void progress_lines::candidate_started(std::size_t /*index*/, const config &c) {
  m_progress.starting(c);
}

void progress_lines::candidate_measured(std::size_t index, const candidate_record &r) {
  m_progress.measured(index, r.time_ms);
  m_progress.update();
}

void progress_lines::batch_reduced(std::span<const std::size_t> indices,
                                   std::span<const double> times, std::size_t others) {
  m_progress.end_batch(indices, times, others);
}

void progress_lines::search_finished(const search_result & /*result*/) { m_progress.finish(); }

} // namespace tunekit::detail
