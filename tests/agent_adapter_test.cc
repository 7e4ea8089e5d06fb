// What each adapter runs for a turn: argv, environment and working
// directory, and the errors for a turn or a configuration it cannot run.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/agent/adapter.h"
#include "server/agent/command_adapter.h"
#include "tests/test_util.h"

namespace kseek::agent {
namespace {

using Args = std::vector<std::string>;

std::unique_ptr<AgentAdapter> Make(const AgentConfig& config) {
  absl::StatusOr<std::unique_ptr<AgentAdapter>> adapter = MakeAdapter(config);
  EXPECT_TRUE(adapter.ok()) << adapter.status();
  return adapter.ok() ? *std::move(adapter) : nullptr;
}

AgentConfig Config(const std::string& kind) {
  AgentConfig c;
  c.kind = kind;
  return c;
}

class AdapterTest : public ::testing::Test {
 protected:
  TurnRequest Turn(const std::string& prompt, const std::string& resume = "") {
    TurnRequest t;
    t.workspace = workspace_;
    t.prompt = prompt;
    t.env = {{"KSEEK_TOKEN", "tok"}};
    t.resume_session_id = resume;
    return t;
  }
  std::string workspace_ = testing::TempDir("kseek-adapter");
};

TEST_F(AdapterTest, ClaudeStartsInPrintModeWithEditsConfinedToTheWorkspace) {
  auto adapter = Make(Config("claude"));
  absl::StatusOr<AgentInvocation> inv = adapter->Invocation(Turn("Make it faster."));
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->argv, (Args{"claude", "--output-format", "stream-json", "--verbose",
                             "--permission-mode", "acceptEdits", "--permission-prompts", "none",
                             "--allowedTools", "Bash", "-p", "--", "Make it faster."}));
  EXPECT_EQ(inv->cwd, workspace_);
  EXPECT_EQ(inv->env.at("KSEEK_TOKEN"), "tok");
  EXPECT_EQ(adapter->name(), "claude");
  EXPECT_TRUE(adapter->CanResume());
}

TEST_F(AdapterTest, ClaudeResumesWithOptions) {
  AgentConfig c = Config("claude");
  c.program = "/opt/claude/bin/claude";
  c.model = "sonnet";
  c.extra_dirs = {"/data/task"};
  c.extra_args = {"--max-budget-usd", "5"};
  auto adapter = Make(c);
  absl::StatusOr<AgentInvocation> inv = adapter->Invocation(Turn("-Is it measured?", "s-123"));
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->argv,
            (Args{"/opt/claude/bin/claude", "--output-format", "stream-json", "--verbose",
                  "--permission-mode", "acceptEdits", "--permission-prompts", "none",
                  "--allowedTools", "Bash", "--model", "sonnet", "--add-dir", "/data/task",
                  "--max-budget-usd", "5", "--resume", "s-123", "-p", "--", "-Is it measured?"}));
}

TEST_F(AdapterTest, CodexStartsExecWithTheWorkspaceSandbox) {
  auto adapter = Make(Config("codex"));
  absl::StatusOr<AgentInvocation> inv = adapter->Invocation(Turn("Make it faster."));
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->argv, (Args{"codex", "exec", "--json", "--skip-git-repo-check",
                             "-c", "sandbox_mode=\"workspace-write\"",
                             "-c", "sandbox_workspace_write.network_access=true",
                             "-c", "approval_policy=\"never\"", "--", "Make it faster."}));
  EXPECT_EQ(inv->cwd, workspace_);
  EXPECT_EQ(inv->env.at("KSEEK_TOKEN"), "tok");
}

TEST_F(AdapterTest, CodexResumesWithOptions) {
  AgentConfig c = Config("codex");
  c.model = "gpt-5-codex";
  c.extra_dirs = {"/data/task", "/data/we\"ird"};
  c.extra_args = {"-c", "model_reasoning_effort=\"high\""};
  auto adapter = Make(c);
  absl::StatusOr<AgentInvocation> inv = adapter->Invocation(Turn("Is it measured?", "t-9"));
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->argv,
            (Args{"codex", "exec", "resume", "--json", "--skip-git-repo-check",
                  "-c", "sandbox_mode=\"workspace-write\"",
                  "-c", "sandbox_workspace_write.network_access=true",
                  "-c", "approval_policy=\"never\"",
                  "-c", R"(sandbox_workspace_write.writable_roots=["/data/task","/data/we\"ird"])",
                  "-m", "gpt-5-codex", "-c", "model_reasoning_effort=\"high\"",
                  "--", "t-9", "Is it measured?"}));
}

