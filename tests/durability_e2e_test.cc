// What an operator and a user see when things go wrong, with real
// processes on loopback: kernelseekd refusing a lost (empty) or damaged
// store in a state folder that was in use, naming the file and the way
// back; `kseek admin backup` and a restore from its copy; new work refused
// with RESOURCE_EXHAUSTED on a nearly full disk (a small tmpfs); `kseek
// eval` with no worker of its target saying so at once and giving up after
// --wait-limit; Ctrl-C in `kseek eval` and `kseek cancel` cancelling. New
// sessions are refused on a nearly full disk as evaluations are.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/store.h"
#include "tests/test_util.h"

namespace kseek::testing {
namespace {

namespace fs = std::filesystem;

// A kernelseekd on a free loopback port with its state in `state_dir`.
class Coordinator {
 public:
  Coordinator(const std::string& state_dir, std::vector<std::string> extra = {})
      : state_dir_(state_dir), log_(state_dir + ".log") {
    std::vector<std::string> argv = {BinDir() + "/kernelseekd", "--listen", "127.0.0.1:0",
                                     "--state-dir", state_dir};
    argv.insert(argv.end(), extra.begin(), extra.end());
    daemon_ = std::make_unique<Daemon>(argv, log_);
    address_ = daemon_->WaitListening(30);
  }
  ~Coordinator() { Stop(); }

  const std::string& address() const { return address_; }
  std::string log() const { return fs::exists(log_) ? ReadFile(log_) : ""; }
  int Stop() {
    if (daemon_ == nullptr) return 0;
    daemon_->Signal(SIGTERM);
    int rc = daemon_->Wait(30);
    daemon_.reset();
    return rc;
  }
  // Waits for a coordinator that did not start; its exit code.
  int WaitExit() { return daemon_->Wait(30); }

  // kseek with this coordinator and its admin token, nothing inherited.
  ProcessResult Kseek(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = KseekArgv();
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  }
  // kseek run in the state folder's parent (HOME too), sending the token
  // of `token_file` in the state folder.
  std::vector<std::string> KseekArgv(const std::string& token_file = "admin.token") const {
    std::string token = ReadFile(state_dir_ + "/" + token_file);
    while (!token.empty() && token.back() == '\n') token.pop_back();
    std::string home = fs::path(state_dir_).parent_path().string();
    return {"/usr/bin/env", "-u", "KSEEK_TLS_CA", "-C", home, "HOME=" + home,
            "KSEEK_COORDINATOR=" + address_, "KSEEK_TOKEN=" + token, BinDir() + "/kseek"};
  }

