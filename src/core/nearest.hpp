#pragma once
// Nearest-key serving (docs/shapes.md): when nothing is stored for a call's key and the tuner's
// miss policy is `nearest`, the winner of the nearest key the tuner knows (its in-process winners,
// and the entries of its winner cache on disk, read once) that is a kept candidate of the call.

#include "candidates.hpp"

#include <tunekit/config.hpp>
#include <tunekit/hardware.hpp>
#include <tunekit/key.hpp>
#include <tunekit/winner_cache.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tunekit::detail {

class known_keys {
public:
  /// A winner this process holds for the stored key `k`.
  void add(const key &k, const config &c);
  /// The entries of `cache` recorded for `fn` on `hw` with the space `space_digest`, the key
  /// buckets `buckets` and the measurer `measurer` (entries recording none count too), read the
  /// first time only.
  void scan_once(const winner_cache &cache, const function_identity &fn, const hardware_info &hw,
                 const std::string &space_digest, const std::string &buckets,
                 const std::string &measurer);

  /// The nearest known key to the call's stored key whose winner is a kept candidate of the call:
  /// (candidate index, the key it came from). Keys with other pinned values are not compared.
  /// `over`: the positions of the input key the distance counts (`shape_options::nearest_over`).
  [[nodiscard]] std::optional<std::pair<std::size_t, key>>
  nearest(call_candidates &c, std::span<const std::size_t> over = {}) const;

private:
  std::vector<std::pair<key, config>> m_known; // stored keys, in the order they became known
  bool m_scanned = false;
};

} // namespace tunekit::detail
