// Sessions end to end: a real kernelseekd and a host kseek-worker on
// loopback, and a scripted shell agent run through the `command` adapter (no
// model involved: the script is the agent). The agent works in its
// workspace with the real `kseek` CLI, on the host softmax task. The
// coordinator alone decides success; a session survives kill -9 of the
// coordinator.
#include <signal.h>

#include <chrono>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/session_testing.h"

namespace kseek {
namespace {

namespace v1 = ::kernelseek::v1;
using testing::Alive;
using testing::Cluster;
using testing::ExpectDense;
using testing::OfKind;
using testing::Softmax;
using testing::WaitFile;

// The scripted agent: `agent.sh MODE SOURCE PROMPT`, run in the workspace.
// Every turn it records its prompt and pid, copies SOURCE over kernel.cu
// and runs plain `kseek eval kernel.cu` as the brief says (the workspace's
// task and target are the defaults; only the timing is cut short); then, by
// MODE:
//   good     says it is done
//   liar     waits (turn 1 only) for the test's "go" file, then claims a limit
//   sleeper  waits a long time (to be cancelled or cut off by a restart)
//   selfask  records that it applied a bank question, then says it is done
//   subset   (evaluates one scenario only) says it is done
//   queued   touches "started" first, then waits on its evaluation
// In the modes whose tests need the agent's own evaluation to be all
// correct (good, subset), an evaluation judged wrong (exit status 1) is run
// again, three runs at most: on a loaded host the harness's cross-check of
// an honest kernel's reported time against its process's CPU time
// (harness/src/runner_scenario.cc, CrossCheckTimes) can fail a scenario.
const char kAgentScript[] = R"(#!/bin/bash
mode="$1"; source_file="$2"; prompt="$3"
turn=$(( $(cat .turn 2>/dev/null || echo 0) + 1 )); echo $turn > .turn
printf '%s\n' "$prompt" > "prompt.$turn"
echo $$ > agent.pid
cp "$source_file" kernel.cu
echo "turn $turn: evaluating"
scenarios=""
[ "$mode" = subset ] && scenarios="--scenarios r64_c33_f32_host"
[ "$mode" = queued ] && touch started
runs=1
case "$mode" in good|subset) runs=3 ;; esac
for run in $(seq $runs); do
  kseek eval $scenarios --max-samples 3 --max-seconds 0.1 --json kernel.cu > "eval.$turn" 2>&1
  status=$?
  echo "kseek eval exit status $status"
  [ $status = 1 ] || break
done
case "$mode" in
  good|subset) echo "I replaced the kernel. Done." ;;
  liar)
    if [ $turn = 1 ]; then
      for i in $(seq 600); do [ -f go ] && break; sleep 0.1; done
    fi
    echo "The kernel is now optimal; it is at the hardware limit. Done." ;;
  sleeper) touch started; sleep 90 ;;
  selfask) grep -q "APPLIED-QUESTION" BRIEF.md && echo "APPLIED-QUESTION: layer-below-decides" ;;
esac
)";

const char* const kModes[] = {"good", "liar", "sleeper", "selfask", "subset", "queued"};

// The kernels the scripted agent copies, by the name its allowlist entries
// use: "MODE-KERNEL", e.g. "liar-zeros".
std::vector<std::pair<std::string, std::string>> AgentKernels(Cluster& c) {
  return {{"fast", Softmax() + "/fast_host.cc"},
          {"baseline", Softmax() + "/baseline_host.cc"},
          {"zeros", c.dir() + "/zeros.cc"}};
}

// Writes the agent script and the wrong kernel into the cluster's folder,
// and allows the coordinator to run the script in every mode with every
// kernel (the operator's allowlist: a request only names one).
void WriteAgent(Cluster& c) {
  testing::WriteFile(c.dir() + "/agent.sh", kAgentScript);
  testing::WriteFile(c.dir() + "/zeros.cc", testing::kZerosKernel);
  for (const char* mode : kModes) {
    for (const auto& [name, source] : AgentKernels(c)) {
      c.AllowAgent(absl::StrCat(mode, "-", name),
                   {{"kind", "command"},
                    {"start_template",
                     absl::StrCat("bash ", c.dir(), "/agent.sh ", mode, " ", source, " {prompt}")}});
    }
  }
}

