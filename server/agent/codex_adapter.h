// The `codex` adapter: Codex's non-interactive mode, `codex exec --json`.
//
//   start:  codex exec --json --skip-git-repo-check SETTINGS [-m M] [extra]...
//                 -- PROMPT
//   resume: codex exec resume --json --skip-git-repo-check SETTINGS [-m M]
//                 [extra]... -- SESSION_ID PROMPT
//   SETTINGS: -c sandbox_mode="workspace-write"
//             -c sandbox_workspace_write.network_access=true
//             -c approval_policy="never"
//             [-c sandbox_workspace_write.writable_roots=[DIRS]]
//
// The working directory is the workspace (Codex's workspace root).
// `workspace-write` runs the model's commands in Codex's sandbox, which can
// write only the workspace, the extra directories and the temporary
// directories (compilers need them); network access is on inside it because
// `kseek eval` talks to the coordinator. approval_policy "never" means no
// command waits for a person: what the sandbox refuses fails and the model
// sees the failure. The settings are given with -c because `codex exec
// resume` has no --sandbox flag, and so start and resume read alike.
// --skip-git-repo-check: a workspace is not a git repository.
//
// The parser reads the JSONL events: thread.started (the session id),
// item.started / item.completed (agent_message, command_execution,
// file_change, mcp_tool_call, web_search, error), turn.completed (tokens,
// turn_end), turn.failed and error (an authentication failure is fatal).
// Thread-safety: see adapter.h.
#ifndef KERNELSEEK_SERVER_AGENT_CODEX_ADAPTER_H_
#define KERNELSEEK_SERVER_AGENT_CODEX_ADAPTER_H_

#include <memory>

#include "server/agent/adapter.h"

namespace kseek::agent {

class CodexAdapter : public AgentAdapter {
 public:
  explicit CodexAdapter(AgentConfig config);

  absl::string_view name() const override { return "codex"; }
  bool CanResume() const override { return true; }
  absl::StatusOr<AgentInvocation> Invocation(const TurnRequest& turn) const override;
  std::unique_ptr<EventParser> NewParser() const override;

 private:
  AgentConfig config_;
};

// The JSONL event parser alone (for tests on recorded output).
std::unique_ptr<EventParser> NewCodexJsonParser();

}  // namespace kseek::agent

#endif  // KERNELSEEK_SERVER_AGENT_CODEX_ADAPTER_H_
