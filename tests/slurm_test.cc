// deploy/slurm/kseek-workers.sbatch on a real single-node Slurm cluster.
//
// The test starts munged, slurmctld and slurmd as its own child processes
// with a private configuration (slurm.conf, munge key and socket, ports,
// state and spool folders, all under one temp folder; no systemd, and
// nothing shared with a Slurm installation of the machine), and a real
// kernelseekd. It submits the worker job for the host target with sbatch,
// sees the worker register, submits evaluations, and drains the job with
// `scancel --batch --signal=TERM` while one is running: that evaluation must
// finish on the draining worker, the queued ones must wait, and a second job
// must take them, so that every evaluation ends with a stored verdict. A
// second case stops the job with a plain `scancel JOBID` (SIGTERM to every
// process of the job, the runner of the evaluation in hand too): the same
// must hold, with no scenario reported as a crash. Then everything is
// stopped and no process of the test may be left.
//
// Needs root (slurmd starts job steps as their user) and the Debian packages
// munge, slurmctld, slurmd and slurm-client (scripts/setup.sh); skips with
// the reason otherwise. On a failure it prints the daemons' logs and the
// jobs' output.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/file.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "proto/request.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::kernelseek::v1;
using testing::Daemon;
using Clock = std::chrono::steady_clock;

constexpr char kPath[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// A correct softmax that spins for a while before each call, so that a job
// can be stopped while it runs.
const std::string kSlowKernel = testing::SlowSoftmaxHostKernel(2000000000L);
const std::vector<std::string> kSlowScenarios = {"r1_c1_f32_host", "r64_c33_f32_host", "r100_c17_f32_host",
                                                 "r256_c100_f32_host"};

// "ev_1: done, attempt 1 on wk_2; r64_c33_f32_host: crash: ...": what an
// evaluation's failure message needs.
std::string Describe(const v1::Evaluation& e) {
  std::string out = absl::StrCat(e.evaluation_id(), ": ", e.state(), ", attempt ", e.attempts(), " on ",
                                 e.worker_id().empty() ? "-" : e.worker_id());
  if (!e.error().empty()) absl::StrAppend(&out, "; error: ", e.error());
  for (const auto& sc : e.verdict().scenarios())
    if (sc.status() != "ok") absl::StrAppend(&out, "; ", sc.name(), ": ", sc.status(), ": ", sc.error());
  return out;
}

// The program's path in $PATH or the sbin folders ("" when not found).
std::string FindProgram(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::vector<std::string> dirs = absl::StrSplit(env != nullptr ? env : "", ':', absl::SkipEmpty());
  for (const char* d : {"/usr/local/sbin", "/usr/sbin", "/sbin"}) dirs.push_back(d);
  for (const auto& d : dirs) {
    std::string p = d + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// The file's last `max_bytes` ("(missing)" when it cannot be read).
std::string Tail(const std::string& path, size_t max_bytes = 6000) {
  absl::StatusOr<std::string> read = kseek::ReadFile(path);
  if (!read.ok()) return "(missing)\n";
  std::string text = *std::move(read);
  if (text.size() > max_bytes) text = "...\n" + text.substr(text.size() - max_bytes);
  return text;
}

// A line of progress in the test's output (ctest -V shows it).
void Note(const std::string& what) { std::cout << "[slurm] " << what << std::endl; }

// Polls `done` every 200 ms until it is true or `timeout_s` passes.
bool WaitFor(double timeout_s, const std::function<bool()>& done) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return done();
}

// A process whose command line names `marker` or whose environment holds
// `env_entry`: one of ours.
struct Stray {
  pid_t pid;
  std::string cmdline;
};
std::vector<Stray> FindProcesses(const std::string& marker, const std::string& env_entry) {
  std::vector<Stray> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid) || pid == getpid()) continue;
    auto read = [&](const char* what) {
      return kseek::ReadFile((entry.path() / what).string()).value_or("");
    };
    std::string cmdline = read("cmdline");
    std::string environ = read("environ");
    bool ours = absl::StrContains(cmdline, marker);
    for (absl::string_view var : absl::StrSplit(environ, '\0')) ours |= var == env_entry;
    if (!ours) continue;
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    found.push_back({pid, cmdline});
  }
  return found;
}

