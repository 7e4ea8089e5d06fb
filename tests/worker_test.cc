// kseek-worker as a real process on the host target: Info and Evaluate over
// gRPC (events, busy, wrong target), refusing a GPU target it cannot serve,
// staying up while its coordinator is unreachable, draining on SIGTERM (also
// when the runner of the attempt in hand is signalled too, as a batch system
// stopping the whole job does), and interrupting, not failing, an attempt whose
// runner is killed from outside while it drains. Every Evaluate needs the
// job credential: refused without it or with another (the attempt never
// starts), accepted with the one of the current registration only.
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/file.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "kernelseek/v1/worker.grpc.pb.h"
#include "proto/job_credential.h"
#include "proto/request.h"
#include "tests/test_util.h"
#include "worker/device_check.h"

namespace kseek {
namespace {

namespace v1 = ::kernelseek::v1;
using ::kseek::testing::BinDir;
using ::kseek::testing::ReadFile;
using ::kseek::testing::RunProcess;
using ::kseek::testing::SourceDir;
using ::kseek::testing::TempDir;
using ::kseek::testing::WriteFile;

// A loopback port nothing listens on (bound, read, and released).
int UnusedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// A kseek-worker child: started with its stderr in a log file, ready once it
// printed "listening on ADDR".
class WorkerProcess {
 public:
  explicit WorkerProcess(const std::vector<std::string>& flags) {
    log_path_ = TempDir("worker_test_log") + "/worker.log";
    std::vector<std::string> args = {BinDir() + "/kseek-worker"};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    int log_fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    close(log_fd);
    // The first line of stdout names the address.
    std::string line;
    char c;
    while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    out_fd_ = out[0];
    const std::string prefix = "listening on ";
    if (line.rfind(prefix, 0) == 0) address_ = line.substr(prefix.size());
  }

  ~WorkerProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) close(out_fd_);
  }

