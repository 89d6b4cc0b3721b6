#pragma once
// Parameter domains of a search space (search_space.cpp): their checks, finding a value in one,
// and the domains inferred from a list of configs.

#include <tunekit/config.hpp>
#include <tunekit/config_space.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace tunekit::detail {

/// The position of `v` in the domain of `p`: an equal value first, else a number of equal value
/// (2 matches 2.0). nullopt when there is none.
[[nodiscard]] std::optional<std::size_t> find_in_domain(const parameter &p,
                                                        const value &v) noexcept;

/// Throws `tunekit::error` on no parameter, an empty domain, a repeated name or a repeated value.
void check_params(const std::vector<parameter> &params);

/// The parameters of `configs` (`search_space::from_configs`): the fields of the first config in
/// its order, each domain the values seen, numbers in ascending order, false before true, other
/// values in the order first seen. Throws `tunekit::error` naming the config that breaks a rule.
[[nodiscard]] std::vector<parameter> inferred_parameters(std::span<const config> configs);

} // namespace tunekit::detail
