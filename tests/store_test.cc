// The coordinator's SQLite store: users, tokens, workers and evaluations
// round-trip through a real database file, survive closing and reopening,
// and evaluation state transitions apply at most once. On a small tmpfs:
// a full disk is RESOURCE_EXHAUSTED, new work is refused before the disk
// is full, and the reserve makes room to record a failure. Damaged files
// are DATA_LOSS naming the file; an online backup taken during writes is a
// sound, consistent copy.
#include "server/store.h"

#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek::server {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = kseek::testing::TempDir("store_test") + "/kernelseek.db";
    Reopen();
  }
  void Reopen() {
    store_.reset();
    absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
  }

  EvaluationRecord Eval(const std::string& id, const std::string& user, int64_t created) {
    EvaluationRecord e;
    e.id = id;
    e.user = user;
    e.target = "host";
    e.task = "softmax";
    e.kernel_name = "kernel.cc";
    e.request = std::string("\x0a\x00\x12\x04host", 8);  // bytes, NUL included
    e.created_ms = created;
    e.scenarios_total = 3;
    return e;
  }

  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, UsersAndTokensRoundTrip) {
  ASSERT_TRUE(store_->AddUser("alice", "user", "hash-a1", 100).ok());
  ASSERT_TRUE(store_->AddUser("root", "admin", "hash-r1", 200).ok());
  absl::Status dup = store_->AddUser("alice", "admin", "hash-a2", 300);
  EXPECT_TRUE(absl::IsAlreadyExists(dup)) << dup;

  absl::StatusOr<UserRecord> alice = store_->LookupToken("hash-a1");
  ASSERT_TRUE(alice.ok()) << alice.status();
  EXPECT_EQ(alice->name, "alice");
  EXPECT_EQ(alice->role, "user");
  EXPECT_TRUE(absl::IsNotFound(store_->LookupToken("hash-a2").status()));

  ASSERT_TRUE(store_->AddToken("alice", "hash-a3", 400).ok());
  EXPECT_TRUE(absl::IsNotFound(store_->AddToken("bob", "hash-b", 400)));
  absl::StatusOr<UserRecord> got = store_->GetUser("alice");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->tokens, 2);
  EXPECT_EQ(got->created_ms, 100);

  absl::StatusOr<int> revoked = store_->RevokeUser("alice");
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  EXPECT_EQ(*revoked, 2);
  EXPECT_TRUE(absl::IsNotFound(store_->LookupToken("hash-a1").status()));
  EXPECT_TRUE(absl::IsNotFound(store_->LookupToken("hash-a3").status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->AddToken("alice", "hash-a4", 500)));
  EXPECT_TRUE(absl::IsNotFound(store_->RevokeUser("nobody").status()));
  EXPECT_TRUE(store_->LookupToken("hash-r1").ok());

  absl::StatusOr<std::vector<UserRecord>> users = store_->ListUsers();
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->size(), 2u);
  EXPECT_EQ((*users)[0].name, "alice");
  EXPECT_TRUE((*users)[0].revoked);
  EXPECT_EQ((*users)[0].tokens, 0);
  EXPECT_EQ((*users)[1].name, "root");
  EXPECT_FALSE((*users)[1].revoked);
}

TEST_F(StoreTest, EvaluationsRoundTripAndList) {
  ASSERT_TRUE(store_->InsertEvaluation(Eval("ev_1", "alice", 10)).ok());
  ASSERT_TRUE(store_->InsertEvaluation(Eval("ev_2", "bob", 20)).ok());
  ASSERT_TRUE(store_->InsertEvaluation(Eval("ev_3", "alice", 30)).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(store_->InsertEvaluation(Eval("ev_1", "alice", 40))));

  absl::StatusOr<EvaluationRecord> e = store_->GetEvaluation("ev_1");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->user, "alice");
  EXPECT_EQ(e->request, Eval("ev_1", "alice", 10).request);
  EXPECT_EQ(e->state, kStateQueued);
  EXPECT_EQ(e->scenarios_total, 3);
  EXPECT_TRUE(absl::IsNotFound(store_->GetEvaluation("ev_9").status()));

  absl::StatusOr<std::vector<EvaluationRecord>> mine = store_->ListEvaluations("alice", "", 10, false);
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->size(), 2u);
  EXPECT_EQ((*mine)[0].id, "ev_3");  // newest first
  EXPECT_EQ((*mine)[1].id, "ev_1");
  EXPECT_TRUE((*mine)[0].request.empty());
  absl::StatusOr<std::vector<EvaluationRecord>> all = store_->ListEvaluations("", "", 2, false);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);

  int attempt = 0;
  ASSERT_TRUE(store_->MarkRunning("ev_2", "wk_a", 50, &attempt).value());
  absl::StatusOr<std::vector<EvaluationRecord>> running =
      store_->ListEvaluations("", kStateRunning, 10, false);
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].id, "ev_2");
}