  const std::string& address() const { return address_; }
  pid_t pid() const { return pid_; }
  std::string Log() const { return ReadFile(log_path_); }
  // Whether `text` is in the log within 30 s: a line the worker writes on
  // another thread than the one that answered the test's last request.
  bool WaitForLog(const std::string& text) const {
    for (int i = 0; i < 600; ++i) {
      if (Log().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  bool Running() {
    if (exited_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      status_ = status;
    }
    return !exited_;
  }

  // Waits for the process to end; returns its wait status.
  int Wait() {
    if (!exited_) {
      waitpid(pid_, &status_, 0);
      exited_ = true;
    }
    return status_;
  }

  std::unique_ptr<v1::Worker::Stub> Stub() const {
    return v1::Worker::NewStub(
        grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  bool exited_ = false;
  int status_ = 0;
  std::string address_;
  std::string log_path_;
};

// The softmax task's fast host kernel on two host scenarios.
v1::Attempt SoftmaxAttempt(const std::string& evaluation_id, const std::string& target) {
  v1::Attempt attempt;
  attempt.set_evaluation_id(evaluation_id);
  attempt.set_number(1);
  v1::EvaluationRequest* request = attempt.mutable_request();
  absl::StatusOr<v1::TaskFiles> files = PackTask(SourceDir() + "/kernels/softmax", Target::kHost);
  EXPECT_TRUE(files.ok()) << files.status();
  if (files.ok()) *request->mutable_task() = *files;
  request->set_target(target);
  request->set_kernel_source(ReadFile(SourceDir() + "/kernels/softmax/fast_host.cc"));
  request->set_kernel_name("fast_host.cc");
  request->add_scenario_names("r1_c1_f32_host");
  request->add_scenario_names("r100_c17_f32_host");
  request->mutable_timing()->set_max_samples(3);
  return attempt;
}

// The job credential of the test workers (their --job-credential-file).
constexpr char kTestCredential[] = "test-job-credential-0123456789abcdef";

// A context for Evaluate carrying `credential` (none when empty).
std::unique_ptr<grpc::ClientContext> StreamContext(const std::string& credential = kTestCredential) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
  if (!credential.empty()) context->AddMetadata(kJobCredentialMetadata, credential);
  return context;
}

// The status of an Evaluate that must be refused before any event.
grpc::Status Refusal(v1::Worker::Stub* stub, std::unique_ptr<grpc::ClientContext> context,
                     const v1::Attempt& attempt) {
  auto reader = stub->Evaluate(context.get(), attempt);
  v1::EvaluationEvent event;
  if (reader->Read(&event)) ADD_FAILURE() << "an event of a refused attempt: " << event.DebugString();
  return reader->Finish();
}

// Reads the rest of an attempt's stream after Started: the scenario results (in
// `scenarios`) and the verdict, and checks that the stream ends OK.
void ExpectScenariosAndVerdict(grpc::ClientReader<v1::EvaluationEvent>* reader,
                               const std::string& evaluation_id,
                               std::vector<v1::ScenarioResult>* scenarios,
                               v1::Verdict* verdict) {
  v1::EvaluationEvent event;
  bool have_verdict = false;
  while (reader->Read(&event)) {
    EXPECT_EQ(event.evaluation_id(), evaluation_id);
    ASSERT_FALSE(have_verdict) << "an event after the verdict: " << event.DebugString();
    if (event.has_scenario()) {
      scenarios->push_back(event.scenario());
    } else if (event.has_verdict()) {
      *verdict = event.verdict();
      have_verdict = true;
    } else {
      ADD_FAILURE() << "unexpected event: " << event.DebugString();
    }
  }
  grpc::Status status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(have_verdict);
}

// The registration half of a coordinator: records what workers send and
// answers with a fixed id and a short heartbeat interval. Heartbeats answer
// known=false while `forget` is set (then it clears itself).
class FakeCoordinator final : public v1::Coordinator::Service {
 public:
  struct Seen {
    std::vector<v1::WorkerInfo> registrations;
    std::vector<v1::HeartbeatRequest> heartbeats;
    std::vector<std::string> authorizations;
  };

  grpc::Status RegisterWorker(grpc::ServerContext* context, const v1::WorkerInfo* info,
                              v1::RegisterWorkerResponse* reply) override {
    absl::MutexLock lock(&mu_);
    if (Refused(context)) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "token revoked");
    seen_.registrations.push_back(*info);
    Record(context);
    reply->set_worker_id("w-" + std::to_string(seen_.registrations.size()));
    reply->set_heartbeat_interval_ms(100);
    reply->set_job_credential("credential-of-registration-" +
                              std::to_string(seen_.registrations.size()));
    return grpc::Status::OK;
  }

  grpc::Status Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* reply) override {
    absl::MutexLock lock(&mu_);
    seen_.heartbeats.push_back(*request);
    Record(context);
    if (Refused(context)) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "token revoked");
    reply->set_known(!forget_);
    forget_ = false;
    return grpc::Status::OK;
  }

  void Forget() {
    absl::MutexLock lock(&mu_);
    forget_ = true;
  }
  // From now on calls bearing `token` are refused, as a revoked token is.
  void RefuseToken(const std::string& token) {
    absl::MutexLock lock(&mu_);
    refused_authorization_ = "Bearer " + token;
  }

  // Waits (up to a generous bound) until `done` holds for what was seen.
  bool WaitFor(const std::function<bool(const Seen&)>& done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      {
        absl::MutexLock lock(&mu_);
        if (done(seen_)) return true;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  Seen Snapshot() {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

 private:
  bool Refused(grpc::ServerContext* context) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = context->client_metadata().find("authorization");
    return !refused_authorization_.empty() && it != context->client_metadata().end() &&
           std::string(it->second.data(), it->second.size()) == refused_authorization_;
  }

  void Record(grpc::ServerContext* context) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = context->client_metadata().find("authorization");
    seen_.authorizations.push_back(
        it == context->client_metadata().end() ? "" : std::string(it->second.data(), it->second.size()));
  }

  absl::Mutex mu_;
  Seen seen_ ABSL_GUARDED_BY(mu_);
  bool forget_ ABSL_GUARDED_BY(mu_) = false;
  std::string refused_authorization_ ABSL_GUARDED_BY(mu_);
};

class WorkerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_dir_ = new std::string(TempDir("worker_test_cache"));
    credential_file_ = new std::string(TempDir("worker_test_credential") + "/job.credential");
    WriteFile(*credential_file_, std::string(kTestCredential) + "\n");
  }
  static void TearDownTestSuite() {
    delete cache_dir_;
    delete credential_file_;
  }

  // Flags of a host worker whose coordinator is not there, and which takes
  // attempts with kTestCredential.
  static std::vector<std::string> HostFlags() {
    return {"--target=host", "--listen=127.0.0.1:0",
            "--coordinator=127.0.0.1:" + std::to_string(UnusedPort()),
            "--cache-dir=" + *cache_dir_, "--job-credential-file=" + *credential_file_};
  }

  static std::string* cache_dir_;
  static std::string* credential_file_;
};

std::string* WorkerTest::cache_dir_ = nullptr;
std::string* WorkerTest::credential_file_ = nullptr;

