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
   "tool_calls": [{"name": "exec_command", "input": {
     "cmd": "for i in $(seq 600); do [ -f go ] && break; sleep 0.1; done; cp {zeros} kernel.cu; id -un > whoami"}}]},
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

  testing::ExpectLimitClaimStory(c, "codex");
}

}  // namespace
}  // namespace kseek
