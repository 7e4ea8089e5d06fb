// AgentProcess with real child processes (sh scripts standing in for an
// agent CLI): streaming, exit statuses, a missing program, crashes, the
// wall-time limit, interrupts and their escalation, and a fatal error in
// the output stopping the agent.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/agent/agent_process.h"
#include "server/agent/claude_adapter.h"
#include "server/agent/command_adapter.h"
#include "tests/agent_testing.h"
#include "tests/test_util.h"

namespace kseek::agent {
namespace {

using testing::EventLog;

std::unique_ptr<EventParser> LineParser() {
  AgentConfig c;
  c.kind = "command";
  c.start_template = "sh";
  return (*CommandAdapter::Create(c))->NewParser();
}

class AgentProcessTest : public ::testing::Test {
 protected:
  AgentInvocation Shell(const std::string& script) {
    AgentInvocation inv;
    inv.argv = {"/bin/sh", "-c", script};
    inv.cwd = workspace_;
    return inv;
  }
  // Runs `inv` to the end with the line parser.
  AgentExit RunToEnd(const AgentInvocation& inv) {
    return AgentProcess::Start(inv, LineParser(), limits_, log_.Sink())->Wait();
  }
  std::vector<std::string> Messages() {
    std::vector<std::string> out;
    for (const AgentEvent& e : log_.OfKind(AgentEventKind::kAgentMessage)) out.push_back(e.text);
    return out;
  }

