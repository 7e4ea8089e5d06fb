// Helpers for the tests that run the attention kernels' CPU emulations
// (tests/hopper_emulation_test.cc, tests/blackwell_emulation_test.cc):
// running one built configuration, and reading its output. Each emulator
// (tests/hopper_emu/emu_host.h's driver) prints a line per run and ends
// with "N/M passed".
#ifndef KERNELSEEK_TESTS_EMULATION_TESTING_H_
#define KERNELSEEK_TESTS_EMULATION_TESTING_H_

#include <string>
#include <utility>
#include <vector>

#include "tests/test_util.h"

namespace kseek::testing {

// Runs build/bin/<program> with `args` (a name filter, --shard=I/N).
inline ProcessResult RunEmulator(const std::string& program, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BinDir() + "/" + program};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv);
}

// Runs that passed and runs in all, from the last "N/M passed" line;
// {-1, -1} without one.
inline std::pair<int, int> EmulationCounts(const ProcessResult& r) {
  const size_t end = r.out.rfind(" passed");
  if (end == std::string::npos) return {-1, -1};
  const size_t line = r.out.rfind('\n', end);
  const size_t begin = line == std::string::npos ? 0 : line + 1;
  const std::string summary = r.out.substr(begin, end - begin);
  const size_t slash = summary.find('/');
  if (slash == std::string::npos) return {-1, -1};
  return {std::stoi(summary.substr(0, slash)), std::stoi(summary.substr(slash + 1))};
}

// The last 4000 characters of an emulator's output, for a failure message.
inline std::string EmulationTail(const std::string& text) {
  return text.size() > 4000 ? text.substr(text.size() - 4000) : text;
}

// A planted bug that no longer applies gives a kernel whose launches fail
// with the reason ("launch returned"), which is not the failure a plant
// wants: that line, or "" when every launch ran.
inline std::string NotLaunched(const ProcessResult& r) {
  const size_t at = r.out.find("launch returned");
  return at == std::string::npos ? "" : r.out.substr(at, r.out.find('\n', at) - at);
}

}  // namespace kseek::testing

#endif  // KERNELSEEK_TESTS_EMULATION_TESTING_H_
