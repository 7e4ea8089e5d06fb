// The coordinator's dispatcher against fake workers (real gRPC servers on
// loopback, in this process) and a real store: fair queue order between
// users, visible waiting when no worker matches, a lost worker's attempt re-run
// on another with the verdict stored once, targets respected, a session's
// queued evaluations withdrawn, the queues rebuilt after a restart,
// cancelled evaluations, and verdicts that a full disk (a small tmpfs)
// cannot take.
#include "server/dispatcher.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/worker.grpc.pb.h"
#include "proto/job_credential.h"
#include "server/event_hub.h"
#include "server/store.h"
#include "tests/test_util.h"

namespace kseek::server {
namespace {

namespace v1 = ::kernelseek::v1;

// A worker that streams Started, two scenarios and a verdict, or (when
// `lose_jobs`) dies after Started as far as the coordinator can tell. With
// hold_verdicts(), it waits after Started until release() or until the
// coordinator cancels the attempt; set_log_bytes() makes its verdicts carry a
// compiler log that large.
class FakeWorker final : public v1::Worker::Service {
 public:
  FakeWorker(std::string target, bool lose_jobs) : target_(std::move(target)), lose_(lose_jobs) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~FakeWorker() override { server_->Shutdown(); }

  grpc::Status Evaluate(grpc::ServerContext* context, const v1::Attempt* attempt,
                        grpc::ServerWriter<v1::EvaluationEvent>* out) override {
    ++calls_;
    {
      auto it = context->client_metadata().find(kJobCredentialMetadata);
      absl::MutexLock lock(&mu_);
      credentials_.push_back(it == context->client_metadata().end()
                                 ? ""
                                 : std::string(it->second.data(), it->second.size()));
      if (refuse_) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "not my coordinator");
    }
    v1::EvaluationEvent e;
    e.set_evaluation_id(attempt->evaluation_id());
    e.mutable_started()->set_scenarios(2);
    out->Write(e);
    if (lose_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the worker process died");
    {
      absl::MutexLock lock(&mu_);
      ++started_;
    }
    while (held() && !context->IsCancelled()) absl::SleepFor(absl::Milliseconds(10));
    if (context->IsCancelled()) {
      absl::MutexLock lock(&mu_);
      ++cancelled_;
      return grpc::Status(grpc::StatusCode::CANCELLED, "the coordinator cancelled the attempt");
    }
    for (int i = 0; i < 2; ++i) {
      e.mutable_scenario()->set_index(i);
      e.mutable_scenario()->set_status("ok");
      out->Write(e);
    }
    e.mutable_verdict()->set_task("fake");
    e.mutable_verdict()->set_all_correct(true);
    e.mutable_verdict()->set_seed(static_cast<uint64_t>(attempt->number()));
    e.mutable_verdict()->mutable_compile()->set_log(std::string(log_bytes_.load(), 'l'));
    out->Write(e);
    return grpc::Status::OK;
  }

