#include "server/agent/adapter.h"

#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/agent/claude_adapter.h"
#include "server/agent/codex_adapter.h"
#include "server/agent/command_adapter.h"

namespace kseek::agent {

absl::Status ValidateTurn(const TurnRequest& turn) {
  if (turn.workspace.empty() || turn.workspace[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("workspace: \"", turn.workspace, "\" is not an absolute path"));
  }
  struct stat st;
  if (stat(turn.workspace.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("workspace: ", turn.workspace, " is not a directory"));
  }
  if (turn.prompt.empty()) return absl::InvalidArgumentError("prompt: is empty");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<AgentAdapter>> MakeAdapter(const AgentConfig& config) {
  if (config.kind == "claude") return std::make_unique<ClaudeAdapter>(config);
  if (config.kind == "codex") return std::make_unique<CodexAdapter>(config);
  if (config.kind == "command") {
    absl::StatusOr<std::unique_ptr<CommandAdapter>> adapter = CommandAdapter::Create(config);
    if (!adapter.ok()) return adapter.status();
    return std::unique_ptr<AgentAdapter>(*std::move(adapter));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "kind: unknown agent \"", config.kind, "\" (known: claude, codex, command)"));
}

}  // namespace kseek::agent
