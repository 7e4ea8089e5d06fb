// The evaluation service end to end: a real kernelseekd, real kseek-worker
// processes and gRPC over loopback. Workers and the coordinator are killed
// with SIGKILL mid-job; nothing accepted may be lost.
#include <signal.h>

#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "proto/request.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

namespace v1 = ::kernelseek::v1;
using testing::Daemon;

std::string Softmax() { return testing::SourceDir() + "/kernels/softmax"; }

// Slow enough to be killed in the middle of.
const std::string kSlowKernel = testing::SlowSoftmaxHostKernel(400000000L);

class Cluster {
 public:
  Cluster() : dir_(testing::TempDir("service")), port_(testing::FreePort()) {}

  void StartCoordinator() {
    coordinator_ = std::make_unique<Daemon>(
        std::vector<std::string>{testing::BinDir() + "/kernelseekd", "--listen",
                                 absl::StrCat("127.0.0.1:", port_), "--state-dir", dir_ + "/state",
                                 "--heartbeat-timeout-ms", "3000"},
        dir_ + "/coordinator.log");
    address_ = coordinator_->WaitListening(30);
    ASSERT_FALSE(address_.empty()) << testing::ReadFile(dir_ + "/coordinator.log");
    channel_ = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    stub_ = v1::Coordinator::NewStub(channel_);
    admin_ = v1::Admin::NewStub(channel_);
  }
  Daemon& coordinator() { return *coordinator_; }

  // Starts a worker; returns its index.
  int StartWorker(const std::string& target = "host") {
    int i = static_cast<int>(workers_.size());
    workers_.push_back(std::make_unique<Daemon>(
        std::vector<std::string>{testing::BinDir() + "/kseek-worker", "--listen", "127.0.0.1:0",
                                 "--coordinator", address_, "--target", target, "--token-file",
                                 dir_ + "/state/worker.token", "--cache-dir", dir_ + "/cache"},
        absl::StrCat(dir_, "/worker", i, ".log")));
    worker_addresses_.push_back(workers_.back()->WaitListening(30));
    EXPECT_FALSE(worker_addresses_.back().empty()) << testing::ReadFile(absl::StrCat(dir_, "/worker", i, ".log"));
    return i;
  }
  Daemon& worker(int i) { return *workers_[i]; }
  // The index of the worker with this coordinator-assigned id, or -1.
  int WorkerIndex(const std::string& worker_id) {
    v1::ListWorkersResponse resp;
    auto ctx = Context(AdminToken());
    if (!stub_->ListWorkers(ctx.get(), v1::ListWorkersRequest(), &resp).ok()) return -1;
    for (const auto& w : resp.workers())
      if (w.info().worker_id() == worker_id)
        for (size_t i = 0; i < worker_addresses_.size(); ++i)
          if (worker_addresses_[i] == w.info().address()) return static_cast<int>(i);
    return -1;
  }
  // Waits until `n` healthy workers are registered.
  bool WaitWorkers(int n, double timeout_s = 30) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      v1::ListWorkersResponse resp;
      auto ctx = Context(AdminToken());
      if (stub_->ListWorkers(ctx.get(), v1::ListWorkersRequest(), &resp).ok()) {
        int healthy = 0;
        for (const auto& w : resp.workers()) healthy += w.healthy();
        if (healthy >= n) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  std::string AdminToken() {
    return std::string(absl::StripAsciiWhitespace(testing::ReadFile(dir_ + "/state/admin.token")));
  }
  std::string WorkerToken() {
    return std::string(absl::StripAsciiWhitespace(testing::ReadFile(dir_ + "/state/worker.token")));
  }
  std::string AddUser(const std::string& name) {
    v1::AddUserRequest req;
    req.set_name(name);
    v1::TokenResponse resp;
    auto ctx = Context(AdminToken());
    grpc::Status s = admin_->AddUser(ctx.get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.token();
  }

  static std::unique_ptr<grpc::ClientContext> Context(const std::string& token, double deadline_s = 30) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(int(deadline_s * 1000)));
    return ctx;
  }