// A request for the scripted agent in `mode`, copying `source` (a key of
// AgentKernels) into kernel.cu each turn.
v1::CreateSessionRequest AgentRequest(Cluster& c, const std::string& mode,
                                      const std::string& source, int max_turns) {
  v1::CreateSessionRequest r = c.Request(max_turns);
  r.mutable_agent()->set_name(absl::StrCat(mode, "-", source));
  return r;
}

TEST(SessionEndToEnd, FastKernelSucceedsOnlyByTheCoordinatorsVerification) {
  Cluster c;
  WriteAgent(c);
  c.StartCoordinator();
  c.StartWorker();
  const std::string fast = Softmax() + "/fast_host.cc";
  const std::string baseline = Softmax() + "/baseline_host.cc";
  testing::ProcessResult start = c.Kseek(
      {"session", "start", "--task", Softmax(), "--target", "host", "--agent", "good-fast",
       "--max-turns", "3", "--max-samples", "3", "--max-seconds", "0.1", baseline});
  ASSERT_EQ(start.exit_code, 0) << start.err;
  std::string id(absl::StripAsciiWhitespace(start.out));
  ASSERT_TRUE(absl::StartsWith(id, "ss_")) << start.out;

  // watch follows the session to its end; exit 0 means it succeeded.
  testing::ProcessResult watch = c.Kseek({"session", "watch", id});
  EXPECT_EQ(watch.exit_code, 0) << watch.out << watch.err << c.Log();
  EXPECT_NE(watch.out.find("by agent: 11/11 correct"), std::string::npos) << watch.out;
  EXPECT_NE(watch.out.find("verification: goal MET"), std::string::npos) << watch.out;

  testing::ProcessResult trace_out = c.Kseek({"session", "trace", id});
  ASSERT_EQ(trace_out.exit_code, 0) << trace_out.err;
  std::vector<nlohmann::json> trace;
  for (absl::string_view line : absl::StrSplit(trace_out.out, '\n', absl::SkipEmpty())) {
    trace.push_back(nlohmann::json::parse(line));
  }
  ExpectDense(trace);
  // --json: the same events as one array.
  testing::ProcessResult trace_json = c.Kseek({"session", "trace", "--json", id});
  ASSERT_EQ(trace_json.exit_code, 0) << trace_json.err;
  nlohmann::json array = nlohmann::json::parse(trace_json.out);
  ASSERT_TRUE(array.is_array());
  EXPECT_EQ(std::vector<nlohmann::json>(array.begin(), array.end()), trace);
  // The agent's own evaluation landed in the trace, then the coordinator's
  // verification; success comes only after it. (A turn whose evaluations a
  // loaded host spoils is followed by another: see kAgentScript.)
  std::vector<nlohmann::json> evals = OfKind(trace, "evaluation");
  ASSERT_GE(evals.size(), 2u) << trace_out.out;
  EXPECT_EQ(evals.front()["by"], "agent");
  EXPECT_EQ(evals.back()["by"], "verification");
  int verifications = 0;
  for (const nlohmann::json& e : evals) verifications += e["by"] == "verification";
  // Both evaluated the fast kernel the agent put in place, and say so by its
  // hash (not the hash of nothing).
  testing::ProcessResult sha = testing::RunProcess({"sha256sum", fast});
  ASSERT_EQ(sha.exit_code, 0) << sha.err;
  for (const nlohmann::json& e : evals) EXPECT_EQ(e["kernel_sha256"], sha.out.substr(0, 64)) << e;
  // The agent's evaluation ran every scenario (no --scenarios), all correct:
  // it is the session's first best.
  std::vector<nlohmann::json> bests = OfKind(trace, "best");
  ASSERT_FALSE(bests.empty()) << trace_out.out;
  const nlohmann::json* first_correct = nullptr;
  for (const nlohmann::json& e : evals) {
    if (first_correct == nullptr && e["all_correct"].get<bool>()) first_correct = &e;
  }
  ASSERT_NE(first_correct, nullptr) << trace_out.out;
  EXPECT_EQ((*first_correct)["by"], "agent") << trace_out.out;
  EXPECT_EQ((*first_correct)["total"], 11) << trace_out.out;
  EXPECT_EQ(bests[0]["evaluation_id"], (*first_correct)["evaluation_id"]);
  int64_t verification_at = -1, succeeded_at = -1;
  for (const nlohmann::json& e : trace) {
    if (e["kind"] == "evaluation" && e["by"] == "verification") verification_at = e["index"];
    if (e["kind"] == "state" && e["state"] == "succeeded") succeeded_at = e["index"];
  }
  ASSERT_GE(verification_at, 0);
  EXPECT_GT(succeeded_at, verification_at);
  nlohmann::json verification = OfKind(trace, "verification").back();
  EXPECT_TRUE(verification["goal_met"].get<bool>());
  EXPECT_GE(verification["geomean_speedup"].get<double>(), 1.5);
  // The agent was told how to evaluate, and its plain `kseek eval
  // kernel.cu` ran on the workspace's task and target (exit 0).
  EXPECT_NE(testing::ReadFile(c.Workspace(id) + "/prompt.1")
                .find(testing::BinDir() + "/kseek eval kernel.cu"),
            std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(testing::ReadFile(c.Workspace(id) + "/.kernelseek/client.json"))
                .value("target", ""),
            "host");
  EXPECT_NE(testing::ReadFile(c.Workspace(id) + "/eval.1").find("\"target\": \"host\""),
            std::string::npos)
      << testing::ReadFile(c.Workspace(id) + "/eval.1");
  EXPECT_NE(testing::ReadFile(c.Workspace(id) + "/eval.1").find("\"all_correct\": true"),
            std::string::npos);

  testing::ProcessResult best = c.Kseek({"session", "best", "-o", c.dir() + "/best.cc", id});
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(testing::ReadFile(c.dir() + "/best.cc"), testing::ReadFile(fast));
  testing::ProcessResult show = c.Kseek({"session", "show", "--json", id});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  nlohmann::json shown = nlohmann::json::parse(show.out);
  EXPECT_EQ(shown["state"], "succeeded");
  EXPECT_EQ(shown["turns"], verifications);
  EXPECT_EQ(shown["events"], static_cast<int64_t>(trace.size()));
}

