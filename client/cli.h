// Shared pieces of the `kseek` command line: subcommand flag parsing with
// exit code 2 for bad usage, and terminal detection.
#ifndef KERNELSEEK_CLIENT_CLI_H_
#define KERNELSEEK_CLIENT_CLI_H_

#include <string>
#include <vector>

namespace kseek::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;       // done, and (for eval) all correct
inline constexpr int kExitFailed = 1;   // done, and the verdict is negative
inline constexpr int kExitUsage = 2;    // bad usage or bad input

// Parses `--name=value`, `--name value` and `--[no]bool` for the Abseil
// flags named in `allowed`; everything else is positional. On an unknown
// flag or a bad value, prints the problem and `usage` to stderr and returns
// false. `--help` prints usage and returns false with *help set.
bool ParseFlags(const std::vector<std::string>& args, const std::vector<std::string>& allowed,
                const std::string& usage, std::vector<std::string>* positional, bool* help);

bool StderrIsTerminal();

}  // namespace kseek::cli

#endif  // KERNELSEEK_CLIENT_CLI_H_
