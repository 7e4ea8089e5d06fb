// The claude adapter end to end: the real Claude Code CLI (installed by
// scripts/setup.sh), run by AgentProcess in a temporary workspace, against
// the stand-in model (a stand-in for a language model's answers,
// tests/agent_standin/standin_model.py) that scripts what the "model" does
// (tests/agent_data/claude_script.json).
#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "server/agent/adapter.h"
#include "server/agent/agent_process.h"
#include "tests/agent_testing.h"
#include "tests/test_util.h"

namespace kseek::agent {
namespace {

using testing::EventLog;
using testing::StandinModel;

class ClaudeEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    KSEEK_REQUIRE_AGENT_CLI("claude");
    root_ = testing::TempDir("kseek-claude");
    workspace_ = testing::MakeWorkspace(root_);
    outside_ = root_ + "/outside";
    mkdir(outside_.c_str(), 0755);
    testing::WriteFile(outside_ + "/notes.txt", "private notes\n");
    home_ = root_ + "/home";
    mkdir(home_.c_str(), 0755);
    AgentConfig config;
    config.kind = "claude";
    adapter_ = *MakeAdapter(config);
    limits_.wall_time = absl::Minutes(5);
  }

  // A turn against `model`: its own HOME (no login, no settings of the
  // machine's user), the stand-in as the API, a dummy key.
  TurnRequest Turn(const StandinModel& model, const std::string& prompt,
                   const std::string& resume = "") {
    TurnRequest t;
    t.workspace = workspace_;
    t.prompt = prompt;
    t.resume_session_id = resume;
    t.env = {{"HOME", home_},
             {"ANTHROPIC_BASE_URL", model.url()},
             {"ANTHROPIC_API_KEY", "stand-in-key"},
             {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
             {"KSEEK_TEST_TOKEN", "session-token-42"}};
    return t;
  }

  AgentExit Run(const TurnRequest& turn, EventLog* log) {
    absl::StatusOr<AgentExit> exit = RunAgentTurn(*adapter_, turn, limits_, log->Sink());
    EXPECT_TRUE(exit.ok()) << exit.status();
    return exit.ok() ? *exit : AgentExit();
  }

  std::string root_, workspace_, outside_, home_;
  std::unique_ptr<AgentAdapter> adapter_;
  AgentLimits limits_;
};

TEST_F(ClaudeEndToEnd, TurnEditsRunsAndResumesWithTheQuestion) {
  StandinModel model("claude_script.json",
                     {"workspace=" + workspace_, "outside=" + outside_});
  ASSERT_FALSE(model.address().empty()) << model.stderr_log();

  EventLog first;
  AgentExit exit = Run(Turn(model, "Make kernel.cu faster."), &first);
  EXPECT_EQ(exit.exit_code, 0) << first.Dump() << exit.stderr_tail;
  EXPECT_FALSE(first.TurnEnd().is_error) << first.Dump();

  // The "model" edited the kernel and ran a command in the workspace, with
  // the environment the coordinator gave.
  EXPECT_NE(testing::ReadFile(workspace_ + "/kernel.cu").find("int block = 256;"),
            std::string::npos);
  EXPECT_EQ(testing::ReadFile(workspace_ + "/eval.log"),
            "evaluated with token session-token-42\n");

  const std::vector<AgentEvent> ids = first.OfKind(AgentEventKind::kAgentSessionId);
  ASSERT_EQ(ids.size(), 1u) << first.Dump();
  const std::string session = ids[0].session_id;
  EXPECT_FALSE(session.empty());

  std::vector<std::string> calls;
  for (const AgentEvent& e : first.OfKind(AgentEventKind::kToolCall)) calls.push_back(e.tool);
  EXPECT_EQ(calls, (std::vector<std::string>{"Read", "Edit", "Bash", "Read"}));
  const std::vector<AgentEvent> results = first.OfKind(AgentEventKind::kToolResult);
  ASSERT_EQ(results.size(), 4u) << first.Dump();
  EXPECT_TRUE(results[1].ok);  // Edit
  EXPECT_TRUE(results[2].ok);  // Bash
  EXPECT_EQ(results[2].text, "1");
  // Reading outside the workspace is refused without waiting for anyone.
  EXPECT_FALSE(results[3].ok);
  EXPECT_EQ(results[3].text.find("private notes"), std::string::npos);
  const std::vector<AgentEvent> costs = first.OfKind(AgentEventKind::kCost);
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_TRUE(costs[0].usd.has_value());
  EXPECT_TRUE(absl::StrContains(first.TurnEnd().text, "memory-bandwidth limit"));

  // The next turn resumes the conversation with a question.
  const std::string question = "Is the memory-bandwidth limit measured or assumed? (q-7)";
  EventLog second;
  exit = Run(Turn(model, question, session), &second);
  EXPECT_EQ(exit.exit_code, 0) << second.Dump() << exit.stderr_tail;
  const AgentEvent end = second.TurnEnd();
  EXPECT_FALSE(end.is_error);
  EXPECT_EQ(end.text,
            "You asked whether the limit is real. I have not measured it; I assumed it.");
  const std::vector<AgentEvent> resumed = second.OfKind(AgentEventKind::kAgentSessionId);
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0].session_id, session);

  // The resumed request carried the question after the whole first turn
  // (the CLI may add "system" notes after it).
  const std::vector<nlohmann::json> requests = model.MainRequests();
  ASSERT_EQ(requests.size(), 6u);
  const nlohmann::json& last = requests.back();
  EXPECT_EQ(last["turn"], 5);
  nlohmann::json last_user;
  for (const nlohmann::json& m : last["body"]["messages"]) {
    if (m["role"] == "user") last_user = m;
  }
  EXPECT_TRUE(absl::StrContains(last_user.dump(), "(q-7)")) << last["body"]["messages"].dump();
}