  void hold_verdicts() {
    absl::MutexLock lock(&mu_);
    hold_ = true;
  }
  void release() {
    absl::MutexLock lock(&mu_);
    hold_ = false;
  }
  void set_log_bytes(size_t n) { log_bytes_ = n; }
  // Waits (bounded) until `n` attempts have got past Started.
  bool AwaitStarted(int n) {
    for (int i = 0; i < 3000; ++i) {
      {
        absl::MutexLock lock(&mu_);
        if (started_ >= n) return true;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }
  int cancelled() {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }
  bool held() {
    absl::MutexLock lock(&mu_);
    return hold_;
  }

  v1::WorkerInfo Info(const std::string& id) const {
    v1::WorkerInfo info;
    info.set_worker_id(id);
    info.set_target(target_);
    info.set_address("127.0.0.1:" + std::to_string(port_));
    return info;
  }
  int calls() const { return calls_; }
  // The job credential each Evaluate carried ("" for none).
  std::vector<std::string> credentials() {
    absl::MutexLock lock(&mu_);
    return credentials_;
  }
  // Refuse every attempt as a worker does whose credential differs.
  void set_refuse(bool refuse) {
    absl::MutexLock lock(&mu_);
    refuse_ = refuse;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> credentials_ ABSL_GUARDED_BY(mu_);
  bool refuse_ ABSL_GUARDED_BY(mu_) = false;
  const std::string target_;
  const bool lose_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::atomic<int> calls_{0};
  std::atomic<size_t> log_bytes_{0};
  bool hold_ ABSL_GUARDED_BY(mu_) = false;
  int started_ ABSL_GUARDED_BY(mu_) = 0;
  int cancelled_ ABSL_GUARDED_BY(mu_) = 0;
};

// Collects the events of one evaluation.
class Recorder {
 public:
  EventHub::Sink Sink() {
    return [this](const v1::EvaluationEvent& e) {
      absl::MutexLock lock(&mu_);
      events_.push_back(e);
    };
  }
  std::vector<v1::EvaluationEvent> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  // Waits (bounded) for a Verdict or Failed event; the store records the
  // outcome just before the hub delivers it.
  bool AwaitTerminal() {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(
                                    +[](std::vector<v1::EvaluationEvent>* events) {
                                      return !events->empty() &&
                                             EventHub::IsTerminal(events->back());
                                    },
                                    &events_),
                                absl::Seconds(60));
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::EvaluationEvent> events_ ABSL_GUARDED_BY(mu_);
};

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = kseek::testing::TempDir("dispatcher_test") + "/kernelseek.db";
    absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
    StartDispatcher();
  }
  void TearDown() override { dispatcher_.reset(); }

  void StartDispatcher() {
    DispatcherOptions options;
    // The fakes never heartbeat; only a broken stream may mark one lost.
    options.heartbeat_timeout = absl::Hours(1);
    dispatcher_ = std::make_unique<Dispatcher>(store_.get(), &hub_, options);
    ASSERT_TRUE(dispatcher_->Start().ok());
  }

  void Submit(const std::string& id, const std::string& user, const std::string& target,
              const std::string& session_id = "") {
    EvaluationRecord e;
    e.id = id;
    e.user = user;
    e.target = target;
    e.session_id = session_id;
    if (!session_id.empty()) e.session_by = "agent";
    e.task = "fake";
    e.kernel_name = "kernel.cc";
    v1::EvaluationRequest request;
    request.set_target(target);
    request.SerializeToString(&e.request);
    e.created_ms = ++clock_ms_;
    absl::Status st = dispatcher_->Submit(e);
    ASSERT_TRUE(st.ok()) << st;
  }

  // Waits (bounded) until evaluation `id` leaves the queued and running
  // states, and returns its record.
  EvaluationRecord AwaitFinished(const std::string& id) {
    absl::Time give_up = absl::Now() + absl::Seconds(60);
    while (true) {
      absl::StatusOr<EvaluationRecord> r = store_->GetEvaluation(id);
      EXPECT_TRUE(r.ok()) << r.status();
      if (!r.ok()) return {};
      if (r->state == kStateDone || r->state == kStateFailed || absl::Now() > give_up) return *r;
      absl::SleepFor(absl::Milliseconds(20));
    }
  }

  std::string path_;
  std::unique_ptr<Store> store_;
  EventHub hub_;
  std::unique_ptr<Dispatcher> dispatcher_;
  int64_t clock_ms_ = 1000;
};

TEST_F(DispatcherTest, QueueIsFairBetweenUsersAndWaitsVisibly) {
  Submit("ev_a1", "alice", "host");
  Submit("ev_a2", "alice", "host");
  Submit("ev_a3", "alice", "host");
  Submit("ev_b1", "bob", "host");
  Submit("ev_g1", "alice", "sm_90a");
  EXPECT_EQ(dispatcher_->QueuePosition("ev_a1"), 1);
  EXPECT_EQ(dispatcher_->QueuePosition("ev_b1"), 2);
  EXPECT_EQ(dispatcher_->QueuePosition("ev_a2"), 3);
  EXPECT_EQ(dispatcher_->QueuePosition("ev_a3"), 4);
  EXPECT_EQ(dispatcher_->QueuePosition("ev_g1"), 1);  // its own target's queue
  EXPECT_EQ(dispatcher_->QueuePosition("ev_none"), 0);

  // A watcher sees where it stands and that no worker can take it.
  Recorder watch;
  ASSERT_NE(hub_.Subscribe("ev_b1", watch.Sink()), 0u);
  std::vector<v1::EvaluationEvent> seen = watch.events();
  ASSERT_EQ(seen.size(), 1u);
  ASSERT_TRUE(seen[0].has_queued());
  EXPECT_EQ(seen[0].queued().position(), 2);
  EXPECT_EQ(seen[0].queued().matching_workers(), 0);
}

TEST_F(DispatcherTest, LostWorkersAttemptRunsElsewhereAndIsStoredOnce) {
  FakeWorker lossy("host", /*lose_jobs=*/true);
  FakeWorker good("host", /*lose_jobs=*/false);
  // With equal standing, workers are tried in id order: the lossy one first.
  ASSERT_TRUE(dispatcher_->RegisterWorker(lossy.Info("wk_a")).ok());
  Recorder watch;
  hub_.Open("ev_1");  // to watch from the very first event
  ASSERT_NE(hub_.Subscribe("ev_1", watch.Sink()), 0u);
  Submit("ev_1", "alice", "host");
  ASSERT_TRUE(dispatcher_->RegisterWorker(good.Info("wk_b")).ok());

  EvaluationRecord r = AwaitFinished("ev_1");
  EXPECT_EQ(r.state, kStateDone);
  EXPECT_EQ(r.worker_id, "wk_b");
  EXPECT_GE(lossy.calls(), 1);
  EXPECT_EQ(good.calls(), 1);
  EXPECT_EQ(r.attempts, lossy.calls() + 1);
  v1::Verdict verdict;
  ASSERT_TRUE(verdict.ParseFromString(r.verdict));
  EXPECT_EQ(verdict.seed(), static_cast<uint64_t>(r.attempts));  // the last attempt's verdict
  EXPECT_EQ(r.scenarios_done, 2);

  ASSERT_TRUE(watch.AwaitTerminal());
  int verdicts = 0, notices = 0;
  for (const v1::EvaluationEvent& e : watch.events()) {
    EXPECT_EQ(e.evaluation_id(), "ev_1");
    verdicts += e.has_verdict();
    if (e.has_notice()) {
      ++notices;
      EXPECT_NE(e.notice().text().find("worker wk_a lost"), std::string::npos) << e.notice().text();
    }
  }
  EXPECT_EQ(verdicts, 1);
  EXPECT_EQ(notices, lossy.calls());

  bool lossy_healthy = true;
  for (const v1::WorkerStatus& w : dispatcher_->ListWorkers()) {
    if (w.info().worker_id() == "wk_a") lossy_healthy = w.healthy();
  }
  EXPECT_FALSE(lossy_healthy);
}

TEST_F(DispatcherTest, WithdrawnSessionEvaluationsNeverRunAndOthersDo) {
  Submit("ev_s1", "alice", "host", "ss_gone");
  Submit("ev_other", "alice", "host", "ss_kept");
  Submit("ev_s2", "alice", "host", "ss_gone");
  Submit("ev_bob", "bob", "host");
  Submit("ev_s3", "alice", "sm_90a", "ss_gone");
  Recorder watch;
  ASSERT_NE(hub_.Subscribe("ev_s2", watch.Sink()), 0u);

  std::vector<std::string> withdrawn =
      dispatcher_->WithdrawSession("ss_gone", "session ss_gone was cancelled");
  EXPECT_EQ(withdrawn, (std::vector<std::string>{"ev_s1", "ev_s2", "ev_s3"}));
  for (const std::string& id : withdrawn) {
    absl::StatusOr<EvaluationRecord> r = store_->GetEvaluation(id);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->state, kStateFailed) << id;
    EXPECT_EQ(r->error, "session ss_gone was cancelled") << id;
    EXPECT_EQ(dispatcher_->QueuePosition(id), 0) << id;
  }
  // Its watcher hears why.
  ASSERT_TRUE(watch.AwaitTerminal());
  ASSERT_TRUE(watch.events().back().has_failed());
  EXPECT_EQ(watch.events().back().failed().error(), "session ss_gone was cancelled");
  // The rest keep their places, in order.
  EXPECT_EQ(dispatcher_->QueuePosition("ev_other"), 1);
  EXPECT_EQ(dispatcher_->QueuePosition("ev_bob"), 2);
  EXPECT_TRUE(dispatcher_->WithdrawSession("ss_gone", "again").empty());

