#include "server/agent/claude_adapter.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_reader.h"
#include "nlohmann/json.hpp"
#include "server/agent/text.h"

namespace kseek::agent {
namespace {

using nlohmann::json;

// The text of a tool_result's content: a string, or a list of blocks of
// which the text ones count.
std::string ResultText(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::vector<std::string> parts;
  if (content.is_array()) {
    for (const json& block : content) {
      if (block.is_object() && LenientString(block, "type") == "text") {
        parts.push_back(LenientString(block, "text"));
      } else if (block.is_object()) {
        parts.push_back(absl::StrCat("[", LenientString(block, "type"), "]"));
      }
    }
  }
  return absl::StrJoin(parts, "\n");
}

// This run's cost in USD. total_cost_usd counts every run of a resumed
// conversation (Claude Code 2.1.332); model_usage_since_last_result holds
// this run's part per model. Older versions have only total_cost_usd.
std::optional<double> RunCost(const json& result) {
  auto since = result.find("model_usage_since_last_result");
  if (since != result.end() && since->is_object() && !since->empty()) {
    double usd = 0;
    for (const json& model : *since) {
      auto cost = model.find("costUSD");
      if (cost != model.end() && cost->is_number()) usd += cost->get<double>();
    }
    return usd;
  }
  auto total = result.find("total_cost_usd");
  if (total != result.end() && total->is_number()) return total->get<double>();
  return std::nullopt;
}

class ClaudeStreamParser : public EventParser {
 public:
  std::vector<AgentEvent> ParseLine(absl::string_view line) override {
    std::vector<AgentEvent> out;
    if (line.find_first_not_of(" \t\r") == absl::string_view::npos) return out;
    json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      out.push_back(AgentEvent::Error(AgentErrorKind::kOutput, false,
                                      absl::StrCat("unreadable line from claude: ", line)));
      return out;
    }
    const std::string type = LenientString(j, "type");
    NoteSessionId(LenientString(j, "session_id"), &out);
    if (type == "system") {
      OnSystem(j, &out);
    } else if (type == "assistant") {
      OnAssistant(j, &out);
    } else if (type == "user") {
      OnUser(j, &out);
    } else if (type == "result") {
      OnResult(j, &out);
    }
    return out;
  }

 private:
  void NoteSessionId(const std::string& id, std::vector<AgentEvent>* out) {
    if (id.empty() || id == session_id_) return;
    session_id_ = id;
    out->push_back(AgentEvent::SessionId(id));
  }

  void OnSystem(const json& j, std::vector<AgentEvent>* out) {
    if (LenientString(j, "subtype") != "api_retry") return;
    const std::string error = LenientString(j, "error");
    const std::optional<int64_t> status = LenientInt(j, "error_status");
    const std::string what =
        absl::StrCat("model API error", status ? absl::StrCat(" (HTTP ", *status, ")") : "",
                     error.empty() ? "" : absl::StrCat(": ", error));
    const bool auth = error == "authentication_failed" || (status && *status == 401) ||
                      LooksLikeAuthFailure(error);
    if (auth) {
      Fatal(AgentErrorKind::kAuth,
            absl::StrCat(what, "; the model API refused claude's credentials"), out);
      return;
    }
    out->push_back(AgentEvent::Error(
        AgentErrorKind::kApi, false,
        absl::StrCat(what, "; claude retries (attempt ", LenientInt(j, "attempt").value_or(0),
                     " of ", LenientInt(j, "max_retries").value_or(0), ")")));
  }

  void OnAssistant(const json& j, std::vector<AgentEvent>* out) {
    auto message = j.find("message");
    if (message == j.end() || !message->is_object()) return;
    auto content = message->find("content");
    const bool api_error = j.value("is_api_error_message", false) || j.contains("error");
    if (api_error) {
      // A message the CLI made up to report a failure ("Not logged in ·
      // Please run /login"), not something the model said.
      const std::string text = content != message->end() ? ResultText(*content) : "";
      const std::string error = LenientString(j, "error");
      const bool auth = error == "authentication_failed" || LooksLikeAuthFailure(text);
      Fatal(auth ? AgentErrorKind::kAuth : AgentErrorKind::kApi,
            absl::StrCat(text, error.empty() ? "" : absl::StrCat(" (", error, ")")), out);
      return;
    }
    if (content == message->end() || !content->is_array()) return;
    for (const json& block : *content) {
      if (!block.is_object()) continue;
      const std::string type = LenientString(block, "type");
      if (type == "text") {
        const std::string text = LenientString(block, "text");
        if (!text.empty()) out->push_back(AgentEvent::Message(text));
      } else if (type == "tool_use") {
        const std::string id = LenientString(block, "id");
        const std::string name = LenientString(block, "name");
        tool_names_[id] = name;
        out->push_back(AgentEvent::ToolCall(
            name, id, SummarizeToolInput(block.value("input", json::object()))));
      }
    }
  }

