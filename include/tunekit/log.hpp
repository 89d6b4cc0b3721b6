#pragma once
/// \file log.hpp
/// Where tunekit's messages go. INFO lines (verbose tuning) and warnings (skipped files, dependency
/// drift) are passed to a sink the tuner owns; the default prints `[tunekit] ...` lines, INFO to
/// stdout and warnings to stderr.

#include <functional>
#include <string_view>

namespace tunekit {

enum class log_level { info, warning };

using log_sink = std::function<void(log_level, std::string_view)>;

/// The default sink: `[tunekit] INFO ...` on stdout, `[tunekit] WARNING ...` on stderr.
[[nodiscard]] log_sink default_log_sink();

} // namespace tunekit
