#include "agreement.hpp"
#include "format.hpp"
#include "rank_log.hpp"
#include "search.hpp"

#include <tunekit/contextual.hpp>
#include <tunekit/error.hpp>
#include <tunekit/launcher.hpp>
#include <tunekit/process_context.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

namespace tunekit {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// One contextual call at a time in the process (timings of two would disturb each other)...
std::atomic<contextual_tuner *> g_running{nullptr};
// ...and only the thread that runs it hands its tunable kernels to it: a tunable kernel called on
// another thread meanwhile resolves its config as usual.
thread_local contextual_tuner *t_active = nullptr;

// The options with their process context read (once, here) when they did not bring one.
contextual_options with_process(contextual_options o) {
  if (!o.process) {
    o.process = process_context::from_env();
  }
  if (!o.process->log) {
    o.process->log = default_log_sink();
  }
  return o;
}

} // namespace

struct contextual_tuner::impl {
  // One (kernel, key) registered in the current contextual call.
  struct entry {
    tuner *kernel = nullptr;
    key k;
    std::vector<config> candidates;
    std::vector<double> means;        // +inf: failed or not measured
    std::vector<std::string> reasons; // why a candidate failed
    std::size_t cursor = 0;           // candidate being measured
    int rounds = 0;                   // launches of the current candidate so far
    std::vector<double> samples;      // timed launches of the current candidate
    bool done = false;

    // The best valid candidate so far, by the one winner rule.
    [[nodiscard]] const config *best() const noexcept {
      const auto i = detail::pick_winner(means);
      return i ? &candidates[*i] : nullptr;
    }
  };

  contextual_options opts;
  environment env;
  single_process_communicator single;
  detail::rank_log log; // rank-<rank>.log: the communicator's rank, else the launcher's
  std::vector<entry> entries;
  bool progressed = false;
  std::vector<std::pair<std::string, config>> winners;

  explicit impl(contextual_options o)
      : opts(with_process(std::move(o))), env(opts.process->env),
        log(opts.process->log, opts.process->launcher, env.log_dir, "contextual tuner", true) {
    if (opts.n_repeat < 1 || opts.n_warmup < 0) {
      throw error("contextual tuner: n_repeat must be at least 1 and n_warmup not negative");
    }
    if (opts.comm != nullptr) {
      log.set_rank(opts.comm->rank());
    }
  }

  communicator &comm() { return opts.comm != nullptr ? *opts.comm : single; }

  [[nodiscard]] static std::string name_of(const entry &e) {
    return "kernel '" + e.kernel->name() + "', key " + e.k.to_string();
  }

  void write_log(const std::string &line) const { log.file(line); }

  void advance(entry &e) {
    e.cursor++;
    e.rounds = 0;
    e.samples.clear();
    if (e.cursor >= e.candidates.size()) {
      e.done = true;
    }
  }
};

contextual_tuner::contextual_tuner(contextual_options options)
    : m(std::make_unique<impl>(std::move(options))) {}

contextual_tuner::~contextual_tuner() { abort(); }

contextual_tuner *contextual_tuner::active() noexcept { return t_active; }

void contextual_tuner::begin() {
  contextual_tuner *expected = nullptr;
  if (!g_running.compare_exchange_strong(expected, this, std::memory_order_acq_rel)) {
    throw error(expected == this
                    ? "contextual tuner: it is already running (nested call)"
                    : "contextual tuner: another contextual tuner is active; only one "
                      "may run at a time (nested or concurrent calls are not allowed)");
  }
  t_active = this;
  m->entries.clear();
  m->progressed = false;
}

contextual_tuner::plan contextual_tuner::plan_launch(tuner &t, const key &k) {
  impl &s = *m;
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    impl::entry &e = s.entries[i];
    if (e.kernel != &t || !(e.k == k)) {
      continue;
    }
    if (!e.done) {
      return plan{&e.candidates[e.cursor], i, true};
    }
    const config *best = e.best();
    if (best == nullptr) {
      throw detail::abandon_run{}; // nothing valid to launch; finish() reports it
    }
    // Finished: keep its winner while the other kernels go on.
    return plan{best, i, false};
  }
  if (const config *winner = t.find(k)) {
    return plan{winner, 0, false}; // tuned before: nothing to do
  }
  impl::entry e;
  e.kernel = &t;
  e.k = k;
  e.candidates = t.space().configs();
  e.means.assign(e.candidates.size(), infinity);
  e.reasons.assign(e.candidates.size(), "");
  s.entries.push_back(std::move(e));
  s.write_log(impl::name_of(s.entries.back()) + ": registered with " +
              std::to_string(s.entries.back().candidates.size()) + " candidates");
  return plan{&s.entries.back().candidates.front(), s.entries.size() - 1, true};
}

const config *contextual_tuner::fallback(const plan &p) const noexcept {
  const impl::entry &e = m->entries[p.entry];
  return e.best();
}