// munged, slurmctld and slurmd for one node on loopback, all private to
// `dir`. Slurm commands run with only $PATH, $HOME and $SLURM_CONF (plus
// what the caller adds) in their environment.
class SlurmCluster {
 public:
  explicit SlurmCluster(std::string dir) : dir_(std::move(dir)), conf_(dir_ + "/slurm/slurm.conf") {}
  ~SlurmCluster() { Stop(); }

  const std::string& dir() const { return dir_; }
  const std::string& node() const { return node_; }

  // Starts the daemons and waits for the node to be idle.
  void Start() {
    for (const char* sub : {"munge", "slurm", "slurm/state", "slurm/spool"})
      ASSERT_TRUE(fs::create_directories(dir_ + "/" + sub));
    // munged wants every folder above its socket searchable by all, and the
    // key readable by its owner only.
    for (const char* sub : {"", "/munge", "/slurm", "/slurm/spool"}) chmod((dir_ + sub).c_str(), 0755);
    const std::string key = dir_ + "/munge/munge.key";
    {
      std::ifstream random("/dev/urandom", std::ios::binary);
      std::string bytes(1024, '\0');
      random.read(bytes.data(), bytes.size());
      testing::WriteFile(key, bytes);
      chmod(key.c_str(), 0400);
    }
    munged_ = std::make_unique<Daemon>(
        std::vector<std::string>{FindProgram("munged"), "--foreground", "--socket=" + Socket(),
                                 "--key-file=" + key, "--pid-file=" + dir_ + "/munge/munged.pid",
                                 "--seed-file=" + dir_ + "/munge/munged.seed",
                                 "--log-file=" + dir_ + "/munge/munged.log", "--origin=127.0.0.1"},
        dir_ + "/munge/munged.stderr");
    ASSERT_TRUE(WaitFor(20, [&] { return fs::exists(Socket()) || !munged_->Running(); }));
    ASSERT_TRUE(munged_->Running()) << "munged exited:\n" << Tail(dir_ + "/munge/munged.stderr");

    char host[256] = {};
    gethostname(host, sizeof host - 1);
    node_ = std::string(host).substr(0, std::string(host).find('.'));
    testing::ProcessResult hw = testing::RunProcess({FindProgram("slurmd"), "-C"});
    ASSERT_EQ(hw.exit_code, 0) << hw.err;
    // "NodeName=vm CPUs=2 Boards=1 ... RealMemory=24105": this machine's
    // hardware as slurmd sees it, so that the node's definition matches.
    std::string hardware(absl::StripAsciiWhitespace(hw.out.substr(0, hw.out.find('\n'))));
    ASSERT_TRUE(absl::StartsWith(hardware, "NodeName=")) << hw.out;
    hardware = hardware.substr(hardware.find(' ') + 1);
    ctld_port_ = testing::FreePort();
    int slurmd_port = testing::FreePort();
    while (slurmd_port == ctld_port_) slurmd_port = testing::FreePort();
    const std::string s = dir_ + "/slurm/";
    testing::WriteFile(conf_, absl::StrCat(
        "ClusterName=kseektest\n",
        "SlurmctldHost=", node_, "(127.0.0.1)\n",
        "SlurmctldPort=", ctld_port_, "\n",
        "SlurmdPort=", slurmd_port, "\n",
        "SlurmUser=root\nSlurmdUser=root\n",
        "AuthType=auth/munge\nCredType=cred/munge\n",
        "AuthInfo=socket=", Socket(), "\n",
        "StateSaveLocation=", s, "state\n",
        "SlurmdSpoolDir=", s, "spool\n",
        "SlurmctldPidFile=", s, "slurmctld.pid\n",
        "SlurmdPidFile=", s, "slurmd.pid\n",
        "SlurmctldLogFile=", s, "slurmctld.log\n",
        "SlurmdLogFile=", s, "slurmd.log\n",
        "SlurmctldDebug=info\nSlurmdDebug=info\n",
        "ProctrackType=proctrack/linuxproc\n",
        "TaskPlugin=task/none\n",
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n",
        "JobAcctGatherType=jobacct_gather/none\n",
        "AccountingStorageType=accounting_storage/none\n",
        "MpiDefault=none\n",
        "ReturnToService=2\n",
        "KillWait=60\n",
        "NodeName=", node_, " NodeAddr=127.0.0.1 ", hardware, "\n",
        "PartitionName=kseek Nodes=", node_, " Default=YES MaxTime=INFINITE State=UP\n"));
    const std::string env = FindProgram("env");
    slurmctld_ = std::make_unique<Daemon>(
        std::vector<std::string>{env, "SLURM_CONF=" + conf_, FindProgram("slurmctld"), "-D", "-f", conf_},
        s + "slurmctld.stderr");
    slurmd_ = std::make_unique<Daemon>(
        std::vector<std::string>{env, "SLURM_CONF=" + conf_, FindProgram("slurmd"), "-D", "-f", conf_, "-N", node_},
        s + "slurmd.stderr");
    std::string state;
    bool idle = WaitFor(60, [&] {
      if (!slurmctld_->Running() || !slurmd_->Running()) return true;
      state = Run({"sinfo", "--noheader", "--Node", "--format=%t"}).out;
      return absl::StripAsciiWhitespace(state) == "idle";
    });
    ASSERT_TRUE(slurmctld_->Running()) << "slurmctld exited";
    ASSERT_TRUE(slurmd_->Running()) << "slurmd exited";
    ASSERT_TRUE(idle) << "the node is not idle after 60 s: sinfo says '" << state << "'";
    Note(absl::StrCat("cluster up in ", dir_, ": node ", node_, " idle, slurmctld on 127.0.0.1:", ctld_port_));
  }

