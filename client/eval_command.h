// `kseek eval`, `kseek compile` and `kseek eval-shipped` in local mode: the
// harness linked into the CLI, no daemon.
#ifndef KERNELSEEK_CLIENT_EVAL_COMMAND_H_
#define KERNELSEEK_CLIENT_EVAL_COMMAND_H_

#include <string>
#include <vector>

#include "harness/src/verdict.h"

namespace kseek::cli {

int EvalCommand(const std::vector<std::string>& args);
int CompileCommand(const std::vector<std::string>& args);
int EvalShippedCommand(const std::vector<std::string>& args);

// The human-readable verdict: a row per scenario and a summary line.
std::string FormatVerdict(const Verdict& v);

}  // namespace kseek::cli

#endif  // KERNELSEEK_CLIENT_EVAL_COMMAND_H_
