// The SQLite store of kernelseekd (see store.h).
#include "store.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace kseek::server {

namespace {

// The columns every read of the evaluations table starts with, in the order
// ReadEvaluationRow expects.
constexpr char kEvaluationColumns[] =
    "id, user, target, task, kernel_name, state, attempts, worker_id, created_ms, "
    "started_ms, finished_ms, error, scenarios_done, scenarios_total";

constexpr char kSchema[] = R"sql(
CREATE TABLE users (
  name TEXT PRIMARY KEY,
  role TEXT NOT NULL,
  revoked INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL
);
CREATE TABLE tokens (
  hash TEXT PRIMARY KEY,
  user TEXT NOT NULL REFERENCES users(name),
  created_ms INTEGER NOT NULL,
  revoked INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tokens_by_user ON tokens(user);
CREATE TABLE workers (
  id TEXT PRIMARY KEY,
  info BLOB NOT NULL,
  healthy INTEGER NOT NULL,
  last_heartbeat_ms INTEGER NOT NULL,
  registered_ms INTEGER NOT NULL
);
CREATE TABLE evaluations (
  id TEXT PRIMARY KEY,
  user TEXT NOT NULL,
  target TEXT NOT NULL,
  task TEXT NOT NULL,
  kernel_name TEXT NOT NULL,
  request BLOB NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  worker_id TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  started_ms INTEGER NOT NULL DEFAULT 0,
  finished_ms INTEGER NOT NULL DEFAULT 0,
  verdict BLOB,
  error TEXT NOT NULL DEFAULT '',
  scenarios_done INTEGER NOT NULL DEFAULT 0,
  scenarios_total INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX evaluations_by_created ON evaluations(created_ms);
CREATE INDEX evaluations_by_state ON evaluations(state);
)sql";

}  // namespace

// A prepared statement, finalized on destruction. Values bind in call
// order. A statement that failed to prepare fails its first Step().
class Store::Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }

  Statement& Bind(const std::string& text) {
    sqlite3_bind_text(stmt_, ++bound_, text.data(), static_cast<int>(text.size()),
                      SQLITE_TRANSIENT);
    return *this;
  }
  Statement& BindBlob(const std::string& bytes) {
    sqlite3_bind_blob(stmt_, ++bound_, bytes.data(), static_cast<int>(bytes.size()),
                      SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int64_t v) {
    sqlite3_bind_int64(stmt_, ++bound_, v);
    return *this;
  }

  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return rc_ = sqlite3_step(stmt_); }
  bool Failed() const { return rc_ != SQLITE_ROW && rc_ != SQLITE_DONE && rc_ != SQLITE_OK; }

  std::string Text(int col) const {
    const void* p = sqlite3_column_blob(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    return p == nullptr ? std::string() : std::string(static_cast<const char*>(p), n);
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  int Changes() const { return sqlite3_changes(db_); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
  int bound_ = 0;
};

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return absl::UnavailableError(absl::StrCat(path, ": cannot open database: ", msg));
  }
  std::unique_ptr<Store> store(new Store(path, db));
  absl::MutexLock lock(&store->mu_);
  sqlite3_busy_timeout(db, 5000);
  absl::Status st = store->Exec("PRAGMA journal_mode=WAL");
  if (st.ok()) st = store->Exec("PRAGMA synchronous=FULL");
  if (st.ok()) st = store->Exec("PRAGMA foreign_keys=ON");
  if (st.ok()) st = store->Migrate();
  if (!st.ok()) return st;
  return store;
}

Store::~Store() {
  absl::MutexLock lock(&mu_);
  sqlite3_close(db_);
}

absl::Status Store::Error(const std::string& what) {
  return absl::InternalError(absl::StrCat(path_, ": ", what, ": ", sqlite3_errmsg(db_)));
}

absl::Status Store::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return absl::InternalError(absl::StrCat(path_, ": ", sql, ": ", msg));
  }
  return absl::OkStatus();
}

absl::Status Store::Migrate() {
  Statement q(db_, "PRAGMA user_version");
  if (q.Step() != SQLITE_ROW) return Error("reading user_version");
  int64_t version = q.Int(0);
  if (version == kSchemaVersion) return absl::OkStatus();
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": schema version ", version, " is newer than this kernelseekd (",
                     kSchemaVersion, ")"));
  }
  absl::Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  st = Exec(kSchema);
  if (st.ok()) st = Exec(absl::StrCat("PRAGMA user_version=", kSchemaVersion).c_str());
  if (st.ok()) return Exec("COMMIT");
  Exec("ROLLBACK").IgnoreError();
  return st;
}