 private:
  std::string state_dir_;
  std::string log_;
  std::unique_ptr<Daemon> daemon_;
  std::string address_;
};

// What a child has written to `log` so far ("" before it wrote anything).
std::string LogText(const std::string& log) { return fs::exists(log) ? ReadFile(log) : ""; }

std::vector<std::string> QuickEval(const std::vector<std::string>& extra) {
  std::string task = SourceDir() + "/kernels/softmax";
  std::vector<std::string> args = {"eval", "--task", task, "--target", "host",
                                   "--scenarios", "r1_c1_f32_host", "--no-timing"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(task + "/fast_host.cc");
  return args;
}

// Starts a coordinator once so that the state folder is in use, then stops it.
void UseStateDir(const std::string& state) {
  Coordinator first(state);
  ASSERT_FALSE(first.address().empty()) << first.log();
  ASSERT_EQ(first.Stop(), 0);
  ASSERT_TRUE(fs::exists(state + "/admin.token"));
}

TEST(DurabilityE2eTest, EmptyStoreInAUsedStateFolderIsRefusedWithTheWayBack) {
  const std::string state = TempDir("durable_empty") + "/state";
  UseStateDir(state);
  const std::string db = state + "/kernelseek.db";
  fs::resize_file(db, 0);
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
  Coordinator second(state);
  EXPECT_TRUE(second.address().empty());
  EXPECT_EQ(second.WaitExit(), 1);
  std::string log = second.log();
  EXPECT_TRUE(absl::StrContains(log, db + " is empty (0 bytes), but " + state + "/admin.token"))
      << log;
  EXPECT_TRUE(absl::StrContains(log, "kseek admin backup")) << log;
  // Nothing was written over it.
  EXPECT_EQ(fs::file_size(db), 0u);
}

TEST(DurabilityE2eTest, DamagedStoreIsRefusedNamingTheFile) {
  const std::string state = TempDir("durable_damaged") + "/state";
  UseStateDir(state);
  const std::string db = state + "/kernelseek.db";
  {
    absl::StatusOr<std::unique_ptr<server::Store>> store = server::Store::Open(db);
    ASSERT_TRUE(store.ok()) << store.status();
    for (int i = 0; i < 200; ++i) {
      server::EvaluationRecord e;
      e.id = "ev_" + std::to_string(i);
      e.user = "admin";
      e.target = "host";
      e.task = "softmax";
      e.kernel_name = "k.cc";
      e.request = std::string(1000, 'r');
      e.created_ms = i;
      ASSERT_TRUE((*store)->InsertEvaluation(e).ok());
    }
  }
  // 8 KB of garbage in the middle of the file.
  long size = static_cast<long>(fs::file_size(db));
  ASSERT_GT(size, 64 << 10);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(size / 2);
    std::string junk(8192, '\0');
    for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>(i * 131 + 7);
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  Coordinator second(state);
  EXPECT_TRUE(second.address().empty());
  EXPECT_EQ(second.WaitExit(), 1);
  std::string log = second.log();
  EXPECT_TRUE(absl::StrContains(log, db + " is damaged")) << log;
  EXPECT_TRUE(absl::StrContains(log, "restore")) << log;
}

TEST(DurabilityE2eTest, BackupIsAConsistentCopyTheCoordinatorRestartsFrom) {
  const std::string dir = TempDir("durable_backup");
  const std::string state = dir + "/state";
  const std::string copy = dir + "/backup.db";
  {
    Coordinator c(state);
    ASSERT_FALSE(c.address().empty()) << c.log();
    ProcessResult add = c.Kseek({"admin", "user", "add", "bob"});
    ASSERT_EQ(add.exit_code, 0) << add.err;
    ProcessResult eval = c.Kseek(QuickEval({"--wait-limit", "1s"}));
    ASSERT_EQ(eval.exit_code, 2) << eval.err;  // no worker: cancelled, and kept as failed
    ProcessResult backup = c.Kseek({"admin", "backup", copy});
    ASSERT_EQ(backup.exit_code, 0) << backup.err;
    EXPECT_TRUE(absl::StrContains(backup.out, "wrote " + copy)) << backup.out;
    EXPECT_FALSE(fs::exists(copy + ".tmp"));
    // Made after the copy: gone after the restore.
    ASSERT_EQ(c.Kseek({"admin", "user", "add", "carol"}).exit_code, 0);
    ASSERT_EQ(c.Stop(), 0);
  }
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(state + "/kernelseek.db" + suffix);
  fs::copy_file(copy, state + "/kernelseek.db");
  Coordinator restored(state);
  ASSERT_FALSE(restored.address().empty()) << restored.log();
  ProcessResult users = restored.Kseek({"admin", "user", "list", "--json"});
  ASSERT_EQ(users.exit_code, 0) << users.err;
  std::vector<std::string> names;
  for (const auto& u : nlohmann::json::parse(users.out)) names.push_back(u.at("name"));
  EXPECT_NE(std::find(names.begin(), names.end(), "bob"), names.end()) << users.out;
  EXPECT_EQ(std::find(names.begin(), names.end(), "carol"), names.end()) << users.out;
  ProcessResult evals = restored.Kseek({"evals", "--json"});
  ASSERT_EQ(evals.exit_code, 0) << evals.err;
  nlohmann::json list = nlohmann::json::parse(evals.out);
  ASSERT_EQ(list.size(), 1u) << evals.out;
  EXPECT_EQ(list[0].at("state"), "failed");
}

TEST(DurabilityE2eTest, BackupNeedsAnAdminToken) {
  const std::string dir = TempDir("durable_backup_auth");
  Coordinator c(dir + "/state");
  ASSERT_FALSE(c.address().empty()) << c.log();
  std::vector<std::string> argv = c.KseekArgv("worker.token");
  argv.insert(argv.end(), {"admin", "backup", dir + "/copy.db"});
  ProcessResult r = RunProcess(argv);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "BackupStore")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/copy.db"));
}

TEST(DurabilityE2eTest, NearlyFullDiskRefusesNewWorkWithResourceExhausted) {
  SmallTmpfs disk(16 << 20);
  KSEEK_REQUIRE_TMPFS(disk);
  const std::string state = disk.path() + "/state";
  Coordinator c(state, {"--min-free-mb", "4"});
  ASSERT_FALSE(c.address().empty()) << c.log();
  // Leaves about 2 MB: under the 4 MB kept for accepted work.
  long leave = 2 << 20;
  long fill = static_cast<long>(fs::space(disk.path()).available) - leave;
  ASSERT_GT(fill, 0);
  ProcessResult filled = RunProcess({"/usr/bin/fallocate", "-l", std::to_string(fill), disk.path() + "/filler"});
  ASSERT_EQ(filled.exit_code, 0) << filled.err;
  ProcessResult refused = c.Kseek(QuickEval({"--json"}));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(refused.err, "resource exhausted")) << refused.err;
  EXPECT_TRUE(absl::StrContains(refused.err, "new work is refused until space is freed")) << refused.err;
  EXPECT_FALSE(absl::StrContains(refused.err, "error 8")) << refused.err;
  ProcessResult evals = c.Kseek({"evals", "--json"});
  ASSERT_EQ(evals.exit_code, 0) << evals.err;
  EXPECT_EQ(nlohmann::json::parse(evals.out).size(), 0u) << evals.out;  // nothing half-accepted