  // A worker runs the others, never a withdrawn one, and a restart does not
  // bring those back.
  FakeWorker host("host", false);
  ASSERT_TRUE(dispatcher_->RegisterWorker(host.Info("wk_host")).ok());
  EXPECT_EQ(AwaitFinished("ev_other").state, kStateDone);
  EXPECT_EQ(AwaitFinished("ev_bob").state, kStateDone);
  EXPECT_EQ(host.calls(), 2);
  dispatcher_.reset();
  StartDispatcher();
  for (const std::string& id : withdrawn) EXPECT_EQ(dispatcher_->QueuePosition(id), 0) << id;
  EXPECT_EQ(store_->GetEvaluation("ev_s1")->state, kStateFailed);
}

TEST_F(DispatcherTest, ASessionsEvaluationReportsItsProgressBeforeItsWatchersHearIt) {
  Recorder watch;
  absl::Mutex mu;
  std::vector<SessionProgress> reported;
  // How many Started, scenario and verdict events the evaluation's watcher
  // had got when each was reported.
  std::vector<int> heard_before;
  std::vector<std::string> state_then;  // the evaluation's, as stored
  dispatcher_->SetSessionProgressObserver([&](const SessionProgress& p) {
    int heard = 0;
    for (const v1::EvaluationEvent& e : watch.events()) {
      heard += e.has_started() || e.has_scenario() || e.has_verdict();
    }
    absl::StatusOr<EvaluationRecord> stored = store_->GetEvaluation(p.evaluation_id);
    absl::MutexLock lock(&mu);
    reported.push_back(p);
    heard_before.push_back(heard);
    state_then.push_back(stored.ok() ? stored->state : "");
  });
  Submit("ev_plain", "alice", "host");
  Submit("ev_agent", "alice", "host", "ss_a");
  ASSERT_NE(hub_.Subscribe("ev_agent", watch.Sink()), 0u);
  FakeWorker host("host", false);
  ASSERT_TRUE(dispatcher_->RegisterWorker(host.Info("wk_host")).ok());
  EXPECT_EQ(AwaitFinished("ev_plain").state, kStateDone);
  EXPECT_EQ(AwaitFinished("ev_agent").state, kStateDone);
  ASSERT_TRUE(watch.AwaitTerminal());
  // Stopped: no more calls (the observer's captures go out of scope).
  dispatcher_->SetSessionProgressObserver(nullptr);

  absl::MutexLock lock(&mu);
  // Only the session's evaluation: its start, each scenario, its verdict.
  ASSERT_EQ(reported.size(), 4u);
  for (const SessionProgress& p : reported) {
    EXPECT_EQ(p.session_id, "ss_a");
    EXPECT_EQ(p.session_by, "agent");
    EXPECT_EQ(p.evaluation_id, "ev_agent");
    EXPECT_EQ(p.attempt, 1);
    EXPECT_EQ(p.total, 2);
  }
  EXPECT_TRUE(reported[0].event.has_started());
  EXPECT_EQ(reported[0].event.started().worker_id(), "wk_host");
  EXPECT_EQ(reported[0].done, 0);
  EXPECT_TRUE(reported[1].event.has_scenario());
  EXPECT_EQ(reported[1].done, 1);
  EXPECT_TRUE(reported[2].event.has_scenario());
  EXPECT_EQ(reported[2].done, 2);
  EXPECT_TRUE(reported[3].event.has_verdict());
  // The outcome is reported once stored.
  EXPECT_EQ(state_then, (std::vector<std::string>{kStateRunning, kStateRunning, kStateRunning,
                                                  kStateDone}));
  // Each was reported before the evaluation's watcher got it.
  EXPECT_EQ(heard_before, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(watch.events().back().has_verdict());
}

TEST_F(DispatcherTest, WorkerOfAnotherTargetNeverGetsTheAttempt) {
  FakeWorker hopper("sm_90a", false);
  FakeWorker host("host", false);
  ASSERT_TRUE(dispatcher_->RegisterWorker(hopper.Info("wk_gpu")).ok());
  Recorder watch;
  hub_.Open("ev_1");
  ASSERT_NE(hub_.Subscribe("ev_1", watch.Sink()), 0u);
  Submit("ev_1", "alice", "host");
  ASSERT_TRUE(dispatcher_->RegisterWorker(host.Info("wk_cpu")).ok());
  EvaluationRecord r = AwaitFinished("ev_1");
  EXPECT_EQ(r.state, kStateDone);
  EXPECT_EQ(r.worker_id, "wk_cpu");
  EXPECT_EQ(hopper.calls(), 0);
  EXPECT_EQ(host.calls(), 1);
  // While it waited, no worker of its target existed.
  std::vector<v1::EvaluationEvent> seen = watch.events();
  ASSERT_FALSE(seen.empty());
  ASSERT_TRUE(seen[0].has_queued());
  EXPECT_EQ(seen[0].queued().matching_workers(), 0);
}

TEST_F(DispatcherTest, RegistrationRejectsBadWorkers) {
  v1::WorkerInfo info;
  info.set_target("sm_75");
  info.set_address("127.0.0.1:1");
  absl::StatusOr<v1::RegisterWorkerResponse> r = dispatcher_->RegisterWorker(info);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
  EXPECT_EQ(r.status().message().substr(0, 7), "target:");
  info.set_target("host");
  info.clear_address();
  r = dispatcher_->RegisterWorker(info);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
  EXPECT_EQ(r.status().message().substr(0, 8), "address:");

  auto refused = [&](const v1::WorkerInfo& bad) {
    absl::StatusOr<v1::RegisterWorkerResponse> r = dispatcher_->RegisterWorker(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
    return std::string(r.status().message());
  };
  v1::WorkerInfo good;
  good.set_target("host");
  good.set_address("127.0.0.1:7451");
  for (const char* address : {"no-port", "host:", ":7451", "host:0", "host:65536", "host:12ab", "a b:1",
                              "[zz]:1", "http://host:1"}) {
    v1::WorkerInfo bad = good;
    bad.set_address(address);
    EXPECT_EQ(refused(bad).substr(0, 9), "address: ") << address;
  }
  v1::WorkerInfo bad = good;
  bad.set_device_name(std::string(1 << 20, 'd'));
  EXPECT_EQ(refused(bad), "device_name: 1048576 bytes, more than the limit of 256");
  bad = good;
  bad.set_worker_id("wk/../x");
  EXPECT_EQ(refused(bad).substr(0, 11), "worker_id: ");
  bad = good;
  bad.set_gpu(-2);
  EXPECT_EQ(refused(bad), "gpu: -1 (none: a host worker) or a device ordinal");
  for (const char* address : {"localhost:7451", "10.0.0.2:1", "[::1]:7451", "gpu-box.lab:65535"}) {
    v1::WorkerInfo ok = good;
    ok.set_address(address);
    EXPECT_TRUE(dispatcher_->RegisterWorker(ok).ok()) << address;
  }

  v1::HeartbeatRequest beat;
  beat.set_worker_id("wk_unknown");
  EXPECT_FALSE(dispatcher_->Heartbeat(beat));
}

TEST_F(DispatcherTest, RestartQueuesRunningWorkAgain) {
  Submit("ev_old", "alice", "host");
  Submit("ev_new", "bob", "host");
  int attempt = 0;
  // As if a previous process had started ev_old and then died.
  ASSERT_TRUE(store_->MarkRunning("ev_old", "wk_gone", 5, &attempt).value());
  ASSERT_TRUE(store_->InsertEvaluation([] {
                EvaluationRecord e;
                e.id = "ev_done";
                e.user = "alice";
                e.target = "host";
                e.created_ms = 1;
                return e;
              }())
                  .ok());
  ASSERT_TRUE(store_->FinishDone("ev_done", "kept", 2).value());

  dispatcher_.reset();
  StartDispatcher();
  EXPECT_EQ(store_->GetEvaluation("ev_old").value().state, kStateQueued);
  EXPECT_EQ(dispatcher_->QueuePosition("ev_old"), 1);  // re-queued work goes first
  EXPECT_EQ(dispatcher_->QueuePosition("ev_new"), 2);
  EXPECT_EQ(dispatcher_->QueuePosition("ev_done"), 0);

  FakeWorker host("host", false);
  ASSERT_TRUE(dispatcher_->RegisterWorker(host.Info("wk_cpu")).ok());
  EvaluationRecord old_r = AwaitFinished("ev_old");
  EvaluationRecord new_r = AwaitFinished("ev_new");
  EXPECT_EQ(old_r.state, kStateDone);
  EXPECT_EQ(old_r.attempts, 2);
  EXPECT_EQ(new_r.state, kStateDone);
  EXPECT_EQ(new_r.attempts, 1);
  EXPECT_EQ(store_->GetEvaluation("ev_done").value().verdict, "kept");
}

TEST_F(DispatcherTest, CancelledQueuedEvaluationEndsFailedAndNeverRuns) {
  Submit("ev_1", "alice", "host");
  Submit("ev_2", "alice", "host");
  Recorder watch;
  ASSERT_NE(hub_.Subscribe("ev_1", watch.Sink()), 0u);
  ASSERT_TRUE(dispatcher_->Cancel("ev_1", "cancelled by alice").ok());
  ASSERT_TRUE(watch.AwaitTerminal());
  EXPECT_EQ(watch.events().back().failed().error(), "cancelled by alice");
  absl::StatusOr<EvaluationRecord> r = store_->GetEvaluation("ev_1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, kStateFailed);
  EXPECT_EQ(r->error, "cancelled by alice");
  EXPECT_EQ(dispatcher_->QueuePosition("ev_2"), 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(dispatcher_->Cancel("ev_1", "again")));

  FakeWorker host("host", false);
  ASSERT_TRUE(dispatcher_->RegisterWorker(host.Info("wk_host")).ok());
  EXPECT_EQ(AwaitFinished("ev_2").state, kStateDone);
  EXPECT_EQ(host.calls(), 1);
}

TEST_F(DispatcherTest, CancelledRunningEvaluationStopsItsAttemptAndTheWorkerStaysHealthy) {
  FakeWorker host("host", false);
  host.hold_verdicts();
  ASSERT_TRUE(dispatcher_->RegisterWorker(host.Info("wk_host")).ok());
  Recorder watch;
  hub_.Open("ev_1");
  ASSERT_NE(hub_.Subscribe("ev_1", watch.Sink()), 0u);
  Submit("ev_1", "alice", "host");
  ASSERT_TRUE(host.AwaitStarted(1));
  ASSERT_TRUE(dispatcher_->Cancel("ev_1", "cancelled by alice").ok());
  EvaluationRecord r = AwaitFinished("ev_1");
  EXPECT_EQ(r.state, kStateFailed);
  EXPECT_EQ(r.error, "cancelled by alice");
  ASSERT_TRUE(watch.AwaitTerminal());
  EXPECT_EQ(watch.events().back().failed().error(), "cancelled by alice");
  for (int i = 0; i < 500 && host.cancelled() == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(host.cancelled(), 1);
  for (const v1::WorkerStatus& w : dispatcher_->ListWorkers()) EXPECT_TRUE(w.healthy());

  // The worker takes the next attempt.
  host.release();
  Submit("ev_2", "alice", "host");
  EXPECT_EQ(AwaitFinished("ev_2").state, kStateDone);
}

// On a real, small tmpfs: a verdict the full disk cannot take is retried,
// then the evaluation ends failed with the reason, stored and published;
// new work is refused with RESOURCE_EXHAUSTED until space is freed.
TEST(DispatcherDiskTest, VerdictTheDiskCannotTakeEndsFailedWithTheReason) {
  kseek::testing::SmallTmpfs fs(6 << 20);
  KSEEK_REQUIRE_TMPFS(fs);
  StoreOptions store_options;
  store_options.min_free_bytes = 1 << 20;
  store_options.reserve_bytes = 512 << 10;
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(fs.path() + "/kernelseek.db", store_options);
  ASSERT_TRUE(store.ok()) << store.status();
  EventHub hub;
  DispatcherOptions options;
  options.heartbeat_timeout = absl::Hours(1);
  options.store_retries = 2;
  options.store_retry_delay = absl::Milliseconds(20);
  Dispatcher dispatcher(store->get(), &hub, options);
  ASSERT_TRUE(dispatcher.Start().ok());
  FakeWorker host("host", false);
  host.hold_verdicts();
  host.set_log_bytes(3 << 20);
  ASSERT_TRUE(dispatcher.RegisterWorker(host.Info("wk_host")).ok());

  auto eval = [](const std::string& id) {
    EvaluationRecord e;
    e.id = id;
    e.user = "alice";
    e.target = "host";
    e.task = "fake";
    e.kernel_name = "kernel.cc";
    v1::EvaluationRequest request;
    request.set_target("host");
    request.SerializeToString(&e.request);
    e.created_ms = absl::ToUnixMillis(absl::Now());
    return e;
  };
  Recorder watch;
  hub.Open("ev_full");
  ASSERT_NE(hub.Subscribe("ev_full", watch.Sink()), 0u);
  ASSERT_TRUE(dispatcher.Submit(eval("ev_full")).ok());
  ASSERT_TRUE(host.AwaitStarted(1));
  EXPECT_GT(fs.Fill("filler"), 0);
  host.release();

  ASSERT_TRUE(watch.AwaitTerminal());
  const v1::EvaluationEvent last = watch.events().back();
  ASSERT_TRUE(last.has_failed()) << last.DebugString();
  EXPECT_NE(last.failed().error().find("the verdict could not be stored"), std::string::npos)
      << last.failed().error();
  EXPECT_NE(last.failed().error().find("full"), std::string::npos) << last.failed().error();
  absl::StatusOr<EvaluationRecord> r = (*store)->GetEvaluation("ev_full");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state, kStateFailed);
  EXPECT_EQ(r->error, last.failed().error());

  absl::Status refused = dispatcher.Submit(eval("ev_refused"));
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_TRUE(absl::IsNotFound((*store)->GetEvaluation("ev_refused").status()));

  std::filesystem::remove(fs.path() + "/filler");
  host.set_log_bytes(0);
  ASSERT_TRUE(dispatcher.Submit(eval("ev_after")).ok());
  for (int i = 0; i < 3000; ++i) {
    r = (*store)->GetEvaluation("ev_after");
    if (r.ok() && r->state == kStateDone) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(r->state, kStateDone);
  dispatcher.Stop();
}

}  // namespace
}  // namespace kseek::server

namespace kseek::server {
namespace {

TEST_F(DispatcherTest, EveryAttemptCarriesTheCredentialOfTheWorkersLatestRegistration) {
  FakeWorker worker("host", false);
  absl::StatusOr<v1::RegisterWorkerResponse> first = dispatcher_->RegisterWorker(worker.Info("wk_c"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->job_credential().size(), 64u);
  Submit("ev_c1", "alice", "host");
  EXPECT_EQ(AwaitFinished("ev_c1").state, kStateDone);

  absl::StatusOr<v1::RegisterWorkerResponse> second = dispatcher_->RegisterWorker(worker.Info("wk_c"));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(second->job_credential(), first->job_credential());
  Submit("ev_c2", "alice", "host");
  EXPECT_EQ(AwaitFinished("ev_c2").state, kStateDone);
  EXPECT_EQ(worker.credentials(),
            (std::vector<std::string>{first->job_credential(), second->job_credential()}));
}

TEST_F(DispatcherTest, AWorkerThatRefusesTheCredentialIsForgottenAndTheAttemptNotCounted) {
  FakeWorker worker("host", false);
  worker.set_refuse(true);
  ASSERT_TRUE(dispatcher_->RegisterWorker(worker.Info("wk_r")).ok());
  Submit("ev_r", "alice", "host");
  for (int i = 0; i < 3000 && worker.calls() == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_EQ(worker.calls(), 1);
  // Forgotten: its heartbeat says so (the worker registers again), and the
  // evaluation waits, queued, with its attempt refunded.
  v1::HeartbeatRequest beat;
  beat.set_worker_id("wk_r");
  for (int i = 0; i < 3000 && dispatcher_->Heartbeat(beat); ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_FALSE(dispatcher_->Heartbeat(beat));
  absl::StatusOr<EvaluationRecord> queued = store_->GetEvaluation("ev_r");
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued->state, kStateQueued);
  EXPECT_EQ(queued->attempts, 0);
  EXPECT_EQ(worker.calls(), 1);

  // Registered again (a new credential), it runs the attempt.
  worker.set_refuse(false);
  ASSERT_TRUE(dispatcher_->RegisterWorker(worker.Info("wk_r")).ok());
  EvaluationRecord done = AwaitFinished("ev_r");
  EXPECT_EQ(done.state, kStateDone);
  EXPECT_EQ(done.attempts, 1);
}

}  // namespace
}  // namespace kseek::server
