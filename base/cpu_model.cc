#include "base/cpu_model.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "base/file.h"

namespace kseek {

std::string CpuModelFromCpuinfo(absl::string_view cpuinfo) {
  for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
    if (!absl::StartsWith(line, "model name")) continue;
    const size_t colon = line.find(':');
    if (colon != absl::string_view::npos) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "host CPU";
}

std::string CpuModel() { return CpuModelFromCpuinfo(ReadFile("/proc/cpuinfo").value_or("")); }

}  // namespace kseek