TEST_F(WorkerTest, RefusesEvaluateWithoutItsJobCredentialAndNeverStartsTheAttempt) {
  const std::string work_dir = TempDir("worker_test_work");
  std::vector<std::string> flags = HostFlags();
  flags.push_back("--work-dir=" + work_dir);
  WorkerProcess worker(flags);
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  auto stub = worker.Stub();

  // No credential, a forged one, one of the right length, the bearer token
  // header instead: each UNAUTHENTICATED before any event.
  grpc::Status none = Refusal(stub.get(), StreamContext(""), SoftmaxAttempt("ev_forged", "host"));
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED) << none.error_message();
  EXPECT_NE(none.error_message().find("no job credential"), std::string::npos)
      << none.error_message();
  grpc::Status forged =
      Refusal(stub.get(), StreamContext("forged"), SoftmaxAttempt("ev_forged", "host"));
  EXPECT_EQ(forged.error_code(), grpc::StatusCode::UNAUTHENTICATED) << forged.error_message();
  std::string near(kTestCredential);
  near.back() = near.back() == 'f' ? 'e' : 'f';
  grpc::Status same_length =
      Refusal(stub.get(), StreamContext(near), SoftmaxAttempt("ev_forged", "host"));
  EXPECT_EQ(same_length.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  auto bearer = StreamContext("");
  bearer->AddMetadata("authorization", std::string("Bearer ") + kTestCredential);
  grpc::Status as_bearer = Refusal(stub.get(), std::move(bearer), SoftmaxAttempt("ev_forged", "host"));
  EXPECT_EQ(as_bearer.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  // Even an attempt for another target learns nothing before the credential.
  grpc::Status other_target =
      Refusal(stub.get(), StreamContext("forged"), SoftmaxAttempt("ev_forged", "sm_90a"));
  EXPECT_EQ(other_target.error_code(), grpc::StatusCode::UNAUTHENTICATED);

  // Nothing ran: no scratch folder was made, the worker is idle, and the
  // log names the refusals.
  std::vector<std::string> entries;
  if (DIR* d = opendir(work_dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") entries.push_back(e->d_name);
    }
    closedir(d);
  }
  EXPECT_TRUE(entries.empty()) << entries.front();
  EXPECT_NE(worker.Log().find("refused evaluation ev_forged"), std::string::npos) << worker.Log();
  EXPECT_EQ(worker.Log().find("evaluation ev_forged (attempt"), std::string::npos) << worker.Log();
  {
    v1::WorkerInfo info;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    ASSERT_TRUE(stub->Info(&context, v1::WorkerInfoRequest(), &info).ok());
    EXPECT_EQ(info.queue_length(), 0);
    // It says how it confines kernels: this machine has seccomp filters
    // (the worker would have refused to start otherwise).
    EXPECT_EQ(info.confinement().rfind("seccomp filter, ", 0), 0u) << info.confinement();
    EXPECT_NE(worker.Log().find("kernels: seccomp filter"), std::string::npos) << worker.Log();
  }

  // The worker's own credential runs the same attempt.
  auto context = StreamContext();
  auto reader = stub->Evaluate(context.get(), SoftmaxAttempt("ev_real", "host"));
  v1::EvaluationEvent event;
  ASSERT_TRUE(reader->Read(&event)) << reader->Finish().error_message() << worker.Log();
  ASSERT_TRUE(event.has_started()) << event.DebugString();
  std::vector<v1::ScenarioResult> scenarios;
  v1::Verdict verdict;
  ExpectScenariosAndVerdict(reader.get(), "ev_real", &scenarios, &verdict);
  EXPECT_TRUE(verdict.all_correct());
}

TEST_F(WorkerTest, WithoutCoordinatorOrCredentialFileEveryEvaluateIsRefused) {
  WorkerProcess worker({"--target=host", "--listen=127.0.0.1:0", "--cache-dir=" + *cache_dir_});
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  auto stub = worker.Stub();
  for (const std::string& credential : {std::string(), std::string(kTestCredential)}) {
    grpc::Status st = Refusal(stub.get(), StreamContext(credential), SoftmaxAttempt("ev_x", "host"));
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED) << credential;
  }
  // It said so at start (logged after the address is printed, on the main
  // thread, which need not have got there before the refusals).
  EXPECT_TRUE(worker.WaitForLog("every Evaluate is refused")) << worker.Log();
}

