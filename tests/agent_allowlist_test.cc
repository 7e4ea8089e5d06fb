// The coordinator's agent allowlist (server/agent/allowlist.h): what an
// operator's file may say, and how a name is looked up.
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "server/agent/allowlist.h"

namespace kseek::agent {
namespace {

TEST(AgentAllowlist, ParsesEveryKeyAndFindsByName) {
  absl::StatusOr<AgentAllowlist> list = AgentAllowlist::Parse(R"({"agents": {
    "claude": {"kind": "claude", "program": "/opt/claude", "model": "m", "extra_args": ["--x"],
               "extra_dirs": ["/data"], "env": {"ANTHROPIC_BASE_URL": "http://proxy"}},
    "scripted": {"kind": "command", "start_template": "run {prompt}",
                 "resume_template": "run --resume {session_id} {prompt}"},
    "online": {"kind": "command", "start_template": "run {prompt}", "network": "host"},
    "offline-codex": {"kind": "codex", "network": "none"}
  }})",
                                                              "agents.json");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->Names(), (std::vector<std::string>{"claude", "offline-codex", "online", "scripted"}));
  absl::StatusOr<AllowedAgent> claude = list->Find("claude");
  ASSERT_TRUE(claude.ok());
  EXPECT_EQ(claude->config.program, "/opt/claude");
  EXPECT_EQ(claude->config.model, "m");
  EXPECT_EQ(claude->config.extra_args, std::vector<std::string>{"--x"});
  EXPECT_EQ(claude->config.extra_dirs, std::vector<std::string>{"/data"});
  EXPECT_EQ(claude->env.at("ANTHROPIC_BASE_URL"), "http://proxy");
  // Command agents have no network unless their entry says so; the CLIs
  // have the host's unless theirs says otherwise.
  EXPECT_FALSE(claude->isolate_network);
  EXPECT_TRUE(list->Find("scripted")->isolate_network);
  EXPECT_FALSE(list->Find("online")->isolate_network);
  EXPECT_TRUE(list->Find("offline-codex")->isolate_network);
  EXPECT_EQ(list->Find("scripted")->config.resume_template, "run --resume {session_id} {prompt}");

  absl::StatusOr<AllowedAgent> none = list->Find("command");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(none.status().message().find("claude, offline-codex, online, scripted"),
            std::string::npos)
      << none.status();
}

TEST(AgentAllowlist, DefaultIsClaudeAndCodexOnPath) {
  AgentAllowlist list = AgentAllowlist::Default();
  EXPECT_EQ(list.Names(), (std::vector<std::string>{"claude", "codex"}));
  EXPECT_EQ(list.Find("codex")->config.program, "");
  EXPECT_EQ(list.Find("command").status().code(), absl::StatusCode::kPermissionDenied);
}

TEST(AgentAllowlist, BadFilesNameTheKeyAtFault) {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "agents.json: not valid JSON"},
      {R"({})", "agents.json: agents: missing"},
      {R"({"agents": {}})", "agents.json: agents: empty"},
      {R"({"agents": {}, "more": 1})", "agents.json: more: unknown key"},
      {R"({"agents": {"a": {}}})", "agents.json: agents.a.kind: missing"},
      {R"({"agents": {"a": {"kind": "typist"}}})", "agents.json: agents.a: kind: unknown agent"},
      {R"({"agents": {"a": {"kind": "command"}}})", "agents.json: agents.a: "},
      {R"({"agents": {"a": {"kind": "claude", "shell": "sh"}}})", "agents.json: agents.a.shell: unknown key"},
      {R"({"agents": {"a": {"kind": "claude", "network": "some"}}})", "agents.json: agents.a.network: expected"},
      {R"({"agents": {"a": {"kind": "claude", "env": {"X": 1}}}})", "agents.json: agents.a.env.X: expected a string"},
      {R"({"agents": {"a": {"kind": "claude", "extra_args": "--x"}}})", "agents.json: agents.a.extra_args: expected an array"},
      {R"({"agents": {"a": {"kind": "command", "start_template": "run {bogus}"}}})", "agents.json: agents.a: "},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<AgentAllowlist> list = AgentAllowlist::Parse(text, "agents.json");
    ASSERT_FALSE(list.ok()) << text;
    EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_TRUE(absl::StartsWith(list.status().message(), message)) << text << ": " << list.status();
  }
  EXPECT_EQ(AgentAllowlist::Load("/nonexistent/agents.json").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace kseek::agent