TEST_F(StoreTest, TransitionsApplyOnce) {
  ASSERT_TRUE(store_->InsertEvaluation(Eval("ev_1", "alice", 10)).ok());
  int attempt = 0;
  EXPECT_FALSE(store_->Requeue("ev_1").value());  // not running
  ASSERT_TRUE(store_->MarkRunning("ev_1", "wk_a", 20, &attempt).value());
  EXPECT_EQ(attempt, 1);
  EXPECT_FALSE(store_->MarkRunning("ev_1", "wk_b", 21, &attempt).value());  // already running
  EXPECT_TRUE(store_->SetProgress("ev_1", 1, 2, 3).value());
  EXPECT_FALSE(store_->SetProgress("ev_1", 7, 3, 3).value());  // a stale attempt

  ASSERT_TRUE(store_->Requeue("ev_1").value());
  EXPECT_FALSE(store_->Requeue("ev_1").value());
  // A worker that refused the job: the attempt is given back.
  ASSERT_TRUE(store_->MarkRunning("ev_1", "wk_busy", 25, &attempt).value());
  EXPECT_EQ(attempt, 2);
  ASSERT_TRUE(store_->Requeue("ev_1", /*refund_attempt=*/true).value());
  ASSERT_TRUE(store_->MarkRunning("ev_1", "wk_b", 30, &attempt).value());
  EXPECT_EQ(attempt, 2);

  EXPECT_TRUE(store_->FinishDone("ev_1", "verdict-1", 40).value());
  EXPECT_FALSE(store_->FinishDone("ev_1", "verdict-2", 50).value());
  EXPECT_FALSE(store_->FinishFailed("ev_1", "late failure", 60).value());
  EXPECT_FALSE(store_->Requeue("ev_1").value());
  EXPECT_FALSE(store_->MarkRunning("ev_1", "wk_c", 70, &attempt).value());

  absl::StatusOr<EvaluationRecord> e = store_->GetEvaluation("ev_1");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->state, kStateDone);
  EXPECT_EQ(e->verdict, "verdict-1");
  EXPECT_EQ(e->finished_ms, 40);
  EXPECT_EQ(e->attempts, 2);
  EXPECT_EQ(e->worker_id, "wk_b");
  EXPECT_EQ(e->scenarios_done, 3);
  EXPECT_TRUE(e->error.empty());

  ASSERT_TRUE(store_->InsertEvaluation(Eval("ev_2", "alice", 11)).ok());
  EXPECT_TRUE(store_->FinishFailed("ev_2", "no such thing", 80).value());
  EXPECT_FALSE(store_->FinishDone("ev_2", "verdict", 90).value());
  e = store_->GetEvaluation("ev_2");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->state, kStateFailed);
  EXPECT_EQ(e->error, "no such thing");
  EXPECT_TRUE(e->verdict.empty());
}

