// The adapters' parsers on real output of the claude and codex CLIs,
// recorded against the stand-in model by tests/agent_data/record.sh, and the
// event and text helpers they use.
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/agent/claude_adapter.h"
#include "server/agent/codex_adapter.h"
#include "server/agent/command_adapter.h"
#include "server/agent/event.h"
#include "server/agent/text.h"
#include "tests/test_util.h"

namespace kseek::agent {
namespace {

using K = AgentEventKind;

std::vector<std::string> RecordedLines(const std::string& name) {
  std::ifstream in(testing::SourceDir() + "/tests/agent_data/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<AgentEvent> ParseAll(EventParser& parser, const std::vector<std::string>& lines) {
  std::vector<AgentEvent> out;
  for (const std::string& line : lines) {
    for (AgentEvent& e : parser.ParseLine(line)) out.push_back(std::move(e));
  }
  return out;
}

std::vector<K> Kinds(const std::vector<AgentEvent>& events) {
  std::vector<K> kinds;
  for (const AgentEvent& e : events) kinds.push_back(e.kind);
  return kinds;
}

std::string Dump(const std::vector<AgentEvent>& events) {
  std::string out;
  for (const AgentEvent& e : events) out += "\n  " + e.ToJson().dump();
  return out;
}

// The field `key` of the first recorded line that has it.
std::string FirstField(const std::vector<std::string>& lines, const char* key) {
  for (const std::string& line : lines) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains(key) && j[key].is_string()) return j[key];
  }
  return "";
}

TEST(ClaudeParser, RecordedTurnEditsRunsAndIsRefusedOutsideTheWorkspace) {
  const std::vector<std::string> lines = RecordedLines("claude_start.jsonl");
  auto parser = NewClaudeStreamParser();
  const std::vector<AgentEvent> ev = ParseAll(*parser, lines);
  ASSERT_EQ(Kinds(ev), (std::vector<K>{K::kAgentSessionId, K::kAgentMessage,
                                       K::kToolCall, K::kToolResult,    // Read
                                       K::kToolCall, K::kToolResult,    // Edit
                                       K::kToolCall, K::kToolResult,    // Bash
                                       K::kToolCall, K::kToolResult,    // Read, refused
                                       K::kAgentMessage, K::kCost, K::kTurnEnd}))
      << Dump(ev);
  EXPECT_EQ(ev[0].session_id, FirstField(lines, "session_id"));
  EXPECT_FALSE(ev[0].session_id.empty());
  EXPECT_EQ(ev[1].text, "I will read the kernel first.");

  EXPECT_EQ(ev[2].tool, "Read");
  EXPECT_EQ(ev[2].input, "/tmp/kseek-agent-record/workspace/kernel.cu");
  EXPECT_TRUE(ev[3].ok);
  EXPECT_EQ(ev[3].tool, "Read");
  EXPECT_EQ(ev[3].tool_id, ev[2].tool_id);
  EXPECT_NE(ev[3].text.find("int block = 128;"), std::string::npos) << ev[3].text;

  EXPECT_EQ(ev[4].tool, "Edit");
  EXPECT_EQ(ev[4].input, "/tmp/kseek-agent-record/workspace/kernel.cu");
  EXPECT_TRUE(ev[5].ok);
  EXPECT_EQ(ev[6].tool, "Bash");
  EXPECT_EQ(ev[6].input.rfind("grep -c 'block = 256' kernel.cu", 0), 0u) << ev[6].input;
  EXPECT_TRUE(ev[7].ok);
  EXPECT_EQ(ev[7].text, "1");

  EXPECT_EQ(ev[8].input, "/tmp/kseek-agent-record/outside/notes.txt");
  EXPECT_FALSE(ev[9].ok);
  EXPECT_EQ(ev[9].tool, "Read");
  EXPECT_NE(ev[9].text.find("denied"), std::string::npos) << ev[9].text;

  EXPECT_NE(ev[10].text.find("memory-bandwidth limit"), std::string::npos);
  ASSERT_TRUE(ev[11].usd.has_value());
  EXPECT_GT(*ev[11].usd, 0);
  ASSERT_TRUE(ev[11].input_tokens.has_value());
  EXPECT_GT(*ev[11].input_tokens, 0);
  EXPECT_EQ(ev[11].cached_input_tokens, 0);
  ASSERT_TRUE(ev[11].output_tokens.has_value());
  EXPECT_GT(*ev[11].output_tokens, 0);
  EXPECT_FALSE(ev[12].is_error);
  EXPECT_EQ(ev[12].text, ev[10].text);
}

TEST(ClaudeParser, RecordedResumeKeepsTheSessionId) {
  const std::vector<std::string> start = RecordedLines("claude_start.jsonl");
  auto parser = NewClaudeStreamParser();
  const std::vector<AgentEvent> ev = ParseAll(*parser, RecordedLines("claude_resume.jsonl"));
  ASSERT_EQ(Kinds(ev), (std::vector<K>{K::kAgentSessionId, K::kAgentMessage, K::kCost,
                                       K::kTurnEnd}))
      << Dump(ev);
  EXPECT_EQ(ev[0].session_id, FirstField(start, "session_id"));
  EXPECT_EQ(ev[1].text,
            "You asked whether the limit is real. I have not measured it; I assumed it.");
  EXPECT_FALSE(ev[3].is_error);

  // The cost is this run's: total_cost_usd also counts the first run.
  const nlohmann::json first = nlohmann::json::parse(start.back());
  const nlohmann::json result = nlohmann::json::parse(RecordedLines("claude_resume.jsonl").back());
  ASSERT_TRUE(ev[2].usd.has_value());
  EXPECT_NEAR(*ev[2].usd + first["total_cost_usd"].get<double>(),
              result["total_cost_usd"].get<double>(), 1e-9);
  EXPECT_EQ(ev[2].input_tokens, result["usage"]["input_tokens"].get<int64_t>());
}

TEST(ClaudeParser, RecordedNotLoggedInIsAFatalAuthError) {
  auto parser = NewClaudeStreamParser();
  const std::vector<AgentEvent> ev = ParseAll(*parser, RecordedLines("claude_not_logged_in.jsonl"));
  ASSERT_EQ(Kinds(ev), (std::vector<K>{K::kAgentSessionId, K::kError, K::kCost, K::kTurnEnd}))
      << Dump(ev);
  EXPECT_EQ(ev[1].error, AgentErrorKind::kAuth);
  EXPECT_TRUE(ev[1].fatal);
  EXPECT_NE(ev[1].text.find("Not logged in"), std::string::npos) << ev[1].text;
  EXPECT_TRUE(ev[3].is_error);
}

TEST(ClaudeParser, RecordedRefusedKeyIsFatalAtTheFirstRetry) {
  auto parser = NewClaudeStreamParser();
  const std::vector<std::string> lines = RecordedLines("claude_bad_key.jsonl");
  ASSERT_GE(lines.size(), 2u);
  parser->ParseLine(lines[0]);  // init
  const std::vector<AgentEvent> ev = parser->ParseLine(lines[1]);
  ASSERT_EQ(ev.size(), 1u) << Dump(ev);
  EXPECT_EQ(ev[0].error, AgentErrorKind::kAuth);
  EXPECT_TRUE(ev[0].fatal);
  EXPECT_NE(ev[0].text.find("HTTP 401"), std::string::npos) << ev[0].text;
}

TEST(ClaudeParser, OtherApiRetriesAreNotFatal) {
  auto parser = NewClaudeStreamParser();
  const std::vector<AgentEvent> ev = parser->ParseLine(
      R"({"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,)"
      R"("error_status":529,"error":"overloaded_error","session_id":"s1"})");
  ASSERT_EQ(Kinds(ev), (std::vector<K>{K::kAgentSessionId, K::kError})) << Dump(ev);
  EXPECT_EQ(ev[1].error, AgentErrorKind::kApi);
  EXPECT_FALSE(ev[1].fatal);
  EXPECT_NE(ev[1].text.find("attempt 2 of 10"), std::string::npos) << ev[1].text;
}

