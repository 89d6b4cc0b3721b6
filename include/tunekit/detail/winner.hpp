#pragma once
/// \file detail/winner.hpp
/// An in-process winner: the config a key resolved to, and room for one decoded form of it (the
/// user's own struct, see `tunekit::decoded`), attached on the first call that needs it so that
/// later calls read it with one atomic load and no lookups by name.

#include <tunekit/config.hpp>
#include <tunekit/key.hpp>

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>

namespace tunekit::detail {

/// A decoded form of a winner, tagged with the decoder's type so a mismatched reader never
/// misreads it.
struct attachment {
  const void *tag = nullptr;
  std::shared_ptr<const void> value;
};

struct winner {
  winner(key key_of, config c) : k(std::move(key_of)), cfg(std::move(c)) {}
  winner(const winner &) = delete;
  winner &operator=(const winner &) = delete;
  ~winner() { delete decoded.load(std::memory_order_relaxed); }

  const key k;
  const config cfg;
  /// The tuner generation (see `winner_map`) at which a lookup last found this winner current: a
  /// caller that remembers this winner may use it again without a lookup while the tuner's
  /// generation still equals this value.
  mutable std::atomic<std::uint64_t> verified{std::numeric_limits<std::uint64_t>::max()};
  /// Set once (compare-and-swap) by `attach`; never changed afterwards.
  mutable std::atomic<const attachment *> decoded{nullptr};

  /// The decoded form of type tag `tag`, or null when none (or another type's) is attached.
  [[nodiscard]] const void *find_decoded(const void *tag) const noexcept {
    const attachment *a = decoded.load(std::memory_order_acquire);
    return a != nullptr && a->tag == tag ? a->value.get() : nullptr;
  }
  /// Attaches `value` unless something is attached already; returns what is attached for `tag`
  /// afterwards (null when another type won).
  const void *attach(const void *tag, std::shared_ptr<const void> value) const {
    auto *a = new attachment{tag, std::move(value)};
    const attachment *expected = nullptr;
    if (!decoded.compare_exchange_strong(expected, a, std::memory_order_acq_rel)) {
      delete a;
      return expected->tag == tag ? expected->value.get() : nullptr;
    }
    return a->value.get();
  }
};

/// A tuned function's last winner: one atomic pointer, reset (not copied) when the function is
/// copied, so that every copy learns its own.
class winner_memo {
public:
  winner_memo() = default;
  winner_memo(const winner_memo & /*other*/) noexcept {}
  winner_memo &operator=(const winner_memo & /*other*/) noexcept {
    m_last.store(nullptr, std::memory_order_relaxed);
    return *this;
  }
  ~winner_memo() = default;

  /// The remembered winner when it is the winner of `k` and still current at `generation`.
  [[nodiscard]] const winner *find(const key &k, std::uint64_t generation) const noexcept {
    const winner *w = m_last.load(std::memory_order_acquire);
    return w != nullptr && w->verified.load(std::memory_order_relaxed) == generation && w->k == k
               ? w
               : nullptr;
  }
  void remember(const winner *w) const noexcept { m_last.store(w, std::memory_order_release); }

private:
  mutable std::atomic<const winner *> m_last{nullptr};
};

} // namespace tunekit::detail
