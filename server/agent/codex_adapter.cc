#include "server/agent/codex_adapter.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/json_reader.h"
#include "nlohmann/json.hpp"
#include "server/agent/text.h"

namespace kseek::agent {
namespace {

using nlohmann::json;

// A TOML basic string holding `s`.
std::string TomlString(const std::string& s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

// "update kernel.cu; add notes.md" for a file_change item.
std::string ChangesSummary(const json& item) {
  std::vector<std::string> parts;
  auto changes = item.find("changes");
  if (changes != item.end() && changes->is_array()) {
    for (const json& c : *changes) {
      if (c.is_object()) parts.push_back(absl::StrCat(LenientString(c, "kind"), " ",
                                                      LenientString(c, "path")));
    }
  }
  return absl::StrJoin(parts, "; ");
}

class CodexJsonParser : public EventParser {
 public:
  std::vector<AgentEvent> ParseLine(absl::string_view line) override {
    std::vector<AgentEvent> out;
    if (line.find_first_not_of(" \t\r") == absl::string_view::npos) return out;
    json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      out.push_back(AgentEvent::Error(AgentErrorKind::kOutput, false,
                                      absl::StrCat("unreadable line from codex: ", line)));
      return out;
    }
    const std::string type = LenientString(j, "type");
    if (type == "thread.started") {
      out.push_back(AgentEvent::SessionId(LenientString(j, "thread_id")));
    } else if (type == "item.started" || type == "item.completed") {
      auto item = j.find("item");
      if (item != j.end() && item->is_object()) OnItem(*item, type == "item.completed", &out);
    } else if (type == "turn.completed") {
      OnTurnCompleted(j, &out);
    } else if (type == "turn.failed") {
      std::string message = "turn failed";
      auto error = j.find("error");
      if (error != j.end() && error->is_object()) message = LenientString(*error, "message");
      out.push_back(AgentEvent::Error(
          LooksLikeAuthFailure(message) ? AgentErrorKind::kAuth : AgentErrorKind::kApi, true,
          message));
      out.push_back(AgentEvent::TurnEnd(true, message));
    } else if (type == "error") {
      // Retries ("Reconnecting... 2/5 (...)") and the final failure before
      // turn.failed. Codex retries a refused key a few times; stop at once.
      const std::string message = LenientString(j, "message");
      const bool auth = LooksLikeAuthFailure(message);
      out.push_back(AgentEvent::Error(auth ? AgentErrorKind::kAuth : AgentErrorKind::kApi,
                                      auth, message));
    }
    return out;
  }

 private:
  void OnItem(const json& item, bool completed, std::vector<AgentEvent>* out) {
    const std::string type = LenientString(item, "type");
    const std::string id = LenientString(item, "id");
    const std::string status = LenientString(item, "status");
    if (type == "agent_message") {
      if (completed) {
        last_message_ = LenientString(item, "text");
        out->push_back(AgentEvent::Message(last_message_));
      }
    } else if (type == "command_execution") {
      Call("command", id, LenientString(item, "command"), out);
      if (completed) {
        const std::optional<int64_t> exit_code = LenientInt(item, "exit_code");
        std::string output = LenientString(item, "aggregated_output");
        if (output.empty() && exit_code) output = absl::StrCat("exit code ", *exit_code);
        out->push_back(AgentEvent::ToolResult("command", id,
                                              status == "completed" && exit_code == 0, output));
      }
    } else if (type == "file_change") {
      Call("file_change", id, ChangesSummary(item), out);
      if (completed) {
        out->push_back(AgentEvent::ToolResult("file_change", id, status == "completed",
                                              absl::StrCat(status, ": ", ChangesSummary(item))));
      }
    } else if (type == "mcp_tool_call") {
      const std::string tool = absl::StrCat(LenientString(item, "server"), ".",
                                            LenientString(item, "tool"));
      Call(tool, id, SummarizeToolInput(item.value("arguments", json())), out);
      if (completed) {
        auto error = item.find("error");
        const bool failed = status != "completed" || (error != item.end() && !error->is_null());
        const json& shown = failed && error != item.end() ? *error : item.value("result", json());
        out->push_back(AgentEvent::ToolResult(tool, id, !failed, SummarizeToolInput(shown)));
      }
    } else if (type == "web_search") {
      Call("web_search", id, LenientString(item, "query"), out);
      if (completed) out->push_back(AgentEvent::ToolResult("web_search", id, true, ""));
    } else if (type == "error" && completed) {
      const std::string message = LenientString(item, "message");
      const bool auth = LooksLikeAuthFailure(message);
      out->push_back(AgentEvent::Error(auth ? AgentErrorKind::kAuth : AgentErrorKind::kAgent,
                                       auth, message));
    }
  }

  // A tool_call once per item, whether or not its item.started was seen.
  void Call(const std::string& tool, const std::string& id, const std::string& input,
            std::vector<AgentEvent>* out) {
    if (called_.insert(id).second) out->push_back(AgentEvent::ToolCall(tool, id, input));
  }

  void OnTurnCompleted(const json& j, std::vector<AgentEvent>* out) {
    AgentEvent cost = AgentEvent::Cost();
    auto usage = j.find("usage");
    if (usage != j.end() && usage->is_object()) {
      cost.input_tokens = LenientInt(*usage, "input_tokens");
      cost.cached_input_tokens = LenientInt(*usage, "cached_input_tokens");
      cost.output_tokens = LenientInt(*usage, "output_tokens");
    }
    out->push_back(cost);
    out->push_back(AgentEvent::TurnEnd(false, last_message_));
  }

  std::set<std::string> called_;  // item ids whose tool_call was emitted
  std::string last_message_;
};

}  // namespace

CodexAdapter::CodexAdapter(AgentConfig config) : config_(std::move(config)) {}

absl::StatusOr<AgentInvocation> CodexAdapter::Invocation(const TurnRequest& turn) const {
  if (absl::Status s = ValidateTurn(turn); !s.ok()) return s;
  AgentInvocation inv;
  inv.cwd = turn.workspace;
  inv.env = turn.env;
  std::vector<std::string>& a = inv.argv;
  a = {config_.program.empty() ? "codex" : config_.program, "exec"};
  if (!turn.resume_session_id.empty()) a.push_back("resume");
  a.insert(a.end(), {"--json", "--skip-git-repo-check",
                     "-c", "sandbox_mode=\"workspace-write\"",
                     "-c", "sandbox_workspace_write.network_access=true",
                     "-c", "approval_policy=\"never\""});
  if (!config_.extra_dirs.empty()) {
    std::vector<std::string> roots;
    for (const std::string& dir : config_.extra_dirs) roots.push_back(TomlString(dir));
    a.insert(a.end(), {"-c", absl::StrCat("sandbox_workspace_write.writable_roots=[",
                                          absl::StrJoin(roots, ","), "]")});
  }
  if (!config_.model.empty()) a.insert(a.end(), {"-m", config_.model});
  a.insert(a.end(), config_.extra_args.begin(), config_.extra_args.end());
  a.push_back("--");
  if (!turn.resume_session_id.empty()) a.push_back(turn.resume_session_id);
  a.push_back(turn.prompt);
  return inv;
}

std::unique_ptr<EventParser> CodexAdapter::NewParser() const { return NewCodexJsonParser(); }

std::unique_ptr<EventParser> NewCodexJsonParser() { return std::make_unique<CodexJsonParser>(); }

}  // namespace kseek::agent
