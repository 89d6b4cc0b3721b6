// "random": uniform samples of valid configs, each measured once.

#include "strategies.hpp"
#include "strategy_base.hpp"

namespace tunekit::detail {

namespace {

class random_strategy final : public strategy_base {
public:
  [[nodiscard]] std::string_view name() const noexcept override { return "random"; }
  [[nodiscard]] std::vector<std::size_t> ask(std::size_t max_batch) override {
    return draw_unseen(max_batch);
  }
};

} // namespace

std::unique_ptr<strategy> make_random_strategy() { return std::make_unique<random_strategy>(); }

} // namespace tunekit::detail
