#pragma once
/// \file shapes.hpp
/// Keys that change on almost every call (a batch size, a sequence length): buckets that map a
/// key value to the bucket it belongs to before every lookup, so that one winner serves a range of
/// values, and nearest-key serving, which answers a key nothing is stored for with the winner of
/// the nearest key that has one (docs/shapes.md).

#include <tunekit/key.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tunekit {

/// How one value of a key is bucketed. Only int values are bucketed; values of 1 or less are
/// left as they are.
struct key_bucket {
  enum class rule : std::uint8_t {
    pow2,     ///< the next power of two at or above the value (100 -> 128, 128 -> 128)
    edges,    ///< the first edge at or above the value; above the last edge, the last edge
    multiple, ///< the next multiple of `multiple` at or above the value
  };
  /// Which value of the key (0: the first value `key_fn` returns).
  std::size_t position = 0;
  rule kind = rule::pow2;
  /// `rule::edges`: strictly ascending.
  std::vector<std::int64_t> edges{};
  /// `rule::multiple`: at least 1.
  std::int64_t multiple = 1;

  [[nodiscard]] static key_bucket pow2(std::size_t position) {
    return {.position = position, .kind = rule::pow2};
  }
  [[nodiscard]] static key_bucket at_edges(std::size_t position, std::vector<std::int64_t> e) {
    return {.position = position, .kind = rule::edges, .edges = std::move(e)};
  }
  [[nodiscard]] static key_bucket round_up(std::size_t position, std::int64_t m) {
    return {.position = position, .kind = rule::multiple, .multiple = m};
  }

  /// `v` in its bucket.
  [[nodiscard]] std::int64_t apply(std::int64_t v) const noexcept;
  /// `[0] pow2`, `[1] edges(1,16,64)`, `[2] multiple(64)`.
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const key_bucket &, const key_bucket &) = default;
};

/// What a call does when no stored source answers its (bucketed) key.
enum class miss_policy : std::uint8_t {
  tune,    ///< the default, then a search (the seeds' behaviour)
  nearest, ///< the winner of the nearest key the tuner knows, else the default, else a search
};

/// The key transforms and the miss policy of a tuner.
struct shape_options {
  /// At most one per position; checked when the tuner is built.
  std::vector<key_bucket> buckets{};
  miss_policy on_miss = miss_policy::tune;
  /// The key positions nearest-key serving measures the distance over (M of an (M, N, K) key,
  /// say); every other value must then be equal, numbers too, as vLLM's per-shape files are
  /// chosen by their other values and searched by M. Empty: every numeric value.
  std::vector<std::size_t> nearest_over{};
};

/// Throws `tunekit::error` naming the tuner when `buckets` are not valid: two for one position,
/// edges not strictly ascending or empty, a multiple below 1.
void check_buckets(std::string_view tuner, std::span<const key_bucket> buckets);

/// `k` with each bucketed value in its bucket. Throws `tunekit::error` when a bucketed position is
/// past the end of `k` or holds a value that is not an int.
[[nodiscard]] key bucket_key(const key &k, std::span<const key_bucket> buckets);

/// The buckets as text, in position order (`[0] pow2, [2] edges(1,16,64)`); empty for none. What
/// a cache entry records.
[[nodiscard]] std::string describe_buckets(std::span<const key_bucket> buckets);

/// The distance between two keys for nearest-key serving: the sum over their numeric values of
/// the absolute differences, when both have the same length and every other value is equal (an
/// int and a double compare as numbers); nullopt when they cannot be compared. With `over`, only
/// the values at those positions count (they must be numbers), and every other value must be
/// equal.
[[nodiscard]] std::optional<double> key_distance(const key &a, const key &b,
                                                 std::span<const std::size_t> over = {});

/// The position in `known` of the key nearest to `k` (`key_distance` over `over`), `k` itself
/// excluded; ties go to the key whose values are smaller, position by position, so that every
/// process picks the same one. nullopt when none can be compared.
[[nodiscard]] std::optional<std::size_t> nearest_key(const key &k, std::span<const key> known,
                                                     std::span<const std::size_t> over = {});

} // namespace tunekit