  // Runs a Slurm command (found in $PATH) with the cluster's environment
  // plus `env` ("NAME=VALUE"), in `cwd` when it is given.
  testing::ProcessResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
                             const std::string& cwd = "") {
    std::vector<std::string> all = {FindProgram("env"), "-i"};
    if (!cwd.empty()) all.insert(all.end(), {"-C", cwd});
    all.insert(all.end(), {kPath, "HOME=" + dir_, "SLURM_CONF=" + conf_});
    all.insert(all.end(), env.begin(), env.end());
    all.insert(all.end(), argv.begin(), argv.end());
    return testing::RunProcess(all);
  }

  // The job's JobState (PENDING, RUNNING, COMPLETED, CANCELLED, ...).
  std::string JobState(const std::string& job) {
    std::string out = Run({"scontrol", "--oneliner", "show", "job", job}).out;
    for (absl::string_view field : absl::StrSplit(out, absl::ByAnyChar(" \n"))) {
      if (absl::ConsumePrefix(&field, "JobState=")) return std::string(field);
    }
    return "(unknown: " + out + ")";
  }

  // Cancels every job left, stops the daemons (SIGTERM, then SIGKILL) and
  // returns the processes of this cluster still alive after that (each is
  // then killed).
  std::vector<Stray> Stop() {
    if (stopped_) return {};
    stopped_ = true;
    if (slurmctld_ && slurmctld_->Running()) {
      Run({"scancel", "--full", "--user=" + std::to_string(getuid())});
      WaitFor(30, [&] { return absl::StripAsciiWhitespace(Run({"squeue", "--noheader"}).out).empty(); });
    }
    for (Daemon* d : {slurmd_.get(), slurmctld_.get(), munged_.get()}) {
      if (d == nullptr || !d->Running()) continue;
      d->Signal(SIGTERM);
      if (d->Wait(20) < 0) d->Signal(SIGKILL);
      d->Wait(10);
    }
    std::vector<Stray> strays = FindProcesses(dir_, "SLURM_CONF=" + conf_);
    for (const Stray& s : strays) kill(s.pid, SIGKILL);
    return strays;
  }

  std::string Logs() {
    std::string out;
    for (const char* f : {"slurm/slurmctld.log", "slurm/slurmd.log", "slurm/slurmctld.stderr",
                          "slurm/slurmd.stderr", "munge/munged.stderr"})
      absl::StrAppend(&out, "==== ", f, "\n", Tail(dir_ + "/" + f));
    return out;
  }

 private:
  std::string Socket() const { return dir_ + "/munge/munge.socket"; }

  std::string dir_, conf_, node_;
  int ctld_port_ = 0;
  bool stopped_ = false;
  std::unique_ptr<Daemon> munged_, slurmctld_, slurmd_;
};

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "skipped: the Slurm test needs root (slurmd starts job steps as their user)";
    std::vector<std::string> missing;
    for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "scancel", "scontrol", "sinfo", "squeue", "env"})
      if (FindProgram(p).empty()) missing.push_back(p);
    if (!missing.empty())
      GTEST_SKIP() << "skipped: no " << absl::StrJoin(missing, ", ")
                   << " (scripts/setup.sh installs munge, slurmctld, slurmd and slurm-client)";
    cluster_ = std::make_unique<SlurmCluster>(testing::TempDir("slurm"));
  }

  void TearDown() override {
    if (cluster_ == nullptr) return;
    if (HasFailure()) {
      std::string jobs;
      for (const auto& entry : fs::directory_iterator(cluster_->dir()))
        if (absl::StartsWith(entry.path().filename().string(), "job-"))
          absl::StrAppend(&jobs, "==== ", entry.path().filename().string(), "\n", Tail(entry.path().string()));
      std::cerr << cluster_->Logs() << jobs << "==== kernelseekd.log\n"
                << Tail(cluster_->dir() + "/kernelseekd.log");
    }
    // The coordinator goes first: it is the only process of the test
    // folder that is not the cluster's.
    coordinator_.reset();
    std::vector<Stray> strays = cluster_->Stop();
    for (const Stray& s : strays) ADD_FAILURE() << "left running after the teardown: pid " << s.pid << ": " << s.cmdline;
    if (strays.empty()) Note("stopped: no process of the test left");
  }

  void StartCoordinator() {
    const std::string dir = cluster_->dir();
    coordinator_ = std::make_unique<Daemon>(
        std::vector<std::string>{testing::BinDir() + "/kernelseekd", "--listen",
                                 absl::StrCat("127.0.0.1:", testing::FreePort()), "--state-dir", dir + "/state",
                                 "--heartbeat-timeout-ms", "3000"},
        dir + "/kernelseekd.log");
    address_ = coordinator_->WaitListening(30);
    ASSERT_FALSE(address_.empty()) << Tail(dir + "/kernelseekd.log");
    admin_token_ = std::string(absl::StripAsciiWhitespace(testing::ReadFile(dir + "/state/admin.token")));
    stub_ = v1::Coordinator::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }

  // Submits the worker job for the host target; returns its id.
  std::string SubmitWorkerJob() {
    const std::string dir = cluster_->dir();
    const std::string bundle = fs::path(testing::BinDir()).parent_path().string();
    testing::ProcessResult r = cluster_->Run(
        {"sbatch", "--parsable", "--cpus-per-task=1", "--time=15", "--output=" + dir + "/job-%j.log",
         testing::SourceDir() + "/deploy/slurm/kseek-workers.sbatch"},
        {"KSEEK_COORDINATOR=" + address_, "KSEEK_TARGET=host", "KSEEK_BUNDLE=" + bundle,
         "KSEEK_TOKEN_FILE=" + dir + "/state/worker.token", "KSEEK_CACHE_DIR=" + dir + "/cache",
         "KSEEK_LISTEN_HOST=127.0.0.1"},
        dir);
    EXPECT_EQ(r.exit_code, 0) << "sbatch: " << r.err;
    return std::string(absl::StripAsciiWhitespace(*absl::StrSplit(r.out, ';').begin()));
  }

  // `kseek workers --json`, parsed (an empty array when it fails).
  nlohmann::json Workers() {
    testing::ProcessResult r = testing::RunProcess({testing::BinDir() + "/kseek", "workers", "--json",
                                                    "--coordinator", address_, "--token-file",
                                                    cluster_->dir() + "/state/admin.token"});
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    return r.exit_code == 0 && j.is_array() ? j : nlohmann::json::array();
  }

  // Waits for a healthy host worker other than `not_id` on loopback;
  // returns its JSON entry (null on timeout).
  nlohmann::json WaitNewWorker(const std::string& job, const std::string& not_id) {
    nlohmann::json found;
    WaitFor(90, [&] {
      for (const auto& w : Workers())
        if (w.value("healthy", false) && !w.value("draining", true) && w.value("target", "") == "host" &&
            w.value("worker_id", "") != not_id && absl::StartsWith(w.value("address", ""), "127.0.0.1:"))
          found = w;
      return !found.is_null();
    });
    EXPECT_FALSE(found.is_null()) << "no worker of job " << job << " registered in 90 s; job state "
                                  << cluster_->JobState(job);
    return found;
  }

  bool WaitJobEnded(const std::string& job, double timeout_s) {
    return WaitFor(timeout_s, [&] {
      std::string state = cluster_->JobState(job);
      return state != "RUNNING" && state != "PENDING" && state != "CONFIGURING" && state != "COMPLETING";
    });
  }

  v1::EvaluationRequest Request(const std::string& kernel_source, const std::vector<std::string>& scenarios) {
    v1::EvaluationRequest r;
    auto files = PackTask(testing::SourceDir() + "/kernels/softmax", Target::kHost);
    EXPECT_TRUE(files.ok()) << files.status();
    *r.mutable_task() = *files;
    r.set_target("host");
    r.set_kernel_source(kernel_source);
    r.set_kernel_name("kernel.cc");
    for (const auto& s : scenarios) r.add_scenario_names(s);
    r.mutable_timing()->set_disabled(true);
    return r;
  }

  std::unique_ptr<grpc::ClientContext> Context(double deadline_s = 30) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->AddMetadata("authorization", "Bearer " + admin_token_);
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(int(deadline_s * 1000)));
    return ctx;
  }

  // Submits an evaluation and reads its events until one of `until`
  // arrives; returns the evaluation id ("" if the stream ended first).
  // Leaving the stream does not cancel the evaluation.
  std::string Submit(const v1::EvaluationRequest& request, v1::EvaluationEvent::EventCase until,
                     v1::EvaluationEvent* event) {
    auto ctx = Context(120);
    auto reader = stub_->SubmitEvaluation(ctx.get(), request);
    while (reader->Read(event))
      if (event->event_case() == until) {
        ctx->TryCancel();
        return event->evaluation_id();
      }
    ADD_FAILURE() << "the stream ended before event " << until << ": " << reader->Finish().error_message();
    return "";
  }

  v1::Evaluation Get(const std::string& id) {
    v1::EvaluationRef ref;
    ref.set_evaluation_id(id);
    v1::Evaluation e;
    auto ctx = Context();
    grpc::Status s = stub_->GetEvaluation(ctx.get(), ref, &e);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return e;
  }

  v1::Evaluation WaitDone(const std::string& id, double timeout_s) {
    v1::Evaluation e;
    WaitFor(timeout_s, [&] {
      e = Get(id);
      return e.state() == "done" || e.state() == "failed";
    });
    return e;
  }

  std::unique_ptr<SlurmCluster> cluster_;
  std::unique_ptr<Daemon> coordinator_;
  std::string address_, admin_token_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

