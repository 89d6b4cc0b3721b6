#pragma once
// The in-process winners of a tuner: a hash map whose lookups take no lock (the hot path of every
// tuned call), and whose inserts (one per newly resolved key) take a mutex.
//
// Nodes are immutable once published. A bucket is a singly linked list whose head is swapped in
// with a release store; readers follow it with acquire loads. When the map grows, a larger table
// of fresh nodes is published and the old one is retired but kept until the map is destroyed, so a
// reference handed out by `find` stays valid for the map's lifetime. The memory cost is at most
// about twice the live nodes, since tables double. Each winner lives in its own heap object that
// the copies share, so its address (and a decoded form attached to it) never changes.

#include <tunekit/config.hpp>
#include <tunekit/detail/winner.hpp>
#include <tunekit/key.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace tunekit::detail {

class winner_map final {
public:
  /// `generation` counts the changes of the map (an insert, a clear); it is bumped after each
  /// change is published, so a reader that loads it before a lookup and records it on the winner
  /// found (`winner::verified`) never marks a replaced or dropped winner as current.
  explicit winner_map(std::atomic<std::uint64_t> &generation) : m_generation(generation) {
    m_table.store(make_table(16), std::memory_order_release);
  }
  winner_map(const winner_map &) = delete;
  winner_map &operator=(const winner_map &) = delete;

  [[nodiscard]] const winner *find(const key &k) const noexcept {
    const table *t = m_table.load(std::memory_order_acquire);
    const std::size_t h = k.hash();
    for (const node *n = t->buckets[h & t->mask].load(std::memory_order_acquire); n != nullptr;
         n = n->next) {
      if (n->hash == h && n->k == k) {
        return n->w.get();
      }
    }
    return nullptr;
  }

  /// Inserts or replaces the winner of `k`; returns the stored winner.
  const winner &insert(const key &k, const config &c) {
    const std::lock_guard lock(m_mutex);
    table *t = m_table.load(std::memory_order_relaxed);
    if (2 * (m_size + 1) > t->buckets.size()) {
      t = grow(*t);
    }
    const std::size_t h = k.hash();
    auto &head = t->buckets[h & t->mask];
    // A replaced key is shadowed: the new node goes first and lookups stop at it.
    auto n = std::make_unique<node>(
        node{k, std::make_shared<winner>(k, c), h, head.load(std::memory_order_relaxed)});
    const node *raw = n.get();
    t->nodes.push_back(std::move(n));
    head.store(raw, std::memory_order_release);
    ++m_size;
    m_generation.fetch_add(1, std::memory_order_acq_rel);
    return *raw->w;
  }

  /// Drops every winner. Not safe against concurrent `find`. The winners themselves stay alive
  /// until the map is destroyed, since a caller may still remember one (`winner_memo`).
  void clear() {
    const std::lock_guard lock(m_mutex);
    for (const auto &t : m_owned) {
      for (const auto &n : t->nodes) {
        m_retired.push_back(n->w);
      }
    }
    m_owned.clear();
    m_size = 0;
    m_table.store(make_table(16), std::memory_order_release);
    m_generation.fetch_add(1, std::memory_order_acq_rel);
  }

  /// Drops the winners of `keys` (keys not in the map are ignored). Not safe against concurrent
  /// `find`; as with `clear`, the winners themselves stay alive until the map is destroyed.
  void erase(const std::vector<key> &keys) {
    if (keys.empty()) {
      return;
    }
    const std::lock_guard lock(m_mutex);
    const table *old = m_table.load(std::memory_order_relaxed);
    auto dropped = [&](const key &k) {
      return std::find(keys.begin(), keys.end(), k) != keys.end();
    };
    table *t = make_table(old->buckets.size());
    std::size_t kept = 0;
    for (const auto &b : old->buckets) {
      // The visible node of each key is the first in its chain; shadowed ones are left behind.
      std::vector<const node *> visible;
      for (const node *n = b.load(std::memory_order_relaxed); n != nullptr; n = n->next) {
        if (std::none_of(visible.begin(), visible.end(),
                         [&](const node *v) { return v->hash == n->hash && v->k == n->k; })) {
          visible.push_back(n);
        }
      }
      for (const node *v : visible) {
        if (dropped(v->k)) {
          continue; // its node stays in the old table, which m_owned keeps
        }
        auto &head = t->buckets[v->hash & t->mask];
        auto n =
            std::make_unique<node>(node{v->k, v->w, v->hash, head.load(std::memory_order_relaxed)});
        head.store(n.get(), std::memory_order_relaxed);
        t->nodes.push_back(std::move(n));
        ++kept;
      }
    }
    m_size = kept;
    m_table.store(t, std::memory_order_release); // the old table stays alive in m_owned
    m_generation.fetch_add(1, std::memory_order_acq_rel);
  }

private:
  struct node {
    key k;
    std::shared_ptr<winner> w; // shared by the copies a growing table makes: one address each
    std::size_t hash;
    const node *next;
  };
  struct table {
    std::vector<std::atomic<const node *>> buckets;
    std::size_t mask;
    std::vector<std::unique_ptr<node>> nodes;
  };

  table *make_table(std::size_t n) {
    auto t = std::make_unique<table>();
    t->buckets = std::vector<std::atomic<const node *>>(n);
    t->mask = n - 1;
    table *raw = t.get();
    m_owned.push_back(std::move(t));
    return raw;
  }

  table *grow(const table &old) {
    table *t = make_table(old.buckets.size() * 2);
    for (const auto &b : old.buckets) {
      // Newest first in each old bucket: copy oldest first so shadowing is kept.
      std::vector<const node *> chain;
      for (const node *n = b.load(std::memory_order_relaxed); n != nullptr; n = n->next) {
        chain.push_back(n);
      }
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        auto &head = t->buckets[(*it)->hash & t->mask];
        auto n = std::make_unique<node>(
            node{(*it)->k, (*it)->w, (*it)->hash, head.load(std::memory_order_relaxed)});
        head.store(n.get(), std::memory_order_relaxed);
        t->nodes.push_back(std::move(n));
      }
    }
    m_table.store(t, std::memory_order_release); // the old table stays alive in m_owned
    return t;
  }

  std::atomic<table *> m_table{nullptr};
  std::vector<std::unique_ptr<table>> m_owned;    // every table ever published
  std::vector<std::shared_ptr<winner>> m_retired; // winners dropped by `clear`
  std::size_t m_size = 0;
  std::mutex m_mutex;
  std::atomic<std::uint64_t> &m_generation;
};

} // namespace tunekit::detail