  std::string workspace_ = testing::TempDir("kseek-agent-process");
  AgentLimits limits_;
  EventLog log_;
};

TEST_F(AgentProcessTest, CleanExitEndsTheTurnWithTheLastMessage) {
  limits_.wall_time = absl::Seconds(60);
  AgentInvocation inv = Shell("echo \"$KSEEK_TEST_VALUE\"; pwd; echo 'last words'");
  inv.env = {{"KSEEK_TEST_VALUE", "from the coordinator"}};
  const AgentExit exit = RunToEnd(inv);
  EXPECT_TRUE(exit.started);
  EXPECT_EQ(exit.exit_code, 0);
  EXPECT_FALSE(exit.turn_error);
  EXPECT_EQ(Messages(), (std::vector<std::string>{"from the coordinator", workspace_,
                                                  "last words"}));
  const AgentEvent end = log_.TurnEnd();
  EXPECT_FALSE(end.is_error);
  EXPECT_EQ(end.text, "last words");
  EXPECT_TRUE(log_.OfKind(AgentEventKind::kError).empty()) << log_.Dump();
}

TEST_F(AgentProcessTest, LinesArriveWhileTheAgentRuns) {
  // The agent waits for a file that only the sink creates, after it has
  // seen the first line: without streaming the run could only time out.
  limits_.wall_time = absl::Seconds(60);
  const std::string go = workspace_ + "/go";
  std::unique_ptr<AgentProcess> p = AgentProcess::Start(
      Shell("echo first; while [ ! -e go ]; do sleep 0.02; done; echo second"), LineParser(),
      limits_, [&](const AgentEvent& e) {
        log_.Add(e);
        if (e.kind == AgentEventKind::kAgentMessage && e.text == "first") {
          testing::WriteFile(go, "");
        }
      });
  const AgentExit exit = p->Wait();
  EXPECT_FALSE(exit.timed_out);
  EXPECT_EQ(Messages(), (std::vector<std::string>{"first", "second"}));
  EXPECT_FALSE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, MissingProgramIsNamed) {
  AgentInvocation inv = Shell("");
  inv.argv = {"kseek-no-such-agent", "--flag"};
  const AgentExit exit = RunToEnd(inv);
  EXPECT_FALSE(exit.started);
  const AgentEvent e = log_.ErrorOf(AgentErrorKind::kNotInstalled);
  EXPECT_TRUE(e.fatal);
  EXPECT_NE(e.text.find("\"kseek-no-such-agent\" was not found on PATH"), std::string::npos)
      << e.text;
  EXPECT_TRUE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, ProgramOnTheAddedPathIsFound) {
  const std::string bin = testing::TempDir("kseek-agent-bin");
  testing::WriteFile(bin + "/my-agent", "#!/bin/sh\necho \"agent says $1\"\n");
  chmod((bin + "/my-agent").c_str(), 0755);
  AgentInvocation inv = Shell("");
  inv.argv = {"my-agent", "hello"};
  inv.env = {{"PATH", bin + ":/usr/bin:/bin"}};
  const AgentExit exit = RunToEnd(inv);
  EXPECT_EQ(exit.exit_code, 0) << log_.Dump();
  EXPECT_EQ(Messages(), (std::vector<std::string>{"agent says hello"}));
}

TEST_F(AgentProcessTest, FileThatCannotBeExecutedIsNotInstalled) {
  testing::WriteFile(workspace_ + "/agent", "#!/bin/sh\necho hi\n");
  chmod((workspace_ + "/agent").c_str(), 0644);
  AgentInvocation inv = Shell("");
  inv.argv = {workspace_ + "/agent"};
  const AgentExit exit = RunToEnd(inv);
  EXPECT_FALSE(exit.started);
  const AgentEvent e = log_.ErrorOf(AgentErrorKind::kNotInstalled);
  EXPECT_NE(e.text.find(workspace_ + "/agent\" is not an executable file"), std::string::npos)
      << e.text;
  EXPECT_TRUE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, MissingWorkingDirectoryIsAStartError) {
  AgentInvocation inv = Shell("echo hi");
  inv.cwd = workspace_ + "/gone";
  RunToEnd(inv);
  const AgentEvent e = log_.ErrorOf(AgentErrorKind::kStart);
  EXPECT_NE(e.text.find("/gone\" is not a directory"), std::string::npos) << e.text;
  EXPECT_TRUE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, NonZeroExitCarriesTheStderrTail) {
  const AgentExit exit = RunToEnd(Shell("echo partial; echo 'compiler exploded' >&2; exit 3"));
  EXPECT_EQ(exit.exit_code, 3);
  EXPECT_EQ(exit.stderr_tail, "compiler exploded\n");
  const AgentEvent e = log_.ErrorOf(AgentErrorKind::kExit);
  EXPECT_EQ(e.text, "agent \"/bin/sh\" exited with status 3; stderr: compiler exploded");
  const AgentEvent end = log_.TurnEnd();
  EXPECT_TRUE(end.is_error);
  EXPECT_EQ(end.text, e.text);
}

TEST_F(AgentProcessTest, AuthMessageOnStderrIsAnAuthError) {
  RunToEnd(Shell("echo 'Error: Not logged in. Please run /login' >&2; exit 1"));
  EXPECT_TRUE(log_.ErrorOf(AgentErrorKind::kAuth).fatal);
  EXPECT_TRUE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, CrashIsReportedWithItsSignal) {
  const AgentExit exit = RunToEnd(Shell("echo working; kill -SEGV $$"));
  EXPECT_EQ(exit.signal, SIGSEGV);
  const AgentEvent e = log_.ErrorOf(AgentErrorKind::kCrash);
  EXPECT_NE(e.text.find("was ended by signal 11"), std::string::npos) << e.text;
  EXPECT_TRUE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, HangIsStoppedAtTheWallTimeLimit) {
  limits_.wall_time = absl::Milliseconds(300);
  limits_.interrupt_grace = absl::Milliseconds(200);
  limits_.terminate_grace = absl::Milliseconds(200);
  const AgentExit exit = RunToEnd(Shell("echo started; sleep 600"));
  EXPECT_TRUE(exit.timed_out);
  const AgentEvent e = log_.ErrorOf(AgentErrorKind::kTimeout);
  EXPECT_TRUE(e.fatal);
  EXPECT_NE(e.text.find("ran past its wall-time limit of 300ms"), std::string::npos) << e.text;
  EXPECT_EQ(log_.OfKind(AgentEventKind::kError).size(), 1u) << log_.Dump();
  EXPECT_TRUE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, InterruptSendsSigintFirst) {
  limits_.wall_time = absl::Seconds(120);
  absl::Notification ready;
  std::unique_ptr<AgentProcess> p = AgentProcess::Start(
      Shell("trap 'echo saved and stopping; exit 0' INT; echo ready; "
            "while :; do sleep 0.02; done"),
      LineParser(), limits_, [&](const AgentEvent& e) {
        log_.Add(e);
        if (e.text == "ready") ready.Notify();
      });
  ready.WaitForNotification();
  p->Interrupt("a human's message is waiting");
  const AgentExit exit = p->Wait();
  EXPECT_TRUE(exit.interrupted);
  EXPECT_FALSE(exit.timed_out);
  EXPECT_EQ(exit.exit_code, 0);
  EXPECT_EQ(Messages(), (std::vector<std::string>{"ready", "saved and stopping"}));
  const AgentEvent e = log_.ErrorOf(AgentErrorKind::kInterrupted);
  EXPECT_FALSE(e.fatal);
  EXPECT_EQ(e.text, "agent \"/bin/sh\" interrupted: a human's message is waiting");
  EXPECT_TRUE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, InterruptEscalatesToSigkill) {
  limits_.wall_time = absl::Seconds(120);
  limits_.interrupt_grace = absl::Milliseconds(200);
  limits_.terminate_grace = absl::Milliseconds(200);
  absl::Notification ready;
  std::unique_ptr<AgentProcess> p = AgentProcess::Start(
      Shell("trap '' INT TERM; echo ready; while :; do sleep 0.02; done"), LineParser(),
      limits_, [&](const AgentEvent& e) {
        log_.Add(e);
        if (e.text == "ready") ready.Notify();
      });
  ready.WaitForNotification();
  p->Interrupt("stop");
  const AgentExit exit = p->Wait();
  EXPECT_TRUE(exit.interrupted);
  EXPECT_EQ(exit.signal, SIGKILL);
  log_.ErrorOf(AgentErrorKind::kInterrupted);
  EXPECT_EQ(log_.OfKind(AgentEventKind::kError).size(), 1u) << log_.Dump();  // not a crash
  EXPECT_TRUE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, DestroyingTheProcessStopsTheAgent) {
  limits_.interrupt_grace = absl::Milliseconds(200);
  std::unique_ptr<AgentProcess> p =
      AgentProcess::Start(Shell("sleep 600"), LineParser(), limits_, log_.Sink());
  const pid_t pid = p->pid();
  ASSERT_GT(pid, 0);
  p.reset();
  EXPECT_NE(kill(pid, 0), 0);  // reaped
  EXPECT_TRUE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, WhatTheAgentLeftRunningIsKilled) {
  const AgentExit exit = RunToEnd(Shell("sleep 600 & echo $! > bg.pid; echo done"));
  EXPECT_EQ(exit.exit_code, 0);
  const pid_t bg = std::stoi(testing::ReadFile(workspace_ + "/bg.pid"));
  // SIGKILL takes effect asynchronously: wait until the process is gone or a
  // zombie waiting for its new parent to reap it.
  std::string state;
  for (int i = 0; i < 1000; ++i) {
    std::ifstream stat(absl::StrCat("/proc/", bg, "/stat"));
    std::string pid, name;
    if (!(stat >> pid >> name >> state)) state = "gone";
    if (state == "gone" || state == "Z") break;
    usleep(10000);
  }
  EXPECT_TRUE(state == "gone" || state == "Z") << state;
  EXPECT_FALSE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, OverlongLineIsDroppedAndReadingGoesOn) {
  limits_.max_line_bytes = 100;
  RunToEnd(Shell("head -c 5000 /dev/zero | tr '\\0' x; echo; echo after"));
  EXPECT_EQ(Messages(), (std::vector<std::string>{"after"}));
  const AgentEvent e = log_.ErrorOf(AgentErrorKind::kOutput);
  EXPECT_FALSE(e.fatal);
  EXPECT_FALSE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, LastLineWithoutNewlineIsRead) {
  RunToEnd(Shell("printf 'one\\ntwo'"));
  EXPECT_EQ(Messages(), (std::vector<std::string>{"one", "two"}));
}

TEST_F(AgentProcessTest, FatalErrorInTheStreamStopsTheAgent) {
  // A stand-in for claude that reports a refused key (a line recorded from
  // the real CLI) and would then retry for minutes.
  const std::vector<std::string> lines = {
      R"({"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,)"
      R"("retry_delay_ms":558,"error_status":401,"error":"authentication_failed",)"
      R"("session_id":"47704453-cc75-4925-9845-be57086fd8f1"})"};
  const std::string script = workspace_ + "/fake-claude";
  testing::WriteFile(script, "#!/bin/sh\ncat <<'EOF'\n" + lines[0] +
                                 "\nEOF\nwhile :; do sleep 0.02; done\n");
  chmod(script.c_str(), 0755);
  AgentConfig c;
  c.kind = "claude";
  c.program = script;
  ClaudeAdapter adapter(c);
  TurnRequest turn;
  turn.workspace = workspace_;
  turn.prompt = "go";
  limits_.wall_time = absl::Seconds(120);
  absl::StatusOr<AgentExit> exit = RunAgentTurn(adapter, turn, limits_, log_.Sink());
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_FALSE(exit->timed_out);
  EXPECT_FALSE(exit->interrupted);
  EXPECT_TRUE(log_.ErrorOf(AgentErrorKind::kAuth).fatal);
  EXPECT_EQ(log_.OfKind(AgentEventKind::kError).size(), 1u) << log_.Dump();
  EXPECT_EQ(log_.OfKind(AgentEventKind::kAgentSessionId).size(), 1u);
  EXPECT_TRUE(log_.TurnEnd().is_error);
}

TEST_F(AgentProcessTest, CliThatLingersAfterItsTurnEndIsStoppedWithoutError) {
  const std::string script = workspace_ + "/fake-claude";
  testing::WriteFile(script,
                     "#!/bin/sh\n"
                     "echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
                     "\"result\":\"All done.\",\"session_id\":\"s-1\"}'\n"
                     "sleep 600\n");
  chmod(script.c_str(), 0755);
  AgentConfig c;
  c.kind = "claude";
  c.program = script;
  ClaudeAdapter adapter(c);
  TurnRequest turn;
  turn.workspace = workspace_;
  turn.prompt = "go";
  limits_.wall_time = absl::Seconds(120);
  limits_.exit_grace = absl::Milliseconds(200);
  absl::StatusOr<AgentExit> exit = RunAgentTurn(adapter, turn, limits_, log_.Sink());
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_FALSE(exit->timed_out);
  EXPECT_FALSE(exit->turn_error);
  EXPECT_TRUE(log_.OfKind(AgentEventKind::kError).empty()) << log_.Dump();
  const AgentEvent end = log_.TurnEnd();
  EXPECT_FALSE(end.is_error);
  EXPECT_EQ(end.text, "All done.");
}

TEST_F(AgentProcessTest, InvalidTurnRunsNothing) {
  AgentConfig c;
  c.kind = "claude";
  ClaudeAdapter adapter(c);
  TurnRequest turn;
  turn.workspace = workspace_;
  absl::StatusOr<AgentExit> exit = RunAgentTurn(adapter, turn, limits_, log_.Sink());
  EXPECT_EQ(exit.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(log_.All().empty());
}

// The stand-in model's request log is read while it is written (the e2e
// tests poll it mid-turn): a last line without its newline, here cut
// inside a string as a 32 KB write left one, is not parsed, and the
// complete lines before it are.
TEST(StandinLogTest, OnlyCompleteLinesAreRead) {
  const std::string log = "{\"kind\": \"main\"}\n\n{\"kind\": \"side\"}\n{\"addition";
  const std::vector<nlohmann::json> got = testing::CompleteJsonLines(log);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]["kind"], "main");
  EXPECT_EQ(got[1]["kind"], "side");
  EXPECT_EQ(testing::CompleteJsonLines(log + "\": 1}\n").size(), 3u);
}

}  // namespace
}  // namespace kseek::agent
