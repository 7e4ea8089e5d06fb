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
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/agent_testing.h"
#include "tests/session_testing.h"

namespace kseek {
namespace {

using testing::Cluster;
using testing::Softmax;

// What the stand-in "model" answers, turn by turn of its conversation. It
// runs kseek as BRIEF.md names it: by its absolute path ({kseek}).
const char kScript[] = R"({"turns": [
  {"text": "I will put my kernel in place.",
   "tool_calls": [{"name": "Bash", "input": {
     "command": "for i in $(seq 600); do [ -f go ] && break; sleep 0.1; done; cp {zeros} kernel.cu; id -un > whoami",
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

  testing::ExpectLimitClaimStory(c, "claude");
}

}  // namespace
}  // namespace kseek
