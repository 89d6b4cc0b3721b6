#pragma once
// What every strategy keeps: the space, a seeded random source, the times told so far (looked up
// by index, iterated in the order told), the candidates proposed but not yet told, and a helper
// that draws valid configs not seen yet; and the order of results every strategy and the driver
// share.

#include <tunekit/strategy/strategy.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tunekit::detail {

/// One told result.
struct observation {
  std::size_t index = 0;
  double time_ms = std::numeric_limits<double>::infinity();
};

/// The order of results inside a search: the smaller time first, ties to the smaller search-space
/// index. Strategies steer by it and `run_search` reports its best by it
/// (`search_outcome::best_index`); the tuner's winner is chosen by the tuner's own rule.
[[nodiscard]] inline bool better(const observation &a, const observation &b) noexcept {
  return a.time_ms < b.time_ms || (a.time_ms == b.time_ms && a.index < b.index);
}

/// Whether `o` replaces `best` as the best result so far: a finite time, `better` than `best`.
[[nodiscard]] inline bool improves(const observation &o,
                                   const std::optional<observation> &best) noexcept {
  return std::isfinite(o.time_ms) && (!best || better(o, *best));
}

/// Per parameter: whether its domain is ordered, so that neighbouring positions are related
/// (numbers, more than two values).
[[nodiscard]] inline std::vector<bool> ordinal_parameters(const search_space &space) {
  std::vector<bool> out;
  for (const auto &p : space.parameters()) {
    out.push_back(p.values.size() > 2 &&
                  std::all_of(p.values.begin(), p.values.end(),
                              [](const value &v) { return v.is_int() || v.is_double(); }));
  }
  return out;
}

class strategy_base : public strategy {
public:
  void start(const search_space &space, std::uint64_t seed,
             std::span<const std::size_t> start_points) override {
    m_space = &space;
    m_rng = search_rng(seed);
    m_told.clear();
    m_known.clear();
    m_pending.clear();
    m_best.reset();
    m_start_points.assign(start_points.begin(), start_points.end());
    m_transfer_expected = false;
    on_start();
  }
  void expect_transfer() override { m_transfer_expected = true; }

  void tell(std::size_t index, double time_ms) override {
    m_pending.erase(index);
    if (!m_known.emplace(index, time_ms).second) {
      return; // a repeat: nothing new
    }
    const observation o{index, time_ms};
    m_told.push_back(o);
    if (improves(o, m_best)) {
      m_best = o;
    }
    on_tell(index, time_ms);
  }

protected:
  virtual void on_start() {}
  virtual void on_tell(std::size_t /*index*/, double /*time_ms*/) {}

  [[nodiscard]] const search_space &space() const noexcept { return *m_space; }
  [[nodiscard]] search_rng &rng() noexcept { return m_rng; }
  /// Told before, or proposed and not yet told.
  [[nodiscard]] bool seen(std::size_t index) const {
    return m_known.count(index) != 0 || m_pending.count(index) != 0;
  }
  [[nodiscard]] bool told(std::size_t index) const { return m_known.count(index) != 0; }
  [[nodiscard]] double time_of(std::size_t index) const {
    auto it = m_known.find(index);
    return it == m_known.end() ? std::numeric_limits<double>::infinity() : it->second;
  }
  void mark_pending(std::size_t index) { m_pending.insert(index); }
  [[nodiscard]] std::size_t pending_count() const noexcept { return m_pending.size(); }
  /// The proposals not yet told, smallest index first (the same order on every rank).
  [[nodiscard]] std::vector<std::size_t> pending_indices() const {
    std::vector<std::size_t> out(m_pending.begin(), m_pending.end());
    std::sort(out.begin(), out.end());
    return out;
  }
  [[nodiscard]] const std::vector<observation> &told_results() const noexcept { return m_told; }
  [[nodiscard]] bool has_best() const noexcept { return m_best.has_value(); }
  /// The best result told so far (`improves`); only when `has_best()`.
  [[nodiscard]] const observation &best() const noexcept { return *m_best; }
  [[nodiscard]] const std::vector<std::size_t> &start_points() const noexcept {
    return m_start_points;
  }
  /// Whether results from elsewhere are told: start points, or transfer sources
  /// (`expect_transfer`).
  [[nodiscard]] bool transfers() const noexcept {
    return m_transfer_expected || !m_start_points.empty();
  }

  /// Up to `count` valid configs not seen yet, drawn uniformly, marked pending. Fewer only when
  /// (nearly) every valid config has been seen.
  std::vector<std::size_t> draw_unseen(std::size_t count) {
    std::vector<std::size_t> out;
    std::size_t attempts = 0;
    const std::size_t max_attempts = 32 * count + 64;
    while (out.size() < count && attempts < max_attempts) {
      ++attempts;
      auto idx = m_space->sample_one(m_rng);
      if (!idx) {
        return out;
      }
      if (!seen(*idx)) {
        out.push_back(*idx);
        mark_pending(*idx);
      }
    }
    if (out.size() < count &&
        (m_space->is_listed() || m_space->product_size() <= search_space::enumeration_limit)) {
      std::vector<std::size_t> left;
      for (std::size_t idx : m_space->valid_indices()) {
        if (!seen(idx)) {
          left.push_back(idx);
        }
      }
      while (out.size() < count && !left.empty()) {
        const std::size_t k = m_rng.below(left.size());
        out.push_back(left[k]);
        mark_pending(left[k]);
        left[k] = left.back();
        left.pop_back();
      }
    }
    return out;
  }

private:
  const search_space *m_space = nullptr;
  search_rng m_rng;
  std::vector<observation> m_told;
  std::unordered_map<std::size_t, double> m_known; // lookups only
  std::unordered_set<std::size_t> m_pending;       // lookups only
  std::optional<observation> m_best;
  std::vector<std::size_t> m_start_points;
  bool m_transfer_expected = false;
};

} // namespace tunekit::detail
