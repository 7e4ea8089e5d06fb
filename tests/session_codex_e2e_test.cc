// A session with the REAL Codex CLI (installed by scripts/setup.sh), run by
// kernelseekd's codex adapter against the stand-in model
// (tests/agent_standin/standin_model.py: a stand-in for a language model's
// answers only), configured as Codex's model provider in its config file.
// The same story as session_claude_e2e_test.cc: a wrong kernel and a
// claimed limit are never a success, the human's message goes first, the
// claim brings a limit-rejection question through `codex exec resume`, and
// only the coordinator's verification of a correct fast kernel succeeds.
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
   "tool_calls": [{"name": "exec_command", "input": {
     "cmd": "for i in $(seq 600); do [ -f go ] && break; sleep 0.1; done; cp {zeros} kernel.cu"}}]},
  {"tool_calls": [{"name": "exec_command", "input": {
     "cmd": "{kseek} eval --task . --target host --max-samples 3 --max-seconds 0.1 kernel.cu; echo exit $?"}}]},
  {"text": "The kernel is now at the hardware limit; it cannot be improved further. Done."},
  {"text": "I checked again: it is at the hardware limit. Nothing left to optimize."},
  {"tool_calls": [{"name": "exec_command", "input": {
     "cmd": "cp {fast} kernel.cu && {kseek} eval --task . --target host --max-samples 3 --max-seconds 0.1 kernel.cu"}}]},
  {"text": "I had assumed the limit without measuring it. The new kernel is in place."}
]})";

TEST(SessionCodexEndToEnd, LimitClaimIsQuestionedAndOnlyVerificationSucceeds) {
  KSEEK_REQUIRE_AGENT_CLI("codex");
  Cluster c;
  const std::string zeros = c.dir() + "/zeros.cc";
  testing::WriteFile(zeros, testing::kZerosKernel);
  testing::WriteFile(c.dir() + "/script.json", kScript);
  testing::WriteFile(c.dir() + "/bank.json", testing::kLimitBank);

  testing::Daemon model(
      {testing::FindOnPath("python3"), testing::SourceDir() + "/tests/agent_standin/standin_model.py",
       "--script", c.dir() + "/script.json", "--log", c.dir() + "/requests.jsonl", "--port", "0",
       "--var", "zeros=" + zeros, "--var", "fast=" + Softmax() + "/fast_host.cc",
       "--var", "kseek=" + testing::BinDir() + "/kseek"},
      c.dir() + "/model.log");
  const std::string model_address = model.WaitListening(30);
  ASSERT_FALSE(model_address.empty()) << testing::ReadFile(c.dir() + "/model.log");

  // Codex reads its model provider from CODEX_HOME/config.toml; the
  // coordinator's environment is its agents'.
  const std::string home = c.dir() + "/home";
  mkdir(home.c_str(), 0755);
  mkdir((home + "/.codex").c_str(), 0755);
  testing::WriteFile(home + "/.codex/config.toml",
                     absl::StrCat("model = \"stand-in-model\"\n"
                                  "model_provider = \"standin\"\n"
                                  "[model_providers.standin]\n"
                                  "name = \"stand-in\"\n"
                                  "base_url = \"http://", model_address, "/v1\"\n"
                                  "env_key = \"STANDIN_KEY\"\n"
                                  "wire_api = \"responses\"\n"));
  setenv("HOME", home.c_str(), 1);
  setenv("CODEX_HOME", (home + "/.codex").c_str(), 1);
  setenv("STANDIN_KEY", "stand-in-key", 1);
  c.StartCoordinator({"--bank", c.dir() + "/bank.json"});
  c.StartWorker();

  v1::CreateSessionRequest request = c.Request(5);
  request.mutable_agent()->set_kind("codex");
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

  int by_agent = 0;
  for (const nlohmann::json& e : OfKind(trace, "evaluation")) by_agent += e["by"] == "agent";
  EXPECT_EQ(by_agent, 2) << dump;
  std::vector<nlohmann::json> verifications = OfKind(trace, "verification");
  ASSERT_EQ(verifications.size(), 3u) << dump;
  EXPECT_FALSE(verifications[0]["goal_met"].get<bool>());
  EXPECT_FALSE(verifications[1]["goal_met"].get<bool>());
  EXPECT_TRUE(verifications[2]["goal_met"].get<bool>());
  std::vector<nlohmann::json> questions = OfKind(trace, "question");
  ASSERT_EQ(questions.size(), 2u) << dump;
  EXPECT_EQ(questions[0]["source"], "human");
  EXPECT_EQ(questions[1]["source"], "bank");
  EXPECT_EQ(questions[1]["category"], "rejecting_limit");
  std::vector<nlohmann::json> turns = OfKind(trace, "turn_start");
  ASSERT_EQ(turns.size(), 3u) << dump;
  EXPECT_TRUE(turns[1]["resumed"].get<bool>());
  EXPECT_TRUE(turns[2]["resumed"].get<bool>());
  EXPECT_NE(testing::ReadFile(c.dir() + "/requests.jsonl").find(questions[1]["text"].get<std::string>()),
            std::string::npos);
}

}  // namespace
}  // namespace kseek
