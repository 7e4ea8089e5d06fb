// The coordinator's SQLite store: users, tokens, workers and evaluations
// round-trip through a real database file, survive closing and reopening,
// and evaluation state transitions apply at most once.
#include "store.h"

#include <sqlite3.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "test_util.h"

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

}  // namespace
}  // namespace kseek::server