TEST_F(StoreTest, ReopenKeepsEverything) {
  ASSERT_TRUE(store_->AddUser("alice", "user", "hash-a", 1).ok());
  ASSERT_TRUE(store_->PutWorker({"wk_a", "info-bytes", true, 5, 4}).ok());
  ASSERT_TRUE(store_->InsertEvaluation(Eval("ev_q", "alice", 10)).ok());
  ASSERT_TRUE(store_->InsertEvaluation(Eval("ev_r", "alice", 20)).ok());
  ASSERT_TRUE(store_->InsertEvaluation(Eval("ev_d", "alice", 30)).ok());
  int attempt = 0;
  ASSERT_TRUE(store_->MarkRunning("ev_r", "wk_a", 21, &attempt).value());
  ASSERT_TRUE(store_->MarkRunning("ev_d", "wk_a", 31, &attempt).value());
  ASSERT_TRUE(store_->FinishDone("ev_d", "the verdict", 32).value());

  Reopen();

  EXPECT_TRUE(store_->LookupToken("hash-a").ok());
  absl::StatusOr<std::vector<WorkerRecord>> workers = store_->ListWorkers();
  ASSERT_TRUE(workers.ok());
  ASSERT_EQ(workers->size(), 1u);
  EXPECT_EQ((*workers)[0].info, "info-bytes");
  EXPECT_TRUE((*workers)[0].healthy);
  ASSERT_TRUE(store_->MarkAllWorkersUnhealthy().ok());
  EXPECT_FALSE(store_->ListWorkers().value()[0].healthy);

  absl::StatusOr<std::vector<EvaluationRecord>> pending = store_->PendingEvaluations();
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ((*pending)[0].id, "ev_q");
  EXPECT_EQ((*pending)[0].state, kStateQueued);
  EXPECT_EQ((*pending)[1].id, "ev_r");
  EXPECT_EQ((*pending)[1].state, kStateRunning);
  EXPECT_EQ((*pending)[1].request, Eval("", "", 0).request);
  absl::StatusOr<EvaluationRecord> done = store_->GetEvaluation("ev_d");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, kStateDone);
  EXPECT_EQ(done->verdict, "the verdict");
}

TEST_F(StoreTest, RefusesANewerSchema) {
  store_.reset();
  {
    absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path_);
    ASSERT_TRUE(s.ok());
  }
  // Bump the version behind the store's back, as a newer release would.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path_);
  EXPECT_TRUE(absl::IsFailedPrecondition(s.status())) << s.status();
  EXPECT_NE(s.status().message().find("newer"), std::string::npos);
}

EvaluationRecord SmallEval(const std::string& id, int64_t created, size_t request_bytes = 16) {
  EvaluationRecord e;
  e.id = id;
  e.user = "alice";
  e.target = "host";
  e.task = "softmax";
  e.kernel_name = "kernel.cc";
  e.request = std::string(request_bytes, 'r');
  e.created_ms = created;
  return e;
}

TEST(StoreDiskTest, FullDiskIsResourceExhaustedAndTheReserveMakesRoomForTheFailure) {
  kseek::testing::SmallTmpfs fs(4 << 20);
  KSEEK_REQUIRE_TMPFS(fs);
  const std::string path = fs.path() + "/kernelseek.db";
  StoreOptions options;
  options.min_free_bytes = 1 << 20;
  options.reserve_bytes = 512 << 10;
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path, options);
  ASSERT_TRUE(s.ok()) << s.status();
  Store& store = **s;
  EXPECT_TRUE(std::filesystem::exists(path + ".reserve"));
  ASSERT_TRUE(store.CheckRoomForNewWork().ok());
  ASSERT_TRUE(store.InsertEvaluation(SmallEval("ev_1", 1)).ok());
  int attempt = 0;
  ASSERT_TRUE(store.MarkRunning("ev_1", "wk", 2, &attempt).value());

  EXPECT_GT(fs.Fill("filler"), 0);
  absl::Status room = store.CheckRoomForNewWork();
  EXPECT_TRUE(absl::IsResourceExhausted(room)) << room;
  EXPECT_NE(room.message().find("new work is refused"), std::string::npos) << room;

  absl::StatusOr<bool> done = store.FinishDone("ev_1", std::string(2 << 20, 'v'), 3);
  EXPECT_TRUE(absl::IsResourceExhausted(done.status())) << done.status();
  EXPECT_NE(done.status().message().find(path), std::string::npos) << done.status();

  // Without the reserve's room the failure may not fit either; with it, it does.
  ASSERT_TRUE(store.ReleaseReserve());
  EXPECT_FALSE(store.ReleaseReserve());
  absl::StatusOr<bool> failed = store.FinishFailed("ev_1", "the verdict could not be stored", 4);
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_TRUE(*failed);
  absl::StatusOr<EvaluationRecord> r = store.GetEvaluation("ev_1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state, kStateFailed);
  EXPECT_EQ(r->error, "the verdict could not be stored");

  // Still refused while the disk is full; admitted again, with a fresh
  // reserve, once space is freed.
  EXPECT_TRUE(absl::IsResourceExhausted(store.CheckRoomForNewWork()));
  std::filesystem::remove(fs.path() + "/filler");
  EXPECT_TRUE(store.CheckRoomForNewWork().ok());
  EXPECT_TRUE(std::filesystem::exists(path + ".reserve"));
  EXPECT_TRUE(store.InsertEvaluation(SmallEval("ev_2", 5)).ok());
}