TEST(ClaudeParser, UnreadableAndBlankLines) {
  auto parser = NewClaudeStreamParser();
  EXPECT_TRUE(parser->ParseLine("").empty());
  EXPECT_TRUE(parser->ParseLine("  \r").empty());
  const std::vector<AgentEvent> ev = parser->ParseLine("Error: something odd");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].error, AgentErrorKind::kOutput);
  EXPECT_FALSE(ev[0].fatal);
  EXPECT_NE(ev[0].text.find("something odd"), std::string::npos);
}

TEST(CodexParser, RecordedTurnPatchesRunsCommandsAndCounts) {
  const std::vector<std::string> lines = RecordedLines("codex_start.jsonl");
  auto parser = NewCodexJsonParser();
  const std::vector<AgentEvent> ev = ParseAll(*parser, lines);
  ASSERT_EQ(Kinds(ev), (std::vector<K>{K::kAgentSessionId,
                                       K::kError,  // "model metadata not found" warning
                                       K::kAgentMessage,
                                       K::kToolCall, K::kToolResult,   // apply_patch
                                       K::kToolCall, K::kToolResult,   // grep
                                       K::kToolCall, K::kToolResult,   // cat missing file
                                       K::kAgentMessage, K::kCost, K::kTurnEnd}))
      << Dump(ev);
  EXPECT_EQ(ev[0].session_id, FirstField(lines, "thread_id"));
  EXPECT_EQ(ev[1].error, AgentErrorKind::kAgent);
  EXPECT_FALSE(ev[1].fatal);
  EXPECT_EQ(ev[2].text, "I will change the block size.");
  EXPECT_EQ(ev[3].tool, "file_change");
  EXPECT_EQ(ev[3].input, "update /tmp/kseek-agent-record/workspace/kernel.cu");
  EXPECT_TRUE(ev[4].ok);
  EXPECT_EQ(ev[4].tool_id, ev[3].tool_id);
  EXPECT_EQ(ev[5].tool, "command");
  EXPECT_NE(ev[5].input.find("grep -c 'block = 256' kernel.cu"), std::string::npos);
  EXPECT_TRUE(ev[6].ok);
  EXPECT_EQ(ev[6].text, "1\n");
  EXPECT_FALSE(ev[8].ok);
  EXPECT_NE(ev[8].text.find("No such file or directory"), std::string::npos) << ev[8].text;
  EXPECT_FALSE(ev[10].usd.has_value());
  ASSERT_TRUE(ev[10].input_tokens.has_value());
  EXPECT_GT(*ev[10].input_tokens, 0);
  EXPECT_EQ(ev[10].cached_input_tokens, 0);
  EXPECT_FALSE(ev[11].is_error);
  EXPECT_EQ(ev[11].text, ev[9].text);
  EXPECT_NE(ev[11].text.find("memory-bandwidth limit"), std::string::npos);
}

