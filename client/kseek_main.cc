// kseek: the KernelSeek command line. Dispatches to one subcommand.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "client/cli.h"
#include "client/eval_command.h"
#include "client/service_commands.h"

namespace {

const char kUsage[] =
    "usage: kseek COMMAND [flags] [args]\n"
    "\n"
    "commands:\n"
    "  eval          evaluate a kernel against a task (through the coordinator when one is\n"
    "                configured, else on this machine; --local forces this machine)\n"
    "  compile       compile a kernel with the harness's flags, print the library and report\n"
    "  eval-shipped  evaluate the shipped kernels of every task on every target available\n"
    "\n"
    "evaluation service:\n"
    "  up            start a coordinator and workers on this machine (state in .kernelseek/)\n"
    "  down          stop what `kseek up --detach` started\n"
    "  evals         list evaluations at the coordinator\n"
    "  show EVAL     one evaluation's state and verdict\n"
    "  cancel EVAL   cancel a queued or running evaluation\n"
    "  workers       the coordinator's workers and their health\n"
    "  tasks         the tasks the coordinator serves by name\n"
    "  health        whether a coordinator or worker is serving (gRPC health check)\n"
    "  admin         users and tokens (admin user add|list|revoke, admin token create),\n"
    "                and a copy of the coordinator's store (admin backup FILE)\n"
    "\n"
    "sessions (an agent makes a kernel faster until the coordinator verifies the goal):\n"
    "  session       start|ls|show|watch|ask|cancel|best|trace|report\n"
    "  bank          the question bank: list|stats|add\n"
    "\n"
    "The coordinator is --coordinator ADDR, else $KSEEK_COORDINATOR, else the config file\n"
    "(./.kernelseek/client.json, then ~/.config/kernelseek/client.json); the token is\n"
    "--token-file FILE, else $KSEEK_TOKEN, else the config file; --tls-ca FILE for TLS.\n"
    "\n"
    "Run `kseek COMMAND --help` for a command's flags; `kseek --version` prints the version.\n";

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
  if (command == "evals") return kseek::cli::EvalsCommand(args);
  if (command == "show") return kseek::cli::ShowCommand(args);
  if (command == "workers") return kseek::cli::WorkersCommand(args);
  if (command == "cancel") return kseek::cli::CancelCommand(args);
  if (command == "tasks") return kseek::cli::TasksCommand(args);
  if (command == "admin") return kseek::cli::AdminCommand(args);
  if (command == "up") return kseek::cli::UpCommand(args);
  if (command == "down") return kseek::cli::DownCommand(args);
  if (command == "health") return kseek::cli::HealthCommand(args);
  if (command == "session") return kseek::cli::SessionCommand(args);
  if (command == "bank") return kseek::cli::BankCommand(args);
  if (command == "--version" || command == "version") {
    printf("kseek %s (protocol kernelseek.v1)\n", KSEEK_VERSION);
    return kseek::cli::kExitOk;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    fputs(kUsage, stdout);
    return kseek::cli::kExitOk;
  }
  fprintf(stderr, "kseek: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return kseek::cli::kExitUsage;
}