TEST(SessionEndToEnd, ClaimedSuccessWithABrokenKernelGetsTheHumanThenABankQuestion) {
  Cluster c;
  WriteAgent(c);
  c.StartCoordinator();
  c.StartWorker();
  v1::Session s = c.Create(AgentRequest(c, "liar", "zeros", 3));
  ASSERT_FALSE(s.session_id().empty());
  // Posted during the first turn: it is asked before any bank question.
  v1::PostMessageRequest message;
  message.set_session_id(s.session_id());
  message.set_text("Which of your outputs did you check against the reference?");
  v1::PostMessageResponse posted;
  auto ctx = c.Context();
  grpc::Status st = c.stub().PostMessage(ctx.get(), message, &posted);
  ASSERT_TRUE(st.ok()) << st.error_message();
  testing::WriteFile(c.Workspace(s.session_id()) + "/go", "");

  v1::Session end = c.WaitEnded(s.session_id(), 400);
  EXPECT_EQ(end.state(), "budget_spent") << end.reason();
  EXPECT_EQ(end.turns(), 3);
  EXPECT_FALSE(end.has_best_speedup());
  std::vector<nlohmann::json> trace = c.Trace(s.session_id());
  ExpectDense(trace);
  for (const nlohmann::json& e : OfKind(trace, "state")) EXPECT_NE(e["state"], "succeeded");
  for (const nlohmann::json& e : OfKind(trace, "verification")) EXPECT_FALSE(e["goal_met"].get<bool>());
  // Every evaluation (the agent's three, the three verifications) is wrong.
  std::vector<nlohmann::json> evals = OfKind(trace, "evaluation");
  EXPECT_EQ(evals.size(), 6u);
  for (const nlohmann::json& e : evals) EXPECT_FALSE(e["all_correct"].get<bool>()) << e.dump();

  std::vector<nlohmann::json> questions = OfKind(trace, "question");
  ASSERT_EQ(questions.size(), 2u) << nlohmann::json(trace).dump(1);
  EXPECT_EQ(questions[0]["source"], "human");
  EXPECT_EQ(questions[0]["text"], message.text());
  EXPECT_EQ(questions[1]["source"], "bank");
  EXPECT_FALSE(questions[1]["question_id"].get<std::string>().empty());
  // The second decision point saw the claimed limit in the agent's words.
  std::vector<nlohmann::json> points = OfKind(trace, "decision_point");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_NE(points[0]["points"].dump().find("human_message"), std::string::npos);
  EXPECT_NE(points[1]["points"].dump().find("claimed_limit"), std::string::npos) << points[1].dump();
  // The agent got the questions as its next prompts.
  const std::string ws = c.Workspace(s.session_id());
  EXPECT_NE(testing::ReadFile(ws + "/prompt.2").find(message.text()), std::string::npos);
  EXPECT_NE(testing::ReadFile(ws + "/prompt.3").find(questions[1]["text"].get<std::string>()),
            std::string::npos);
}

