// The wall-clock time as the store and the trace keep it: milliseconds since
// the Unix epoch. Safe from any thread.
#ifndef KERNELSEEK_BASE_TIME_H_
#define KERNELSEEK_BASE_TIME_H_

#include <cstdint>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kseek {

inline int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

}  // namespace kseek

#endif  // KERNELSEEK_BASE_TIME_H_