// ---- users and tokens ----

absl::Status Store::AddUser(const std::string& name, const std::string& role,
                            const std::string& token_hash, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  absl::Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  {
    Statement ins(db_, "INSERT INTO users(name, role, created_ms) VALUES(?, ?, ?)");
    ins.Bind(name).Bind(role).Bind(now_ms);
    int rc = ins.Step();
    if (rc == SQLITE_CONSTRAINT) {
      Exec("ROLLBACK").IgnoreError();
      return absl::AlreadyExistsError(absl::StrCat("user ", name, " already exists"));
    }
    if (rc != SQLITE_DONE) st = Error("adding user " + name);
  }
  if (st.ok()) {
    Statement tok(db_, "INSERT INTO tokens(hash, user, created_ms) VALUES(?, ?, ?)");
    tok.Bind(token_hash).Bind(name).Bind(now_ms);
    if (tok.Step() != SQLITE_DONE) st = Error("adding a token for " + name);
  }
  if (st.ok()) return Exec("COMMIT");
  Exec("ROLLBACK").IgnoreError();
  return st;
}

namespace {
constexpr char kUserSelect[] =
    "SELECT u.name, u.role, u.revoked, u.created_ms, "
    "(SELECT COUNT(*) FROM tokens t WHERE t.user = u.name AND t.revoked = 0) FROM users u";
}  // namespace

absl::StatusOr<UserRecord> Store::GetUser(const std::string& name) {
  absl::MutexLock lock(&mu_);
  Statement q(db_, absl::StrCat(kUserSelect, " WHERE u.name = ?").c_str());
  q.Bind(name);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError(absl::StrCat("no user named ", name));
  if (rc != SQLITE_ROW) return Error("reading user " + name);
  return UserRecord{q.Text(0), q.Text(1), q.Int(2) != 0, q.Int(3), static_cast<int>(q.Int(4))};
}

absl::StatusOr<std::vector<UserRecord>> Store::ListUsers() {
  absl::MutexLock lock(&mu_);
  Statement q(db_, absl::StrCat(kUserSelect, " ORDER BY u.created_ms, u.name").c_str());
  std::vector<UserRecord> out;
  while (q.Step() == SQLITE_ROW) {
    out.push_back({q.Text(0), q.Text(1), q.Int(2) != 0, q.Int(3), static_cast<int>(q.Int(4))});
  }
  if (q.Failed()) return Error("listing users");
  return out;
}

absl::StatusOr<int> Store::RevokeUser(const std::string& name) {
  absl::MutexLock lock(&mu_);
  absl::Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  int tokens = 0;
  {
    Statement u(db_, "UPDATE users SET revoked = 1 WHERE name = ?");
    u.Bind(name);
    if (u.Step() != SQLITE_DONE) {
      st = Error("revoking user " + name);
    } else if (u.Changes() == 0) {
      st = absl::NotFoundError(absl::StrCat("no user named ", name));
    }
  }
  if (st.ok()) {
    Statement t(db_, "UPDATE tokens SET revoked = 1 WHERE user = ? AND revoked = 0");
    t.Bind(name);
    if (t.Step() != SQLITE_DONE) st = Error("revoking the tokens of " + name);
    tokens = t.Changes();
  }
  if (!st.ok()) {
    Exec("ROLLBACK").IgnoreError();
    return st;
  }
  st = Exec("COMMIT");
  if (!st.ok()) return st;
  return tokens;
}

absl::Status Store::AddToken(const std::string& user, const std::string& token_hash,
                             int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  Statement q(db_, "SELECT revoked FROM users WHERE name = ?");
  q.Bind(user);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError(absl::StrCat("no user named ", user));
  if (rc != SQLITE_ROW) return Error("reading user " + user);
  if (q.Int(0) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("user ", user, " is revoked"));
  }
  Statement ins(db_, "INSERT INTO tokens(hash, user, created_ms) VALUES(?, ?, ?)");
  ins.Bind(token_hash).Bind(user).Bind(now_ms);
  if (ins.Step() != SQLITE_DONE) return Error("adding a token for " + user);
  return absl::OkStatus();
}

absl::StatusOr<UserRecord> Store::LookupToken(const std::string& token_hash) {
  absl::MutexLock lock(&mu_);
  Statement q(db_,
              "SELECT u.name, u.role, u.created_ms FROM tokens t JOIN users u ON t.user = u.name "
              "WHERE t.hash = ? AND t.revoked = 0 AND u.revoked = 0");
  q.Bind(token_hash);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError("unknown or revoked token");
  if (rc != SQLITE_ROW) return Error("looking up a token");
  UserRecord user;
  user.name = q.Text(0);
  user.role = q.Text(1);
  user.created_ms = q.Int(2);
  return user;
}