TEST_F(ClaudeEndToEnd, InterruptStopsATurnAndTheNextTurnResumesIt) {
  StandinModel model("slow_script.json", {});
  ASSERT_FALSE(model.address().empty()) << model.stderr_log();
  EventLog log;
  std::unique_ptr<AgentProcess> p = AgentProcess::Start(
      *adapter_->Invocation(Turn(model, "Make kernel.cu faster.")), adapter_->NewParser(),
      limits_, log.Sink());
  // Mid-turn: the stand-in has the request and is slow to answer.
  for (int i = 0; i < 3000 && model.MainRequests().empty(); ++i) usleep(10000);
  ASSERT_EQ(model.MainRequests().size(), 1u) << log.Dump();
  p->Interrupt("a human's message is waiting");
  const AgentExit exit = p->Wait();
  EXPECT_TRUE(exit.interrupted);
  EXPECT_FALSE(exit.timed_out);
  EXPECT_FALSE(log.ErrorOf(AgentErrorKind::kInterrupted).fatal);
  EXPECT_TRUE(log.TurnEnd().is_error);
  const std::vector<AgentEvent> ids = log.OfKind(AgentEventKind::kAgentSessionId);
  ASSERT_EQ(ids.size(), 1u);

  // The human's message goes to the same conversation.
  EventLog next;
  Run(Turn(model, "From a person: profile before changing anything.", ids[0].session_id),
      &next);
  EXPECT_FALSE(next.TurnEnd().is_error) << next.Dump();
  EXPECT_EQ(next.TurnEnd().text, "Understood: I will profile before changing anything.");
  const std::vector<nlohmann::json> requests = model.MainRequests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_TRUE(absl::StrContains(requests[1]["body"]["messages"].dump(),
                                "From a person: profile before changing anything."));
}

TEST_F(ClaudeEndToEnd, NotLoggedInIsAnAuthError) {
  TurnRequest turn;
  turn.workspace = workspace_;
  turn.prompt = "Make kernel.cu faster.";
  // Empty is unset for the CLI: no credential of this machine's may reach it.
  turn.env = {{"HOME", home_},
              {"ANTHROPIC_API_KEY", ""},
              {"ANTHROPIC_AUTH_TOKEN", ""},
              {"CLAUDE_CODE_OAUTH_TOKEN", ""},
              {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"}};
  EventLog log;
  Run(turn, &log);
  const AgentEvent e = log.ErrorOf(AgentErrorKind::kAuth);
  EXPECT_TRUE(e.fatal);
  EXPECT_TRUE(absl::StrContains(e.text, "Not logged in")) << e.text;
  EXPECT_TRUE(log.TurnEnd().is_error);
}

TEST_F(ClaudeEndToEnd, RefusedKeyStopsTheAgentInsteadOfRetrying) {
  StandinModel model("claude_script.json", {"workspace=" + workspace_, "outside=" + outside_},
                     {"--require-key", "the-right-key"});
  ASSERT_FALSE(model.address().empty()) << model.stderr_log();
  limits_.interrupt_grace = absl::Seconds(5);
  EventLog log;
  const AgentExit exit = Run(Turn(model, "Make kernel.cu faster."), &log);
  EXPECT_FALSE(exit.timed_out);
  EXPECT_TRUE(log.ErrorOf(AgentErrorKind::kAuth).fatal);
  EXPECT_TRUE(log.TurnEnd().is_error);
  EXPECT_EQ(testing::ReadFile(workspace_ + "/kernel.cu").find("int block = 256;"),
            std::string::npos);
}

}  // namespace
}  // namespace kseek::agent