TEST(CodexParser, RecordedResumeKeepsTheThreadId) {
  auto parser = NewCodexJsonParser();
  const std::vector<AgentEvent> ev = ParseAll(*parser, RecordedLines("codex_resume.jsonl"));
  ASSERT_EQ(Kinds(ev), (std::vector<K>{K::kAgentSessionId, K::kError, K::kAgentMessage,
                                       K::kCost, K::kTurnEnd}))
      << Dump(ev);
  EXPECT_EQ(ev[0].session_id, FirstField(RecordedLines("codex_start.jsonl"), "thread_id"));
  EXPECT_EQ(ev[4].text,
            "You asked whether the limit is real. I have not measured it; I assumed it.");
}

TEST(CodexParser, RecordedRefusedKeyIsFatalAndTheTurnFails) {
  auto parser = NewCodexJsonParser();
  const std::vector<AgentEvent> ev = ParseAll(*parser, RecordedLines("codex_bad_key.jsonl"));
  ASSERT_GE(ev.size(), 4u) << Dump(ev);
  // thread.started, the metadata warning, then the first retry of a 401.
  EXPECT_EQ(ev[2].error, AgentErrorKind::kAuth) << Dump(ev);
  EXPECT_TRUE(ev[2].fatal);
  EXPECT_NE(ev[2].text.find("401 Unauthorized"), std::string::npos);
  EXPECT_EQ(ev.back().kind, K::kTurnEnd);
  EXPECT_TRUE(ev.back().is_error);
}

TEST(CodexParser, CompletedItemWithoutStartStillGetsItsCall) {
  auto parser = NewCodexJsonParser();
  const std::vector<AgentEvent> ev = parser->ParseLine(
      R"({"type":"item.completed","item":{"id":"item_7","type":"command_execution",)"
      R"("command":"nvcc --version","aggregated_output":"","exit_code":2,"status":"failed"}})");
  ASSERT_EQ(Kinds(ev), (std::vector<K>{K::kToolCall, K::kToolResult})) << Dump(ev);
  EXPECT_EQ(ev[0].input, "nvcc --version");
  EXPECT_FALSE(ev[1].ok);
  EXPECT_EQ(ev[1].text, "exit code 2");
}

TEST(CodexParser, TransientErrorsAreNotFatal) {
  auto parser = NewCodexJsonParser();
  const std::vector<AgentEvent> ev = parser->ParseLine(
      R"j({"type":"error","message":"Reconnecting... 2/5 (stream disconnected)"})j");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].error, AgentErrorKind::kApi);
  EXPECT_FALSE(ev[0].fatal);
}

TEST(CommandParser, EachNonEmptyLineIsAMessage) {
  AgentConfig config;
  config.kind = "command";
  config.start_template = "agent {prompt}";
  absl::StatusOr<std::unique_ptr<CommandAdapter>> adapter = CommandAdapter::Create(config);
  ASSERT_TRUE(adapter.ok()) << adapter.status();
  auto parser = (*adapter)->NewParser();
  EXPECT_TRUE(parser->ParseLine("").empty());
  const std::vector<AgentEvent> ev = parser->ParseLine("tried 4 warps per block\r");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, K::kAgentMessage);
  EXPECT_EQ(ev[0].text, "tried 4 warps per block");
}