TEST_F(AdapterTest, CommandFillsPlaceholdersPerWord) {
  AgentConfig c = Config("command");
  c.start_template = "my-agent --dir={workspace} -m '{model}' \"{prompt}\" plain\\ word";
  c.resume_template = "my-agent --resume {session_id} {prompt}";
  c.model = "m1";
  auto adapter = Make(c);
  absl::StatusOr<AgentInvocation> inv =
      adapter->Invocation(Turn("two words and {workspace} kept"));
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->argv, (Args{"my-agent", "--dir=" + workspace_, "-m", "m1",
                             "two words and {workspace} kept", "plain word"}));
  EXPECT_EQ(inv->cwd, workspace_);
  EXPECT_TRUE(adapter->CanResume());
  inv = adapter->Invocation(Turn("why?", "abc"));
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->argv, (Args{"my-agent", "--resume", "abc", "why?"}));
}

TEST_F(AdapterTest, CommandWithoutResumeTemplateCannotResume) {
  AgentConfig c = Config("command");
  c.start_template = "my-agent {prompt}";
  auto adapter = Make(c);
  EXPECT_FALSE(adapter->CanResume());
  absl::StatusOr<AgentInvocation> inv = adapter->Invocation(Turn("why?", "abc"));
  ASSERT_EQ(inv.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(inv.status().message().find("resume_session_id"), std::string::npos);
}

TEST(AdapterConfig, BadTemplatesNameTheirField) {
  const auto error = [](const std::string& start, const std::string& resume) {
    AgentConfig c = Config("command");
    c.start_template = start;
    c.resume_template = resume;
    absl::StatusOr<std::unique_ptr<AgentAdapter>> a = MakeAdapter(c);
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(a.status().message());
  };
  EXPECT_EQ(error("", ""), "start_template: is empty");
  EXPECT_EQ(error("agent {promt}", ""),
            "start_template: unknown placeholder {promt} (known: {workspace}, {prompt}, "
            "{session_id}, {model})");
  EXPECT_EQ(error("agent --resume {session_id}", ""),
            "start_template: {session_id} is known only when resuming (use it in "
            "resume_template)");
  EXPECT_EQ(error("agent {prompt}", "agent 'unterminated"),
            "resume_template: unterminated ' quote");
  EXPECT_EQ(error("agent {prompt} \\", ""), "start_template: ends with a backslash");
}

TEST(AdapterConfig, UnknownKind) {
  absl::StatusOr<std::unique_ptr<AgentAdapter>> a = MakeAdapter(Config("aider"));
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a.status().message(), "kind: unknown agent \"aider\" (known: claude, codex, command)");
}

TEST(AdapterConfig, SplitKeepsQuotedBlanksAndEmptyQuotedWords) {
  absl::StatusOr<std::vector<std::string>> words =
      SplitCommandTemplate("a  'b c' \"d 'e'\" '' f\\\"g");
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_EQ(*words, (Args{"a", "b c", "d 'e'", "", "f\"g"}));
}

TEST_F(AdapterTest, TurnsAreValidated) {
  auto adapter = Make(Config("claude"));
  TurnRequest t = Turn("go");
  t.workspace = "relative/dir";
  EXPECT_EQ(adapter->Invocation(t).status().message(),
            "workspace: \"relative/dir\" is not an absolute path");
  t.workspace = workspace_ + "/missing";
  EXPECT_EQ(adapter->Invocation(t).status().message(),
            "workspace: " + workspace_ + "/missing is not a directory");
  t = Turn("");
  EXPECT_EQ(adapter->Invocation(t).status().message(), "prompt: is empty");
}

}  // namespace
}  // namespace kseek::agent