  fs::remove(disk.path() + "/filler");
  ProcessResult accepted = c.Kseek(QuickEval({"--wait-limit", "1s"}));
  EXPECT_TRUE(absl::StrContains(accepted.err, "no healthy worker")) << accepted.err;
}

TEST(DurabilityE2eTest, NearlyFullDiskRefusesANewSessionWithResourceExhausted) {
  SmallTmpfs disk(16 << 20);
  KSEEK_REQUIRE_TMPFS(disk);
  const std::string agents = TempDir("durable_session") + "/agents.json";
  WriteFile(agents, R"({"agents": {"idle": {"kind": "command", "start_template": "true"}}})");
  const std::string state = disk.path() + "/state";
  Coordinator c(state, {"--min-free-mb", "4", "--agents", agents});
  ASSERT_FALSE(c.address().empty()) << c.log();
  long fill = static_cast<long>(fs::space(disk.path()).available) - (2 << 20);
  ASSERT_GT(fill, 0);
  ProcessResult filled = RunProcess({"/usr/bin/fallocate", "-l", std::to_string(fill), disk.path() + "/filler"});
  ASSERT_EQ(filled.exit_code, 0) << filled.err;
  const std::string task = SourceDir() + "/kernels/softmax";
  const std::vector<std::string> start = {"session", "start", "--task", task, "--target", "host",
                                          "--agent", "idle", task + "/baseline_host.cc"};
  ProcessResult refused = c.Kseek(start);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(refused.err, "resource exhausted")) << refused.err;
  EXPECT_TRUE(absl::StrContains(refused.err, "new work is refused until space is freed")) << refused.err;
  // Nothing of it was stored or written: no session, no workspace.
  ProcessResult sessions = c.Kseek({"session", "ls", "--json"});
  ASSERT_EQ(sessions.exit_code, 0) << sessions.err;
  EXPECT_EQ(nlohmann::json::parse(sessions.out).size(), 0u) << sessions.out;
  std::error_code ec;
  for (fs::directory_iterator it(state + "/workspaces", ec), end; !ec && it != end; it.increment(ec)) {
    EXPECT_FALSE(absl::StartsWith(it->path().filename().string(), "ss_")) << it->path();
  }

  fs::remove(disk.path() + "/filler");
  ProcessResult accepted = c.Kseek(start);
  ASSERT_EQ(accepted.exit_code, 0) << accepted.err;
  std::string id = accepted.out.substr(0, accepted.out.find('\n'));
  EXPECT_EQ(c.Kseek({"session", "cancel", id}).exit_code, 0);
}

