// A live session, end to end: a real kernelseekd and a host kseek-worker on
// loopback, `kseek session watch --json` as a separate process, and a
// command agent whose every line waits for the test's acknowledgement of
// the line before. What the watcher shows, and in which order, is checked
// by the events' order and by that handshake, never by their times: a line
// held back until the turn's end could never be acknowledged, and the
// scenarios of an evaluation precede its end in the trace only when they
// entered it while it ran.
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/session_testing.h"

namespace kseek {
namespace {

namespace v1 = ::kernelseek::v1;
using testing::Cluster;
using testing::ExpectDense;
using testing::OfKind;
using testing::Softmax;

// `live.sh KERNEL PROMPT`, run in the workspace. Lines 2, 3 and 5 say
// whether the test acknowledged (ack.N) the line before while the agent
// still ran; lines 4 and 5 come from Python, which buffers a pipe unless
// told otherwise. Then it evaluates KERNEL with plain `kseek eval` and says
// so when that has returned.
const char kLiveAgent[] = R"(#!/bin/bash
kernel="$1"
acked() { for i in $(seq 1200); do [ -f "ack.$1" ] && return 0; sleep 0.05; done; return 1; }
echo "line 1"
for n in 2 3; do
  if acked $((n - 1)); then echo "line $n: line $((n - 1)) was seen"; else echo "line $n: line $((n - 1)) was NOT seen"; fi
done
python3 - <<'PY'
import os, time
print("line 4 from python")
for _ in range(1200):
    if os.path.exists("ack.4"):
        print("line 5: line 4 was seen")
        break
    time.sleep(0.05)
else:
    print("line 5: line 4 was NOT seen")
PY
cp "$kernel" kernel.cu
kseek eval --max-samples 3 --max-seconds 0.1 --json kernel.cu > eval.json 2>&1
echo "evaluated: kseek eval exit status $?"
)";

// The index of the first agent_message of `trace` that starts with `text`,
// or -1.
int64_t LineAt(const std::vector<nlohmann::json>& trace, const std::string& text) {
  for (const nlohmann::json& e : trace) {
    if (e["kind"] == "agent_message" && absl::StartsWith(e.value("text", ""), text)) {
      return e["index"].get<int64_t>();
    }
  }
  return -1;
}

int64_t IndexOf(const std::vector<nlohmann::json>& trace, const std::string& kind,
                const std::string& field, const std::string& value) {
  for (const nlohmann::json& e : trace) {
    if (e["kind"] == kind && e.value(field, "") == value) return e["index"].get<int64_t>();
  }
  return -1;
}

// Evaluation `id` entered the trace as it ran: its evaluation_started
// event, then one scenario event per scenario in the order they finished
// (done = 1, 2, ... of the same total, each scenario once), then its
// evaluation event; returns the index of the last scenario event.
int64_t ExpectProgressBeforeTheEnd(const std::vector<nlohmann::json>& trace,
                                   const std::string& id, const std::string& by) {
  const std::string dump = nlohmann::json(trace).dump(1);
  const int64_t started = IndexOf(trace, "evaluation_started", "evaluation_id", id);
  const int64_t ended = IndexOf(trace, "evaluation", "evaluation_id", id);
  EXPECT_GE(started, 0) << id << dump;
  EXPECT_GT(ended, started) << id << dump;
  const nlohmann::json& start = trace.at(started);
  EXPECT_EQ(start["by"], by);
  EXPECT_EQ(start["attempt"], 1);
  EXPECT_FALSE(start.value("worker_id", "").empty());
  const int total = start["scenarios"].get<int>();
  EXPECT_EQ(trace.at(ended)["total"], total);
  std::vector<nlohmann::json> scenarios;
  for (const nlohmann::json& e : OfKind(trace, "scenario")) {
    if (e["evaluation_id"] == id) scenarios.push_back(e);
  }
  EXPECT_EQ(static_cast<int>(scenarios.size()), total) << id << dump;
  std::set<std::string> names;
  int64_t last = started;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const nlohmann::json& s = scenarios[i];
    EXPECT_EQ(s["done"], static_cast<int>(i) + 1) << s;
    EXPECT_EQ(s["total"], total) << s;
    EXPECT_EQ(s["attempt"], 1) << s;
    EXPECT_EQ(s["status"], "ok") << s;
    EXPECT_TRUE(s["speedup"].is_number()) << s;
    names.insert(s["name"].get<std::string>());
    EXPECT_GT(s["index"].get<int64_t>(), last) << s;
    last = s["index"].get<int64_t>();
  }
  EXPECT_EQ(names.size(), scenarios.size()) << id;
  EXPECT_LT(last, ended) << id << dump;
  return last;
}

