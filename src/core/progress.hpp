#pragma once
// Live progress of a search (private to the core): candidates done of the total (or the budget),
// the phase (compiling a runtime-compiled candidate, measuring), the best time so far and its
// speed-up over the default (the space's first config, when it was measured), elapsed time and an
// estimate of the time left. On a terminal it is one line redrawn in place; elsewhere a plain line
// every few seconds; always a closing line when the search ends. The search turns it on with
// `verbose` or `TUNEKIT_PROGRESS=1`, on local rank 0 only.

#include <tunekit/config.hpp>
#include <tunekit/measure.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tunekit::detail {

/// Where progress goes and how often.
struct progress_output {
  using clock = std::chrono::steady_clock;
  /// The stream written to; null: `std::cerr`.
  std::ostream *out = nullptr;
  /// A terminal: one line redrawn in place (`\r`, erase to the end of the line). Otherwise plain
  /// lines, one per `plain_interval`.
  bool terminal = false;
  /// Columns of the terminal; the redrawn line is cut to fit (a wrapped line cannot be redrawn).
  std::size_t width = 100;
  /// The clock; empty: `clock::now`.
  std::function<clock::time_point()> now{};
  /// Fewest time between two redraws on a terminal.
  std::chrono::milliseconds terminal_interval{100};
  /// Time between two plain lines.
  std::chrono::milliseconds plain_interval{5000};

  /// `std::cerr`, a terminal when stderr is one (`isatty`), with its width.
  [[nodiscard]] static progress_output to_stderr();
};

/// What the next candidate waits for.
enum class progress_phase {
  compile, ///< its preparation (a runtime compile) is not done yet
  measure, ///< it is prepared (or needs nothing) and is being timed
};

/// Progress of one search. A reporter made with `on` false writes nothing and every call returns
/// at once, so the search calls it unconditionally.
class progress_reporter final {
public:
  /// `on`: whether to write anything; `what`: the search's context ("tuner 'x', key (...)");
  /// `total`: candidates the search plans to measure (the budget when a strategy searches);
  /// `max_time_s`: the search's wall-time budget (0: none), which caps the estimate;
  /// `default_index`: the candidate whose time the speed-up is over; `preparer`: asked which
  /// candidates are prepared (null: nothing is).
  progress_reporter(bool on, progress_output out, std::string what, std::size_t total,
                    double max_time_s, std::size_t default_index,
                    const candidate_preparer *preparer);
  progress_reporter(const progress_reporter &) = delete;
  progress_reporter &operator=(const progress_reporter &) = delete;
  progress_reporter(progress_reporter &&) = delete;
  progress_reporter &operator=(progress_reporter &&) = delete;
  /// Ends a line left open on a terminal (a search that threw).
  ~progress_reporter();

  [[nodiscard]] bool on() const noexcept { return m_on; }

  /// A batch is about to be measured; `prepared` are the configs handed to the preparer for it.
  void begin_batch(std::span<const config> prepared);
  /// Candidate `c` is next: compile phase while its preparation is pending, else measure. Redraws
  /// a terminal's line (at once when the phase changed); plain lines come from `update`.
  void starting(const config &c);
  /// This rank measured candidate `index` (+infinity: it failed). Draws nothing: call `update`.
  void measured(std::size_t index, double time_ms);
  /// The batch `indices` was reduced across ranks: `times` are the worst-rank times, `others` how
  /// many of the batch other ranks measured. Draws when due.
  void end_batch(std::span<const std::size_t> indices, std::span<const double> times,
                 std::size_t others);
  /// Erases the line on a terminal so that another line can be printed; the next `update` redraws.
  void interrupt();
  /// Draws when due (a redraw on a terminal, a plain line after `plain_interval`).
  void update();
  /// Draws the closing state: the last redraw and a newline on a terminal, a plain line otherwise.
  void finish();

  /// The text of the current state, without the terminal's control characters.
  [[nodiscard]] std::string text() const;

private:
  void draw(bool force);
  [[nodiscard]] progress_output::clock::time_point now() const;
  [[nodiscard]] std::size_t prepared_count() const;

  bool m_on = false;
  progress_output m_out;
  std::ostream *m_stream = nullptr;
  std::string m_what;
  std::size_t m_total = 0;
  double m_max_time_s = 0;
  std::size_t m_default_index = 0;
  const candidate_preparer *m_preparer = nullptr;
  progress_output::clock::time_point m_start{};
  std::optional<progress_output::clock::time_point> m_last_draw;
  std::vector<config> m_batch; // the configs being prepared for the current batch
  progress_phase m_phase = progress_phase::measure;
  std::size_t m_done = 0;
  double m_best_ms = std::numeric_limits<double>::infinity();      // reduced batches and own
  double m_confirmed_ms = std::numeric_limits<double>::infinity(); // reduced batches only
  std::optional<double> m_default_ms;
  bool m_line_open = false; // a terminal line is drawn and not ended
  bool m_finished = false;
};

/// `12.3 s`, `4m05s`, `1h02m`: a duration in a progress line.
[[nodiscard]] std::string format_duration(double seconds);

} // namespace tunekit::detail
