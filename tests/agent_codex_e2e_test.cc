// The codex adapter end to end: the real Codex CLI (installed by
// scripts/setup.sh), run by AgentProcess in a temporary workspace, with the
// stand-in model (a stand-in for a language model's answers,
// tests/agent_standin/standin_model.py) as its model provider, speaking the
// Responses API; the "model" follows tests/agent_data/codex_script.json.
#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/agent/adapter.h"
#include "server/agent/agent_process.h"
#include "tests/agent_testing.h"
#include "tests/test_util.h"

namespace kseek::agent {
namespace {

using testing::EventLog;
using testing::StandinModel;

class CodexEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    KSEEK_REQUIRE_AGENT_CLI("codex");
    root_ = testing::TempDir("kseek-codex");
    workspace_ = testing::MakeWorkspace(root_);
    home_ = root_ + "/home";
    mkdir(home_.c_str(), 0755);
    mkdir((home_ + "/.codex").c_str(), 0755);
    limits_.wall_time = absl::Minutes(5);
  }

  // The adapter with the stand-in at `model` as Codex's model provider.
  std::unique_ptr<AgentAdapter> Adapter(const StandinModel& model) {
    AgentConfig config;
    config.kind = "codex";
    config.model = "stand-in-model";
    config.extra_args = {
        "-c", "model_provider=\"standin\"",
        "-c", absl::StrCat("model_providers.standin={name=\"stand-in\",base_url=\"", model.url(),
                           "/v1\",env_key=\"STANDIN_KEY\",wire_api=\"responses\"}")};
    return *MakeAdapter(config);
  }

  TurnRequest Turn(const std::string& prompt, const std::string& resume = "") {
    TurnRequest t;
    t.workspace = workspace_;
    t.prompt = prompt;
    t.resume_session_id = resume;
    t.env = {{"HOME", home_},
             {"CODEX_HOME", home_ + "/.codex"},
             {"STANDIN_KEY", "stand-in-key"},
             {"KSEEK_TEST_TOKEN", "session-token-42"}};
    return t;
  }

  AgentExit Run(const AgentAdapter& adapter, const TurnRequest& turn, EventLog* log) {
    absl::StatusOr<AgentExit> exit = RunAgentTurn(adapter, turn, limits_, log->Sink());
    EXPECT_TRUE(exit.ok()) << exit.status();
    return exit.ok() ? *exit : AgentExit();
  }

  std::string root_, workspace_, home_;
  AgentLimits limits_;
};

TEST_F(CodexEndToEnd, TurnPatchesRunsAndResumesWithTheQuestion) {
  StandinModel model("codex_script.json", {});
  ASSERT_FALSE(model.address().empty()) << model.stderr_log();
  std::unique_ptr<AgentAdapter> adapter = Adapter(model);

  EventLog first;
  AgentExit exit = Run(*adapter, Turn("Make kernel.cu faster."), &first);
  EXPECT_EQ(exit.exit_code, 0) << first.Dump() << exit.stderr_tail;
  EXPECT_FALSE(first.TurnEnd().is_error) << first.Dump();
  EXPECT_NE(testing::ReadFile(workspace_ + "/kernel.cu").find("int block = 256;"),
            std::string::npos);
  EXPECT_EQ(testing::ReadFile(workspace_ + "/eval.log"),
            "evaluated with token session-token-42\n");

  const std::vector<AgentEvent> ids = first.OfKind(AgentEventKind::kAgentSessionId);
  ASSERT_EQ(ids.size(), 1u) << first.Dump();
  std::vector<std::string> calls;
  for (const AgentEvent& e : first.OfKind(AgentEventKind::kToolCall)) calls.push_back(e.tool);
  EXPECT_EQ(calls, (std::vector<std::string>{"file_change", "command", "command"}));
  const std::vector<AgentEvent> results = first.OfKind(AgentEventKind::kToolResult);
  ASSERT_EQ(results.size(), 3u) << first.Dump();
  EXPECT_TRUE(results[0].ok);
  EXPECT_TRUE(results[1].ok);
  EXPECT_FALSE(results[2].ok);  // cat of a missing file
  EXPECT_TRUE(absl::StrContains(first.TurnEnd().text, "memory-bandwidth limit"));

  const std::string question = "Is the memory-bandwidth limit measured or assumed? (q-7)";
  EventLog second;
  exit = Run(*adapter, Turn(question, ids[0].session_id), &second);
  EXPECT_EQ(exit.exit_code, 0) << second.Dump() << exit.stderr_tail;
  EXPECT_EQ(second.TurnEnd().text,
            "You asked whether the limit is real. I have not measured it; I assumed it.");
  const std::vector<AgentEvent> resumed = second.OfKind(AgentEventKind::kAgentSessionId);
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0].session_id, ids[0].session_id);

  const std::vector<nlohmann::json> requests = model.MainRequests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_EQ(requests.back()["turn"], 4);
  EXPECT_TRUE(absl::StrContains(requests.back()["body"]["input"].dump(), "(q-7)"));
}

TEST_F(CodexEndToEnd, RefusedKeyIsAFatalAuthError) {
  StandinModel model("codex_script.json", {}, {"--require-key", "the-right-key"});
  ASSERT_FALSE(model.address().empty()) << model.stderr_log();
  EventLog log;
  const AgentExit exit = Run(*Adapter(model), Turn("Make kernel.cu faster."), &log);
  EXPECT_FALSE(exit.timed_out);
  const AgentEvent e = log.ErrorOf(AgentErrorKind::kAuth);
  EXPECT_TRUE(e.fatal);
  EXPECT_TRUE(absl::StrContains(e.text, "401 Unauthorized")) << e.text;
  EXPECT_TRUE(log.TurnEnd().is_error);
}

}  // namespace
}  // namespace kseek::agent