TEST(SessionLiveE2eTest, WatchShowsTheAgentsLinesAndEachScenarioAsTheyHappen) {
  Cluster c;
  testing::WriteFile(c.dir() + "/live.sh", kLiveAgent);
  c.AllowAgent("live", {{"kind", "command"},
                        {"start_template", absl::StrCat("bash ", c.dir(), "/live.sh ", Softmax(),
                                                        "/fast_host.cc {prompt}")}});
  c.StartCoordinator();
  c.StartWorker();
  v1::CreateSessionRequest request = c.Request(1);
  request.mutable_agent()->set_name("live");
  v1::Session s = c.Create(request);
  ASSERT_FALSE(s.session_id().empty());
  const std::string ws = c.Workspace(s.session_id());

  // The watcher acknowledges each "line N" of the agent once it has read it.
  testing::Daemon watch(c.KseekArgv({"session", "watch", "--json", s.session_id()}),
                        c.dir() + "/watch.log");
  std::vector<nlohmann::json> seen;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(400);
  while (std::chrono::steady_clock::now() < give_up) {
    const std::string line = watch.ReadLine(5);
    if (line.empty()) {
      if (!watch.Running()) break;
      continue;
    }
    nlohmann::json e = nlohmann::json::parse(line);
    seen.push_back(e);
    const std::string text = e.value("text", "");
    int n = 0;
    if (e["kind"] == "agent_message" && absl::StartsWith(text, "line ") &&
        absl::SimpleAtoi(text.substr(5, 1), &n)) {
      testing::WriteFile(absl::StrCat(ws, "/ack.", n), "");
    }
  }
  const int watch_exit = watch.Wait(30);
  v1::Session end = c.Get(s.session_id());
  EXPECT_TRUE(end.state() == "succeeded" || end.state() == "budget_spent") << end.reason();
  EXPECT_EQ(watch_exit, end.state() == "succeeded" ? 0 : 1) << testing::ReadFile(c.dir() + "/watch.log");

  // The watcher saw the whole trace, in order, each event once.
  std::vector<nlohmann::json> trace = c.Trace(s.session_id());
  const std::string dump = nlohmann::json(trace).dump(1);
  ExpectDense(trace);
  EXPECT_EQ(seen, trace);

  // Each line reached the watcher while the agent ran: the next line says
  // its acknowledgement came, Python's included. All before the turn ended.
  const int64_t turn_end = IndexOf(trace, "turn_end", "result", "evaluated: kseek eval exit status 0");
  ASSERT_GE(turn_end, 0) << dump;
  std::vector<int64_t> lines;
  for (const std::string& text :
       {std::string("line 1"), std::string("line 2: line 1 was seen"),
        std::string("line 3: line 2 was seen"), std::string("line 4 from python"),
        std::string("line 5: line 4 was seen"), std::string("evaluated: kseek eval exit status 0")}) {
    lines.push_back(LineAt(trace, text));
    EXPECT_GE(lines.back(), 0) << text << dump;
  }
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_GT(lines[i], lines[i - 1]) << dump;
  EXPECT_LT(lines.back(), turn_end);

  // The agent's evaluation: every scenario, then the evaluation itself,
  // entered while `kseek eval` still waited for the verdict, before the
  // agent's next line.
  std::vector<nlohmann::json> evals = OfKind(trace, "evaluation");
  ASSERT_EQ(evals.size(), 2u) << dump;
  ASSERT_EQ(evals[0]["by"], "agent");
  ASSERT_EQ(evals[1]["by"], "verification");
  const std::string agent_eval = evals[0]["evaluation_id"];
  EXPECT_LT(ExpectProgressBeforeTheEnd(trace, agent_eval, "agent"), lines.back());
  EXPECT_LT(evals[0]["index"].get<int64_t>(), lines.back()) << dump;
  EXPECT_GT(IndexOf(trace, "evaluation_started", "evaluation_id", agent_eval), lines[4]);

  // The coordinator's verification, after the turn: verifying, its start,
  // its scenarios, its end, the verdict on the goal.
  const std::string verification = evals[1]["evaluation_id"];
  const int64_t verifying = IndexOf(trace, "state", "state", "verifying");
  EXPECT_GT(verifying, turn_end);
  EXPECT_GT(IndexOf(trace, "evaluation_started", "evaluation_id", verification), verifying);
  ExpectProgressBeforeTheEnd(trace, verification, "verification");
  EXPECT_GT(IndexOf(trace, "verification", "evaluation_id", verification),
            IndexOf(trace, "evaluation", "evaluation_id", verification));
  // The final state is still the last event.
  EXPECT_EQ(trace.back()["kind"], "state");
  EXPECT_EQ(trace.back()["state"], end.state());

  // The same trace as lines for people.
  testing::ProcessResult text = c.Kseek({"session", "watch", s.session_id()});
  EXPECT_TRUE(absl::StrContains(text.out, absl::StrCat("evaluation ", verification,
                                                       " by verification started on ")))
      << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, absl::StrCat("scenario 11/11 of ", agent_eval, ": ")))
      << text.out;
  EXPECT_TRUE(absl::StrContains(text.out, "agent: line 5: line 4 was seen")) << text.out;
}

}  // namespace
}  // namespace kseek