TEST(DurabilityE2eTest, NoWorkerOfTheTargetIsSaidAtOnceAndTheWaitEndsAtTheLimit) {
  const std::string dir = TempDir("durable_wait");
  Coordinator c(dir + "/state");
  ASSERT_FALSE(c.address().empty()) << c.log();
  absl::Time start = absl::Now();
  ProcessResult r = c.Kseek(QuickEval({"--json", "--wait-limit", "2s"}));
  absl::Duration took = absl::Now() - start;
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  // Said first, off a terminal.
  EXPECT_TRUE(absl::StartsWith(r.err, "kseek eval: no healthy worker of target host at coordinator " +
                                          c.address() + "; waiting up to 2s"))
      << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "for 2s (--wait-limit); cancelled ev_")) << r.err;
  EXPECT_GE(took, absl::Seconds(2));
  EXPECT_LT(took, absl::Seconds(20));
  ProcessResult evals = c.Kseek({"evals", "--json"});
  ASSERT_EQ(evals.exit_code, 0) << evals.err;
  nlohmann::json list = nlohmann::json::parse(evals.out);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].at("state"), "failed");
  EXPECT_EQ(list[0].at("error"), "cancelled by admin");
}

// The evaluation `kseek eval` (started as `eval`, logging to `log`) has
// submitted, once it says it waits; "" after 30 s.
std::string AwaitQueued(const Coordinator& c, const std::string& log) {
  for (int i = 0; i < 300; ++i) {
    if (absl::StrContains(LogText(log), "no healthy worker")) {
      ProcessResult evals = c.Kseek({"evals", "--json", "--state", "queued"});
      nlohmann::json list = nlohmann::json::parse(evals.out, nullptr, false);
      if (list.is_array() && list.size() == 1) return list[0].at("evaluation_id");
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return "";
}

TEST(DurabilityE2eTest, InterruptedEvalCancelsWhatItSubmitted) {
  const std::string dir = TempDir("durable_sigint");
  Coordinator c(dir + "/state");
  ASSERT_FALSE(c.address().empty()) << c.log();
  std::vector<std::string> argv = c.KseekArgv();
  for (const std::string& a : QuickEval({"--wait-limit", "0"})) argv.push_back(a);
  const std::string log = dir + "/eval.log";
  Daemon eval(argv, log);
  std::string id = AwaitQueued(c, log);
  ASSERT_FALSE(id.empty()) << LogText(log);
  EXPECT_TRUE(absl::StrContains(LogText(log), "waiting for one (--wait-limit 0: no limit)")) << LogText(log);
  eval.Signal(SIGINT);
  EXPECT_EQ(eval.Wait(30), 130);
  EXPECT_TRUE(absl::StrContains(LogText(log), "kseek eval: interrupted; cancelled " + id)) << LogText(log);
  ProcessResult show = c.Kseek({"show", "--json", id});
  nlohmann::json j = nlohmann::json::parse(show.out);
  EXPECT_EQ(j.at("state"), "failed");
  EXPECT_EQ(j.at("error"), "cancelled by admin");
}

TEST(DurabilityE2eTest, CancelCommandEndsAQueuedEvaluationAndItsWaitingClient) {
  const std::string dir = TempDir("durable_cancel");
  Coordinator c(dir + "/state");
  ASSERT_FALSE(c.address().empty()) << c.log();
  std::vector<std::string> argv = c.KseekArgv();
  for (const std::string& a : QuickEval({"--wait-limit", "0"})) argv.push_back(a);
  const std::string log = dir + "/eval.log";
  Daemon eval(argv, log);
  std::string id = AwaitQueued(c, log);
  ASSERT_FALSE(id.empty()) << LogText(log);

  ProcessResult cancel = c.Kseek({"cancel", id});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_EQ(cancel.out, "cancelled " + id + "\n");
  EXPECT_EQ(eval.Wait(30), 2);
  EXPECT_TRUE(absl::StrContains(LogText(log), "evaluation " + id + " failed: cancelled by admin")) << LogText(log);

  ProcessResult again = c.Kseek({"cancel", id});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(again.err, "has already finished (failed)")) << again.err;
  ProcessResult unknown = c.Kseek({"cancel", "ev_nosuch"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(unknown.err, "no evaluation ev_nosuch")) << unknown.err;
}

}  // namespace
}  // namespace kseek::testing
