#pragma once
/// \file detail/winner.hpp
/// An in-process winner: the config a key resolved to, and room for one decoded form of it (the
/// user's own struct, see `tunekit::decoded`), attached on the first call that needs it so that
/// later calls read it with one atomic load and no lookups by name.

#include <tunekit/config.hpp>

#include <atomic>
#include <memory>

namespace tunekit::detail {

/// A decoded form of a winner, tagged with the decoder's type so a mismatched reader never
/// misreads it.
struct attachment {
  const void *tag = nullptr;
  std::shared_ptr<const void> value;
};

struct winner {
  explicit winner(config c) : cfg(std::move(c)) {}
  winner(const winner &) = delete;
  winner &operator=(const winner &) = delete;
  ~winner() { delete decoded.load(std::memory_order_relaxed); }

  const config cfg;
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

} // namespace tunekit::detail
