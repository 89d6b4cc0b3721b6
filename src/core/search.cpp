#include "search.hpp"

#include "agreement.hpp"
#include "format.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace tunekit::detail {

namespace {
constexpr double infinity = std::numeric_limits<double>::infinity();

// One candidate, measured and checked. A failure is recorded with its reason; a fatal one
// propagates.
candidate_record measure_one(const search_input &in, std::size_t i, std::size_t done,
                             std::size_t mine) {
  const config &c = in.candidates[i];
  candidate_record r;
  r.config = c;
  try {
    auto run_once = [&] { in.run(c); };
    const auto samples =
        in.meas.measure(candidate_info{in.tuner, in.k, c, done, mine}, run_once, in.policy);
    r.stats = summarize(samples);
    if (!in.check(c)) {
      r.status = candidate_status::wrong_result;
      r.reason = "wrong result";
    } else {
      r.status = candidate_status::ok;
      r.time_ms = r.stats.score(in.policy.stat);
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

std::vector<int> split_ownership(const std::vector<bool> &kept, int rank, int size, bool split) {
  std::vector<int> owner(kept.size(), rank);
  if (!split || size <= 1) {
    return owner;
  }
  std::size_t j = 0;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (kept[i]) {
      owner[i] = static_cast<int>(j++ % static_cast<std::size_t>(size));
    }
  }
  return owner;
}

error no_valid_config(const std::string &what, std::size_t measured,
                      std::span<const candidate_record> records) {
  std::string msg =
      what + ": no valid config among " + std::to_string(measured) + " measured candidates:";
  for (const auto &r : records) {
    if (r.status != candidate_status::pruned) {
      msg += "\n  [" + r.config.to_string() + "] " + std::string(to_string(r.status)) + ": " +
             r.reason;
    }
  }
  return error(msg);
}

search_outcome measure_and_pick(const search_input &in) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = in.candidates.size();
  const int rank = in.comm.rank();
  const std::vector<int> owner =
      split_ownership(in.kept, rank, in.comm.size(), in.parallel_split);
  const auto n_kept = static_cast<std::size_t>(std::count(in.kept.begin(), in.kept.end(), true));
  std::size_t n_mine = 0;
  for (std::size_t i = 0; i < n; ++i) {
    n_mine += in.kept[i] && owner[i] == rank ? 1 : 0;
  }

  search_outcome out;
  out.measured = n_kept;
  out.records.resize(n);
  std::vector<double> times(n, infinity);
  std::optional<fatal_candidate_error> fatal;
  std::size_t done = 0;
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < n; ++i) {
    candidate_record &r = out.records[i];
    r.config = in.candidates[i];
    if (!in.kept[i]) {
      r.status = candidate_status::pruned;
      continue;
    }
    if (owner[i] != rank) {
      times[i] = -infinity; // another rank's; the MAX reduction brings its time
      continue;
    }
    if (fatal) {
      continue; // stop measuring, but still take part in the reduction below
    }
    try {
      r = measure_one(in, i, done, n_mine);
    } catch (const fatal_candidate_error &e) {
      fatal.emplace(in.what + ": candidate #" + std::to_string(i) + " (" +
                    in.candidates[i].to_string() + ") failed and left the device unusable; " +
                    "tuning stopped: " + e.what());
      if (in.comm.size() <= 1) {
        throw *fatal;
      }
      continue;
    }
    times[i] = r.time_ms;
    ++done;
    if (std::isfinite(r.time_ms) && (!best || r.time_ms < times[*best])) {
      best = i;
    }
    if (in.verbose) {
      std::string line = in.what + ": candidate " + std::to_string(done) + "/" +
                         std::to_string(n_kept) + " [" + r.config.to_string() + "] ";
      line += r.status == candidate_status::ok
                  ? format_ms(r.time_ms)
                  : std::string(to_string(r.status)) + ": " + r.reason;
      if (best) {
        line += "; best so far " + format_ms(times[*best]) + " [" +
                in.candidates[*best].to_string() + "]";
      }
      in.log.info(line);
    }
  }

  // A fatal failure still takes part, with every candidate invalid, so that the other ranks end
  // with "no valid config" instead of waiting for it.
  if (fatal) {
    std::fill(times.begin(), times.end(), infinity);
  }
  reduce_worst(in.comm, in.what, times);
  if (fatal) {
    throw *fatal;
  }
  for (std::size_t i = 0; i < n; ++i) {
    candidate_record &r = out.records[i];
    if (in.kept[i] && owner[i] != rank) {
      const std::string on = "rank " + std::to_string(owner[i]);
      const bool ok = std::isfinite(times[i]);
      r.status = ok ? candidate_status::ok : candidate_status::failed;
      r.reason = ok ? "measured on " + on : "failed on " + on;
    } else if (r.status == candidate_status::ok && !std::isfinite(times[i])) {
      r.status = candidate_status::failed;
      r.reason = "failed on another rank";
    }
    if (std::isfinite(times[i])) {
      r.time_ms = times[i];
    }
  }
  const auto winner = pick_winner(times);
  if (!winner) {
    throw no_valid_config(in.what, n_kept, out.records);
  }
  out.winner = *winner;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

} // namespace tunekit::detail