TEST_F(WorkerTest, EvaluatesOneAttemptAtATimeAndRefusesOtherTargets) {
  WorkerProcess worker(HostFlags());
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  auto stub = worker.Stub();

  v1::WorkerInfo info;
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    grpc::Status status = stub->Info(&context, v1::WorkerInfoRequest(), &info);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  EXPECT_EQ(info.target(), "host");
  EXPECT_EQ(info.address(), worker.address());
  EXPECT_EQ(info.queue_length(), 0);
  EXPECT_FALSE(info.draining());
  EXPECT_FALSE(info.device_name().empty());
  EXPECT_NE(info.compiler_version().find("c++"), std::string::npos) << info.compiler_version();

  // An attempt for a GPU target is refused, naming both targets.
  {
    auto context = StreamContext();
    auto reader = stub->Evaluate(context.get(), SoftmaxAttempt("ev_gpu", "sm_90a"));
    v1::EvaluationEvent event;
    EXPECT_FALSE(reader->Read(&event));
    grpc::Status status = reader->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(status.error_message().find("sm_90a"), std::string::npos) << status.error_message();
    EXPECT_NE(status.error_message().find("host"), std::string::npos) << status.error_message();
  }

  auto context = StreamContext();
  auto reader = stub->Evaluate(context.get(), SoftmaxAttempt("ev_first", "host"));
  v1::EvaluationEvent event;
  ASSERT_TRUE(reader->Read(&event)) << reader->Finish().error_message() << worker.Log();
  EXPECT_EQ(event.evaluation_id(), "ev_first");
  ASSERT_TRUE(event.has_started()) << event.DebugString();
  EXPECT_EQ(event.started().attempt(), 1);
  EXPECT_EQ(event.started().scenarios(), 2);

  // While it runs, a second attempt is turned away and Info counts the first.
  {
    auto second_context = StreamContext();
    auto second = stub->Evaluate(second_context.get(), SoftmaxAttempt("ev_second", "host"));
    v1::EvaluationEvent ignored;
    EXPECT_FALSE(second->Read(&ignored));
    grpc::Status status = second->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
    EXPECT_NE(status.error_message().find("ev_first"), std::string::npos) << status.error_message();
  }

  std::vector<v1::ScenarioResult> scenarios;
  v1::Verdict verdict;
  ExpectScenariosAndVerdict(reader.get(), "ev_first", &scenarios, &verdict);
  ASSERT_EQ(scenarios.size(), 2u) << worker.Log();
  EXPECT_EQ(scenarios[0].name(), "r1_c1_f32_host");
  EXPECT_EQ(scenarios[1].name(), "r100_c17_f32_host");
  for (const v1::ScenarioResult& s : scenarios) {
    EXPECT_EQ(s.status(), "ok") << s.DebugString();
    EXPECT_LE(s.time().n(), 3);
  }
  EXPECT_TRUE(verdict.all_correct()) << verdict.DebugString();
  EXPECT_EQ(verdict.task(), "softmax");
  EXPECT_EQ(verdict.target(), "host");
  EXPECT_EQ(verdict.scenarios_size(), 2);

  // Idle again: the next attempt is taken.
  {
    auto next_context = StreamContext();
    auto next = stub->Evaluate(next_context.get(), SoftmaxAttempt("ev_third", "host"));
    ASSERT_TRUE(next->Read(&event));
    EXPECT_TRUE(event.has_started());
    std::vector<v1::ScenarioResult> more;
    ExpectScenariosAndVerdict(next.get(), "ev_third", &more, &verdict);
    EXPECT_TRUE(verdict.all_correct());
  }

  // All along the coordinator was unreachable: the worker kept retrying.
  EXPECT_TRUE(worker.Running()) << worker.Log();
  EXPECT_NE(worker.Log().find("unreachable"), std::string::npos) << worker.Log();
}

TEST_F(WorkerTest, RequestThatDoesNotUnpackEndsWithFailedNamingTheField) {
  WorkerProcess worker(HostFlags());
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  auto stub = worker.Stub();
  v1::Attempt attempt = SoftmaxAttempt("ev_bad", "host");
  attempt.mutable_request()->set_scenario_names(1, "no_such_scenario");
  auto context = StreamContext();
  auto reader = stub->Evaluate(context.get(), attempt);
  v1::EvaluationEvent event;
  ASSERT_TRUE(reader->Read(&event)) << worker.Log();
  EXPECT_EQ(event.evaluation_id(), "ev_bad");
  ASSERT_TRUE(event.has_failed()) << event.DebugString();
  EXPECT_NE(event.failed().error().find("scenario_names[1]"), std::string::npos)
      << event.failed().error();
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_TRUE(reader->Finish().ok());
}