TEST(SessionEndToEnd, CancelEndsTheSessionAndStopsTheAgent) {
  Cluster c;
  WriteAgent(c);
  c.StartCoordinator();
  c.StartWorker();
  v1::Session s = c.Create(AgentRequest(c, "sleeper", "baseline", 3));
  const std::string ws = c.Workspace(s.session_id());
  ASSERT_TRUE(WaitFile(ws + "/started", 120)) << c.Log();
  pid_t agent = std::stoi(testing::ReadFile(ws + "/agent.pid"));
  ASSERT_TRUE(Alive(agent));

  // The agent's token (from the workspace) reaches its own session only.
  const std::string agent_token =
      nlohmann::json::parse(testing::ReadFile(ws + "/.kernelseek/client.json"))["token"];
  auto as_agent = [&] {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->AddMetadata("authorization", "Bearer " + agent_token);
    return ctx;
  };
  v1::SessionRef ref;
  ref.set_session_id(s.session_id());
  v1::Session seen;
  EXPECT_TRUE(c.stub().GetSession(as_agent().get(), ref, &seen).ok());
  v1::ListSessionsResponse listed;
  EXPECT_EQ(c.stub().ListSessions(as_agent().get(), v1::ListSessionsRequest(), &listed).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::CancelSessionResponse cancelled;
  EXPECT_EQ(c.stub().CancelSession(as_agent().get(), ref, &cancelled).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // Bad requests name the field at fault.
  v1::CreateSessionRequest bad = AgentRequest(c, "good", "fast", 1);
  bad.mutable_agent()->set_name("typist");
  v1::Session none;
  grpc::Status refused = c.stub().CreateSession(c.Context().get(), bad, &none);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(absl::StartsWith(refused.error_message(), "agent.name")) << refused.error_message();
  bad = AgentRequest(c, "good", "fast", 1);
  bad.mutable_budget()->set_max_turns(-1);
  refused = c.stub().CreateSession(c.Context().get(), bad, &none);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(refused.error_message(), "budget.max_turns")) << refused.error_message();
  bad = AgentRequest(c, "good", "fast", 1);
  bad.clear_kernel_source();
  refused = c.stub().CreateSession(c.Context().get(), bad, &none);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("kernel_source"), std::string::npos) << refused.error_message();

  testing::ProcessResult cancel = c.Kseek({"session", "cancel", s.session_id()});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_EQ(c.Get(s.session_id()).state(), "cancelled");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Alive(agent) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(Alive(agent)) << "the agent still runs";
  // The killed turn's turn_end comes before the cancelled state, which is
  // the last event; a watcher sees exactly the exported trace.
  std::vector<nlohmann::json> trace = c.Trace(s.session_id());
  ASSERT_GE(trace.size(), 2u);
  EXPECT_EQ(trace.back().value("kind", ""), "state") << trace.back().dump();
  EXPECT_EQ(trace.back().value("state", ""), "cancelled") << trace.back().dump();
  EXPECT_EQ(OfKind(trace, "turn_end").size(), 1u);
  testing::ProcessResult watch = c.Kseek({"session", "watch", "--json", s.session_id()});
  std::vector<nlohmann::json> watched;
  for (absl::string_view line : absl::StrSplit(watch.out, '\n', absl::SkipEmpty())) {
    watched.push_back(nlohmann::json::parse(line));
  }
  EXPECT_EQ(watched, trace) << watch.out;
  // A second cancel, or a message, finds the session ended.
  testing::ProcessResult again = c.Kseek({"session", "cancel", s.session_id()});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("has ended"), std::string::npos) << again.err;
  testing::ProcessResult ask = c.Kseek({"session", "ask", s.session_id(), "anything?"});
  EXPECT_EQ(ask.exit_code, 2);
  EXPECT_EQ(OfKind(c.Trace(s.session_id()), "verification").size(), 0u);
  // The agent token died with the session.
  EXPECT_EQ(c.stub().GetSession(as_agent().get(), ref, &seen).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST(SessionEndToEnd, CancelWithdrawsTheSessionsQueuedEvaluations) {
  Cluster c;
  WriteAgent(c);
  c.StartCoordinator();  // no worker yet: the agent's evaluation waits
  v1::Session s = c.Create(AgentRequest(c, "queued", "fast", 3));
  ASSERT_TRUE(WaitFile(c.Workspace(s.session_id()) + "/started", 120)) << c.Log();
  auto evals = [&] {
    testing::ProcessResult listed = c.Kseek({"evals", "--json"});
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    return nlohmann::json::parse(listed.out, nullptr, false);
  };
  nlohmann::json listed;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    listed = evals();
    if (listed.is_array() && listed.size() == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(listed.is_array() && listed.size() == 1) << listed.dump();
  ASSERT_EQ(listed[0]["state"], "queued") << listed.dump();
  const std::string queued_id = listed[0]["evaluation_id"];

  ASSERT_EQ(c.Kseek({"session", "cancel", s.session_id()}).exit_code, 0);
  listed = evals();
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(listed[0]["state"], "failed") << listed.dump();
  EXPECT_EQ(listed[0].value("error", ""), absl::StrCat("session ", s.session_id(), " was cancelled"));

  // A worker arrives: another user's evaluation runs, the withdrawn one never.
  c.StartWorker();
  testing::ProcessResult other =
      c.Kseek({"eval", "--task", Softmax(), "--target", "host", "--max-samples", "3",
               "--max-seconds", "0.1", "--json", Softmax() + "/fast_host.cc"});
  // Evaluated (exit status 0 or 1: all correct or not, which a loaded host
  // can decide, see kAgentScript), with its verdict on stdout (--json).
  EXPECT_TRUE(other.exit_code == 0 || other.exit_code == 1) << other.err << other.out;
  nlohmann::json verdict = nlohmann::json::parse(other.out, nullptr, false);
  ASSERT_TRUE(verdict.is_object()) << other.err << other.out;
  EXPECT_EQ(verdict["scenarios"].size(), 11u) << other.out;
  for (const nlohmann::json& e : evals()) {
    if (e["evaluation_id"] != queued_id) continue;
    EXPECT_EQ(e["state"], "failed");
    EXPECT_EQ(e["attempts"], 0);
  }
  // The cancelled state is the last event; the agent's evaluation is not in the trace.
  std::vector<nlohmann::json> trace = c.Trace(s.session_id());
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(trace.back().value("state", ""), "cancelled") << trace.back().dump();
  EXPECT_TRUE(OfKind(trace, "evaluation").empty());
}

TEST(SessionEndToEnd, AnEvaluationOnSomeScenariosIsNeverTheBest) {
  Cluster c;
  WriteAgent(c);
  c.StartCoordinator();
  c.StartWorker();
  // Turns to spare: a verification that a loaded host spoils (see
  // kAgentScript) is followed by another turn, not by the end of the budget.
  v1::Session s = c.Create(AgentRequest(c, "subset", "fast", 3));
  v1::Session end = c.WaitEnded(s.session_id(), 500);
  std::vector<nlohmann::json> trace = c.Trace(s.session_id());
  const std::string dump = nlohmann::json(trace).dump(1);
  EXPECT_EQ(end.state(), "succeeded") << end.reason() << dump;
  std::vector<nlohmann::json> evals = OfKind(trace, "evaluation");
  std::vector<nlohmann::json> best = OfKind(trace, "best");
  ASSERT_FALSE(best.empty()) << dump;
  // The agent ran one scenario only; a run all correct with a speedup came
  // before any best, yet was not one.
  const nlohmann::json* candidate = nullptr;
  for (const nlohmann::json& e : evals) {
    if (e["by"] != "agent") continue;
    EXPECT_EQ(e["total"], 1) << e.dump();
    if (candidate == nullptr && e["all_correct"].get<bool>() && !e["geomean_speedup"].is_null()) {
      candidate = &e;
    }
  }
  ASSERT_NE(candidate, nullptr) << dump;
  EXPECT_LT((*candidate)["index"].get<int64_t>(), best[0]["index"].get<int64_t>()) << dump;
  // Every best is a verification's, on the full set.
  for (const nlohmann::json& b : best) {
    const nlohmann::json* of = nullptr;
    for (const nlohmann::json& e : evals) {
      if (e["evaluation_id"] == b["evaluation_id"]) of = &e;
    }
    ASSERT_NE(of, nullptr) << b.dump();
    EXPECT_EQ((*of)["by"], "verification") << dump;
    EXPECT_EQ((*of)["total"], 11) << dump;
  }
}

TEST(SessionEndToEnd, CoordinatorKilledMidTurnResumesWithNoEventLost) {
  Cluster c;
  WriteAgent(c);
  c.StartCoordinator();
  c.StartWorker();
  v1::Session s = c.Create(AgentRequest(c, "sleeper", "fast", 3));
  const std::string ws = c.Workspace(s.session_id());
  ASSERT_TRUE(WaitFile(ws + "/started", 120)) << c.Log();
  // The agent's own evaluation is in the trace before the kill.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<nlohmann::json> before;
  while (std::chrono::steady_clock::now() < deadline) {
    before = c.Trace(s.session_id());
    if (!OfKind(before, "evaluation").empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(OfKind(before, "evaluation").size(), 1u);
  pid_t agent = std::stoi(testing::ReadFile(ws + "/agent.pid"));
  // A watcher that follows the session through the restart.
  testing::Daemon watch(c.KseekArgv({"session", "watch", "--json", s.session_id()}),
                        c.dir() + "/watch.log");

  c.coordinator().Signal(SIGKILL);
  c.coordinator().Wait(30);
  c.StartCoordinator();
  v1::Session end = c.WaitEnded(s.session_id(), 450);
  EXPECT_EQ(end.state(), "succeeded") << end.reason();
  std::vector<nlohmann::json> watched;
  for (std::string line = watch.ReadLine(60); !line.empty(); line = watch.ReadLine(60)) {
    watched.push_back(nlohmann::json::parse(line));
  }
  EXPECT_EQ(watch.Wait(30), 0) << testing::ReadFile(c.dir() + "/watch.log");

  std::vector<nlohmann::json> after = c.Trace(s.session_id());
  ExpectDense(after);
  ASSERT_GE(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]) << i;
  // The watcher saw every event once, in order, across the restart.
  EXPECT_EQ(watched, after);
  // The cut-off turn was closed and its orphaned agent ended.
  bool closed = false;
  for (const nlohmann::json& e : OfKind(after, "agent_error")) {
    closed |= absl::StrContains(e["message"].get<std::string>(), "restarted");
  }
  EXPECT_TRUE(closed) << nlohmann::json(after).dump(1);
  EXPECT_FALSE(Alive(agent)) << "the orphaned agent still runs";
  // The last verification met the goal (an earlier one that a loaded host
  // spoiled, see kAgentScript, was followed by another turn).
  std::vector<nlohmann::json> verifications = OfKind(after, "verification");
  ASSERT_FALSE(verifications.empty());
  EXPECT_TRUE(verifications.back()["goal_met"].get<bool>());
}

TEST(SessionEndToEnd, AMessageWithNowInterruptsTheTurnAndGoesFirst) {
  Cluster c;
  WriteAgent(c);
  c.StartCoordinator();
  c.StartWorker();
  v1::Session s = c.Create(AgentRequest(c, "sleeper", "baseline", 2));
  const std::string ws = c.Workspace(s.session_id());
  ASSERT_TRUE(WaitFile(ws + "/started", 120)) << c.Log();
  testing::ProcessResult ask =
      c.Kseek({"session", "ask", "--now", s.session_id(), "Stop:", "what", "did", "you", "measure?"});
  ASSERT_EQ(ask.exit_code, 0) << ask.err;

  // The turn ends at once (interrupted), is verified, and the message is
  // the next prompt.
  ASSERT_TRUE(WaitFile(ws + "/prompt.2", 120)) << c.Log();
  EXPECT_NE(testing::ReadFile(ws + "/prompt.2").find("Stop: what did you measure?"),
            std::string::npos);
  std::vector<nlohmann::json> trace = c.Trace(s.session_id());
  std::vector<nlohmann::json> ends = OfKind(trace, "turn_end");
  ASSERT_GE(ends.size(), 1u);
  EXPECT_TRUE(ends[0]["is_error"].get<bool>());
  bool interrupted = false;
  for (const nlohmann::json& e : OfKind(trace, "agent_error")) {
    interrupted |= e["error"] == "interrupted";
  }
  EXPECT_TRUE(interrupted) << nlohmann::json(trace).dump(1);
  EXPECT_EQ(OfKind(trace, "verification").size(), 1u);
  std::vector<nlohmann::json> messages = OfKind(trace, "human_message");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_TRUE(messages[0]["now"].get<bool>());
  std::vector<nlohmann::json> questions = OfKind(trace, "question");
  ASSERT_EQ(questions.size(), 1u);
  EXPECT_EQ(questions[0]["source"], "human");
  EXPECT_EQ(c.Kseek({"session", "cancel", s.session_id()}).exit_code, 0);
}

TEST(SessionEndToEnd, CoordinatorKilledDuringVerificationWaitsForTheSameEvaluation) {
  Cluster c;
  WriteAgent(c);
  c.StartCoordinator();
  c.StartWorker();
  // Turns to spare: a verification that a loaded host spoils (see
  // kAgentScript) is followed by another turn.
  v1::Session s = c.Create(AgentRequest(c, "good", "fast", 3));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (c.Get(s.session_id()).state() != "verifying" &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(c.Get(s.session_id()).state(), "verifying") << c.Log();
  c.coordinator().Signal(SIGKILL);
  c.coordinator().Wait(30);
  c.StartCoordinator();
  v1::Session end = c.WaitEnded(s.session_id(), 300);
  EXPECT_EQ(end.state(), "succeeded") << end.reason();

  std::vector<nlohmann::json> trace = c.Trace(s.session_id());
  ExpectDense(trace);
  std::vector<nlohmann::json> verifications = OfKind(trace, "verification");
  ASSERT_FALSE(verifications.empty()) << nlohmann::json(trace).dump(1);
  EXPECT_TRUE(verifications.back()["goal_met"].get<bool>());
  const std::string id = verifications[0]["evaluation_id"];
  // The evaluation started before the kill is the one that decided the
  // first turn.
  bool announced = false;
  for (const nlohmann::json& e : OfKind(trace, "state")) {
    if (e["state"] == "verifying" && absl::StrContains(e["reason"].get<std::string>(), id)) {
      announced = e["index"].get<int64_t>() < verifications[0]["index"].get<int64_t>();
      break;
    }
  }
  EXPECT_TRUE(announced) << nlohmann::json(trace).dump(1);
  // One verification, evaluated once, for each turn: the restart ran none
  // twice.
  int by_verification = 0;
  for (const nlohmann::json& e : OfKind(trace, "evaluation")) by_verification += e["by"] == "verification";
  EXPECT_EQ(by_verification, static_cast<int>(verifications.size()));
  EXPECT_EQ(OfKind(trace, "turn_end").size(), verifications.size());
}

TEST(SessionEndToEnd, SelfAskRecordsTheQuestionsTheAgentApplied) {
  Cluster c;
  WriteAgent(c);
  c.StartCoordinator();
  c.StartWorker();
  // Turns to spare: a verification that a loaded host spoils (see
  // kAgentScript) is followed by another turn.
  v1::CreateSessionRequest request = AgentRequest(c, "selfask", "fast", 3);
  request.set_self_ask(true);
  v1::Session s = c.Create(request);
  EXPECT_TRUE(s.self_ask());
  v1::Session end = c.WaitEnded(s.session_id(), 300);
  EXPECT_EQ(end.state(), "succeeded") << end.reason();
  std::vector<nlohmann::json> trace = c.Trace(s.session_id());
  // The agent's line of each turn, and no question of the bank's.
  std::vector<nlohmann::json> questions = OfKind(trace, "question");
  ASSERT_EQ(questions.size(), OfKind(trace, "turn_end").size()) << nlohmann::json(trace).dump(1);
  ASSERT_FALSE(questions.empty());
  for (const nlohmann::json& q : questions) {
    EXPECT_EQ(q["source"], "self");
    EXPECT_EQ(q["question_id"], "layer-below-decides");
    EXPECT_EQ(q["category"], "moving_layer");
  }
  // The bank was in the brief the agent read.
  EXPECT_NE(testing::ReadFile(c.Workspace(s.session_id()) + "/BRIEF.md").find("layer-below-decides"),
            std::string::npos);
}

}  // namespace
}  // namespace kseek
