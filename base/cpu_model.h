// The host CPU's model name, as /proc/cpuinfo gives it ("AMD EPYC 9654
// 96-Core Processor"): what a host-target verdict names as its device.
// Pure functions; safe from any thread.
#ifndef KERNELSEEK_BASE_CPU_MODEL_H_
#define KERNELSEEK_BASE_CPU_MODEL_H_

#include <string>

#include "absl/strings/string_view.h"

namespace kseek {

// The value of the first "model name" line of `cpuinfo` (the text of
// /proc/cpuinfo), or "host CPU" when there is none.
std::string CpuModelFromCpuinfo(absl::string_view cpuinfo);

// CpuModelFromCpuinfo of this machine's /proc/cpuinfo ("host CPU" when it
// cannot be read).
std::string CpuModel();

}  // namespace kseek

#endif  // KERNELSEEK_BASE_CPU_MODEL_H_