// A store of `n` evaluations at `path`, closed (its WAL folded in).
void WriteStore(const std::string& path, int n) {
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path);
  ASSERT_TRUE(s.ok()) << s.status();
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE((*s)->InsertEvaluation(SmallEval("ev_" + std::to_string(i), i, 1000)).ok());
  }
}

void Scribble(const std::string& path, long offset, size_t bytes) {
  std::mt19937 rng(17);
  std::string junk(bytes, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(offset);
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
}

TEST(StoreDamageTest, SoundFilePassesQuickCheck) {
  const std::string path = kseek::testing::TempDir("store_damage") + "/kernelseek.db";
  WriteStore(path, 200);
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->CheckIntegrity().ok());
}

TEST(StoreDamageTest, GarbageInTheMiddleIsDataLossNamingTheFileAndTheWayBack) {
  const std::string path = kseek::testing::TempDir("store_damage") + "/kernelseek.db";
  WriteStore(path, 200);
  long size = static_cast<long>(std::filesystem::file_size(path));
  ASSERT_GT(size, 64 << 10);
  Scribble(path, size / 2, 8192);
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path);
  absl::Status st = s.ok() ? (*s)->CheckIntegrity() : s.status();
  EXPECT_TRUE(absl::IsDataLoss(st)) << st;
  EXPECT_NE(st.message().find(path + " is damaged"), std::string::npos) << st;
  EXPECT_NE(st.message().find("kseek admin backup"), std::string::npos) << st;
}

TEST(StoreDamageTest, AFileThatIsNoDatabaseIsDataLoss) {
  const std::string path = kseek::testing::TempDir("store_damage") + "/kernelseek.db";
  kseek::testing::WriteFile(path, "");
  Scribble(path, 0, 8192);
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path);
  EXPECT_TRUE(absl::IsDataLoss(s.status())) << s.status();
  EXPECT_NE(s.status().message().find(path), std::string::npos) << s.status();
}

TEST(StoreBackupTest, OnlineBackupDuringWritesIsASoundConsistentCopy) {
  const std::string dir = kseek::testing::TempDir("store_backup");
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(dir + "/kernelseek.db");
  ASSERT_TRUE(s.ok()) << s.status();
  Store& store = **s;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(store.InsertEvaluation(SmallEval("ev_old" + std::to_string(i), i, 2000)).ok());
  }
  ASSERT_TRUE(store.FinishDone("ev_old7", "the verdict", 9).value());
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      if (store.InsertEvaluation(SmallEval("ev_new" + std::to_string(i), 100000 + i, 2000)).ok()) ++written;
    }
  });
  while (written < 5) std::this_thread::yield();
  absl::Status st = store.Backup(dir + "/copy.db");
  stop = true;
  writer.join();
  ASSERT_TRUE(st.ok()) << st;

  StoreOptions no_reserve;
  no_reserve.reserve_bytes = 0;
  absl::StatusOr<std::unique_ptr<Store>> copy = Store::Open(dir + "/copy.db", no_reserve);
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_TRUE((*copy)->CheckIntegrity().ok());
  absl::StatusOr<std::vector<EvaluationRecord>> all = (*copy)->ListEvaluations("", "", 100000, false);
  ASSERT_TRUE(all.ok()) << all.status();
  // Everything from before the backup began, and no more than was written
  // by its end.
  EXPECT_GE(all->size(), 2005u);
  EXPECT_LE(all->size(), 2000u + static_cast<size_t>(written.load()));
  absl::StatusOr<EvaluationRecord> kept = (*copy)->GetEvaluation("ev_old7");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->state, kStateDone);
  EXPECT_EQ(kept->verdict, "the verdict");
}

}  // namespace
}  // namespace kseek::server
