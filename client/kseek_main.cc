// kseek: the KernelSeek command line. Dispatches to one subcommand.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "eval_command.h"

namespace {

const char kUsage[] =
    "usage: kseek COMMAND [flags] [args]\n"
    "\n"
    "commands:\n"
    "  eval          evaluate a kernel against a task (local mode: no daemon)\n"
    "  compile       compile a kernel with the harness's flags, print the library and report\n"
    "  eval-shipped  evaluate the shipped kernels of every task on every target here\n"
    "\n"
    "Run `kseek COMMAND --help` for a command's flags.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fputs(kUsage, stderr);
    return kseek::cli::kExitUsage;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "eval") return kseek::cli::EvalCommand(args);
  if (command == "compile") return kseek::cli::CompileCommand(args);
  if (command == "eval-shipped") return kseek::cli::EvalShippedCommand(args);
  if (command == "help" || command == "--help" || command == "-h") {
    fputs(kUsage, stdout);
    return kseek::cli::kExitOk;
  }
  fprintf(stderr, "kseek: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return kseek::cli::kExitUsage;
}
