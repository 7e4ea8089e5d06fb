// The `command` adapter: any agent program, run from a command template
// (AgentConfig::start_template and resume_template, see adapter.h). Each
// non-empty line it prints on stdout is an agent_message; it reports no
// session id, tools or cost. The turn ends when the program exits (exit
// status 0: success). Thread-safety: see adapter.h.
#ifndef KERNELSEEK_SERVER_AGENT_COMMAND_ADAPTER_H_
#define KERNELSEEK_SERVER_AGENT_COMMAND_ADAPTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/agent/adapter.h"

namespace kseek::agent {

class CommandAdapter : public AgentAdapter {
 public:
  // INVALID_ARGUMENT names the template at fault: empty start_template, bad
  // quoting, an unknown {placeholder}, or {session_id} in start_template.
  static absl::StatusOr<std::unique_ptr<CommandAdapter>> Create(AgentConfig config);

  absl::string_view name() const override { return "command"; }
  bool CanResume() const override { return !resume_words_.empty(); }
  absl::StatusOr<AgentInvocation> Invocation(const TurnRequest& turn) const override;
  std::unique_ptr<EventParser> NewParser() const override;

 private:
  CommandAdapter(AgentConfig config, std::vector<std::string> start_words,
                 std::vector<std::string> resume_words);

  AgentConfig config_;
  std::vector<std::string> start_words_;
  std::vector<std::string> resume_words_;
};

// Splits a template into words: blanks separate words, single or double
// quotes group (a backslash escapes the next character outside single
// quotes). INVALID_ARGUMENT for an unterminated quote or a trailing
// backslash.
absl::StatusOr<std::vector<std::string>> SplitCommandTemplate(absl::string_view text);

}  // namespace kseek::agent

#endif  // KERNELSEEK_SERVER_AGENT_COMMAND_ADAPTER_H_
