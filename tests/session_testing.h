// Helpers for the session tests (tests/session_*_test.cc): a real
// kernelseekd and a host kseek-worker on loopback, the session RPCs and the
// kseek CLI against them, and checks on a trace.
#ifndef KERNELSEEK_TESTS_SESSION_TESTING_H_
#define KERNELSEEK_TESTS_SESSION_TESTING_H_

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/file.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "proto/request.h"
#include "tests/test_util.h"

namespace kseek::testing {

namespace v1 = ::kernelseek::v1;

inline std::string Softmax() { return SourceDir() + "/kernels/softmax"; }

// A wrong softmax: it compiles and writes zeros. (A kernel, not a stand-in.)
inline constexpr char kZerosKernel[] = R"(
#include <string.h>
#include "kernelseek/abi.h"
extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* a) {
  long rows = kseek_param_get(a, "rows", 0), cols = kseek_param_get(a, "cols", 0);
  size_t elem = a->tensors[1].dtype == KSEEK_F32 ? 4 : 2;
  memset(a->tensors[1].data, 0, (size_t)(rows * cols) * elem);
  return 0;
}
)";


// Two bank questions, both for a claimed limit (so that the bank question
// asked here must be a limit-rejection one).
inline constexpr char kLimitBank[] = R"({
  "version": 1,
  "questions": [
    {
      "id": "limit-evidence",
      "text": "What measurement shows that the limit you named is the one you are actually hitting?",
      "category": "rejecting_limit",
      "triggers": ["claimed_limit"]
    },
    {
      "id": "limit-origin",
      "text": "Did the limit you named come from your own measurement or from an expectation?",
      "category": "rejecting_limit",
      "triggers": ["claimed_limit"]
    }
  ]
}
)";


class Cluster {
 public:
  // The folder is open to others (0755): confined agents run as users of
  // their own and must reach their workspaces, scripts and kernels here.
  Cluster() : dir_(TempDir("session")), port_(FreePort()) { chmod(dir_.c_str(), 0755); }
  ~Cluster() {
    // A clean stop interrupts the agents still running.
    if (coordinator_ && coordinator_->Running()) {
      coordinator_->Signal(SIGTERM);
      coordinator_->Wait(60);
    }
  }

  // Adds an agent to the allowlist the coordinator starts with (its
  // --agents file; without any, the default allowlist: claude and codex).
  void AllowAgent(const std::string& name, nlohmann::json entry) {
    agents_["agents"][name] = std::move(entry);
  }

  // Starts kernelseekd (again, on the same port and state, after a kill);
  // it inherits this process's environment, and so do its agents.
  void StartCoordinator(const std::vector<std::string>& extra_args = {}) {
    std::vector<std::string> argv = {BinDir() + "/kernelseekd", "--listen",
                                     absl::StrCat("127.0.0.1:", port_), "--state-dir",
                                     dir_ + "/state", "--heartbeat-timeout-ms", "3000"};
    if (!agents_.is_null()) {
      WriteFile(dir_ + "/agents.json", agents_.dump(2));
      argv.insert(argv.end(), {"--agents", dir_ + "/agents.json"});
    }
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    coordinator_ = std::make_unique<Daemon>(argv, dir_ + "/coordinator.log");
    address_ = coordinator_->WaitListening(30);
    ASSERT_FALSE(address_.empty()) << Log();
    channel_ = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    stub_ = v1::Coordinator::NewStub(channel_);
  }
  void StartWorker() {
    worker_ = std::make_unique<Daemon>(
        std::vector<std::string>{BinDir() + "/kseek-worker", "--listen", "127.0.0.1:0",
                                 "--coordinator", address_, "--target", "host", "--token-file",
                                 dir_ + "/state/worker.token", "--cache-dir", dir_ + "/cache"},
        dir_ + "/worker.log");
    worker_address_ = worker_->WaitListening(30);
    ASSERT_FALSE(worker_address_.empty()) << ReadFile(dir_ + "/worker.log");
  }
  const std::string& worker_address() const { return worker_address_; }
  std::string WorkerLog() { return ReadFile(dir_ + "/worker.log"); }
  Daemon& coordinator() { return *coordinator_; }
  std::string Log() { return ReadFile(dir_ + "/coordinator.log"); }