TEST(AgentEvent, JsonHoldsTheFieldsOfItsKind) {
  EXPECT_EQ(AgentEvent::Message("hi").ToJson(),
            nlohmann::json({{"kind", "agent_message"}, {"text", "hi"}}));
  EXPECT_EQ(AgentEvent::ToolCall("Bash", "t1", "ls").ToJson(),
            nlohmann::json({{"kind", "tool_call"}, {"tool", "Bash"}, {"tool_id", "t1"},
                            {"input", "ls"}}));
  EXPECT_EQ(AgentEvent::ToolResult("Bash", "t1", false, "boom").ToJson(),
            nlohmann::json({{"kind", "tool_result"}, {"tool", "Bash"}, {"tool_id", "t1"},
                            {"ok", false}, {"summary", "boom"}}));
  EXPECT_EQ(AgentEvent::Error(AgentErrorKind::kNotInstalled, true, "no claude").ToJson(),
            nlohmann::json({{"kind", "error"}, {"error", "not_installed"}, {"fatal", true},
                            {"message", "no claude"}}));
  AgentEvent cost = AgentEvent::Cost();
  cost.usd = 0.25;
  cost.output_tokens = 7;
  EXPECT_EQ(cost.ToJson(),
            nlohmann::json({{"kind", "cost"}, {"usd", 0.25}, {"output_tokens", 7}}));
  EXPECT_EQ(AgentEvent::SessionId("abc").ToJson(),
            nlohmann::json({{"kind", "agent_session_id"}, {"session_id", "abc"}}));
  EXPECT_EQ(AgentEvent::TurnEnd(true, "done").ToJson(),
            nlohmann::json({{"kind", "turn_end"}, {"is_error", true}, {"result", "done"}}));
}

TEST(AgentEvent, InvalidUtf8BecomesReplacementCharacters) {
  const AgentEvent e = AgentEvent::Message("ok \xff\xfe end \xC3\xA9");
  EXPECT_EQ(e.text, "ok \xEF\xBF\xBD\xEF\xBF\xBD end \xC3\xA9");
  EXPECT_NO_THROW(e.ToJson().dump());
}

TEST(AgentEvent, ToolInputSummaryPrefersTheCommandOrPath) {
  EXPECT_EQ(SummarizeToolInput({{"command", "make"}, {"description", "build"}}), "make");
  EXPECT_EQ(SummarizeToolInput({{"file_path", "/w/kernel.cu"}, {"old_string", "a"}}),
            "/w/kernel.cu");
  EXPECT_EQ(SummarizeToolInput({{"todos", {1, 2}}}), R"({"todos":[1,2]})");
}

TEST(Text, AbbreviateKeepsHeadAndTailOnCharacterBoundaries) {
  EXPECT_EQ(Abbreviate("short", 100), "short");
  const std::string text = std::string(50, 'a') + "\xC3\xA9" + std::string(50, 'b');
  const std::string cut = Abbreviate(text, 51);
  EXPECT_EQ(cut.substr(0, 25), std::string(25, 'a'));
  EXPECT_EQ(cut.substr(cut.size() - 25), std::string(25, 'b'));
  EXPECT_NE(cut.find("bytes left out"), std::string::npos);
  EXPECT_EQ(ValidUtf8(cut), cut);
  std::string e_acute;
  for (int i = 0; i < 100; ++i) e_acute += "\xC3\xA9";
  EXPECT_EQ(ValidUtf8(Abbreviate(e_acute, 31)), Abbreviate(e_acute, 31));
}

TEST(Text, LastLinesSkipsBlankLines) {
  EXPECT_EQ(LastLines("a\n\nb\r\nc\n\n", 2), "b\nc");
  EXPECT_EQ(LastLines("", 3), "");
}

TEST(Text, AuthFailuresOfTheRealClis) {
  EXPECT_TRUE(LooksLikeAuthFailure("Not logged in \xC2\xB7 Please run /login"));
  EXPECT_TRUE(LooksLikeAuthFailure("Invalid API key \xC2\xB7 Fix external API key"));
  EXPECT_TRUE(LooksLikeAuthFailure(
      "unexpected status 401 Unauthorized: Incorrect API key provided., url: http://x"));
  EXPECT_TRUE(LooksLikeAuthFailure("Your ChatGPT credential expired. Reopen Codex"));
  EXPECT_FALSE(LooksLikeAuthFailure("the kernel is at the memory-bandwidth limit"));
  EXPECT_FALSE(LooksLikeAuthFailure("Reconnecting... 2/5 (stream disconnected)"));
}

}  // namespace
}  // namespace kseek::agent
