// A daemon's log: one line per event on stderr, "TIME PROGRAM: message",
// TIME in UTC to the millisecond (2026-12-01T14:05:09.123Z), PROGRAM the
// name the process was started by (kernelseekd, kseek-worker). Thread-safe:
// each line is one write, so lines of two threads never interleave.
#ifndef KERNELSEEK_BASE_LOG_H_
#define KERNELSEEK_BASE_LOG_H_

#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace kseek {

// Writes one line: `message` with the time and the program before it.
void Log(absl::string_view message);

// Log(absl::StrFormat(format, args...)).
template <typename... Args>
void Logf(const absl::FormatSpec<Args...>& format, const Args&... args) {
  Log(absl::StrFormat(format, args...));
}

// The line Log writes for `message` at `time` (with its newline).
std::string LogLine(absl::string_view program, absl::Time time, absl::string_view message);

}  // namespace kseek

#endif  // KERNELSEEK_BASE_LOG_H_