bool contextual_tuner::measure_launch(const plan &p, detail::function_ref<void()> run) {
  impl &s = *m;
  impl::entry &e = s.entries[p.entry];
  const std::size_t index = e.cursor;
  const config &c = e.candidates[index];
  s.progressed = true;
  try {
    const auto samples = detail::tuner_access::measurer(*e.kernel).measure(
        candidate_info{e.kernel->name(), e.k, c, index, e.candidates.size()}, run,
        measure_policy{.warmup = 0, .runs = 1, .stat = statistic::mean});
    const double t = summarize(samples).mean;
    e.rounds++;
    const bool timed = e.rounds > s.opts.n_warmup;
    if (timed) {
      e.samples.push_back(t);
    }
    s.write_log(impl::name_of(e) + ": config #" + std::to_string(index) + " [" + c.to_string() +
                "] round " + std::to_string(e.rounds) + (timed ? " timed " : " warmup ") +
                std::to_string(t) + " ms");
    if (e.rounds == s.opts.n_warmup + s.opts.n_repeat) {
      const double mean = std::accumulate(e.samples.begin(), e.samples.end(), 0.0) /
                          static_cast<double>(e.samples.size());
      e.means[index] = mean;
      s.write_log(impl::name_of(e) + ": config #" + std::to_string(index) + " mean " +
                  std::to_string(mean) + " ms");
      if (s.opts.verbose) {
        s.log.info(impl::name_of(e) + ": candidate " + std::to_string(index + 1) + "/" +
                   std::to_string(e.candidates.size()) + " [" + c.to_string() + "] " +
                   detail::format_ms(mean) + " in context");
      }
      s.advance(e);
    }
    return true;
  } catch (const fatal_candidate_error &err) {
    s.write_log(impl::name_of(e) + ": config #" + std::to_string(index) + " fatal: " + err.what());
    throw fatal_candidate_error("contextual tuner, " + impl::name_of(e) + ": candidate #" +
                                std::to_string(index) + " (" + c.to_string() +
                                ") left the device unusable: " + err.what());
  } catch (const std::exception &err) {
    e.reasons[index] = err.what();
  } catch (...) {
    e.reasons[index] = "unknown exception";
  }
  s.write_log(impl::name_of(e) + ": config #" + std::to_string(index) + " [" + c.to_string() +
              "] failed: " + e.reasons[index]);
  s.advance(e);
  return false;
}

bool contextual_tuner::after_run() {
  impl &s = *m;
  if (!s.progressed) {
    for (const auto &e : s.entries) {
      if (!e.done) {
        throw error("contextual tuner: " + impl::name_of(e) +
                    " was registered but not launched in the last run of the outer function");
      }
    }
  }
  s.progressed = false;
  return std::any_of(s.entries.begin(), s.entries.end(),
                     [](const impl::entry &e) { return !e.done; });
}

bool contextual_tuner::has_work() const noexcept { return !m->entries.empty(); }

void contextual_tuner::finish() {
  impl &s = *m;
  s.winners.clear();
  try {
    if (s.opts.is_dist && s.comm().size() > 1) {
      // Every rank must have registered the same kernels, keys and candidate lists, in order.
      std::string text;
      std::vector<double> all;
      for (const auto &e : s.entries) {
        text += impl::name_of(e) + "|";
        for (const auto &c : e.candidates) {
          text += c.to_string() + ";";
        }
        all.insert(all.end(), e.means.begin(), e.means.end());
      }
      const std::string what = "contextual tuner";
      if (!detail::agree(s.comm(), what, "agreement on the registered kernels", text, std::nullopt)
               .same_text) {
        throw error("contextual tuner: the ranks registered different kernels or keys; all ranks "
                    "must run the same tunable kernels in the same order");
      }
      detail::reduce_worst(s.comm(), what, all);
      std::size_t at = 0;
      for (auto &e : s.entries) {
        for (std::size_t i = 0; i < e.means.size(); ++i, ++at) {
          if (std::isfinite(e.means[i]) && !std::isfinite(all[at])) {
            e.reasons[i] = "failed on another rank";
          }
          e.means[i] = all[at];
        }
      }
    }
    for (auto &e : s.entries) {
      const auto winner = detail::pick_winner(e.means);
      if (!winner) {
        std::vector<candidate_record> records(e.candidates.size());
        for (std::size_t i = 0; i < e.candidates.size(); ++i) {
          records[i].config = e.candidates[i];
          records[i].status = candidate_status::failed;
          records[i].reason = e.reasons[i];
        }
        const no_valid_config_error err = detail::no_valid_config(
            impl::name_of(e) + " (contextual tuner)", e.candidates.size(), records);
        s.write_log(err.what());
        throw err;
      }
      const std::size_t best = *winner;
      const config &w = e.candidates[best];
      detail::tuner_access::remember(*e.kernel, e.k, w);
      s.winners.emplace_back(impl::name_of(e), w);
      s.write_log(impl::name_of(e) + ": best config #" + std::to_string(best) + " [" +
                  w.to_string() + "] " + detail::format_ms(e.means[best]));
      if (s.opts.verbose) {
        s.log.info(impl::name_of(e) + ": winner in context [" + w.to_string() + "]");
      }
    }
  } catch (...) {
    abort();
    throw;
  }
  abort();
}

void contextual_tuner::abort() noexcept {
  if (t_active == this) {
    t_active = nullptr;
  }
  contextual_tuner *expected = this;
  g_running.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
}

std::vector<std::pair<std::string, config>> contextual_tuner::last_winners() const {
  return m->winners;
}

} // namespace tunekit
