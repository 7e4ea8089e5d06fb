#include "base/log.h"

#include <errno.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kseek {

std::string LogLine(absl::string_view program, absl::Time time, absl::string_view message) {
  return absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", time, absl::UTCTimeZone()), " ",
                      program, ": ", message, "\n");
}

void Log(absl::string_view message) {
  const std::string line = LogLine(program_invocation_short_name, absl::Now(), message);
  // One write(2) per line: stdio's buffer could split a long line.
  absl::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = write(STDERR_FILENO, rest.data(), rest.size());
    if (n <= 0) return;
    rest.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace kseek
