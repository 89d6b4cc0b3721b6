// "local": hill climbing over a neighbourhood (`local_settings::moves`), neighbours tried in a
// random order and the first improvement taken; when no neighbour improves, a restart from a
// random config.

#include "strategies.hpp"
#include "strategy_base.hpp"

#include <cmath>

namespace tunekit::detail {

namespace {

class local_strategy final : public strategy_base {
public:
  explicit local_strategy(const local_settings &settings) : m_settings(settings) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "local"; }
  [[nodiscard]] std::vector<std::size_t> ask(std::size_t max_batch) override;

private:
  void on_start() override;
  void on_tell(std::size_t index, double time_ms) override;
  void move_to(std::size_t index);

  local_settings m_settings;
  bool m_has_current = false;
  std::size_t m_current = 0;
  double m_current_time = 0;
  std::vector<std::size_t> m_queue; // untried neighbours of the current config, next at the back
};

void local_strategy::on_start() {
  m_has_current = false;
  m_queue.clear();
}

void local_strategy::move_to(std::size_t index) {
  m_has_current = true;
  m_current = index;
  m_current_time = time_of(index);
  m_queue = space().neighbours(index, m_settings.moves);
  rng().shuffle(std::span<std::size_t>(m_queue));
}

void local_strategy::on_tell(std::size_t index, double time_ms) {
  if (!std::isfinite(time_ms)) {
    return;
  }
  if (!m_has_current || time_ms < m_current_time) {
    move_to(index); // first improvement
  }
}

std::vector<std::size_t> local_strategy::ask(std::size_t max_batch) {
  std::vector<std::size_t> out;
  while (out.size() < max_batch) {
    if (m_has_current) {
      while (!m_queue.empty() && seen(m_queue.back())) {
        m_queue.pop_back();
      }
      if (!m_queue.empty()) {
        out.push_back(m_queue.back());
        mark_pending(m_queue.back());
        m_queue.pop_back();
        continue;
      }
      if (!out.empty()) {
        break; // the neighbourhood is spent: restart after these are told
      }
      m_has_current = false; // a local optimum: restart
    }
    auto fresh = draw_unseen(1);
    if (fresh.empty()) {
      break;
    }
    out.push_back(fresh.front());
    if (out.size() == 1 && max_batch > 1) {
      break; // measure the restart point before walking from it
    }
  }
  return out;
}

} // namespace

std::unique_ptr<strategy> make_local_strategy(const local_settings &settings) {
  return std::make_unique<local_strategy>(settings);
}

} // namespace tunekit::detail
