#include "search.hpp"

#include "agreement.hpp"
#include "format.hpp"
#include "transfer.hpp"

#include <tunekit/strategy/run_search.hpp>
#include <tunekit/strategy/strategy.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace tunekit::detail {

namespace {
constexpr double infinity = std::numeric_limits<double>::infinity();

// `2.5`: a factor in a message, in its shortest round-trip form.
std::string format_factor(double f) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, f).ptr;
  return std::string(buf, end);
}

// The measurer's runs of `c` under `policy`. With a reset hook every run starts from the
// caller's data: after the measurer's untimed reset, or else after one the run makes itself.
std::vector<double> measure_runs(const search_request &in, const config &c, std::size_t index,
                                 std::size_t count, double best_ms, const measure_policy &policy) {
  const measuring &m = in.measure;
  bool reset_done = false;
  auto reset = [&] {
    (*m.reset)(c);
    reset_done = true;
  };
  const function_ref<void()> reset_ref(reset);
  auto run_once = [&] {
    if (m.reset != nullptr && !reset_done) {
      (*m.reset)(c);
    }
    reset_done = false;
    m.run(c);
  };
  return m.meas.measure(candidate_info{in.tuner, in.k, c, index, count, best_ms,
                                       m.reset != nullptr ? &reset_ref : nullptr},
                        run_once, policy);
}

// One candidate, measured and checked. A failure is recorded with its reason; a fatal one
// propagates. `best_ms` is this rank's best score so far, for the policy's early stop.
candidate_record measure_one(const search_request &in, std::size_t i, std::size_t done,
                             std::size_t planned, double best_ms) {
  const config &c = in.candidates[i];
  candidate_record r;
  r.config = c;
  try {
    const measuring &m = in.measure;
    const auto samples = measure_runs(in, c, done, planned, best_ms, m.policy);
    r.stats = summarize(samples);
    if (!m.check(c)) {
      r.status = candidate_status::wrong_result;
      r.reason = "wrong result";
    } else {
      r.status = candidate_status::ok;
      r.time_ms = r.stats.score(in.measure.policy.stat);
      const auto runs = static_cast<std::size_t>(in.measure.policy.runs);
      if (in.measure.policy.early_stop_factor > 0 && samples.size() < runs) {
        r.reason = "stopped early after " + std::to_string(samples.size()) + " of " +
                   std::to_string(runs) + " runs (" + format_ms(r.stats.mean) + " > " +
                   format_factor(in.measure.policy.early_stop_factor) + " x best " +
                   format_ms(best_ms) + ")";
      }
    }
  } catch (const fatal_candidate_error &) {
    throw;
  } catch (const std::exception &e) {
    r.status = candidate_status::failed;
    r.reason = e.what();
  } catch (...) {
    r.status = candidate_status::failed;
    r.reason = "unknown exception";
  }
  return r;
}

} // namespace

std::optional<std::size_t> pick_winner(std::span<const double> times) noexcept {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < times.size(); ++i) {
    // Strictly smaller: an equal time later in the list never displaces an earlier one.
    if (std::isfinite(times[i]) && (!best || times[i] < times[*best])) {
      best = i;
    }
  }
  return best;
}

no_valid_config_error no_valid_config(const std::string &what, std::size_t measured,
                                      std::span<const candidate_record> records) {
  std::string msg = "cannot find valid config for " + what + ": none of the " +
                    std::to_string(measured) + " measured candidates is valid:";
  for (const auto &r : records) {
    if (r.status != candidate_status::pruned) {
      msg += "\n  [" + r.config.to_string() + "] " + std::string(to_string(r.status)) + ": " +
             r.reason;
    }
  }
  return no_valid_config_error(msg);
}

