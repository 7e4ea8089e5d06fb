// The worker's log: one timestamped line per event on stderr (stdout carries
// only the "listening on ADDR" line). Thread-safe: each line is one write.
#ifndef KERNELSEEK_WORKER_LOG_H_
#define KERNELSEEK_WORKER_LOG_H_

#include <stdio.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kseek {

inline void WorkerLog(absl::string_view message) {
  const std::string line =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
                   " kseek-worker: ", message, "\n");
  fwrite(line.data(), 1, line.size(), stderr);
  fflush(stderr);
}

}  // namespace kseek

#endif  // KERNELSEEK_WORKER_LOG_H_
