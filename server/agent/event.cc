#include "server/agent/event.h"

#include "server/agent/text.h"

namespace kseek::agent {

absl::string_view KindName(AgentEventKind kind) {
  switch (kind) {
    case AgentEventKind::kAgentMessage: return "agent_message";
    case AgentEventKind::kToolCall: return "tool_call";
    case AgentEventKind::kToolResult: return "tool_result";
    case AgentEventKind::kError: return "error";
    case AgentEventKind::kCost: return "cost";
    case AgentEventKind::kAgentSessionId: return "agent_session_id";
    case AgentEventKind::kTurnEnd: return "turn_end";
  }
  return "unknown";
}

absl::string_view ErrorKindName(AgentErrorKind kind) {
  switch (kind) {
    case AgentErrorKind::kNone: return "";
    case AgentErrorKind::kNotInstalled: return "not_installed";
    case AgentErrorKind::kStart: return "start";
    case AgentErrorKind::kAuth: return "auth";
    case AgentErrorKind::kApi: return "api";
    case AgentErrorKind::kAgent: return "agent";
    case AgentErrorKind::kOutput: return "output";
    case AgentErrorKind::kExit: return "exit";
    case AgentErrorKind::kCrash: return "crash";
    case AgentErrorKind::kTimeout: return "timeout";
    case AgentErrorKind::kInterrupted: return "interrupted";
  }
  return "unknown";
}

AgentEvent AgentEvent::Message(absl::string_view text) {
  AgentEvent e;
  e.kind = AgentEventKind::kAgentMessage;
  e.text = ValidUtf8(text);
  return e;
}

AgentEvent AgentEvent::ToolCall(absl::string_view tool, absl::string_view tool_id,
                                absl::string_view input) {
  AgentEvent e;
  e.kind = AgentEventKind::kToolCall;
  e.tool = ValidUtf8(tool);
  e.tool_id = ValidUtf8(tool_id);
  e.input = Abbreviate(input, kMaxInputSummaryBytes);
  return e;
}

AgentEvent AgentEvent::ToolResult(absl::string_view tool, absl::string_view tool_id, bool ok,
                                  absl::string_view summary) {
  AgentEvent e;
  e.kind = AgentEventKind::kToolResult;
  e.tool = ValidUtf8(tool);
  e.tool_id = ValidUtf8(tool_id);
  e.ok = ok;
  e.text = Abbreviate(summary, kMaxResultSummaryBytes);
  return e;
}

AgentEvent AgentEvent::Error(AgentErrorKind error, bool fatal, absl::string_view message) {
  AgentEvent e;
  e.kind = AgentEventKind::kError;
  e.error = error;
  e.fatal = fatal;
  e.text = Abbreviate(message, kMaxResultSummaryBytes);
  return e;
}

AgentEvent AgentEvent::SessionId(absl::string_view session_id) {
  AgentEvent e;
  e.kind = AgentEventKind::kAgentSessionId;
  e.session_id = ValidUtf8(session_id);
  return e;
}

AgentEvent AgentEvent::TurnEnd(bool is_error, absl::string_view result) {
  AgentEvent e;
  e.kind = AgentEventKind::kTurnEnd;
  e.is_error = is_error;
  e.text = ValidUtf8(result);
  return e;
}

AgentEvent AgentEvent::Cost() {
  AgentEvent e;
  e.kind = AgentEventKind::kCost;
  return e;
}

std::string SummarizeToolInput(const nlohmann::json& input) {
  static constexpr const char* kKeys[] = {"command", "cmd", "file_path", "notebook_path",
                                          "path", "pattern", "url", "query"};
  if (input.is_object()) {
    for (const char* key : kKeys) {
      auto it = input.find(key);
      if (it != input.end() && it->is_string()) return it->get<std::string>();
    }
  }
  if (input.is_string()) return input.get<std::string>();
  return input.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json AgentEvent::ToJson() const {
  nlohmann::json j;
  j["kind"] = KindName(kind);
  switch (kind) {
    case AgentEventKind::kAgentMessage:
      j["text"] = text;
      break;
    case AgentEventKind::kToolCall:
      j["tool"] = tool;
      j["tool_id"] = tool_id;
      j["input"] = input;
      break;
    case AgentEventKind::kToolResult:
      j["tool"] = tool;
      j["tool_id"] = tool_id;
      j["ok"] = ok;
      j["summary"] = text;
      break;
    case AgentEventKind::kError:
      j["error"] = ErrorKindName(error);
      j["fatal"] = fatal;
      j["message"] = text;
      break;
    case AgentEventKind::kCost:
      if (usd) j["usd"] = *usd;
      if (input_tokens) j["input_tokens"] = *input_tokens;
      if (cached_input_tokens) j["cached_input_tokens"] = *cached_input_tokens;
      if (output_tokens) j["output_tokens"] = *output_tokens;
      break;
    case AgentEventKind::kAgentSessionId:
      j["session_id"] = session_id;
      break;
    case AgentEventKind::kTurnEnd:
      j["is_error"] = is_error;
      j["result"] = text;
      break;
  }
  return j;
}

}  // namespace kseek::agent
