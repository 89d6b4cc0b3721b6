#include "progress.hpp"

#include "format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <sys/ioctl.h>
#include <unistd.h>

namespace tunekit::detail {

namespace {
constexpr const char *erase_line = "\r\033[K";

// `s` cut to at most `width` bytes, never inside a UTF-8 sequence.
std::string fit(std::string s, std::size_t width) {
  if (s.size() <= width) {
    return s;
  }
  std::size_t n = width;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0U) == 0x80U) {
    --n;
  }
  s.resize(n);
  return s;
}
} // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) {
    seconds = 0;
  }
  char buf[32];
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  } else if (seconds < 3600) {
    const auto s = static_cast<long>(std::lround(seconds));
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    const auto m = static_cast<long>(std::lround(seconds / 60));
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", m / 60, m % 60);
  }
  return buf;
}

progress_output progress_output::to_stderr() {
  progress_output o;
  o.out = &std::cerr;
  const int fd = ::fileno(stderr);
  o.terminal = ::isatty(fd) == 1;
  if (o.terminal) {
    winsize ws{};
    if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
      o.width = ws.ws_col;
    }
  }
  return o;
}

progress_reporter::progress_reporter(bool on, progress_output out, std::string what,
                                     std::size_t total, double max_time_s,
                                     std::size_t default_index, const candidate_preparer *preparer)
    : m_on(on), m_out(std::move(out)), m_stream(m_out.out != nullptr ? m_out.out : &std::cerr),
      m_what(std::move(what)), m_total(total), m_max_time_s(max_time_s),
      m_default_index(default_index), m_preparer(preparer) {
  m_start = now();
  if (!m_out.terminal) {
    m_last_draw = m_start; // the first plain line after one interval
  }
}

progress_reporter::~progress_reporter() {
  if (m_on && m_line_open) {
    try {
      *m_stream << '\n' << std::flush;
    } catch (...) { // NOLINT(bugprone-empty-catch): nothing to do about a failing stream here
    }
  }
}

progress_output::clock::time_point progress_reporter::now() const {
  return m_out.now ? m_out.now() : progress_output::clock::now();
}

std::size_t progress_reporter::prepared_count() const {
  return static_cast<std::size_t>(std::count_if(m_batch.begin(), m_batch.end(), [&](const auto &c) {
    return m_preparer->prepare_ms(c).has_value();
  }));
}

void progress_reporter::begin_batch(std::span<const config> prepared) {
  if (!m_on || m_preparer == nullptr) {
    return;
  }
  m_batch.assign(prepared.begin(), prepared.end());
}

void progress_reporter::starting(const config &c) {
  if (!m_on) {
    return;
  }
  const progress_phase phase = m_preparer != nullptr && !m_preparer->prepare_ms(c).has_value()
                                   ? progress_phase::compile
                                   : progress_phase::measure;
  const bool changed = phase != m_phase;
  m_phase = phase;
  if (m_out.terminal) {
    draw(changed); // a wait for a compile shows at once
  }
}

void progress_reporter::measured(std::size_t index, double time_ms) {
  if (!m_on) {
    return;
  }
  ++m_done;
  if (std::isfinite(time_ms)) {
    m_best_ms = std::min(m_best_ms, time_ms);
  }
  if (index == m_default_index) {
    m_default_ms = time_ms;
  }
}

void progress_reporter::end_batch(std::span<const std::size_t> indices,
                                  std::span<const double> times, std::size_t others) {
  if (!m_on) {
    return;
  }
  m_done += others;
  // The worst-rank times replace this rank's own: the best is recomputed from them.
  for (std::size_t j = 0; j < indices.size() && j < times.size(); ++j) {
    if (std::isfinite(times[j])) {
      m_confirmed_ms = std::min(m_confirmed_ms, times[j]);
    }
    if (indices[j] == m_default_index) {
      m_default_ms = times[j];
    }
  }
  m_best_ms = m_confirmed_ms;
  m_batch.clear();
  draw(false);
}

void progress_reporter::interrupt() {
  if (!m_on || !m_line_open) {
    return;
  }
  *m_stream << erase_line << std::flush;
  m_line_open = false;
  m_last_draw.reset();
}

void progress_reporter::update() {
  if (m_on) {
    draw(false);
  }
}

void progress_reporter::finish() {
  if (!m_on || m_finished) {
    return;
  }
  m_finished = true;
  draw(true);
  if (m_line_open) {
    *m_stream << '\n' << std::flush;
    m_line_open = false;
  }
}

std::string progress_reporter::text() const {
  const double elapsed = std::chrono::duration<double>(now() - m_start).count();
  std::ostringstream s;
  s << m_done << '/' << m_total << " candidates, ";
  if (m_finished) {
    s << "done";
  } else {
    s << (m_phase == progress_phase::compile ? "compiling" : "measuring");
  }
  if (m_preparer != nullptr && !m_batch.empty() && !m_finished) {
    s << " (" << prepared_count() << '/' << m_batch.size() << " of the batch compiled)";
  }
  if (std::isfinite(m_best_ms)) {
    s << ", best " << format_ms(m_best_ms);
    if (m_default_ms && std::isfinite(*m_default_ms) && m_best_ms > 0) {
      char factor[32];
      std::snprintf(factor, sizeof factor, "%.2f", *m_default_ms / m_best_ms);
      s << " (" << factor << "x over the default)";
    }
  } else {
    s << ", nothing valid yet";
  }
  s << ", " << format_duration(elapsed) << " elapsed";
  if (!m_finished && m_done > 0 && m_done < m_total) {
    double left = elapsed / static_cast<double>(m_done) * static_cast<double>(m_total - m_done);
    if (m_max_time_s > 0) {
      left = std::min(left, std::max(0.0, m_max_time_s - elapsed));
    }
    s << ", about " << format_duration(left) << " left";
  }
  return s.str();
}

void progress_reporter::draw(bool force) {
  const auto t = now();
  if (!force && m_last_draw) {
    const auto interval = m_out.terminal ? m_out.terminal_interval : m_out.plain_interval;
    if (t - *m_last_draw < interval) {
      return;
    }
  }
  m_last_draw = t;
  if (m_out.terminal) {
    const std::string line = "[tunekit] " + text() + " | " + m_what;
    *m_stream << erase_line << fit(line, m_out.width > 1 ? m_out.width - 1 : 1) << std::flush;
    m_line_open = true;
  } else {
    *m_stream << "[tunekit] " << m_what << ": " << text() << '\n' << std::flush;
  }
}

} // namespace tunekit::detail