TEST_F(SlurmTest, WorkerJobDrainsOnScancelAndNoEvaluationIsLost) {
  ASSERT_NO_FATAL_FAILURE(cluster_->Start());
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  const std::string fast = testing::ReadFile(testing::SourceDir() + "/kernels/softmax/fast_host.cc");

  // The first job's worker registers and answers the health check.
  const std::string job_a = SubmitWorkerJob();
  ASSERT_FALSE(job_a.empty());
  nlohmann::json worker_a = WaitNewWorker(job_a, "");
  ASSERT_FALSE(worker_a.is_null());
  const std::string worker_a_id = worker_a.value("worker_id", "");
  testing::ProcessResult health =
      testing::RunProcess({testing::BinDir() + "/kseek", "health", "--worker", worker_a.value("address", "")});
  EXPECT_EQ(health.exit_code, 0) << health.out << health.err;
  Note(absl::StrCat("job ", job_a, ": worker ", worker_a_id, " registered at ", worker_a.value("address", ""),
                    "; kseek health: ", absl::StripAsciiWhitespace(health.out)));

  // A slow evaluation runs on it; two more queue behind it.
  v1::EvaluationEvent event;
  const std::string slow_id = Submit(Request(kSlowKernel, kSlowScenarios), v1::EvaluationEvent::kStarted, &event);
  ASSERT_FALSE(slow_id.empty());
  EXPECT_EQ(event.started().worker_id(), worker_a_id);
  std::vector<std::string> queued_ids;
  for (const char* scenario : {"r64_c33_f32_host", "r100_c17_f32_host"}) {
    queued_ids.push_back(Submit(Request(fast, {scenario}), v1::EvaluationEvent::kQueued, &event));
    ASSERT_FALSE(queued_ids.back().empty());
  }

  Note(absl::StrCat("evaluation ", slow_id, " running on ", worker_a_id, "; ", absl::StrJoin(queued_ids, ", "),
                    " queued; scancel --batch --signal=TERM ", job_a));

  // Drain the job while the slow evaluation runs: it finishes where it is,
  // the others stay queued, and the job ends.
  testing::ProcessResult cancel = cluster_->Run({"scancel", "--batch", "--signal=TERM", job_a});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  ASSERT_TRUE(WaitJobEnded(job_a, 120)) << "job " << job_a << " still " << cluster_->JobState(job_a);
  EXPECT_EQ(cluster_->JobState(job_a), "COMPLETED");
  v1::Evaluation slow = Get(slow_id);
  EXPECT_EQ(slow.state(), "done") << Describe(slow);
  EXPECT_TRUE(slow.has_verdict() && slow.verdict().all_correct()) << Describe(slow);
  EXPECT_EQ(slow.attempts(), 1) << "finished by the draining worker, not re-run: " << Describe(slow);
  EXPECT_EQ(slow.worker_id(), worker_a_id);
  for (const auto& id : queued_ids) EXPECT_EQ(Get(id).state(), "queued") << id << ": a draining worker takes no job";
  const std::string log_a = testing::ReadFile(absl::StrCat(cluster_->dir(), "/job-", job_a, ".log"));
  const size_t drain_at = log_a.find("SIGTERM: draining");
  const size_t done_at = log_a.find(absl::StrCat("evaluation ", slow_id, " (attempt 1): done"));
  ASSERT_NE(drain_at, std::string::npos) << log_a;
  ASSERT_NE(done_at, std::string::npos) << log_a;
  EXPECT_LT(drain_at, done_at) << "the worker was told to drain while the evaluation ran";
  for (const auto& w : Workers()) {
    if (w.value("worker_id", "") == worker_a_id) {
      EXPECT_TRUE(w.value("draining", false) || !w.value("healthy", true)) << w.dump();
    }
  }

  Note(absl::StrCat("job ", job_a, " ", cluster_->JobState(job_a), "; ", slow_id, " ", slow.state(), " (attempt ",
                    slow.attempts(), ", ", slow.verdict().all_correct() ? "all correct" : "NOT all correct",
                    "); the queued ones still queued"));

  // A second job takes the queued evaluations; then it is drained too.
  const std::string job_b = SubmitWorkerJob();
  nlohmann::json worker_b = WaitNewWorker(job_b, worker_a_id);
  ASSERT_FALSE(worker_b.is_null());
  for (const auto& id : queued_ids) {
    v1::Evaluation e = WaitDone(id, 120);
    EXPECT_EQ(e.state(), "done") << Describe(e);
    EXPECT_TRUE(e.has_verdict() && e.verdict().all_correct()) << Describe(e);
    EXPECT_EQ(e.worker_id(), worker_b.value("worker_id", ""));
  }
  Note(absl::StrCat("job ", job_b, ": worker ", worker_b.value("worker_id", ""), " finished ",
                    absl::StrJoin(queued_ids, ", "), "; draining it"));
  ASSERT_EQ(cluster_->Run({"scancel", "--batch", "--signal=TERM", job_b}).exit_code, 0);
  ASSERT_TRUE(WaitJobEnded(job_b, 120)) << "job " << job_b << " still " << cluster_->JobState(job_b);
  EXPECT_EQ(cluster_->JobState(job_b), "COMPLETED");

  // Every evaluation the coordinator accepted ended with a stored verdict.
  v1::ListEvaluationsResponse list;
  auto ctx = Context();
  ASSERT_TRUE(stub_->ListEvaluations(ctx.get(), v1::ListEvaluationsRequest(), &list).ok());
  EXPECT_EQ(list.evaluations_size(), 3);
  for (const auto& e : list.evaluations()) {
    EXPECT_EQ(e.state(), "done") << Describe(e);
    EXPECT_TRUE(e.has_verdict() && e.verdict().all_correct()) << Describe(e);
  }

  // Everything stops, and nothing is left behind (checked in TearDown).
  coordinator_->Signal(SIGTERM);
  EXPECT_EQ(coordinator_->Wait(30), 0) << "kernelseekd did not stop cleanly";
}