TEST_F(WorkerTest, SigtermFinishesTheAttemptInHandRefusesNewOnesAndExitsZero) {
  WorkerProcess worker(HostFlags());
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  auto stub = worker.Stub();

  auto context = StreamContext();
  auto reader = stub->Evaluate(context.get(), SoftmaxAttempt("ev_drain", "host"));
  v1::EvaluationEvent event;
  ASSERT_TRUE(reader->Read(&event)) << worker.Log();
  ASSERT_TRUE(event.has_started());

  ASSERT_EQ(kill(worker.pid(), SIGTERM), 0);
  // Once it drains (or, the attempt done, has shut down) a new attempt is refused
  // as unavailable.
  for (int i = 0; i < 600; ++i) {
    v1::WorkerInfo info;
    grpc::ClientContext info_context;
    info_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    if (!stub->Info(&info_context, v1::WorkerInfoRequest(), &info).ok() || info.draining()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  {
    auto late_context = StreamContext();
    auto late = stub->Evaluate(late_context.get(), SoftmaxAttempt("ev_late", "host"));
    v1::EvaluationEvent ignored;
    EXPECT_FALSE(late->Read(&ignored));
    grpc::Status status = late->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  }

  std::vector<v1::ScenarioResult> scenarios;
  v1::Verdict verdict;
  ExpectScenariosAndVerdict(reader.get(), "ev_drain", &scenarios, &verdict);
  EXPECT_EQ(scenarios.size(), 2u);
  EXPECT_TRUE(verdict.all_correct()) << verdict.DebugString();

  const int status = worker.Wait();
  ASSERT_TRUE(WIFEXITED(status)) << worker.Log();
  EXPECT_EQ(WEXITSTATUS(status), 0) << worker.Log();
  EXPECT_NE(worker.Log().find("draining"), std::string::npos) << worker.Log();
}

// /proc/PID/stat, or "" when the process is gone (it may exit at any moment).
std::string ProcStat(pid_t pid) {
  return kseek::ReadFile(absl::StrCat("/proc/", pid, "/stat")).value_or("");
}

// The pids of the processes whose parent is `parent` and whose command name
// is `name`.
std::vector<pid_t> ChildrenNamed(pid_t parent, const std::string& name) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* entry = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(atoi(entry->d_name));
    if (pid <= 0) continue;
    // /proc/PID/stat: "PID (COMM) STATE PPID ..."
    const std::string stat = ProcStat(pid);
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    if (sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2) continue;
    if (ppid == parent && stat.substr(open + 1, close - open - 1) == name) found.push_back(pid);
  }
  closedir(proc);
  return found;
}

