// A session with the REAL Claude Code CLI (installed by scripts/setup.sh),
// run by kernelseekd's claude adapter against the stand-in model
// (tests/agent_standin/standin_model.py: a stand-in for a language model's
// answers only) on loopback. The scripted "model" puts a wrong kernel in
// place, runs `kseek eval`, claims the hardware limit and stops; a human
// message posted meanwhile is asked first; the claim then brings a
// limit-rejection question through the real resume; only after the "model"
// puts a correct fast kernel in place does the coordinator's own
// verification end the session as succeeded.
#include <stdlib.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent_testing.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "session_testing.h"

namespace kseek {
namespace {

namespace v1 = ::kernelseek::v1;
using testing::Cluster;
using testing::OfKind;
using testing::Softmax;

// What the stand-in "model" answers, turn by turn of its conversation. It
// runs kseek as BRIEF.md names it: by its absolute path ({kseek}).
const char kScript[] = R"({"turns": [
  {"text": "I will put my kernel in place.",
   "tool_calls": [{"name": "Bash", "input": {
     "command": "for i in $(seq 600); do [ -f go ] && break; sleep 0.1; done; cp {zeros} kernel.cu",
     "description": "Replace the kernel"}}]},
  {"tool_calls": [{"name": "Bash", "input": {
     "command": "{kseek} eval --task . --target host --max-samples 3 --max-seconds 0.1 kernel.cu; echo exit $?",
     "description": "Evaluate the kernel"}}]},
  {"text": "The kernel is now at the hardware limit; it cannot be improved further. Done."},
  {"text": "I checked again: it is at the hardware limit. Nothing left to optimize."},
  {"tool_calls": [{"name": "Bash", "input": {
     "command": "cp {fast} kernel.cu && {kseek} eval --task . --target host --max-samples 3 --max-seconds 0.1 kernel.cu",
     "description": "Try another kernel"}}]},
  {"text": "I had assumed the limit without measuring it. The new kernel is in place."}
]})";

TEST(SessionClaudeEndToEnd, LimitClaimIsQuestionedAndOnlyVerificationSucceeds) {
  KSEEK_REQUIRE_AGENT_CLI("claude");
  Cluster c;
  const std::string zeros = c.dir() + "/zeros.cc";
  testing::WriteFile(zeros, testing::kZerosKernel);
  testing::WriteFile(c.dir() + "/script.json", kScript);
  testing::WriteFile(c.dir() + "/bank.json", testing::kLimitBank);
  const std::string home = c.dir() + "/home";
  mkdir(home.c_str(), 0755);

  testing::Daemon model(
      {testing::FindOnPath("python3"), testing::SourceDir() + "/tests/agent_standin/standin_model.py",
       "--script", c.dir() + "/script.json", "--log", c.dir() + "/requests.jsonl", "--port", "0",
       "--var", "zeros=" + zeros, "--var", "fast=" + Softmax() + "/fast_host.cc",
       "--var", "kseek=" + testing::BinDir() + "/kseek"},
      c.dir() + "/model.log");
  const std::string model_address = model.WaitListening(30);
  ASSERT_FALSE(model_address.empty()) << testing::ReadFile(c.dir() + "/model.log");

  // The coordinator's environment is its agents': Claude Code talks to the
  // stand-in through its documented base-URL setting, with its own HOME.
  setenv("HOME", home.c_str(), 1);
  setenv("ANTHROPIC_BASE_URL", ("http://" + model_address).c_str(), 1);
  setenv("ANTHROPIC_API_KEY", "stand-in-key", 1);
  unsetenv("ANTHROPIC_AUTH_TOKEN");
  setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1", 1);
  c.StartCoordinator({"--bank", c.dir() + "/bank.json"});
  c.StartWorker();

  v1::CreateSessionRequest request = c.Request(5);
  request.mutable_agent()->set_kind("claude");
  v1::Session s = c.Create(request);
  ASSERT_FALSE(s.session_id().empty());
  v1::PostMessageRequest message;
  message.set_session_id(s.session_id());
  message.set_text("Which of your outputs did you compare with the reference?");
  v1::PostMessageResponse posted;
  grpc::Status st = c.stub().PostMessage(c.Context().get(), message, &posted);
  ASSERT_TRUE(st.ok()) << st.error_message();
  testing::WriteFile(c.Workspace(s.session_id()) + "/go", "");

  v1::Session end = c.WaitEnded(s.session_id(), 500);
  std::vector<nlohmann::json> trace = c.Trace(s.session_id());
  const std::string dump = nlohmann::json(trace).dump(1);
  EXPECT_EQ(end.state(), "succeeded") << end.reason() << dump;
  testing::ExpectDense(trace);

  // The "model"'s two evaluations landed in the trace, by the agent.
  int by_agent = 0;
  for (const nlohmann::json& e : OfKind(trace, "evaluation")) by_agent += e["by"] == "agent";
  EXPECT_EQ(by_agent, 2) << dump;
  // "Done" with a wrong kernel, twice: never a success.
  std::vector<nlohmann::json> verifications = OfKind(trace, "verification");
  ASSERT_EQ(verifications.size(), 3u) << dump;
  EXPECT_FALSE(verifications[0]["goal_met"].get<bool>());
  EXPECT_FALSE(verifications[1]["goal_met"].get<bool>());
  EXPECT_TRUE(verifications[2]["goal_met"].get<bool>());

  // The human's message first, then a limit-rejection question.
  std::vector<nlohmann::json> questions = OfKind(trace, "question");
  ASSERT_EQ(questions.size(), 2u) << dump;
  EXPECT_EQ(questions[0]["source"], "human");
  EXPECT_EQ(questions[0]["text"], message.text());
  EXPECT_EQ(questions[1]["source"], "bank");
  EXPECT_EQ(questions[1]["category"], "rejecting_limit");
  std::vector<nlohmann::json> points = OfKind(trace, "decision_point");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_NE(points[1]["points"].dump().find("claimed_limit"), std::string::npos) << dump;

  // Turns 2 and 3 resumed Claude Code's own conversation with the questions.
  std::vector<nlohmann::json> turns = OfKind(trace, "turn_start");
  ASSERT_EQ(turns.size(), 3u) << dump;
  EXPECT_FALSE(turns[0]["resumed"].get<bool>());
  EXPECT_TRUE(turns[1]["resumed"].get<bool>());
  EXPECT_TRUE(turns[2]["resumed"].get<bool>());
  EXPECT_NE(turns[1]["prompt"].get<std::string>().find(message.text()), std::string::npos);
  EXPECT_NE(turns[2]["prompt"].get<std::string>().find(questions[1]["text"].get<std::string>()),
            std::string::npos);
  ASSERT_FALSE(OfKind(trace, "agent_session").empty());
  // The stand-in saw the bank question in the resumed conversation.
  EXPECT_NE(testing::ReadFile(c.dir() + "/requests.jsonl").find(questions[1]["text"].get<std::string>()),
            std::string::npos);
}

}  // namespace
}  // namespace kseek