  v1::Coordinator::Stub& stub() { return *stub_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  int port_;
  std::string address_;
  std::unique_ptr<Daemon> coordinator_;
  std::vector<std::unique_ptr<Daemon>> workers_;
  std::vector<std::string> worker_addresses_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

v1::EvaluationRequest Request(const std::string& kernel_source, std::vector<std::string> scenarios,
                              const std::string& target = "host") {
  v1::EvaluationRequest r;
  auto files = PackTask(Softmax(), Target::kHost);
  EXPECT_TRUE(files.ok()) << files.status();
  *r.mutable_task() = *files;
  r.set_target(target);
  r.set_kernel_source(kernel_source);
  r.set_kernel_name(target == "host" ? "kernel.cc" : "kernel.cu");
  for (const auto& s : scenarios) r.add_scenario_names(s);
  r.mutable_timing()->set_disabled(true);
  return r;
}

const std::vector<std::string> kSlowScenarios = {"r64_c33_f32_host", "r100_c17_f32_host", "r256_c100_f32_host"};

// Reads events until one of the wanted kind arrives (or the stream ends).
bool ReadUntil(grpc::ClientReader<v1::EvaluationEvent>* reader, v1::EvaluationEvent::EventCase want,
               v1::EvaluationEvent* event, std::vector<v1::EvaluationEvent>* seen = nullptr) {
  while (reader->Read(event)) {
    if (seen) seen->push_back(*event);
    if (event->event_case() == want) return true;
  }
  return false;
}

v1::Evaluation Get(Cluster& c, const std::string& id, const std::string& token) {
  v1::EvaluationRef ref;
  ref.set_evaluation_id(id);
  v1::Evaluation e;
  auto ctx = Cluster::Context(token);
  grpc::Status s = c.stub().GetEvaluation(ctx.get(), ref, &e);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return e;
}

v1::Evaluation WaitState(Cluster& c, const std::string& id, const std::string& state, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  v1::Evaluation e;
  while (std::chrono::steady_clock::now() < deadline) {
    e = Get(c, id, c.AdminToken());
    if (e.state() == state) return e;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return e;
}

TEST(Service, WorkerKilledMidAttemptCompletesOnAnother) {
  Cluster c;
  c.StartCoordinator();
  for (int i = 0; i < 3; ++i) c.StartWorker();
  ASSERT_TRUE(c.WaitWorkers(3));

  auto ctx = Cluster::Context(c.AdminToken(), 300);
  auto reader = c.stub().SubmitEvaluation(ctx.get(), Request(kSlowKernel, kSlowScenarios));
  std::vector<v1::EvaluationEvent> events;
  v1::EvaluationEvent ev;
  ASSERT_TRUE(ReadUntil(reader.get(), v1::EvaluationEvent::kStarted, &ev, &events));
  std::string id = ev.evaluation_id();
  int first = c.WorkerIndex(ev.started().worker_id());
  ASSERT_GE(first, 0);
  // Once its first scenario is done, two slow ones remain: kill its worker
  // outright in the middle of the job.
  ASSERT_TRUE(ReadUntil(reader.get(), v1::EvaluationEvent::kScenario, &ev, &events));
  c.worker(first).Signal(SIGKILL);

  ASSERT_TRUE(ReadUntil(reader.get(), v1::EvaluationEvent::kVerdict, &ev, &events))
      << "the evaluation must finish on another worker";
  EXPECT_TRUE(ev.verdict().all_correct());
  EXPECT_EQ(ev.verdict().scenarios_size(), 3);
  int started = 0, verdicts = 0;
  std::set<std::string> workers;
  for (const auto& e : events) {
    if (e.has_started()) {
      ++started;
      workers.insert(e.started().worker_id());
    }
    verdicts += e.has_verdict();
  }
  EXPECT_EQ(started, 2);
  EXPECT_EQ(workers.size(), 2u) << "re-run on a different worker";
  EXPECT_EQ(verdicts, 1);
  v1::Evaluation stored = Get(c, id, c.AdminToken());
  EXPECT_EQ(stored.state(), "done");
  EXPECT_EQ(stored.attempts(), 2);
  EXPECT_TRUE(stored.verdict().all_correct());
}

TEST(Service, CoordinatorKilledKeepsQueuedRunningAndFinished) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker();
  ASSERT_TRUE(c.WaitWorkers(1));
  std::string fast = testing::ReadFile(Softmax() + "/fast_host.cc");

  // Finished.
  std::string done_id;
  {
    auto ctx = Cluster::Context(c.AdminToken(), 120);
    auto reader = c.stub().SubmitEvaluation(ctx.get(), Request(fast, {"r64_c33_f32_host"}));
    v1::EvaluationEvent ev;
    ASSERT_TRUE(ReadUntil(reader.get(), v1::EvaluationEvent::kVerdict, &ev));
    done_id = ev.evaluation_id();
  }
  // Running (the only worker is busy with it) and queued behind it.
  std::string running_id, queued_id;
  {
    auto ctx = Cluster::Context(c.AdminToken(), 120);
    auto reader = c.stub().SubmitEvaluation(ctx.get(), Request(kSlowKernel, kSlowScenarios));
    v1::EvaluationEvent ev;
    ASSERT_TRUE(ReadUntil(reader.get(), v1::EvaluationEvent::kStarted, &ev));
    running_id = ev.evaluation_id();
    ctx->TryCancel();
  }
  {
    auto ctx = Cluster::Context(c.AdminToken(), 120);
    auto reader = c.stub().SubmitEvaluation(ctx.get(), Request(fast, {"r100_c17_f32_host"}));
    v1::EvaluationEvent ev;
    ASSERT_TRUE(ReadUntil(reader.get(), v1::EvaluationEvent::kQueued, &ev));
    queued_id = ev.evaluation_id();
    ctx->TryCancel();
  }
  EXPECT_EQ(Get(c, queued_id, c.AdminToken()).state(), "queued");

  c.coordinator().Signal(SIGKILL);
  c.coordinator().Wait(10);
  c.StartCoordinator();  // same port, same state folder

  EXPECT_EQ(Get(c, done_id, c.AdminToken()).state(), "done");
  std::string running_state = Get(c, running_id, c.AdminToken()).state();
  EXPECT_TRUE(running_state == "queued" || running_state == "running") << running_state;
  std::string queued_state = Get(c, queued_id, c.AdminToken()).state();
  EXPECT_TRUE(queued_state == "queued" || queued_state == "running") << queued_state;

  v1::Evaluation r = WaitState(c, running_id, "done", 180);
  EXPECT_EQ(r.state(), "done") << r.error();
  EXPECT_TRUE(r.verdict().all_correct());
  v1::Evaluation q = WaitState(c, queued_id, "done", 180);
  EXPECT_EQ(q.state(), "done") << q.error();
  EXPECT_TRUE(q.verdict().all_correct());
  EXPECT_TRUE(Get(c, done_id, c.AdminToken()).verdict().all_correct());
}

TEST(Service, AuthenticationAndOwnership) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker();
  ASSERT_TRUE(c.WaitWorkers(1));
  std::string alice = c.AddUser("alice");
  std::string bob = c.AddUser("bob");
  ASSERT_FALSE(alice.empty());

  v1::ListEvaluationsResponse list;
  {
    auto ctx = Cluster::Context("");
    grpc::Status s = c.stub().ListEvaluations(ctx.get(), v1::ListEvaluationsRequest(), &list);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
  }
  {
    auto ctx = Cluster::Context("ks_not_a_real_token");
    grpc::Status s = c.stub().ListEvaluations(ctx.get(), v1::ListEvaluationsRequest(), &list);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
  }
  std::string id;
  {
    auto ctx = Cluster::Context(alice, 120);
    auto reader = c.stub().SubmitEvaluation(
        ctx.get(), Request(testing::ReadFile(Softmax() + "/fast_host.cc"), {"r64_c33_f32_host"}));
    v1::EvaluationEvent ev;
    ASSERT_TRUE(ReadUntil(reader.get(), v1::EvaluationEvent::kVerdict, &ev));
    id = ev.evaluation_id();
  }
  v1::EvaluationRef ref;
  ref.set_evaluation_id(id);
  v1::Evaluation e;
  {
    auto ctx = Cluster::Context(bob);
    grpc::Status s = c.stub().GetEvaluation(ctx.get(), ref, &e);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  }
  {
    auto ctx = Cluster::Context(alice);
    EXPECT_TRUE(c.stub().GetEvaluation(ctx.get(), ref, &e).ok());
    EXPECT_EQ(e.user(), "alice");
  }
  {
    auto ctx = Cluster::Context(bob);
    ASSERT_TRUE(c.stub().ListEvaluations(ctx.get(), v1::ListEvaluationsRequest(), &list).ok());
    EXPECT_EQ(list.evaluations_size(), 0) << "bob sees only his own evaluations";
  }
  {
    // A worker token only registers and reports.
    auto ctx = Cluster::Context(c.WorkerToken());
    grpc::Status s = c.stub().ListEvaluations(ctx.get(), v1::ListEvaluationsRequest(), &list);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  }
  {
    // A user token cannot register a worker.
    auto ctx = Cluster::Context(alice);
    v1::RegisterWorkerResponse resp;
    v1::WorkerInfo info;
    info.set_target("host");
    info.set_address("127.0.0.1:1");
    grpc::Status s = c.stub().RegisterWorker(ctx.get(), info, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  }
}

TEST(Service, MalformedRequestsAreInvalidArgumentNamingTheField) {
  Cluster c;
  c.StartCoordinator();
  struct Case {
    v1::EvaluationRequest request;
    std::string field;
  };
  std::vector<Case> cases;
  std::string fast = testing::ReadFile(Softmax() + "/fast_host.cc");
  v1::EvaluationRequest r = Request(fast, {});
  r.clear_task();
  cases.push_back({r, "task"});
  r = Request(fast, {});
  r.set_target("sm_75");
  cases.push_back({r, "target"});
  r = Request(std::string(kMaxKernelSourceBytes + 10, ' '), {});
  cases.push_back({r, "kernel_source"});
  r = Request(fast, {});
  r.set_scenarios_json(R"([{"name": "x", "params": {"rows": "many"}}])");
  cases.push_back({r, "scenarios_json"});
  for (const auto& k : cases) {
    auto ctx = Cluster::Context(c.AdminToken());
    auto reader = c.stub().SubmitEvaluation(ctx.get(), k.request);
    v1::EvaluationEvent ev;
    while (reader->Read(&ev)) {
    }
    grpc::Status s = reader->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << k.field << ": " << s.error_message();
    EXPECT_EQ(s.error_message().rfind(k.field, 0), 0u) << s.error_message();
  }
  v1::ListEvaluationsResponse list;
  auto ctx = Cluster::Context(c.AdminToken());
  ASSERT_TRUE(c.stub().ListEvaluations(ctx.get(), v1::ListEvaluationsRequest(), &list).ok());
  EXPECT_EQ(list.evaluations_size(), 0) << "nothing malformed is stored";
}

TEST(Service, AnEvaluationWithoutAMatchingWorkerWaitsVisibly) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker("host");
  ASSERT_TRUE(c.WaitWorkers(1));
  auto ctx = Cluster::Context(c.AdminToken(), 60);
  v1::EvaluationRequest r = Request(testing::ReadFile(Softmax() + "/fast.cu"), {"r4096_c1000_f32"}, "sm_90a");
  auto reader = c.stub().SubmitEvaluation(ctx.get(), r);
  v1::EvaluationEvent ev;
  ASSERT_TRUE(ReadUntil(reader.get(), v1::EvaluationEvent::kQueued, &ev));
  EXPECT_EQ(ev.queued().matching_workers(), 0);
  EXPECT_EQ(ev.queued().position(), 1);
  std::string id = ev.evaluation_id();
  ctx->TryCancel();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(Get(c, id, c.AdminToken()).state(), "queued") << "never sent to the host worker";
  v1::ListWorkersResponse workers;
  auto list_ctx = Cluster::Context(c.AdminToken());
  ASSERT_TRUE(c.stub().ListWorkers(list_ctx.get(), v1::ListWorkersRequest(), &workers).ok());
  ASSERT_EQ(workers.workers_size(), 1);
  EXPECT_EQ(workers.workers(0).info().target(), "host");
  EXPECT_TRUE(workers.workers(0).current_evaluation().empty());
}

}  // namespace
}  // namespace kseek
