#pragma once
/// \file strategy/search_space.hpp
/// The space a search strategy explores, with its structure visible: named parameters with ordered
/// domains, configs numbered by mixed radix over those domains, a validity test, valid samples and
/// neighbourhoods. A product space is never materialised: a config is built from its index when
/// asked, and constraints are evaluated only for the configs a strategy looks at.
///
/// \code
/// auto space = tunekit::search_space::product(
///     {{"MWG", {16, 32, 64, 128}}, {"MDIMC", {8, 16, 32}}, {"VWM", {1, 2, 4, 8}}},
///     {[](const tunekit::config& c) {
///        return c.get_int("MWG") % (c.get_int("MDIMC") * c.get_int("VWM")) == 0; }});
/// tunekit::search_rng rng(42);
/// std::vector<std::size_t> some = space.sample(rng, 10);       // 10 distinct valid configs
/// tunekit::config c = space.to_config(some[0]);
/// auto close = space.neighbours(some[0], tunekit::neighbourhood::adjacent);
/// \endcode

#include <tunekit/config.hpp>
#include <tunekit/config_space.hpp>
#include <tunekit/strategy/rng.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace tunekit {

/// Which configs count as neighbours of a config.
enum class neighbourhood {
  hamming,  ///< one parameter changed to any other value of its domain
  adjacent, ///< one parameter moved to the previous or next value of its ordered domain
};

/// A space of configs for search strategies: the product of ordered parameter domains, and which
/// points of that product are valid. Built from parameters and constraints (validity evaluated
/// lazily), or from an explicit list of configs (the valid set is the list). Copies share the
/// immutable state, so a copy is cheap. Queries are thread-safe.
class search_space final {
public:
  /// An empty space (no parameters, nothing valid).
  search_space() = default;

  /// The product of `params` (the last parameter varies fastest, as in `config_space::product`),
  /// valid where every constraint holds. Nothing is enumerated. Throws `tunekit::error` on no
  /// parameter, an empty domain, a repeated name or value, or a product beyond 2^62 points.
  [[nodiscard]] static search_space product(std::vector<parameter> params,
                                            std::vector<constraint> constraints = {});

  /// The configs of `configs`, with the structure inferred: the parameters are the fields of the
  /// first config in its order; each domain holds the values seen, numbers in ascending order,
  /// false before true, other values in the order first seen. Every config must have the same
  /// field names in the same order and no template id. Throws `tunekit::error` naming the config
  /// that breaks a rule, or on an empty or repeated list.
  [[nodiscard]] static search_space from_configs(std::span<const config> configs);

  /// The configs of `configs` within the declared structure `params` (domain orders as given).
  /// Fields are matched by name; a config missing a parameter or holding a value outside its
  /// domain is an error that names it.
  [[nodiscard]] static search_space from_configs(std::vector<parameter> params,
                                                 std::span<const config> configs);

  /// The space of a tuner's `config_space`: its recorded parameters when it was built as a
  /// product, the inferred structure otherwise; the valid set is its list, and
  /// `position_of` gives a config's place in that list.
  [[nodiscard]] static search_space from(const config_space &space);

  [[nodiscard]] const std::vector<parameter> &parameters() const noexcept;
  [[nodiscard]] std::size_t dimensions() const noexcept;
  /// Number of values of parameter `p`.
  [[nodiscard]] std::size_t domain_size(std::size_t p) const;
  /// Number of points of the parameter product (valid or not).
  [[nodiscard]] std::size_t product_size() const noexcept;
  /// True when the valid set is an explicit list.
  [[nodiscard]] bool is_listed() const noexcept;
  /// Number of valid configs when known without evaluating constraints (a list), else nullopt.
  [[nodiscard]] std::optional<std::size_t> valid_count() const noexcept;

  /// True when `index` is a point of the product and a valid config (listed, or every constraint
  /// holds). Never throws: a constraint that throws makes the config invalid.
  [[nodiscard]] bool is_valid(std::size_t index) const noexcept;

  /// The config at `index` (valid or not). Throws `tunekit::error` when `index` is outside the
  /// product.
  [[nodiscard]] config to_config(std::size_t index) const;
  /// The index of `c`: fields matched by name (extra fields ignored), numbers compared by value
  /// (2 matches 2.0). nullopt when a parameter is missing or a value is outside its domain.
  /// Validity is not checked.
  [[nodiscard]] std::optional<std::size_t> index_of(const config &c) const;

  /// Position of the value of parameter `p` at `index` in its domain.
  [[nodiscard]] std::size_t digit(std::size_t index, std::size_t p) const noexcept;
  /// All positions of `index`, one per parameter.
  [[nodiscard]] std::vector<std::uint32_t> digits(std::size_t index) const;
  /// The index of the given positions (one per parameter, each within its domain).
  [[nodiscard]] std::size_t from_digits(std::span<const std::uint32_t> digits) const;
  /// `index` with parameter `p` set to position `d`.
  [[nodiscard]] std::size_t with_digit(std::size_t index, std::size_t p,
                                       std::size_t d) const noexcept;

  /// The valid neighbours of `index`, parameter by parameter, in domain order.
  [[nodiscard]] std::vector<std::size_t> neighbours(std::size_t index, neighbourhood kind) const;

  /// One valid config drawn uniformly: from the list, or by rejection over the product with a
  /// fallback to enumerating the valid set (products up to `enumeration_limit`). nullopt when
  /// nothing valid could be found.
  [[nodiscard]] std::optional<std::size_t> sample_one(search_rng &rng) const;
  /// Up to `count` distinct valid configs drawn uniformly (fewer only when the space holds fewer,
  /// or when a product too large to enumerate is almost entirely invalid).
  [[nodiscard]] std::vector<std::size_t> sample(search_rng &rng, std::size_t count) const;

  /// Every valid index in ascending order: the list, or an enumeration of the product (done once
  /// and kept). Throws `tunekit::error` for a product beyond `enumeration_limit`.
  [[nodiscard]] const std::vector<std::size_t> &valid_indices() const;

  /// For a space built from a list: the position in that list of the config at `index`.
  [[nodiscard]] std::optional<std::size_t> position_of(std::size_t index) const;
  /// For a space built from a list: the index of the config at `position` of that list.
  [[nodiscard]] std::size_t index_at(std::size_t position) const;

  /// Largest product that `valid_indices` and the sampling fallback enumerate.
  static constexpr std::size_t enumeration_limit = std::size_t{1} << 24U;

private:
  struct state;
  [[nodiscard]] static std::shared_ptr<state> make_state(std::vector<parameter> params);
  std::shared_ptr<const state> m_state;
};

/// Maps configs recorded elsewhere (winners and the best candidates of other devices or keys)
/// into `space`: the indices of the ones that are valid there, first occurrence kept, in the order
/// given. Configs that do not fit (a missing parameter, a value outside the domain, invalid) are
/// skipped. This is what a search takes as its transfer start points.
[[nodiscard]] std::vector<std::size_t> transfer_indices(const search_space &space,
                                                        std::span<const config> configs);

/// The first `k` configs of `fastest_first` (measured on one other device or for another key,
/// fastest first) that differ from every config taken before them in at least two parameters (a
/// parameter missing from one of the two counts as differing; configs of different templates
/// always differ). A config one parameter away from a
/// faster one is passed over, so that `k` transfer start points from one source cover up to `k`
/// regions of the space rather than its winner and the winner's neighbours, which a search that
/// starts from the winner scores anyway.
[[nodiscard]] std::vector<config> distinct_best(std::span<const config> fastest_first,
                                                std::size_t k);

} // namespace tunekit
