// ChildProcess (base/child_process.h) on real children: output lines,
// descriptors, limits, stop sequences, groups, exit descriptions.
#include "base/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace kseek {
namespace {

ChildSpec Shell(const std::string& script) {
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.path = "/bin/sh";
  return spec;
}

TEST(ChildProcessTest, DeliversLinesOfBothStreamsAndTheExitStatus) {
  auto child = ChildProcess::Start(Shell("echo one; echo two >&2; printf 'three'; exit 3"));
  ASSERT_TRUE(child.ok()) << child.status();
  std::vector<std::string> out, err;
  (*child)->OnStdoutLine([&](absl::string_view l) { out.emplace_back(l); });
  (*child)->OnStderrLine([&](absl::string_view l) { err.emplace_back(l); });
  (*child)->Wait(absl::Now() + absl::Seconds(20));
  EXPECT_EQ(out, (std::vector<std::string>{"one", "three"}));
  EXPECT_EQ(err, (std::vector<std::string>{"two"}));
  int code = -1;
  EXPECT_TRUE((*child)->ExitedNormally(&code));
  EXPECT_EQ(code, 3);
  EXPECT_EQ((*child)->ExitDescription(), "exited with status 3");
}

TEST(ChildProcessTest, AProgramThatCannotRunIsAnErrorNamingIt) {
  ChildSpec spec;
  spec.argv = {"/nonexistent/prog"};
  auto child = ChildProcess::Start(spec);
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.status().message().find("cannot run /nonexistent/prog"), std::string::npos)
      << child.status();
}

TEST(ChildProcessTest, AFailedSetUpStepIsNamed) {
  ChildSpec spec = Shell("true");
  spec.cwd = "/nonexistent-dir";
  auto child = ChildProcess::Start(spec);
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.status().message().find("chdir"), std::string::npos) << child.status();
}

TEST(ChildProcessTest, OnlyPassedDescriptorsReachTheChild) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  int leak = open("/dev/null", O_RDONLY);  // not close-on-exec: must still not leak
  ASSERT_GE(leak, 0);
  ChildSpec spec;
  spec.argv = {"/bin/bash", "-c", "ls /proc/self/fd; echo hello >&77"};
  spec.path = "/bin/bash";
  spec.pass_fds = {{p[1], 77}};
  auto child = ChildProcess::Start(spec);
  ASSERT_TRUE(child.ok()) << child.status();
  close(p[1]);
  std::vector<std::string> fds;
  (*child)->OnStdoutLine([&](absl::string_view l) { fds.emplace_back(l); });
  (*child)->Wait(absl::Now() + absl::Seconds(20));
  char buf[16] = {0};
  EXPECT_EQ(read(p[0], buf, sizeof(buf)), 6);
  EXPECT_EQ(std::string(buf), "hello\n");
  close(p[0]);
  // ls itself opens one descriptor for the listing.
  for (const std::string& fd : fds) {
    EXPECT_NE(fd, std::to_string(leak)) << "descriptor " << leak << " leaked";
  }
  EXPECT_NE(std::find(fds.begin(), fds.end(), "77"), fds.end());
  close(leak);
}

TEST(ChildProcessTest, ResourceLimitsApply) {
  ChildSpec spec = Shell("ulimit -n");
  spec.rlimits = {{RLIMIT_NOFILE, 37}};
  auto run = RunToEnd(spec, absl::Seconds(20));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->output, "37\n");
}

TEST(ChildProcessTest, TheStopSequenceEscalatesToKillForAChildThatIgnoresSignals) {
  auto child = ChildProcess::Start(Shell("trap '' INT TERM; echo ready; while :; do sleep 1; done"));
  ASSERT_TRUE(child.ok()) << child.status();
  bool ready = false;
  (*child)->OnStdoutLine([&](absl::string_view l) { ready |= l == "ready"; });
  while (!ready) (*child)->Pump(absl::Now() + absl::Seconds(10));
  const absl::Time start = absl::Now();
  (*child)->Stop({{SIGINT, absl::Milliseconds(200)},
                  {SIGTERM, absl::Milliseconds(200)},
                  {SIGKILL, absl::ZeroDuration()}});
  (*child)->Wait(absl::Now() + absl::Seconds(20));
  EXPECT_EQ((*child)->TermSignal(), SIGKILL) << (*child)->ExitDescription();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(400));
}

TEST(ChildProcessTest, WhatTheChildLeftInItsGroupIsKilledWhenItExits) {
  // The grandchild keeps running after the shell exits; it shares the
  // group, so it must be gone once the child is reaped.
  auto child = ChildProcess::Start(Shell("sleep 300 & echo $!"));
  ASSERT_TRUE(child.ok()) << child.status();
  std::string grandchild;
  (*child)->OnStdoutLine([&](absl::string_view l) { grandchild = std::string(l); });
  (*child)->set_drain(absl::Milliseconds(200));
  (*child)->Wait(absl::Now() + absl::Seconds(20));
  ASSERT_FALSE(grandchild.empty());
  const pid_t g = std::stoi(grandchild);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = kill(g, 0) != 0 || access(absl::StrCat("/proc/", g, "/stat").c_str(), F_OK) != 0;
    if (!gone) {
      // A zombie reparented to init counts as gone once reaped; look at its state.
      FILE* f = fopen(absl::StrCat("/proc/", g, "/stat").c_str(), "r");
      if (f != nullptr) {
        char state = 0;
        if (fscanf(f, "%*d %*s %c", &state) == 1 && state == 'Z') gone = true;
        fclose(f);
      }
    }
    if (!gone) usleep(20000);
  }
  EXPECT_TRUE(gone) << "grandchild " << g << " outlived the child";
}

TEST(ChildProcessTest, ADeadlineEndsTheRunAndSaysSo) {
  auto run = RunToEnd(Shell("echo started; sleep 60"), absl::Milliseconds(300));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->signal, SIGKILL);
  EXPECT_EQ(run->output, "started\n");
}

TEST(ChildProcessTest, AWakeDescriptorReturnsFromPump) {
  auto child = ChildProcess::Start(Shell("sleep 30"));
  ASSERT_TRUE(child.ok()) << child.status();
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(write(p[1], "x", 1), 1);
  PumpResult r = (*child)->Pump(absl::Now() + absl::Seconds(10), {p[0]});
  EXPECT_TRUE(r.woken);
  EXPECT_FALSE(r.exited);
  close(p[0]);
  close(p[1]);
}

TEST(ChildProcessTest, AnotherUserWhenPrivileged) {
  if (geteuid() != 0) GTEST_SKIP() << "skipped: not root, cannot change user";
  ChildSpec spec = Shell("id -u; id -g");
  spec.uid = 65534;
  spec.gid = 65534;
  auto run = RunToEnd(spec, absl::Seconds(20));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->output, "65534\n65534\n");
}

}  // namespace
}  // namespace kseek