  void OnUser(const json& j, std::vector<AgentEvent>* out) {
    auto message = j.find("message");
    if (message == j.end() || !message->is_object()) return;
    auto content = message->find("content");
    if (content == message->end() || !content->is_array()) return;
    for (const json& block : *content) {
      if (!block.is_object() || LenientString(block, "type") != "tool_result") continue;
      const std::string id = LenientString(block, "tool_use_id");
      auto name = tool_names_.find(id);
      const bool is_error = block.value("is_error", false);
      out->push_back(AgentEvent::ToolResult(name != tool_names_.end() ? name->second : "", id,
                                            !is_error, ResultText(block.value("content", json()))));
    }
  }

  void OnResult(const json& j, std::vector<AgentEvent>* out) {
    AgentEvent cost = AgentEvent::Cost();
    cost.usd = RunCost(j);
    auto usage = j.find("usage");
    if (usage != j.end() && usage->is_object()) {
      const int64_t fresh = LenientInt(*usage, "input_tokens").value_or(0);
      const int64_t written = LenientInt(*usage, "cache_creation_input_tokens").value_or(0);
      const int64_t read = LenientInt(*usage, "cache_read_input_tokens").value_or(0);
      cost.input_tokens = fresh + written + read;
      cost.cached_input_tokens = read;
      cost.output_tokens = LenientInt(*usage, "output_tokens");
    }
    out->push_back(cost);

    const bool is_error = j.value("is_error", false);
    std::string result = LenientString(j, "result");
    if (result.empty() && is_error) result = LenientString(j, "subtype");
    if (is_error && !fatal_reported_ && LooksLikeAuthFailure(result)) {
      Fatal(AgentErrorKind::kAuth, result, out);
    }
    out->push_back(AgentEvent::TurnEnd(is_error, result));
  }

  void Fatal(AgentErrorKind kind, const std::string& message, std::vector<AgentEvent>* out) {
    fatal_reported_ = true;
    out->push_back(AgentEvent::Error(kind, true, message));
  }

  std::string session_id_;
  std::map<std::string, std::string> tool_names_;  // tool_use id -> tool name
  bool fatal_reported_ = false;
};

}  // namespace

ClaudeAdapter::ClaudeAdapter(AgentConfig config) : config_(std::move(config)) {}

absl::StatusOr<AgentInvocation> ClaudeAdapter::Invocation(const TurnRequest& turn) const {
  if (absl::Status s = ValidateTurn(turn); !s.ok()) return s;
  AgentInvocation inv;
  inv.cwd = turn.workspace;
  inv.env = turn.env;
  std::vector<std::string>& a = inv.argv;
  a = {config_.program.empty() ? "claude" : config_.program,
       "--output-format", "stream-json", "--verbose",
       "--permission-mode", "acceptEdits", "--permission-prompts", "none",
       "--allowedTools", "Bash"};
  if (!config_.model.empty()) a.insert(a.end(), {"--model", config_.model});
  for (const std::string& dir : config_.extra_dirs) a.insert(a.end(), {"--add-dir", dir});
  a.insert(a.end(), config_.extra_args.begin(), config_.extra_args.end());
  if (!turn.resume_session_id.empty()) a.insert(a.end(), {"--resume", turn.resume_session_id});
  // "--" keeps a prompt that starts with '-' from being read as an option.
  a.insert(a.end(), {"-p", "--", turn.prompt});
  return inv;
}

std::unique_ptr<EventParser> ClaudeAdapter::NewParser() const { return NewClaudeStreamParser(); }

std::unique_ptr<EventParser> NewClaudeStreamParser() {
  return std::make_unique<ClaudeStreamParser>();
}

}  // namespace kseek::agent