  std::string Token() {
    return std::string(absl::StripAsciiWhitespace(ReadFile(dir_ + "/state/admin.token")));
  }
  std::unique_ptr<grpc::ClientContext> Context(double deadline_s = 30) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->AddMetadata("authorization", "Bearer " + Token());
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(static_cast<int>(deadline_s * 1000)));
    return ctx;
  }

  // A CreateSession request for the host softmax task with the baseline as
  // the starting kernel, an agent to fill in, and quick verifications.
  v1::CreateSessionRequest Request(int max_turns) {
    v1::CreateSessionRequest r;
    auto files = PackTask(Softmax(), Target::kHost);
    EXPECT_TRUE(files.ok()) << files.status();
    *r.mutable_task() = *files;
    r.set_target("host");
    r.set_kernel_source(ReadFile(Softmax() + "/baseline_host.cc"));
    r.mutable_budget()->set_max_turns(max_turns);
    r.mutable_verification_timing()->set_max_samples(3);
    r.mutable_verification_timing()->set_max_seconds(0.1);
    return r;
  }

  v1::Session Create(const v1::CreateSessionRequest& request) {
    v1::Session s;
    auto ctx = Context();
    grpc::Status st = stub_->CreateSession(ctx.get(), request, &s);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return s;
  }

  v1::Session Get(const std::string& id) {
    v1::SessionRef ref;
    ref.set_session_id(id);
    v1::Session s;
    auto ctx = Context();
    grpc::Status st = stub_->GetSession(ctx.get(), ref, &s);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return s;
  }

  // Waits until the session has ended; returns its final state.
  v1::Session WaitEnded(const std::string& id, double timeout_s) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    v1::Session s;
    while (std::chrono::steady_clock::now() < deadline) {
      s = Get(id);
      if (s.state() == "succeeded" || s.state() == "failed" || s.state() == "cancelled" ||
          s.state() == "budget_spent") {
        return s;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    ADD_FAILURE() << "session " << id << " still " << s.state() << " after " << timeout_s << " s\n"
                  << Log();
    return s;
  }

  std::vector<nlohmann::json> Trace(const std::string& id) {
    v1::SessionRef ref;
    ref.set_session_id(id);
    auto ctx = Context();
    auto reader = stub_->ExportTrace(ctx.get(), ref);
    std::vector<nlohmann::json> out;
    v1::SessionEvent e;
    while (reader->Read(&e)) out.push_back(nlohmann::json::parse(e.json()));
    grpc::Status st = reader->Finish();
    EXPECT_TRUE(st.ok()) << st.error_message();
    return out;
  }

  // `kseek ARGS...` against this coordinator with the admin token.
  ProcessResult Kseek(std::vector<std::string> args) { return RunProcess(KseekArgv(args)); }
  std::vector<std::string> KseekArgv(std::vector<std::string> args) {
    std::vector<std::string> argv = {BinDir() + "/kseek"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--coordinator=" + address_);
    argv.push_back("--token-file=" + dir_ + "/state/admin.token");
    return argv;
  }

  v1::Coordinator::Stub& stub() { return *stub_; }
  const std::string& address() const { return address_; }
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  std::string Workspace(const std::string& id) const { return dir_ + "/state/workspaces/" + id; }

 private:
  std::string dir_;
  int port_;
  nlohmann::json agents_;
  std::string address_;
  std::unique_ptr<Daemon> coordinator_;
  std::unique_ptr<Daemon> worker_;
  std::string worker_address_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

// Indices are 0, 1, 2, ... with no gap or repeat.
inline void ExpectDense(const std::vector<nlohmann::json>& trace) {
  for (size_t i = 0; i < trace.size(); ++i) {
    ASSERT_EQ(trace[i]["index"].get<int64_t>(), static_cast<int64_t>(i)) << trace[i].dump();
  }
}

inline std::vector<nlohmann::json> OfKind(const std::vector<nlohmann::json>& trace,
                                   const std::string& kind) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& e : trace) {
    if (e["kind"] == kind) out.push_back(e);
  }
  return out;
}

// Whether `pid` runs (a zombie, ended but not reaped, does not).
inline bool Alive(pid_t pid) {
  const std::string stat = kseek::ReadFile(absl::StrCat("/proc/", pid, "/stat")).value_or("");
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

inline bool WaitFile(const std::string& path, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  struct stat st;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stat(path.c_str(), &st) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// The story of the real-CLI session tests (session_claude_e2e_test.cc,
// session_codex_e2e_test.cc), on a cluster whose coordinator runs with
// kLimitBank and whose agents reach a stand-in model that follows the
// script in c.dir()/script.json and logs its requests to
// c.dir()/requests.jsonl: a session of agent `kind`, a human message
// posted before the agent may act; a wrong kernel and a claimed limit are
// never a success, the human's message is asked first, the claim brings a
// limit-rejection question through the agent's own resume, and only the
// coordinator's verification of a correct fast kernel succeeds.
inline void ExpectLimitClaimStory(Cluster& c, const std::string& kind) {
  v1::CreateSessionRequest request = c.Request(5);
  request.mutable_agent()->set_name(kind);
  v1::Session s = c.Create(request);
  ASSERT_FALSE(s.session_id().empty());
  v1::PostMessageRequest message;
  message.set_session_id(s.session_id());
  message.set_text("Which of your outputs did you compare with the reference?");
  v1::PostMessageResponse posted;
  grpc::Status st = c.stub().PostMessage(c.Context().get(), message, &posted);
  ASSERT_TRUE(st.ok()) << st.error_message();
  WriteFile(c.Workspace(s.session_id()) + "/go", "");

  v1::Session end = c.WaitEnded(s.session_id(), 500);
  std::vector<nlohmann::json> trace = c.Trace(s.session_id());
  const std::string dump = nlohmann::json(trace).dump(1);
  EXPECT_EQ(end.state(), "succeeded") << end.reason() << dump;
  ExpectDense(trace);

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

  // Turns 2 and 3 resumed the agent's own conversation with the questions.
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
  EXPECT_NE(ReadFile(c.dir() + "/requests.jsonl").find(questions[1]["text"].get<std::string>()),
            std::string::npos);

  // Where the coordinator confines agents, the CLI and the commands it ran
  // were the session's own user's.
  if (c.Log().find("agents are confined") != std::string::npos) {
    const std::string user = "ks-" + s.session_id().substr(3);
    EXPECT_NE(c.Log().find(absl::StrCat("session ", s.session_id(), ": agent runs as ", user)),
              std::string::npos)
        << c.Log();
    EXPECT_EQ(ReadFile(c.Workspace(s.session_id()) + "/whoami"), user + "\n");
    std::fprintf(stderr, "the %s session %s ran confined: its commands ran as %s; %s, %zu events\n",
                 kind.c_str(), s.session_id().c_str(), user.c_str(), end.state().c_str(),
                 trace.size());
  } else {
    std::fprintf(stderr, "note: the agent was not confined: %s\n", c.Log().c_str());
  }
}

}  // namespace kseek::testing

#endif  // KERNELSEEK_TESTS_SESSION_TESTING_H_
