// The registry of strategies: one table maps each name to its factory, and `make_strategy` and
// `strategy_names` both read it. Adding a strategy is its own file, its factory in strategies.hpp
// and one row here.

#include "strategies.hpp"

#include <tunekit/error.hpp>

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

namespace {

struct registered_strategy {
  std::string_view name;
  std::unique_ptr<strategy> (*make)();
};

// The default first (`default_strategy_name`), then the order `strategy_names` lists them in.
constexpr std::array<registered_strategy, 5> registry{{
    {"hybrid", [] { return detail::make_hybrid_strategy(); }},
    {"tpe", [] { return detail::make_tpe_strategy(); }},
    {"genetic", [] { return detail::make_genetic_strategy(); }},
    {"local", [] { return detail::make_local_strategy(); }},
    {"random", [] { return detail::make_random_strategy(); }},
}};
static_assert(registry.front().name == default_strategy_name);

} // namespace

std::vector<std::string> strategy_names() {
  std::vector<std::string> out;
  for (const auto &r : registry) {
    out.emplace_back(r.name);
  }
  return out;
}

std::unique_ptr<strategy> make_strategy(std::string_view name) {
  for (const auto &r : registry) {
    if (r.name == name) {
      return r.make();
    }
  }
  std::string known;
  for (const auto &r : registry) {
    known += (known.empty() ? "" : ", ") + std::string(r.name);
  }
  throw error("unknown search strategy '" + std::string(name) + "' (known: " + known + ")");
}

} // namespace tunekit