namespace {

// State shared by the batches of one search.
struct batch_state {
  std::vector<candidate_record> records; // per candidate
  std::vector<bool> measured;            // per candidate: measured (here or on its owner rank)
  std::vector<std::size_t> order;        // candidates in the order measured
  std::size_t done = 0;                  // candidates this rank measured
  std::size_t planned = 0;               // candidates the whole search will measure
  double best_time = infinity;           // this rank's best, for the policy's early stop
  std::optional<fatal_candidate_error> fatal;
  search_observer *observer = nullptr;
  std::vector<const candidate_record *> reuse; // per candidate: taken instead of measured, or null
};

// The records a search takes instead of measuring (an earlier search of this key, measurements
// made before: docs/shapes.md), one per candidate or null. With several ranks, a candidate is
// taken only when every rank holds a record of it: every rank then measures the same candidates,
// as collective work inside the function needs. One reduction, on every rank alike.
std::vector<const candidate_record *> reuse_plan(const search_request &in) {
  const std::size_t n = in.candidates.size();
  std::vector<const candidate_record *> plan(n, nullptr);
  if (in.reused == nullptr) {
    return plan;
  }
  if (!in.reused->empty()) {
    std::unordered_multimap<std::string, const candidate_record *> by_text;
    for (const auto &r : *in.reused) {
      by_text.emplace(r.config.to_string(), &r);
    }
    for (std::size_t i = 0; i < n && !by_text.empty(); ++i) {
      if (!in.kept[i]) {
        continue;
      }
      const config &c = in.candidates[i];
      const auto [lo, hi] = by_text.equal_range(c.to_string());
      for (auto it = lo; it != hi; ++it) {
        if (it->second->config == c && it->second->config.template_id() == c.template_id()) {
          plan[i] = it->second;
          break;
        }
      }
    }
  }
  if (in.comm.size() > 1) {
    std::vector<double> missing(n);
    for (std::size_t i = 0; i < n; ++i) {
      missing[i] = plan[i] == nullptr ? 1.0 : 0.0;
    }
    collective(in.what, "agreement on the measurements taken from before",
               [&] { in.comm.all_reduce_max(missing); });
    std::size_t held = 0;
    std::size_t taken = 0;
    for (std::size_t i = 0; i < n; ++i) {
      held += plan[i] != nullptr ? 1 : 0;
      if (missing[i] > 0) {
        plan[i] = nullptr;
      }
      taken += plan[i] != nullptr ? 1 : 0;
    }
    if (in.output.verbose && taken < held) {
      in.output.log.info(in.what + ": " + std::to_string(held - taken) + " of the " +
                         std::to_string(held) +
                         " candidates measured before are measured again: not every rank "
                         "holds them");
    }
  }
  return plan;
}

// Measures the candidates of `batch` this rank owns (the j-th belongs to rank j % size with the
// split, else to every rank), then reduces the batch's times across ranks, worst rank counting; one
// more element carries "a rank hit a fatal failure", so that every rank stops together.
// `handed_over(i)`: the preparer already has candidate i (it got it when it was proposed); null:
// none of them.
std::vector<double> measure_batch(const search_request &in, std::span<const std::size_t> batch,
                                  batch_state &st,
                                  const std::function<bool(std::size_t)> &handed_over = {}) {
  const int rank = in.comm.rank();
  const int size = in.comm.size();
  const bool split = in.parallel_split && size > 1;
  auto mine = [&](std::size_t j) { return !split || static_cast<int>(j % size) == rank; };
  candidate_preparer *preparer = in.measure.preparer;
  std::vector<config> own;
  if (preparer != nullptr && !st.fatal) {
    std::vector<config> left; // not handed over yet
    for (std::size_t j = 0; j < batch.size(); ++j) {
      if (mine(j)) {
        own.push_back(in.candidates[batch[j]]);
        if (!handed_over || !handed_over(batch[j])) {
          left.push_back(own.back());
        }
      }
    }
    if (!left.empty()) {
      preparer->prepare(left);
    }
  }
  st.observer->batch_started(own);
  std::vector<double> times(batch.size() + 1, infinity);
  for (std::size_t j = 0; j < batch.size(); ++j) {
    const std::size_t i = batch[j];
    if (!mine(j)) {
      times[j] = -infinity; // another rank's; the MAX reduction brings its time
      continue;
    }
    if (st.fatal) {
      continue; // stop measuring, but still take part in the reduction below
    }
    candidate_record &r = st.records[i];
    if (const candidate_record *before = st.reuse[i]) {
      r = *before; // measured by an earlier search of this key (docs/shapes.md)
      times[j] = r.time_ms;
      ++st.done;
      st.best_time = std::min(st.best_time, std::isfinite(r.time_ms) ? r.time_ms : infinity);
      st.observer->candidate_measured(i, r);
      continue;
    }
    st.observer->candidate_started(i, in.candidates[i]);
    try {
      r = measure_one(in, i, st.done, st.planned, st.best_time);
    } catch (const fatal_candidate_error &e) {
      st.fatal.emplace(in.what + ": candidate #" + std::to_string(i) + " (" +
                       in.candidates[i].to_string() + ") failed and left the device unusable; " +
                       "tuning stopped: " + e.what());
      if (size <= 1) {
        throw *st.fatal;
      }
      continue;
    }
    if (preparer != nullptr) {
      r.prepare_ms = preparer->prepare_ms(r.config);
    }
    times[j] = r.time_ms;
    ++st.done;
    st.best_time = std::min(st.best_time, std::isfinite(r.time_ms) ? r.time_ms : infinity);
    st.observer->candidate_measured(i, r);
  }
  if (st.fatal) {
    std::fill(times.begin(), times.end(), infinity);
  }
  times.back() = st.fatal ? 1.0 : 0.0;
  reduce_worst(in.comm, in.what, times);
  if (st.fatal) {
    throw *st.fatal;
  }
  if (times.back() > 0) {
    throw no_valid_config_error("cannot find valid config for " + in.what +
                                ": a candidate failed on another rank and left its device "
                                "unusable, so tuning stopped on every rank");
  }
  times.pop_back();
  std::size_t others = 0; // measured by other ranks
  for (std::size_t j = 0; j < batch.size(); ++j) {
    candidate_record &r = st.records[batch[j]];
    st.measured[batch[j]] = true;
    st.order.push_back(batch[j]);
    if (split) {
      r.measured_on = static_cast<int>(j % static_cast<std::size_t>(size));
    }
    if (!mine(j)) {
      ++others;
      const std::string on = "rank " + std::to_string(*r.measured_on);
      const bool ok = std::isfinite(times[j]);
      r.status = ok ? candidate_status::ok : candidate_status::failed;
      r.reason = ok ? "measured on " + on : "failed on " + on;
    } else if (r.status == candidate_status::ok && !std::isfinite(times[j])) {
      r.status = candidate_status::failed;
      r.reason = "failed on another rank";
    }
    // The reduced time: a candidate invalid on any rank has none (an entry holds no time for a
    // candidate that is not ok).
    r.time_ms = times[j];
  }
  st.observer->batch_reduced(batch, times, others);
  return times;
}

// The strategy's view of the kept candidates: the declared parameters (their domain order) when
// the space was built as a product and no value is pinned, else the structure inferred from the
// configs. nullopt when they share no structure (different fields, template ids): such a space is
// measured whole.
std::optional<search_space> strategy_space(const search_request &in,
                                           const std::vector<std::size_t> &kept) {
  std::vector<config> configs;
  configs.reserve(kept.size());
  for (auto i : kept) {
    configs.push_back(in.candidates[i]);
  }
  try {
    if (!in.declared.empty()) {
      return search_space::from_configs(in.declared, configs);
    }
    return search_space::from_configs(configs);
  } catch (const error &) {
    return std::nullopt;
  }
}

// Kept candidates that share no parameter structure, as a space of one parameter: their
// position among the kept ones (`candidate` 0, 1, ...), so that a budget holds for them too.
search_space list_space(std::size_t count) {
  std::vector<config> positions;
  positions.reserve(count);
  for (std::size_t p = 0; p < count; ++p) {
    positions.push_back(config{{"candidate", value(static_cast<std::int64_t>(p))}});
  }
  return search_space::from_configs(positions);
}

// A strategy chooses which of the kept candidates to measure, within the budget, in batches;
// `kept[p]` is the candidate at position p of `space`'s list. `as_list`: `space` is
// `list_space(kept.size())`, where no model of the parameters applies: random samples, the start
// configs first, no transfer. A wall-time budget counts from `started`. Returns the search's
// record.
search_record measure_with_strategy(const search_request &in, const search_space &space,
                                    const std::vector<std::size_t> &kept, batch_state &st,
                                    std::chrono::steady_clock::time_point started, bool as_list) {
  const bool split = in.parallel_split && in.comm.size() > 1;
  // A space that fits the evaluation budget is searched for a time or patience limit only; under
  // the split its batches take at least one candidate per rank, so that every rank measures, as
  // when the space is measured whole (one batch shared by all).
  const bool fits = kept.size() <= in.settings.budget.max_evaluations;
  const std::size_t least_batch = split && fits ? static_cast<std::size_t>(in.comm.size()) : 1;
  const search_settings &settings = in.settings;
  const std::string name = as_list                     ? std::string("random")
                           : settings.strategy.empty() ? std::string(default_strategy_name)
                                                       : settings.strategy;
  auto strat = make_strategy(name);
  std::vector<config> start = start_configs(settings, in.candidates, in.kept, in.comm, in.what);
  if (as_list) {
    for (config &c : start) {
      const auto at = std::find_if(kept.begin(), kept.end(),
                                   [&](std::size_t i) { return in.candidates[i] == c; });
      c = config{{"candidate", value(static_cast<std::int64_t>(at - kept.begin()))}};
    }
  }
  search_options so;
  so.seed = settings.seed;
  so.started = started; // the wall-time budget counts the set-up: the space, the sources read
  so.batch_size = std::max(least_batch, settings.batch_size);
  // Under the split a rank prepares only its share of the proposals made ahead: each keeps
  // `lookahead` of its own preparing, as one rank alone does.
  so.lookahead = settings.lookahead * (split ? static_cast<std::size_t>(in.comm.size()) : 1);
  so.start_points = transfer_indices(space, start);
  if (!as_list) {
    so.transfer =
        transfer_sources(settings, in.transfer.cache, in.transfer.function, in.transfer.hw, in.k,
                         space, in.transfer.use_disk_cache, in.comm, in.what);
  }
  auto candidate = [&](std::size_t index) { return kept[*space.position_of(index)]; };
  // Proposals are prepared when made, ahead of their batch. With the split, each rank prepares
  // the proposals it will measure: the j-th of a batch is rank j % size's, and a proposal's place
  // in its batch follows from its place in the queue while the batches before it are full. Where
  // that does not hold (a short batch), a rank prepares its own candidates when their batch comes.
  std::unordered_set<std::size_t> handed; // candidates handed to the preparer ahead (split)
  if (in.measure.preparer != nullptr && so.lookahead > 0) {
    const auto size = static_cast<std::size_t>(in.comm.size());
    const auto rank = static_cast<std::size_t>(in.comm.rank());
    so.on_propose = [&, size, rank](std::span<const std::size_t> indices, std::size_t queued) {
      std::vector<config> ahead;
      for (std::size_t j = 0; j < indices.size(); ++j) {
        const std::size_t i = candidate(indices[j]);
        if (split && ((queued + j) % so.batch_size) % size != rank) {
          continue;
        }
        ahead.push_back(in.candidates[i]);
        if (split) {
          handed.insert(i);
        }
      }
      in.measure.preparer->prepare(ahead);
    };
  }
  std::function<bool(std::size_t)> handed_over;
  if (so.on_propose) {
    handed_over = [&, split](std::size_t i) { return !split || handed.contains(i); };
  }
  so.agree_stop = [&](bool wish) {
    std::vector<double> flag{wish ? 1.0 : 0.0};
    collective(in.what, "agreement on the search's wall-time stop",
               [&] { in.comm.all_reduce_max(flag); });
    return flag[0] > 0;
  };
  std::vector<std::size_t> batch;
  const auto outcome = run_search(
      space, *strat, settings.budget,
      [&](std::span<const std::size_t> indices) {
        batch.clear();
        for (auto index : indices) {
          batch.push_back(candidate(index));
        }
        return measure_batch(in, batch, st, handed_over);
      },
      so);
  search_record rec;
  rec.strategy = name;
  rec.seed = settings.seed;
  rec.max_evaluations = settings.budget.max_evaluations;
  rec.max_time_s = settings.budget.max_time.count();
  rec.patience = settings.budget.patience;
  rec.batch_size = so.batch_size;
  rec.lookahead = so.lookahead;
  rec.space_size = kept.size();
  rec.evaluations = outcome.evaluations;
  rec.stop = std::string(to_string(outcome.stop));
  rec.transferred = outcome.started;
  return rec;
}

// The re-rank of the leaders (rerank_settings): the measured candidates within the band of the
// best, measured again in interleaved rounds; the policy's statistic over those runs, worst rank
// counting, decides among them (`pick`: the winner, an index into `found.records`). Every rank
// measures every leader (the leaders come from reduced times and agreed noise, so they are the
// same everywhere) and takes part in one reduction. nullopt when there is nothing to re-rank.
std::optional<rerank_record> rerank_leaders(const search_request &in, const search_result &found,
                                            std::size_t &pick) {
  const rerank_settings &rs = in.settings.rerank;
  if (!(rs.band > 0) || rs.max_leaders < 2 || rs.rounds < 1) {
    return std::nullopt;
  }
  const double best = found.records[found.winner].time_ms;
  // The candidates within the band, by the reduced times: the same on every rank.
  std::vector<std::size_t> in_band;
  for (std::size_t i = 0; i < found.records.size(); ++i) {
    const candidate_record &r = found.records[i];
    if (r.status == candidate_status::ok && r.time_ms <= best * (1 + rs.band)) {
      in_band.push_back(i);
    }
  }
  if (in_band.size() < 2) {
    return std::nullopt;
  }
  // Runs that all took the same time show no noise: measuring them again gives the same order. A
  // rank holds the runs of the candidates it measured only (its share, under the split), and its
  // own noise, so the ranks agree: a candidate is noisy when its runs varied on any rank.
  std::vector<double> noisy(in_band.size());
  for (std::size_t k = 0; k < in_band.size(); ++k) {
    const sample_stats &st = found.records[in_band[k]].stats;
    noisy[k] = st.max > st.min ? 1.0 : 0.0;
  }
  if (in.comm.size() > 1) {
    collective(in.what, "agreement on the re-rank's leaders",
               [&] { in.comm.all_reduce_max(noisy); });
  }
  const auto winner_at = std::find(in_band.begin(), in_band.end(), found.winner);
  if (winner_at == in_band.end()) {
    return std::nullopt; // not a valid winner: nothing to re-rank it against
  }
  const bool winner_noisy = noisy[static_cast<std::size_t>(winner_at - in_band.begin())] > 0;
  std::vector<std::size_t> leaders;
  for (std::size_t k = 0; k < in_band.size(); ++k) {
    if (in_band[k] == found.winner || noisy[k] > 0 || winner_noisy) {
      leaders.push_back(in_band[k]);
    }
  }
  if (leaders.size() < 2) {
    return std::nullopt;
  }
  std::stable_sort(leaders.begin(), leaders.end(), [&](std::size_t a, std::size_t b) {
    return found.records[a].time_ms < found.records[b].time_ms;
  });
  if (leaders.size() > rs.max_leaders) {
    leaders.resize(rs.max_leaders);
  }
  const measuring &m = in.measure;
  measure_policy round_policy = m.policy;
  round_policy.warmup = 1;
  round_policy.runs = rs.runs > 0 ? rs.runs : m.policy.runs;
  round_policy.early_stop_factor = 0;
  const std::size_t n = leaders.size();
  std::vector<std::vector<double>> samples(n);
  std::vector<bool> failed(n, false);
  std::optional<fatal_candidate_error> fatal;
  for (int round = 0; round < rs.rounds && !fatal; ++round) {
    for (std::size_t j = 0; j < n && !fatal; ++j) {
      const std::size_t l = (j + static_cast<std::size_t>(round)) % n; // A B C, B C A, ...
      if (failed[l]) {
        continue;
      }
      const config &c = found.records[leaders[l]].config;
      try {
        const auto got = measure_runs(in, c, l, n, infinity, round_policy);
        static_cast<void>(summarize(got)); // refuses an invalid sample
        samples[l].insert(samples[l].end(), got.begin(), got.end());
      } catch (const fatal_candidate_error &e) {
        fatal.emplace(
            in.what + ": leader [" + c.to_string() +
            "] failed in the re-rank and left the device unusable; tuning stopped: " + e.what());
      } catch (const std::exception &) {
        failed[l] = true; // flaky: out of the re-rank
      }
    }
  }
  rerank_record rec;
  rec.band = rs.band;
  rec.rounds = rs.rounds;
  rec.runs = round_policy.runs;
  rec.winner_before = found.winner;
  // One reduction: the scores, their standard errors, and "a rank hit a fatal failure".
  std::vector<double> reduced(2 * n + 1, infinity);
  for (std::size_t l = 0; l < n; ++l) {
    sample_stats st;
    if (!failed[l] && !samples[l].empty()) {
      st = summarize(samples[l]);
      reduced[l] = st.score(m.policy.stat);
      reduced[n + l] = st.stddev / std::sqrt(static_cast<double>(st.count));
    }
    rec.stats.push_back(st);
  }
  reduced.back() = fatal ? 1.0 : 0.0;
  reduce_worst(in.comm, in.what, reduced);
  if (fatal) {
    throw *fatal;
  }
  if (reduced.back() > 0) {
    throw no_valid_config_error(in.what + ": a leader failed in the re-rank on another rank and "
                                          "left its device unusable, so tuning stopped on every "
                                          "rank");
  }
  std::vector<double> scores(reduced.begin(), reduced.begin() + static_cast<std::ptrdiff_t>(n));
  const std::span<const double> errors(reduced.data() + n, n);
  // The fastest by the re-rank (a tie to the earlier candidate) replaces the search's winner
  // (leader 0) only when it is faster by more than twice their combined standard error: among
  // leaders the re-rank cannot tell apart, the search's winner stands.
  std::optional<std::size_t> fastest;
  for (std::size_t l = 0; l < n; ++l) {
    if (std::isfinite(scores[l]) &&
        (!fastest || scores[l] < scores[*fastest] ||
         (scores[l] == scores[*fastest] && leaders[l] < leaders[*fastest]))) {
      fastest = l;
    }
  }
  pick = found.winner;
  if (fastest && *fastest != 0) {
    const double margin = 2 * std::hypot(errors[0], errors[*fastest]);
    if (!std::isfinite(scores[0]) || scores[0] - scores[*fastest] > margin) {
      pick = leaders[*fastest];
    }
  }
  rec.leaders = std::move(leaders);
  rec.scores = std::move(scores);
  return rec;
}

} // namespace

