#include "../formats/kernel_tuner_file.hpp"

#include <tunekit/error.hpp>
#include <tunekit/strategy/replay.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace tunekit {

namespace {

[[noreturn]] void fail(std::string_view source, const std::string &what) {
  throw error("replay file " + std::string(source) + ": " + what);
}

// The parts of an evaluation Kernel Tuner records, in milliseconds; NaN when none is recorded.
double recorded_cost(const detail::kernel_tuner::json &body) {
  double total = 0;
  bool any = false;
  for (const char *key :
       {"compile_time", "verification_time", "benchmark_time", "framework_time"}) {
    if (auto it = body.find(key); it != body.end() && it->is_number()) {
      const double ms = it->get<double>();
      if (std::isfinite(ms) && ms >= 0) {
        total += ms;
        any = true;
      }
    }
  }
  return any ? total : std::numeric_limits<double>::quiet_NaN();
}

} // namespace

double replay_table::time_of(std::size_t index) const {
  auto pos = space.position_of(index);
  return pos ? times[*pos] : std::numeric_limits<double>::infinity();
}

double replay_table::cost_of(std::size_t index) const {
  auto pos = space.position_of(index);
  return pos && *pos < costs_ms.size() ? costs_ms[*pos] : std::numeric_limits<double>::quiet_NaN();
}

bool replay_table::has_costs() const {
  // A failure may record nothing (a run that failed before any timing); it costs the median of
  // the recorded costs. Every success must record its cost for the axis to be tuning time.
  bool any = false;
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (std::isfinite(times[i])) {
      if (i >= costs_ms.size() || std::isnan(costs_ms[i])) {
        return false;
      }
      any = true;
    }
  }
  return any;
}

std::vector<config> replay_table::configs() const {
  std::vector<config> out;
  out.reserve(times.size());
  for (std::size_t pos = 0; pos < times.size(); ++pos) {
    out.push_back(space.to_config(space.index_at(pos)));
  }
  return out;
}

std::vector<config> replay_table::best_configs(std::size_t k) const {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (std::isfinite(times[i])) {
      order.push_back(i);
    }
  }
  const std::size_t n = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [&](std::size_t a, std::size_t b) {
                      return times[a] < times[b] || (times[a] == times[b] && a < b);
                    });
  std::vector<config> out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(space.to_config(space.index_at(order[i])));
  }
  return out;
}

batch_evaluator replay_table::evaluator() const {
  return [this](std::span<const std::size_t> batch) {
    std::vector<double> out;
    out.reserve(batch.size());
    for (std::size_t i : batch) {
      out.push_back(time_of(i));
    }
    return out;
  };
}

replay_table parse_replay_table(std::string_view json_text, std::string_view source) {
  auto f = detail::kernel_tuner::parse(json_text, source, "replay file");
  replay_table t;
  t.source = std::string(source);
  if (auto it = f.doc.find("device_name"); it != f.doc.end() && it->is_string()) {
    t.device_name = it->get<std::string>();
  }
  if (auto it = f.doc.find("kernel_name"); it != f.doc.end() && it->is_string()) {
    t.kernel_name = it->get<std::string>();
  }
  std::vector<config> configs;
  configs.reserve(f.records.size());
  t.times.reserve(f.records.size());
  t.costs_ms.reserve(f.records.size());
  for (auto &r : f.records) {
    if (r.error == "InvalidConfig") {
      continue; // excluded by a restriction: never proposed, never measured
    }
    configs.emplace_back(std::move(r.fields));
    t.times.push_back(r.time_ms); // +infinity for a failed config
    t.costs_ms.push_back(recorded_cost(*r.body));
    t.failures += std::isfinite(r.time_ms) ? 0 : 1;
    t.best_time_ms = std::min(t.best_time_ms, r.time_ms);
  }
  if (!std::isfinite(t.best_time_ms)) {
    fail(source, "has no cache entry with a time");
  }
  try {
    t.space = search_space::from_configs(std::move(f.params), configs);
  } catch (const error &e) {
    fail(source, e.what());
  }
  return t;
}

replay_table with_failures(const replay_table &table, std::span<const config> configs) {
  const search_space &s = table.space;
  std::vector<config> all = table.configs();
  replay_table out = table;
  std::set<std::size_t> added; // product indices, to drop repeats
  for (const auto &c : configs) {
    const auto i = s.index_of(c);
    if (!i || s.is_valid(*i) || !added.insert(*i).second) {
      continue;
    }
    all.push_back(s.to_config(*i));
    out.times.push_back(std::numeric_limits<double>::infinity());
    out.costs_ms.push_back(std::numeric_limits<double>::quiet_NaN());
    ++out.failures;
  }
  out.space = search_space::from_configs(s.parameters(), all);
  return out;
}

replay_table load_replay_table(const std::filesystem::path &path) {
  return parse_replay_table(detail::kernel_tuner::read_text(path, "replay file"), path.string());
}

} // namespace tunekit