// ---- workers ----

absl::Status Store::PutWorker(const WorkerRecord& w) {
  absl::MutexLock lock(&mu_);
  Statement q(db_,
              "INSERT OR REPLACE INTO workers(id, info, healthy, last_heartbeat_ms, registered_ms) "
              "VALUES(?, ?, ?, ?, ?)");
  q.Bind(w.id).BindBlob(w.info).Bind(int64_t{w.healthy}).Bind(w.last_heartbeat_ms)
      .Bind(w.registered_ms);
  if (q.Step() != SQLITE_DONE) return Error("storing worker " + w.id);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<WorkerRecord>> Store::ListWorkers() {
  absl::MutexLock lock(&mu_);
  Statement q(db_,
              "SELECT id, info, healthy, last_heartbeat_ms, registered_ms FROM workers "
              "ORDER BY registered_ms, id");
  std::vector<WorkerRecord> out;
  while (q.Step() == SQLITE_ROW) {
    out.push_back({q.Text(0), q.Text(1), q.Int(2) != 0, q.Int(3), q.Int(4)});
  }
  if (q.Failed()) return Error("listing workers");
  return out;
}

absl::Status Store::SetWorkerHealth(const std::string& id, bool healthy,
                                    int64_t last_heartbeat_ms) {
  absl::MutexLock lock(&mu_);
  Statement q(db_, "UPDATE workers SET healthy = ?, last_heartbeat_ms = ? WHERE id = ?");
  q.Bind(int64_t{healthy}).Bind(last_heartbeat_ms).Bind(id);
  if (q.Step() != SQLITE_DONE) return Error("updating worker " + id);
  return absl::OkStatus();
}

absl::Status Store::MarkAllWorkersUnhealthy() {
  absl::MutexLock lock(&mu_);
  return Exec("UPDATE workers SET healthy = 0");
}

// ---- evaluations ----

absl::Status Store::InsertEvaluation(const EvaluationRecord& e) {
  absl::MutexLock lock(&mu_);
  Statement q(db_,
              "INSERT INTO evaluations(id, user, target, task, kernel_name, request, state, "
              "attempts, worker_id, created_ms, scenarios_total) "
              "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  q.Bind(e.id).Bind(e.user).Bind(e.target).Bind(e.task).Bind(e.kernel_name).BindBlob(e.request)
      .Bind(e.state).Bind(int64_t{e.attempts}).Bind(e.worker_id).Bind(e.created_ms)
      .Bind(int64_t{e.scenarios_total});
  int rc = q.Step();
  if (rc == SQLITE_CONSTRAINT) {
    return absl::AlreadyExistsError(absl::StrCat("evaluation ", e.id, " already exists"));
  }
  if (rc != SQLITE_DONE) return Error("storing evaluation " + e.id);
  return absl::OkStatus();
}

namespace {

// Reads the kEvaluationColumns of the current row; callers read any extra
// columns (request, verdict) after them.
template <typename Stmt>
EvaluationRecord ReadEvaluationRow(const Stmt& q) {
  EvaluationRecord e;
  e.id = q.Text(0);
  e.user = q.Text(1);
  e.target = q.Text(2);
  e.task = q.Text(3);
  e.kernel_name = q.Text(4);
  e.state = q.Text(5);
  e.attempts = static_cast<int>(q.Int(6));
  e.worker_id = q.Text(7);
  e.created_ms = q.Int(8);
  e.started_ms = q.Int(9);
  e.finished_ms = q.Int(10);
  e.error = q.Text(11);
  e.scenarios_done = static_cast<int>(q.Int(12));
  e.scenarios_total = static_cast<int>(q.Int(13));
  return e;
}

}  // namespace

absl::StatusOr<EvaluationRecord> Store::GetEvaluation(const std::string& id) {
  absl::MutexLock lock(&mu_);
  Statement q(db_, absl::StrCat("SELECT ", kEvaluationColumns,
                                ", request, verdict FROM evaluations WHERE id = ?")
                       .c_str());
  q.Bind(id);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError(absl::StrCat("no evaluation ", id));
  if (rc != SQLITE_ROW) return Error("reading evaluation " + id);
  EvaluationRecord e = ReadEvaluationRow(q);
  e.request = q.Text(14);
  e.verdict = q.Text(15);
  return e;
}

absl::StatusOr<std::vector<EvaluationRecord>> Store::ListEvaluations(const std::string& user,
                                                                     const std::string& state,
                                                                     int limit,
                                                                     bool with_verdict) {
  absl::MutexLock lock(&mu_);
  std::string sql = absl::StrCat("SELECT ", kEvaluationColumns, ", verdict FROM evaluations ",
                                 "WHERE (? = '' OR user = ?) AND (? = '' OR state = ?) ",
                                 "ORDER BY created_ms DESC, id DESC LIMIT ?");
  Statement q(db_, sql.c_str());
  q.Bind(user).Bind(user).Bind(state).Bind(state).Bind(int64_t{limit});
  std::vector<EvaluationRecord> out;
  while (q.Step() == SQLITE_ROW) {
    out.push_back(ReadEvaluationRow(q));
    if (with_verdict) out.back().verdict = q.Text(14);
  }
  if (q.Failed()) return Error("listing evaluations");
  return out;
}

absl::StatusOr<std::vector<EvaluationRecord>> Store::PendingEvaluations() {
  absl::MutexLock lock(&mu_);
  Statement q(db_, absl::StrCat("SELECT ", kEvaluationColumns,
                                ", request FROM evaluations WHERE state IN ('queued', 'running') "
                                "ORDER BY created_ms, id")
                       .c_str());
  std::vector<EvaluationRecord> out;
  while (q.Step() == SQLITE_ROW) {
    out.push_back(ReadEvaluationRow(q));
    out.back().request = q.Text(14);
  }
  if (q.Failed()) return Error("listing pending evaluations");
  return out;
}

absl::StatusOr<bool> Store::MarkRunning(const std::string& id, const std::string& worker_id,
                                        int64_t now_ms, int* attempt) {
  absl::MutexLock lock(&mu_);
  Statement q(db_,
              "UPDATE evaluations SET state = 'running', attempts = attempts + 1, worker_id = ?, "
              "started_ms = ?, scenarios_done = 0 WHERE id = ? AND state = 'queued' "
              "RETURNING attempts");
  q.Bind(worker_id).Bind(now_ms).Bind(id);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return false;
  if (rc != SQLITE_ROW) return Error("starting evaluation " + id);
  *attempt = static_cast<int>(q.Int(0));
  q.Step();
  return true;
}

absl::StatusOr<bool> Store::SetProgress(const std::string& id, int attempt, int done,
                                        int total) {
  absl::MutexLock lock(&mu_);
  Statement q(db_,
              "UPDATE evaluations SET scenarios_done = ?, scenarios_total = ? "
              "WHERE id = ? AND state = 'running' AND attempts = ?");
  q.Bind(int64_t{done}).Bind(int64_t{total}).Bind(id).Bind(int64_t{attempt});
  if (q.Step() != SQLITE_DONE) return Error("recording progress of " + id);
  return q.Changes() > 0;
}

absl::StatusOr<bool> Store::Requeue(const std::string& id, bool refund_attempt) {
  absl::MutexLock lock(&mu_);
  Statement q(db_,
              "UPDATE evaluations SET state = 'queued', worker_id = '', scenarios_done = 0, "
              "attempts = MAX(attempts - ?, 0) WHERE id = ? AND state = 'running'");
  q.Bind(int64_t{refund_attempt}).Bind(id);
  if (q.Step() != SQLITE_DONE) return Error("re-queueing " + id);
  return q.Changes() > 0;
}

absl::StatusOr<bool> Store::FinishDone(const std::string& id, const std::string& verdict,
                                       int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  Statement q(db_,
              "UPDATE evaluations SET state = 'done', verdict = ?, finished_ms = ?, "
              "scenarios_done = scenarios_total WHERE id = ? AND state IN ('queued', 'running')");
  q.BindBlob(verdict).Bind(now_ms).Bind(id);
  if (q.Step() != SQLITE_DONE) return Error("finishing " + id);
  return q.Changes() > 0;
}

absl::StatusOr<bool> Store::FinishFailed(const std::string& id, const std::string& error,
                                         int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  Statement q(db_,
              "UPDATE evaluations SET state = 'failed', error = ?, finished_ms = ? "
              "WHERE id = ? AND state IN ('queued', 'running')");
  q.Bind(error).Bind(now_ms).Bind(id);
  if (q.Step() != SQLITE_DONE) return Error("failing " + id);
  return q.Changes() > 0;
}

}  // namespace kseek::server