search_result search(const search_request &in) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = in.candidates.size();
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < n; ++i) {
    if (in.kept[i]) {
      kept.push_back(i);
    }
  }
  // Every kept candidate when they fit in the budget, else a strategy within it. A wall-time or
  // patience limit holds for a space that fits too: the strategy orders it and the search stops by
  // the limit, or with every candidate measured (`exhausted`) when the limit allows.
  const search_budget &budget = in.settings.budget;
  const bool limited = budget.max_time.count() > 0 || budget.patience > 0;
  std::optional<search_space> space;
  bool as_list = false;
  if (kept.size() > budget.max_evaluations || (limited && kept.size() > 1)) {
    space = strategy_space(in, kept);
    if (!space) {
      in.output.log.warn(in.what + ": the " + std::to_string(kept.size()) +
                         " kept candidates share no parameter structure (different fields or "
                         "templates); sampling them at random within the budget");
      space = list_space(kept.size());
      as_list = true;
    }
  }

  batch_state st;
  st.records.resize(n);
  st.measured.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    st.records[i].config = in.candidates[i];
  }
  st.reuse = reuse_plan(in);
  st.planned = space ? std::min(kept.size(), in.settings.budget.max_evaluations) : kept.size();

  // The observers: the verbose lines, the live progress line (local rank 0 only), the caller's.
  const search_output &out = in.output;
  const bool show = (out.verbose || out.progress) && in.comm.local_rank() == 0 &&
                    out.log.launcher().local_rank == 0;
  const progress_output sink = !show                         ? progress_output{}
                               : out.progress_out != nullptr ? *out.progress_out
                                                             : progress_output::to_stderr();
  progress_reporter progress(show, sink, in.what, st.planned, in.settings.budget.max_time.count(),
                             0, in.measure.preparer);
  verbose_lines lines(out.log, &progress);
  progress_lines live(progress);
  observer_list observers;
  observers.add(out.verbose ? &lines : nullptr);
  observers.add(out.observer);
  observers.add(&live);
  st.observer = &observers;
  observers.search_started({in.what, n, kept.size(), st.planned, in.forced});

  search_result result;
  if (space) {
    result.strategy = measure_with_strategy(in, *space, kept, st, start, as_list);
  } else {
    static_cast<void>(measure_batch(in, kept, st)); // one batch, one reduction
  }

  // The measured candidates in candidate order, and the one winner rule over them.
  std::vector<std::size_t> record_of(n);
  std::vector<double> times;
  for (std::size_t i = 0; i < n; ++i) {
    if (st.measured[i]) {
      record_of[i] = result.records.size();
      result.positions.push_back(i);
      times.push_back(st.records[i].time_ms);
      result.records.push_back(std::move(st.records[i]));
    }
  }
  if (result.strategy) {
    for (auto i : st.order) {
      result.strategy->order.push_back(record_of[i]);
    }
  }
  const auto winner = pick_winner(times);
  if (!winner) {
    throw no_valid_config(in.what, result.records.size(), result.records);
  }
  result.winner = *winner;
  std::size_t pick = result.winner;
  if (auto rr = rerank_leaders(in, result, pick)) {
    result.winner = pick;
    result.rerank = std::move(rr);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  observers.search_finished(result);
  return result;
}

} // namespace tunekit::detail