TEST_F(WorkerTest, KilledWorkerLeavesNoRunnerBehind) {
  WorkerProcess worker(HostFlags());
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  v1::Attempt attempt = SoftmaxAttempt("ev_hang", "host");
  attempt.mutable_request()->set_kernel_source(
      "#include \"kernelseek/abi.h\"\n"
      "extern \"C\" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {\n"
      "  volatile long spin = 0;\n"
      "  for (;;) spin = spin + 1;\n"
      "}\n");
  attempt.mutable_request()->set_kernel_name("hang.cc");
  auto stub = worker.Stub();
  auto context = StreamContext();
  auto reader = stub->Evaluate(context.get(), attempt);
  v1::EvaluationEvent event;
  ASSERT_TRUE(reader->Read(&event)) << worker.Log();
  ASSERT_TRUE(event.has_started()) << event.DebugString();

  // The hanging kernel holds its runner until the scenario time limit.
  std::vector<pid_t> runners;
  for (int i = 0; i < 1200 && runners.empty(); ++i) {
    runners = ChildrenNamed(worker.pid(), "kseek-runner");
    if (runners.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(runners.empty()) << worker.Log();
  ASSERT_EQ(kill(worker.pid(), SIGKILL), 0);
  worker.Wait();
  bool gone = false;
  for (int i = 0; i < 600 && !gone; ++i) {
    const std::string stat = ProcStat(runners[0]);
    gone = kill(runners[0], 0) != 0 || stat.empty() || stat.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "kseek-runner " << runners[0] << " outlived its worker";
  if (!gone) kill(runners[0], SIGKILL);
}

// Slow enough that signals reach an attempt while its runner is in a scenario.
const std::string kSlowSoftmax = testing::SlowSoftmaxHostKernel(1500000000L);

// The worker's kseek-runner children, waited for (up to a minute) until
// there is one.
std::vector<pid_t> WaitForRunners(pid_t worker) {
  std::vector<pid_t> runners;
  for (int i = 0; i < 1200 && runners.empty(); ++i) {
    runners = ChildrenNamed(worker, "kseek-runner");
    if (runners.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return runners;
}

// What a batch system's "stop this job" does (Slurm's plain scancel): the
// stop signals go to every process of the job, the worker and the runner of
// the attempt in hand alike. The worker drains and says NOT_SERVING to the
// health check; the runner ignores the signals; the attempt ends with its true
// verdict.
TEST_F(WorkerTest, StopSignalsToEveryProcessDrainAndTheAttemptInHandKeepsItsTrueVerdict) {
  WorkerProcess worker(HostFlags());
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  v1::Attempt attempt = SoftmaxAttempt("ev_stop_all", "host");
  attempt.mutable_request()->set_kernel_source(kSlowSoftmax);
  attempt.mutable_request()->set_kernel_name("slow.cc");
  attempt.mutable_request()->mutable_timing()->set_disabled(true);
  auto stub = worker.Stub();
  auto context = StreamContext();
  auto reader = stub->Evaluate(context.get(), attempt);
  v1::EvaluationEvent event;
  ASSERT_TRUE(reader->Read(&event)) << worker.Log();
  ASSERT_TRUE(event.has_started()) << event.DebugString();
  const std::vector<pid_t> runners = WaitForRunners(worker.pid());
  ASSERT_FALSE(runners.empty()) << worker.Log();

  ASSERT_EQ(kill(worker.pid(), SIGTERM), 0);
  for (pid_t runner : runners) {
    for (int sig : {SIGTERM, SIGHUP, SIGINT}) EXPECT_EQ(kill(runner, sig), 0) << "runner " << runner;
  }
  // While the attempt is in hand, the health check says the worker is not
  // serving, for the server and for the Worker service by name.
  for (const std::string service : {"", "kernelseek.v1.Worker"}) {
    testing::ProcessResult health = RunProcess({BinDir() + "/kseek", "health", "--worker",
                                                worker.address(), "--service", service, "--json"});
    EXPECT_EQ(health.exit_code, 1) << "service '" << service << "': " << health.out << health.err;
    EXPECT_NE(health.out.find("\"status\": \"NOT_SERVING\""), std::string::npos)
        << "service '" << service << "': " << health.out << health.err;
  }
  EXPECT_TRUE(worker.Running()) << "the worker left before the attempt in hand ended:\n"
                                << worker.Log();

  std::vector<v1::ScenarioResult> scenarios;
  v1::Verdict verdict;
  ExpectScenariosAndVerdict(reader.get(), "ev_stop_all", &scenarios, &verdict);
  ASSERT_EQ(scenarios.size(), 2u) << worker.Log();
  for (const v1::ScenarioResult& s : scenarios) EXPECT_EQ(s.status(), "ok") << s.DebugString();
  EXPECT_TRUE(verdict.all_correct()) << verdict.DebugString() << worker.Log();

  const int status = worker.Wait();
  ASSERT_TRUE(WIFEXITED(status)) << worker.Log();
  EXPECT_EQ(WEXITSTATUS(status), 0) << worker.Log();
}

// A runner killed from outside while the worker drains (the SIGKILL a batch
// system sends at the end of its grace time, the OOM killer) is no fault of
// the candidate: the attempt ends without a crash or a verdict, UNAVAILABLE,
// which tells the coordinator to run it elsewhere.
TEST_F(WorkerTest, RunnerKilledFromOutsideWhileDrainingInterruptsTheAttemptWithoutACrash) {
  WorkerProcess worker(HostFlags());
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  v1::Attempt attempt = SoftmaxAttempt("ev_interrupted", "host");
  attempt.mutable_request()->set_kernel_source(
      "#include \"kernelseek/abi.h\"\n"
      "extern \"C\" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {\n"
      "  volatile long spin = 0;\n"
      "  for (;;) spin = spin + 1;\n"
      "}\n");
  attempt.mutable_request()->set_kernel_name("hang.cc");
  attempt.mutable_request()->clear_scenario_names();
  attempt.mutable_request()->add_scenario_names("r1_c1_f32_host");
  auto stub = worker.Stub();
  auto context = StreamContext();
  auto reader = stub->Evaluate(context.get(), attempt);
  v1::EvaluationEvent event;
  ASSERT_TRUE(reader->Read(&event)) << worker.Log();
  ASSERT_TRUE(event.has_started()) << event.DebugString();
  const std::vector<pid_t> runners = WaitForRunners(worker.pid());
  ASSERT_FALSE(runners.empty()) << worker.Log();
  // The scenario is under way once the runner has started the candidate's
  // kernel host beside the baseline's (it does so inside the scenario).
  bool in_scenario = false;
  for (int i = 0; i < 1200 && !in_scenario; ++i) {
    size_t hosts = 0;
    for (pid_t runner : runners) hosts += ChildrenNamed(runner, "kseek-runner").size();
    in_scenario = hosts >= 2;
    if (!in_scenario) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(in_scenario) << worker.Log();

  ASSERT_EQ(kill(worker.pid(), SIGTERM), 0);
  bool draining = false;
  for (int i = 0; i < 600 && !draining; ++i) {
    v1::WorkerInfo info;
    grpc::ClientContext info_context;
    info_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    draining = stub->Info(&info_context, v1::WorkerInfoRequest(), &info).ok() && info.draining();
    if (!draining) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(draining) << worker.Log();
  for (pid_t runner : runners) EXPECT_EQ(kill(runner, SIGKILL), 0) << "runner " << runner;

  while (reader->Read(&event)) {
    ADD_FAILURE() << "an interrupted attempt sent an event: " << event.DebugString();
  }
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_NE(status.error_message().find("ev_interrupted was interrupted"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("signal 9"), std::string::npos) << status.error_message();

  const int wait_status = worker.Wait();
  ASSERT_TRUE(WIFEXITED(wait_status)) << worker.Log();
  EXPECT_EQ(WEXITSTATUS(wait_status), 0) << worker.Log();
}

TEST_F(WorkerTest, RegistersOnceTheCoordinatorIsUpHeartbeatsAndReportsDraining) {
  const int port = UnusedPort();
  const std::string coordinator = "127.0.0.1:" + std::to_string(port);
  const std::string token_file = TempDir("worker_test_token") + "/worker.token";
  WriteFile(token_file, "ks_worker_secret\n");
  WorkerProcess worker({"--target=host", "--listen=127.0.0.1:0", "--coordinator=" + coordinator,
                        "--token-file=" + token_file, "--cache-dir=" + *cache_dir_});
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  // Nothing listens yet: the worker says so and keeps trying.
  ASSERT_TRUE(worker.WaitForLog("unreachable")) << worker.Log();
  ASSERT_TRUE(worker.Running()) << worker.Log();

  FakeCoordinator fake;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(coordinator, grpc::InsecureServerCredentials());
  builder.RegisterService(&fake);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);

  // It registers with its address and target, then heartbeats with its id.
  ASSERT_TRUE(fake.WaitFor([](const FakeCoordinator::Seen& s) {
    return !s.heartbeats.empty();
  })) << worker.Log();
  FakeCoordinator::Seen seen = fake.Snapshot();
  ASSERT_EQ(seen.registrations.size(), 1u);
  EXPECT_EQ(seen.registrations[0].target(), "host");
  EXPECT_EQ(seen.registrations[0].address(), worker.address());
  EXPECT_EQ(seen.registrations[0].worker_id(), "");
  EXPECT_EQ(seen.heartbeats[0].worker_id(), "w-1");
  EXPECT_FALSE(seen.heartbeats[0].draining());
  for (const std::string& a : seen.authorizations) EXPECT_EQ(a, "Bearer ks_worker_secret");

  // A coordinator that forgot the worker gets it registered again, with
  // its previous id as a hint.
  fake.Forget();
  ASSERT_TRUE(fake.WaitFor([](const FakeCoordinator::Seen& s) {
    return !s.heartbeats.empty() && s.heartbeats.back().worker_id() == "w-2";
  })) << worker.Log();
  seen = fake.Snapshot();
  ASSERT_EQ(seen.registrations.size(), 2u);
  EXPECT_EQ(seen.registrations[1].worker_id(), "w-1");

  {
    auto stub = worker.Stub();
    v1::WorkerInfo info;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    ASSERT_TRUE(stub->Info(&context, v1::WorkerInfoRequest(), &info).ok());
    EXPECT_EQ(info.worker_id(), "w-2");
  }

  // Draining is reported before the worker goes.
  ASSERT_EQ(kill(worker.pid(), SIGTERM), 0);
  const int status = worker.Wait();
  ASSERT_TRUE(WIFEXITED(status)) << worker.Log();
  EXPECT_EQ(WEXITSTATUS(status), 0) << worker.Log();
  seen = fake.Snapshot();
  ASSERT_FALSE(seen.heartbeats.empty());
  EXPECT_TRUE(seen.heartbeats.back().draining());
  server->Shutdown();
}

// Past the credential check, an attempt for another target is refused with
// FAILED_PRECONDITION: a cheap way to tell an accepted credential.
grpc::StatusCode CredentialCheck(v1::Worker::Stub* stub, const std::string& credential) {
  return Refusal(stub, StreamContext(credential), SoftmaxAttempt("ev_probe", "sm_90a")).error_code();
}

// Waits up to a minute for `done`.
bool Eventually(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return false;
}

TEST_F(WorkerTest, TakesAttemptsWithTheCredentialOfItsCurrentRegistrationOnly) {
  FakeCoordinator fake;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&fake);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  const std::string token_file = TempDir("worker_test_rotation") + "/worker.token";
  WriteFile(token_file, "ks_first_token\n");
  WorkerProcess worker({"--target=host", "--listen=127.0.0.1:0",
                        "--coordinator=127.0.0.1:" + std::to_string(port),
                        "--token-file=" + token_file, "--cache-dir=" + *cache_dir_});
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  ASSERT_TRUE(fake.WaitFor([](const FakeCoordinator::Seen& s) { return !s.heartbeats.empty(); }))
      << worker.Log();
  auto stub = worker.Stub();
  const std::string first = "credential-of-registration-1";
  const std::string second = "credential-of-registration-2";
  EXPECT_EQ(CredentialCheck(stub.get(), first), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(CredentialCheck(stub.get(), ""), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(CredentialCheck(stub.get(), second), grpc::StatusCode::UNAUTHENTICATED);

  // A new registration replaces the credential: the old one is refused.
  fake.Forget();
  ASSERT_TRUE(fake.WaitFor([](const FakeCoordinator::Seen& s) {
    return s.registrations.size() == 2 && !s.heartbeats.empty() &&
           s.heartbeats.back().worker_id() == "w-2";
  })) << worker.Log();
  EXPECT_EQ(CredentialCheck(stub.get(), second), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(CredentialCheck(stub.get(), first), grpc::StatusCode::UNAUTHENTICATED);

  // The token is revoked: the credential ends with it at the next
  // heartbeat. The rotated token in the file brings a third registration
  // and a new credential, without a restart.
  fake.RefuseToken("ks_first_token");
  ASSERT_TRUE(Eventually([&] {
    return CredentialCheck(stub.get(), second) == grpc::StatusCode::UNAUTHENTICATED;
  })) << worker.Log();
  EXPECT_NE(worker.Log().find("refused this worker's token"), std::string::npos) << worker.Log();
  WriteFile(token_file, "ks_rotated_token\n");
  ASSERT_TRUE(fake.WaitFor([](const FakeCoordinator::Seen& s) { return s.registrations.size() == 3; }))
      << worker.Log();
  EXPECT_EQ(fake.Snapshot().authorizations.back(), "Bearer ks_rotated_token");
  ASSERT_TRUE(Eventually([&] {
    return CredentialCheck(stub.get(), "credential-of-registration-3") ==
           grpc::StatusCode::FAILED_PRECONDITION;
  })) << worker.Log();
  EXPECT_EQ(CredentialCheck(stub.get(), second), grpc::StatusCode::UNAUTHENTICATED);
  server->Shutdown();
}

TEST_F(WorkerTest, SpeaksTlsOnBothSidesWhenGivenCertificates) {
  const std::string dir = TempDir("worker_test_tls");
  const std::string cert = dir + "/cert.pem", key = dir + "/key.pem";
  testing::ProcessResult made = RunProcess(
      {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
       "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"});
  if (made.exit_code != 0) GTEST_SKIP() << "skipped: openssl cannot make a certificate: " << made.err;
  const std::string pem = ReadFile(cert);

  // A coordinator that speaks only TLS, with the same certificate.
  FakeCoordinator fake;
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({ReadFile(key), pem});
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl), &port);
  builder.RegisterService(&fake);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);

  WorkerProcess worker({"--target=host", "--listen=127.0.0.1:0",
                        "--coordinator=127.0.0.1:" + std::to_string(port), "--tls-ca=" + cert,
                        "--tls-cert=" + cert, "--tls-key=" + key, "--cache-dir=" + *cache_dir_});
  ASSERT_FALSE(worker.address().empty()) << worker.Log();
  ASSERT_TRUE(fake.WaitFor([](const FakeCoordinator::Seen& s) {
    return !s.heartbeats.empty();
  })) << worker.Log();

  grpc::SslCredentialsOptions client_ssl;
  client_ssl.pem_root_certs = pem;
  auto stub = v1::Worker::NewStub(
      grpc::CreateChannel(worker.address(), grpc::SslCredentials(client_ssl)));
  v1::WorkerInfo info;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::Status status = stub->Info(&context, v1::WorkerInfoRequest(), &info);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(info.worker_id(), "w-1");

  // Plaintext is not served.
  v1::WorkerInfo plain_info;
  grpc::ClientContext plain_context;
  plain_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  EXPECT_FALSE(worker.Stub()->Info(&plain_context, v1::WorkerInfoRequest(), &plain_info).ok());
  server->Shutdown();
}

TEST_F(WorkerTest, RefusesToStartForAGpuTargetItsDeviceDoesNotMatch) {
  // Without a GPU any GPU target is refused; with one, the target whose
  // compute capability it lacks.
  std::string target = "sm_90a";
  std::string capability = "9.0";
  if (absl::StatusOr<WorkerDevice> d = QueryCudaDevice(0);
      d.ok() && CapabilityMatches(Target::kSm90a, d->cc_major, d->cc_minor)) {
    target = "sm_100a";
    capability = "10.0";
  }
  testing::ProcessResult r = RunProcess(
      {BinDir() + "/kseek-worker", "--target=" + target, "--gpu=0", "--listen=127.0.0.1:0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("target " + target + " needs GPU 0 with compute capability " + capability),
            std::string::npos)
      << r.err;
  if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); driver == nullptr) {
    EXPECT_NE(r.err.find("no CUDA driver"), std::string::npos) << r.err;
  } else {
    dlclose(driver);
  }
}

TEST_F(WorkerTest, UnknownTargetIsABadFlag) {
  testing::ProcessResult r =
      RunProcess({BinDir() + "/kseek-worker", "--target=sm_80", "--listen=127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--target"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kseek
