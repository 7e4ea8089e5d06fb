// AgentEvent: one thing a coding agent did or reported during a turn, as the
// adapters' parsers and the agent process read it from the CLI's output. The
// session's trace stores these (ToJson); the turn loop acts on some of them
// (agent_session_id to resume later, turn_end, fatal errors).
//
// Kinds and their fields (others are left at their defaults):
//   agent_message     text: what the agent said
//   tool_call         tool, tool_id, input: a short summary of the input
//   tool_result       tool, tool_id, ok, text: a short summary of the output
//   error             error (what failed), fatal, text: the message
//   cost              usd, input_tokens, cached_input_tokens, output_tokens:
//                     this run's, each only where the CLI reports it (a
//                     turn's costs add up to the session's)
//   agent_session_id  session_id: the CLI's own conversation id, the one to
//                     pass back as TurnRequest::resume_session_id
//   turn_end          is_error, text: the CLI's final result text
//
// ToJson names `text` after what it holds: "text", "summary", "message" or
// "result". Token counts: input_tokens counts all input, cached ones
// included; cached_input_tokens is the part read from the model's cache.
// Plain values; copy freely. Strings are valid UTF-8.
#ifndef KERNELSEEK_SERVER_AGENT_EVENT_H_
#define KERNELSEEK_SERVER_AGENT_EVENT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace kseek::agent {

enum class AgentEventKind {
  kAgentMessage,
  kToolCall,
  kToolResult,
  kError,
  kCost,
  kAgentSessionId,
  kTurnEnd,
};

// What an error event is about.
enum class AgentErrorKind {
  kNone,
  kNotInstalled,  // the agent's program is missing or cannot be executed
  kStart,         // the process could not be started for another reason
  kAuth,          // not logged in, or the credentials were refused
  kApi,           // the model API failed (overloaded, a retry, a bad request)
  kAgent,         // the CLI reported a failure of its own (a warning if not fatal)
  kOutput,        // a line of output that the parser could not read
  kExit,          // the process exited with a non-zero status
  kCrash,         // the process was ended by a signal it did not get from us
  kTimeout,       // the run passed its wall-time limit and was stopped
  kInterrupted,   // the run was interrupted on request (AgentProcess::Interrupt)
};

// "agent_message", "tool_call", ... as in the trace.
absl::string_view KindName(AgentEventKind kind);
// "not_installed", "auth", ... as in the trace ("" for kNone).
absl::string_view ErrorKindName(AgentErrorKind kind);

struct AgentEvent {
  AgentEventKind kind = AgentEventKind::kAgentMessage;
  std::string text;        // agent_message, tool_result, error, turn_end
  std::string tool;        // tool_call, tool_result: the tool's name
  std::string tool_id;     // tool_call, tool_result: pairs a result with its call
  std::string input;       // tool_call
  bool ok = true;          // tool_result
  AgentErrorKind error = AgentErrorKind::kNone;  // error
  bool fatal = false;      // error: the turn cannot go on
  std::optional<double> usd;                  // cost
  std::optional<int64_t> input_tokens;        // cost
  std::optional<int64_t> cached_input_tokens; // cost
  std::optional<int64_t> output_tokens;       // cost
  std::string session_id;  // agent_session_id
  bool is_error = false;   // turn_end

  static AgentEvent Message(absl::string_view text);
  static AgentEvent ToolCall(absl::string_view tool, absl::string_view tool_id,
                             absl::string_view input);
  static AgentEvent ToolResult(absl::string_view tool, absl::string_view tool_id, bool ok,
                               absl::string_view summary);
  static AgentEvent Error(AgentErrorKind error, bool fatal, absl::string_view message);
  static AgentEvent SessionId(absl::string_view session_id);
  static AgentEvent TurnEnd(bool is_error, absl::string_view result);
  // A cost event with nothing set; fill in what the CLI reports.
  static AgentEvent Cost();

  // {"kind": "tool_call", "tool": "Bash", "tool_id": "...", "input": "ls"},
  // with the fields of the event's kind only.
  nlohmann::json ToJson() const;
};

// A one-line summary of a tool's input for a tool_call event: the value of
// its command, file path, pattern, URL or query field when it has one,
// otherwise the input as compact JSON.
std::string SummarizeToolInput(const nlohmann::json& input);

// Bounds on what the parsers keep of large texts.
inline constexpr size_t kMaxInputSummaryBytes = 1000;
inline constexpr size_t kMaxResultSummaryBytes = 2000;

}  // namespace kseek::agent

#endif  // KERNELSEEK_SERVER_AGENT_EVENT_H_
