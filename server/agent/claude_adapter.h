// The `claude` adapter: Claude Code (the `claude` CLI) in print mode.
//
//   start:  claude --output-format stream-json --verbose
//                  --permission-mode acceptEdits --permission-prompts none
//                  --allowedTools Bash [--model M] [--add-dir D]... [extra]...
//                  -p -- PROMPT
//   resume: the same with --resume SESSION_ID before -p
//
// Permissions for unattended work: acceptEdits lets the file tools (Read,
// Edit, Write, ...) work without asking inside the working directory (the
// workspace) and the --add-dir directories only; anything that would need a
// person's approval, such as an edit outside them, is refused at once
// (--permission-prompts none), so a run never waits for an answer. Bash is
// allowed in full, because the agent must compile, run `kseek eval` and its
// own scripts; the shell is confined by the account and machine the
// coordinator runs on, not by Claude Code. --dangerously-skip-permissions is
// not used: it would also let the file tools work anywhere.
//
// The parser reads the stream-json lines: system/init (the session id),
// assistant (text, tool_use), user (tool_result), system/api_retry (an API
// error; an authentication failure is fatal, because the CLI would retry it
// for minutes) and result (cost, turn_end). Thread-safety: see adapter.h.
#ifndef KERNELSEEK_SERVER_AGENT_CLAUDE_ADAPTER_H_
#define KERNELSEEK_SERVER_AGENT_CLAUDE_ADAPTER_H_

#include <memory>

#include "server/agent/adapter.h"

namespace kseek::agent {

class ClaudeAdapter : public AgentAdapter {
 public:
  explicit ClaudeAdapter(AgentConfig config);

  absl::string_view name() const override { return "claude"; }
  bool CanResume() const override { return true; }
  absl::StatusOr<AgentInvocation> Invocation(const TurnRequest& turn) const override;
  std::unique_ptr<EventParser> NewParser() const override;

 private:
  AgentConfig config_;
};

// The stream-json parser alone (for tests on recorded output).
std::unique_ptr<EventParser> NewClaudeStreamParser();

}  // namespace kseek::agent

#endif  // KERNELSEEK_SERVER_AGENT_CLAUDE_ADAPTER_H_