// A plain `scancel JOBID`: Slurm sends SIGTERM to every process of the job,
// the runner of the evaluation in hand included, then SIGKILL after KillWait.
// The worker drains and its runner ignores the signal: the evaluation in
// hand is finished by the draining worker within KillWait with its true
// verdict (an attempt in hand longer than KillWait is killed and re-run on
// another worker: worker_test.cc and dispatcher_test.cc), the queued ones
// wait for the next job, and no evaluation ends with a false verdict.
TEST_F(SlurmTest, PlainScancelDrainsAndStoresNoFalseVerdict) {
  ASSERT_NO_FATAL_FAILURE(cluster_->Start());
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  const std::string fast = testing::ReadFile(testing::SourceDir() + "/kernels/softmax/fast_host.cc");

  const std::string job_a = SubmitWorkerJob();
  ASSERT_FALSE(job_a.empty());
  nlohmann::json worker_a = WaitNewWorker(job_a, "");
  ASSERT_FALSE(worker_a.is_null());
  const std::string worker_a_id = worker_a.value("worker_id", "");

  // The slow evaluation's first scenario is done: its runner is in the
  // second one when Slurm signals the job.
  v1::EvaluationEvent event;
  const std::string slow_id = Submit(Request(kSlowKernel, kSlowScenarios), v1::EvaluationEvent::kScenario, &event);
  ASSERT_FALSE(slow_id.empty());
  EXPECT_EQ(event.scenario().status(), "ok") << event.DebugString();
  std::vector<std::string> queued_ids;
  for (const char* scenario : {"r64_c33_f32_host", "r100_c17_f32_host"}) {
    queued_ids.push_back(Submit(Request(fast, {scenario}), v1::EvaluationEvent::kQueued, &event));
    ASSERT_FALSE(queued_ids.back().empty());
  }
  Note(absl::StrCat("evaluation ", slow_id, " in its second scenario on ", worker_a_id, "; ",
                    absl::StrJoin(queued_ids, ", "), " queued; scancel ", job_a));

  testing::ProcessResult cancel = cluster_->Run({"scancel", job_a});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  ASSERT_TRUE(WaitJobEnded(job_a, 120)) << "job " << job_a << " still " << cluster_->JobState(job_a);
  EXPECT_EQ(cluster_->JobState(job_a), "CANCELLED");
  const std::string log_a = testing::ReadFile(absl::StrCat(cluster_->dir(), "/job-", job_a, ".log"));
  EXPECT_NE(log_a.find("SIGTERM: draining"), std::string::npos) << log_a;
  // The evaluation in hand was finished by the draining worker, within
  // KillWait (60 s here, for well under that of work left), with its true
  // verdict: no scenario crashed for the signal.
  v1::Evaluation slow = Get(slow_id);
  EXPECT_EQ(slow.state(), "done") << Describe(slow);
  EXPECT_TRUE(slow.has_verdict() && slow.verdict().all_correct()) << Describe(slow);
  EXPECT_EQ(slow.attempts(), 1) << "finished by the draining worker, not re-run: " << Describe(slow);
  EXPECT_EQ(slow.worker_id(), worker_a_id) << Describe(slow);
  for (const auto& id : queued_ids) EXPECT_EQ(Get(id).state(), "queued") << id << ": a draining worker takes no job";
  Note(absl::StrCat("job ", job_a, " ", cluster_->JobState(job_a), "; ", Describe(slow)));
  for (absl::string_view line : absl::StrSplit(log_a, '\n'))
    if (absl::StrContains(line, slow_id) || absl::StrContains(line, "SIGTERM") || absl::StrContains(line, "srun"))
      Note(absl::StrCat("job ", job_a, " log: ", line));

  // The next job's worker takes what is left.
  const std::string job_b = SubmitWorkerJob();
  nlohmann::json worker_b = WaitNewWorker(job_b, worker_a_id);
  ASSERT_FALSE(worker_b.is_null());
  const std::string worker_b_id = worker_b.value("worker_id", "");
  for (const auto& id : queued_ids) {
    v1::Evaluation e = WaitDone(id, 120);
    EXPECT_EQ(e.state(), "done") << Describe(e);
    EXPECT_EQ(e.worker_id(), worker_b_id) << Describe(e);
  }
  Note(absl::StrCat("job ", job_b, ": worker ", worker_b_id, " finished ", absl::StrJoin(queued_ids, ", "),
                    "; scancel ", job_b));

  // An idle worker's job stops on a plain scancel too.
  ASSERT_EQ(cluster_->Run({"scancel", job_b}).exit_code, 0);
  ASSERT_TRUE(WaitJobEnded(job_b, 120)) << "job " << job_b << " still " << cluster_->JobState(job_b);

  // Every evaluation ended with its true verdict: the kernels are correct,
  // so a crash or a failure would be false.
  v1::ListEvaluationsResponse list;
  auto ctx = Context();
  ASSERT_TRUE(stub_->ListEvaluations(ctx.get(), v1::ListEvaluationsRequest(), &list).ok());
  EXPECT_EQ(list.evaluations_size(), 3);
  for (const auto& e : list.evaluations()) {
    EXPECT_EQ(e.state(), "done") << Describe(e);
    EXPECT_TRUE(e.has_verdict() && e.verdict().all_correct()) << Describe(e);
  }

  coordinator_->Signal(SIGTERM);
  EXPECT_EQ(coordinator_->Wait(30), 0) << "kernelseekd did not stop cleanly";
}

}  // namespace
}  // namespace kseek
