// The kseek subcommands that talk to a coordinator or manage one:
// evals, show, workers, cancel, tasks (evals_command.cc), admin (admin_command.cc),
// up / down (up_command.cc), health (health_command.cc, which also
// checks workers), session (session_command.cc) and bank (bank_command.cc). Each takes the arguments after its name and returns the
// process exit code.
#ifndef KERNELSEEK_CLIENT_SERVICE_COMMANDS_H_
#define KERNELSEEK_CLIENT_SERVICE_COMMANDS_H_

#include <string>
#include <vector>

namespace kseek::cli {

int EvalsCommand(const std::vector<std::string>& args);
int ShowCommand(const std::vector<std::string>& args);
int WorkersCommand(const std::vector<std::string>& args);
int CancelCommand(const std::vector<std::string>& args);
int TasksCommand(const std::vector<std::string>& args);
int AdminCommand(const std::vector<std::string>& args);
int UpCommand(const std::vector<std::string>& args);
int DownCommand(const std::vector<std::string>& args);
int HealthCommand(const std::vector<std::string>& args);
int SessionCommand(const std::vector<std::string>& args);
int BankCommand(const std::vector<std::string>& args);

}  // namespace kseek::cli

#endif  // KERNELSEEK_CLIENT_SERVICE_COMMANDS_H_
