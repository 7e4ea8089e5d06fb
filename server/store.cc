// The SQLite store of kernelseekd (see store.h).
#include "server/store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace kseek::server {

namespace {

// The status for SQLite result code `rc` with `message`: the disk being
// full and a damaged file get codes of their own.
absl::Status SqliteStatus(int rc, const std::string& message) {
  switch (rc & 0xff) {
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    default:
      return absl::InternalError(message);
  }
}

std::string Folder(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

std::string Mib(int64_t bytes) { return absl::StrFormat("%.1f MiB", bytes / 1048576.0); }

// The columns every read of the evaluations table starts with, in the order
// ReadEvaluationRow expects.
constexpr char kEvaluationColumns[] =
    "id, user, target, task, kernel_name, state, attempts, worker_id, created_ms, "
    "started_ms, finished_ms, error, scenarios_done, scenarios_total, session_id, session_by";
// The index of the first column after kEvaluationColumns.
constexpr int kEvaluationExtra = 16;

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

// Version 2: sessions.
constexpr char kSchemaV2[] = R"sql(
ALTER TABLE evaluations ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
ALTER TABLE evaluations ADD COLUMN session_by TEXT NOT NULL DEFAULT '';
ALTER TABLE evaluations ADD COLUMN session_logged INTEGER NOT NULL DEFAULT 0;
CREATE INDEX evaluations_by_session ON evaluations(session_id);
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  user TEXT NOT NULL,
  task TEXT NOT NULL,
  target TEXT NOT NULL,
  spec BLOB NOT NULL,
  goal_speedup REAL NOT NULL,
  workspace TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  verifying_evaluation_id TEXT NOT NULL DEFAULT '',
  agent_pgid INTEGER NOT NULL DEFAULT 0,
  events INTEGER NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  evaluations INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  has_best INTEGER NOT NULL DEFAULT 0,
  best_speedup REAL NOT NULL DEFAULT 0,
  best_evaluation_id TEXT NOT NULL DEFAULT '',
  agent_session_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_by_created ON sessions(created_ms);
CREATE TABLE session_events (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  idx INTEGER NOT NULL,
  time_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (session_id, idx)
);
CREATE INDEX session_events_by_kind ON session_events(kind);
CREATE TABLE session_tokens (
  hash TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  created_ms INTEGER NOT NULL
);
)sql";

constexpr char kSessionColumns[] =
    "id, user, task, target, spec, goal_speedup, workspace, state, reason, created_ms, "
    "updated_ms, verifying_evaluation_id, agent_pgid, events, turns, evaluations, cost_usd, "
    "has_best, best_speedup, best_evaluation_id, agent_session_id";

constexpr const char* kEndedStates[] = {kSessionSucceeded, kSessionFailed, kSessionCancelled,
                                        kSessionBudgetSpent};

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
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  Statement& BindNull() {
    sqlite3_bind_null(stmt_, ++bound_);
    return *this;
  }
  Statement& Bind(double v) {
    sqlite3_bind_double(stmt_, ++bound_, v);
    return *this;
  }
  int Changes() const { return sqlite3_changes(db_); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
  int bound_ = 0;
};

std::string RestoreAdvice(const std::string& path) {
  return absl::StrCat("stop kernelseekd and restore the store: copy a backup made by `kseek admin "
                      "backup FILE` to ", path, " (and delete ", path, "-wal and ", path,
                      "-shm), or move the state folder aside to start afresh");
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                                   StoreOptions options) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return absl::UnavailableError(absl::StrCat(path, ": cannot open database: ", msg));
  }
  std::unique_ptr<Store> store(new Store(path, db, options));
  {
    absl::MutexLock lock(&store->mu_);
    sqlite3_busy_timeout(db, 5000);
    absl::Status st = store->Exec("PRAGMA journal_mode=WAL");
    if (st.ok()) st = store->Exec("PRAGMA synchronous=FULL");
    if (st.ok()) st = store->Exec("PRAGMA foreign_keys=ON");
    if (st.ok()) st = store->Migrate();
    if (absl::IsDataLoss(st)) {
      return absl::DataLossError(absl::StrCat(path, " is damaged (", st.message(), "); ",
                                              RestoreAdvice(path)));
    }
    if (!st.ok()) return st;
  }
  {
    // Reads go through a connection of their own: in WAL mode they see
    // every committed write and never wait for one being synced.
    absl::MutexLock lock(&store->reader_mu_);
    int rc = sqlite3_open_v2(path.c_str(), &store->reader_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK) {
      return absl::UnavailableError(absl::StrCat(path, ": cannot open a reading connection: ",
                                                 store->reader_ != nullptr ? sqlite3_errmsg(store->reader_)
                                                                           : sqlite3_errstr(rc)));
    }
    sqlite3_busy_timeout(store->reader_, 5000);
  }
  absl::MutexLock lock(&store->reserve_mu_);
  store->EnsureReserveLocked();
  return store;
}

absl::Status Store::CheckIntegrity() {
  absl::MutexLock lock(&mu_);
  Statement q(db_, "PRAGMA quick_check");
  std::vector<std::string> problems;
  while (q.Step() == SQLITE_ROW) {
    std::string line = q.Text(0);
    if (line != "ok" && problems.size() < 3) problems.push_back(line);
  }
  if (q.Failed()) {
    absl::Status st = Error("quick_check");
    return absl::DataLossError(
        absl::StrCat(path_, " is damaged (", st.message(), "); ", RestoreAdvice(path_)));
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(path_, " is damaged (quick_check: ",
                                          absl::StrJoin(problems, "; "), "); ",
                                          RestoreAdvice(path_)));
}

absl::Status Store::Backup(const std::string& dest) {
  std::remove(dest.c_str());
  sqlite3* out = nullptr;
  int rc = sqlite3_open_v2(dest.c_str(), &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                           nullptr);
  auto fail = [&](const std::string& what) {
    std::string msg = out != nullptr ? sqlite3_errmsg(out) : sqlite3_errstr(rc);
    int code = out != nullptr ? sqlite3_errcode(out) : rc;
    sqlite3_close(out);
    std::remove(dest.c_str());
    return SqliteStatus(code, absl::StrCat("backup to ", dest, ": ", what, ": ", msg));
  };
  if (rc != SQLITE_OK) return fail("cannot open");
  sqlite3_backup* backup = nullptr;
  {
    absl::MutexLock lock(&mu_);
    backup = sqlite3_backup_init(out, "main", db_, "main");
  }
  if (backup == nullptr) return fail("cannot start");
  // A few hundred pages at a time, letting other calls in between; writes
  // made through this connection meanwhile reach the copy too.
  do {
    absl::MutexLock lock(&mu_);
    rc = sqlite3_backup_step(backup, 256);
  } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
  {
    absl::MutexLock lock(&mu_);
    sqlite3_backup_finish(backup);
  }
  if (rc != SQLITE_DONE) return fail("copying");
  std::string check;
  rc = sqlite3_exec(
      out, "PRAGMA quick_check",
      +[](void* result, int, char** values, char**) {
        *static_cast<std::string*>(result) += values[0] != nullptr ? values[0] : "";
        return 0;
      },
      &check, nullptr);
  if (rc != SQLITE_OK) return fail("checking the copy");
  if (check != "ok") {
    sqlite3_close(out);
    std::remove(dest.c_str());
    return absl::DataLossError(absl::StrCat("backup to ", dest, ": the copy fails quick_check: ",
                                            check));
  }
  if (sqlite3_close(out) != SQLITE_OK) {
    std::remove(dest.c_str());
    return absl::InternalError(absl::StrCat("backup to ", dest, ": closing failed"));
  }
  return absl::OkStatus();
}

void Store::EnsureReserveLocked() {
  if (reserve_present_ || options_.reserve_bytes <= 0) return;
  const std::string reserve = path_ + ".reserve";
  int fd = ::open(reserve.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  int err = ::posix_fallocate(fd, 0, options_.reserve_bytes);
  if (err == 0) err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  if (err != 0) {
    ::unlink(reserve.c_str());
    return;
  }
  reserve_present_ = true;
}

bool Store::ReleaseReserve() {
  absl::MutexLock lock(&reserve_mu_);
  if (!reserve_present_) return false;
  ::unlink((path_ + ".reserve").c_str());
  reserve_present_ = false;
  return true;
}

absl::Status Store::CheckRoomForNewWork() {
  const std::string folder = Folder(path_);
  struct statvfs fs;
  if (::statvfs(folder.c_str(), &fs) != 0) {
    return absl::InternalError(
        absl::StrCat(folder, ": cannot read the free space: ", std::strerror(errno)));
  }
  int64_t free_bytes = static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
  absl::MutexLock lock(&reserve_mu_);
  if (!reserve_present_ && free_bytes >= options_.min_free_bytes + options_.reserve_bytes) {
    EnsureReserveLocked();
    if (reserve_present_) free_bytes -= options_.reserve_bytes;
  }
  if (free_bytes < options_.min_free_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the coordinator's disk is nearly full: ", Mib(free_bytes), " free in ", folder,
        ", below the ", Mib(options_.min_free_bytes),
        " (--min-free-mb) kept for work already accepted; new work is refused until space is "
        "freed"));
  }
  if (!reserve_present_ && options_.reserve_bytes > 0) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the coordinator's disk filled up (", Mib(free_bytes), " free in ", folder,
        "); new work is refused until there is room for its ", Mib(options_.reserve_bytes),
        " reserve again"));
  }
  return absl::OkStatus();
}

Store::~Store() {
  {
    absl::MutexLock lock(&reader_mu_);
    sqlite3_close(reader_);
  }
  absl::MutexLock lock(&mu_);
  sqlite3_close(db_);
}

absl::Status Store::ReadError(const std::string& what) {
  return SqliteStatus(sqlite3_extended_errcode(reader_),
                      absl::StrCat(path_, ": ", what, ": ", sqlite3_errmsg(reader_)));
}

absl::Status Store::Error(const std::string& what) {
  return SqliteStatus(sqlite3_extended_errcode(db_),
                      absl::StrCat(path_, ": ", what, ": ", sqlite3_errmsg(db_)));
}

absl::Status Store::Exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return SqliteStatus(rc, absl::StrCat(path_, ": ", sql, ": ", msg));
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
  if (version < 1) st = Exec(kSchema);
  if (st.ok() && version < 2) st = Exec(kSchemaV2);
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
  absl::MutexLock lock(&reader_mu_);
  Statement q(reader_, absl::StrCat(kUserSelect, " WHERE u.name = ?").c_str());
  q.Bind(name);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError(absl::StrCat("no user named ", name));
  if (rc != SQLITE_ROW) return ReadError("reading user " + name);
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
  absl::MutexLock lock(&reader_mu_);
  Statement q(reader_,
              "SELECT u.name, u.role, u.created_ms FROM tokens t JOIN users u ON t.user = u.name "
              "WHERE t.hash = ? AND t.revoked = 0 AND u.revoked = 0");
  q.Bind(token_hash);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError("unknown or revoked token");
  if (rc != SQLITE_ROW) return ReadError("looking up a token");
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
              "attempts, worker_id, created_ms, scenarios_total, session_id, session_by) "
              "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  q.Bind(e.id).Bind(e.user).Bind(e.target).Bind(e.task).Bind(e.kernel_name).BindBlob(e.request)
      .Bind(e.state).Bind(int64_t{e.attempts}).Bind(e.worker_id).Bind(e.created_ms)
      .Bind(int64_t{e.scenarios_total}).Bind(e.session_id).Bind(e.session_by);
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
  e.session_id = q.Text(14);
  e.session_by = q.Text(15);
  return e;
}

}  // namespace

absl::StatusOr<EvaluationRecord> Store::GetEvaluation(const std::string& id) {
  absl::MutexLock lock(&reader_mu_);
  Statement q(reader_, absl::StrCat("SELECT ", kEvaluationColumns,
                                ", request, verdict FROM evaluations WHERE id = ?")
                       .c_str());
  q.Bind(id);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError(absl::StrCat("no evaluation ", id));
  if (rc != SQLITE_ROW) return ReadError("reading evaluation " + id);
  EvaluationRecord e = ReadEvaluationRow(q);
  e.request = q.Text(kEvaluationExtra);
  e.verdict = q.Text(kEvaluationExtra + 1);
  return e;
}

absl::StatusOr<std::vector<EvaluationRecord>> Store::ListEvaluations(const std::string& user,
                                                                     const std::string& state,
                                                                     int limit,
                                                                     bool with_verdict) {
  absl::MutexLock lock(&reader_mu_);
  std::string sql = absl::StrCat("SELECT ", kEvaluationColumns, ", verdict FROM evaluations ",
                                 "WHERE (? = '' OR user = ?) AND (? = '' OR state = ?) ",
                                 "ORDER BY created_ms DESC, id DESC LIMIT ?");
  Statement q(reader_, sql.c_str());
  q.Bind(user).Bind(user).Bind(state).Bind(state).Bind(int64_t{limit});
  std::vector<EvaluationRecord> out;
  while (q.Step() == SQLITE_ROW) {
    out.push_back(ReadEvaluationRow(q));
    if (with_verdict) out.back().verdict = q.Text(kEvaluationExtra);
  }
  if (q.Failed()) return ReadError("listing evaluations");
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
    out.back().request = q.Text(kEvaluationExtra);
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

// ---- sessions ----

bool IsSessionState(const std::string& state) {
  for (const char* s : kSessionStates) {
    if (state == s) return true;
  }
  return false;
}

bool IsSessionEventKind(const std::string& kind) {
  for (const char* k : kSessionEventKinds) {
    if (kind == k) return true;
  }
  return false;
}

bool SessionEnded(const std::string& state) {
  for (const char* s : kEndedStates) {
    if (state == s) return true;
  }
  return false;
}

namespace {

template <typename Stmt>
SessionRecord ReadSessionRow(const Stmt& q) {
  SessionRecord r;
  r.id = q.Text(0);
  r.user = q.Text(1);
  r.task = q.Text(2);
  r.target = q.Text(3);
  r.spec = q.Text(4);
  r.goal_speedup = q.Real(5);
  r.workspace = q.Text(6);
  r.state = q.Text(7);
  r.reason = q.Text(8);
  r.created_ms = q.Int(9);
  r.updated_ms = q.Int(10);
  r.verifying_evaluation_id = q.Text(11);
  r.agent_pgid = q.Int(12);
  r.events = q.Int(13);
  r.turns = static_cast<int>(q.Int(14));
  r.evaluations = static_cast<int>(q.Int(15));
  r.cost_usd = q.Real(16);
  r.has_best = q.Int(17) != 0;
  r.best_speedup = q.Real(18);
  r.best_evaluation_id = q.Text(19);
  r.agent_session_id = q.Text(20);
  return r;
}

std::string JsonString(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

double JsonNumber(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace

absl::Status Store::InsertSession(const SessionRecord& r, std::vector<nlohmann::json> first_events) {
  absl::MutexLock lock(&mu_);
  absl::Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  {
    Statement q(db_,
                "INSERT INTO sessions(id, user, task, target, spec, goal_speedup, workspace, state, "
                "reason, created_ms, updated_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    q.Bind(r.id).Bind(r.user).Bind(r.task).Bind(r.target).BindBlob(r.spec).Bind(r.goal_speedup)
        .Bind(r.workspace).Bind(r.state).Bind(r.reason).Bind(r.created_ms).Bind(r.created_ms);
    int rc = q.Step();
    if (rc == SQLITE_CONSTRAINT) {
      st = absl::AlreadyExistsError(absl::StrCat("session ", r.id, " already exists"));
    } else if (rc != SQLITE_DONE) {
      st = Error("storing session " + r.id);
    }
  }
  if (st.ok()) st = AppendEventsLocked(r.id, std::move(first_events), {}).status();
  if (st.ok()) return Exec("COMMIT");
  Exec("ROLLBACK").IgnoreError();
  return st;
}

absl::StatusOr<SessionRecord> Store::GetSession(const std::string& id) {
  absl::MutexLock lock(&reader_mu_);
  Statement q(reader_, absl::StrCat("SELECT ", kSessionColumns, " FROM sessions WHERE id = ?").c_str());
  q.Bind(id);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError(absl::StrCat("no session ", id));
  if (rc != SQLITE_ROW) return ReadError("reading session " + id);
  return ReadSessionRow(q);
}

absl::StatusOr<std::vector<SessionRecord>> Store::ListSessions(const std::string& user,
                                                               const std::string& state,
                                                               int limit) {
  absl::MutexLock lock(&reader_mu_);
  Statement q(reader_, absl::StrCat("SELECT ", kSessionColumns,
                                " FROM sessions WHERE (? = '' OR user = ?) AND (? = '' OR state = ?) "
                                "ORDER BY created_ms DESC, id DESC LIMIT ?")
                       .c_str());
  q.Bind(user).Bind(user).Bind(state).Bind(state).Bind(int64_t{limit});
  std::vector<SessionRecord> out;
  while (q.Step() == SQLITE_ROW) out.push_back(ReadSessionRow(q));
  if (q.Failed()) return ReadError("listing sessions");
  return out;
}

absl::StatusOr<std::vector<SessionRecord>> Store::ActiveSessions() {
  absl::MutexLock lock(&mu_);
  Statement q(db_, absl::StrCat("SELECT ", kSessionColumns,
                                " FROM sessions WHERE state IN ('created', 'running', 'verifying') "
                                "ORDER BY created_ms, id")
                       .c_str());
  std::vector<SessionRecord> out;
  while (q.Step() == SQLITE_ROW) out.push_back(ReadSessionRow(q));
  if (q.Failed()) return Error("listing active sessions");
  return out;
}

absl::StatusOr<std::vector<StoredEvent>> Store::AppendEventsLocked(
    const std::string& session_id, std::vector<nlohmann::json> events,
    const SessionChange& change) {
  Statement cur(db_, "SELECT events, state FROM sessions WHERE id = ?");
  cur.Bind(session_id);
  int rc = cur.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError(absl::StrCat("no session ", session_id));
  if (rc != SQLITE_ROW) return Error("reading session " + session_id);
  int64_t next = cur.Int(0);
  if (change.state && !IsSessionState(*change.state)) {
    return absl::InternalError(absl::StrCat("session ", session_id, ": \"", *change.state,
                                            "\" is not a session state"));
  }
  if ((change.state || change.unless_ended) && SessionEnded(cur.Text(1))) {
    return absl::FailedPreconditionError(
        absl::StrCat("session ", session_id, " has ended (", cur.Text(1), ")"));
  }

  std::vector<StoredEvent> out;
  int turns = 0, evaluations = 0;
  double cost = 0;
  std::optional<std::pair<double, std::string>> best;
  std::optional<std::string> agent_session;
  int64_t now_ms = 0;
  for (nlohmann::json& e : events) {
    StoredEvent stored;
    stored.session_id = session_id;
    stored.index = next++;
    stored.kind = JsonString(e, "kind");
    if (!IsSessionEventKind(stored.kind)) {
      return absl::InternalError(absl::StrCat("session ", session_id, ": event kind \"",
                                              stored.kind, "\" is not a trace event kind"));
    }
    stored.time_ms = static_cast<int64_t>(JsonNumber(e, "time_ms"));
    now_ms = std::max(now_ms, stored.time_ms);
    e["session_id"] = session_id;
    e["index"] = stored.index;
    stored.json = e.dump();
    if (stored.kind == "turn_start") ++turns;
    if (stored.kind == "evaluation") ++evaluations;
    if (stored.kind == "cost") cost += JsonNumber(e, "usd");
    if (stored.kind == "best") {
      best = std::make_pair(JsonNumber(e, "geomean_speedup"), JsonString(e, "evaluation_id"));
    }
    if (stored.kind == "agent_session") agent_session = JsonString(e, "agent_session_id");
    Statement ins(db_,
                  "INSERT INTO session_events(session_id, idx, time_ms, kind, body) "
                  "VALUES(?, ?, ?, ?, ?)");
    ins.Bind(session_id).Bind(stored.index).Bind(stored.time_ms).Bind(stored.kind)
        .Bind(stored.json);
    if (ins.Step() != SQLITE_DONE) return Error("appending an event to " + session_id);
    out.push_back(std::move(stored));
  }
  Statement up(db_,
               "UPDATE sessions SET events = ?, turns = turns + ?, evaluations = evaluations + ?, "
               "cost_usd = cost_usd + ?, "
               "has_best = CASE WHEN ? THEN 1 ELSE has_best END, "
               "best_speedup = CASE WHEN ? THEN ? ELSE best_speedup END, "
               "best_evaluation_id = CASE WHEN ? THEN ? ELSE best_evaluation_id END, "
               "agent_session_id = CASE WHEN ? THEN ? ELSE agent_session_id END, "
               "state = COALESCE(?, state), reason = COALESCE(?, reason), "
               "verifying_evaluation_id = COALESCE(?, verifying_evaluation_id), "
               "agent_pgid = COALESCE(?, agent_pgid), "
               "updated_ms = MAX(updated_ms, ?) WHERE id = ?");
  up.Bind(next).Bind(int64_t{turns}).Bind(int64_t{evaluations}).Bind(cost);
  up.Bind(int64_t{best.has_value()});
  up.Bind(int64_t{best.has_value()}).Bind(best ? best->first : 0.0);
  up.Bind(int64_t{best.has_value()}).Bind(best ? best->second : std::string());
  up.Bind(int64_t{agent_session.has_value()}).Bind(agent_session.value_or(""));
  // NULL (an unbound parameter) keeps the column.
  auto bind_opt = [&up](const std::optional<std::string>& v) {
    if (v) {
      up.Bind(*v);
    } else {
      up.BindNull();
    }
  };
  bind_opt(change.state);
  bind_opt(change.reason);
  bind_opt(change.verifying_evaluation_id);
  if (change.agent_pgid) {
    up.Bind(*change.agent_pgid);
  } else {
    up.BindNull();
  }
  up.Bind(now_ms).Bind(session_id);
  if (up.Step() != SQLITE_DONE) return Error("updating session " + session_id);
  return out;
}

absl::StatusOr<std::vector<StoredEvent>> Store::AppendSessionEvents(
    const std::string& session_id, std::vector<nlohmann::json> events, const SessionChange& change,
    const std::string& logged_evaluation) {
  absl::MutexLock lock(&mu_);
  absl::Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  absl::StatusOr<std::vector<StoredEvent>> out =
      AppendEventsLocked(session_id, std::move(events), change);
  if (out.ok() && !logged_evaluation.empty()) {
    Statement q(db_, "UPDATE evaluations SET session_logged = 1 WHERE id = ?");
    q.Bind(logged_evaluation);
    if (q.Step() != SQLITE_DONE) out = Error("marking evaluation " + logged_evaluation);
  }
  if (!out.ok()) {
    Exec("ROLLBACK").IgnoreError();
    return out.status();
  }
  st = Exec("COMMIT");
  if (!st.ok()) return st;
  return out;
}

absl::StatusOr<std::vector<StoredEvent>> Store::ReadSessionEvents(const std::string& session_id,
                                                                  int64_t from, int limit) {
  absl::MutexLock lock(&reader_mu_);
  Statement q(reader_,
              "SELECT idx, time_ms, kind, body FROM session_events WHERE session_id = ? AND "
              "idx >= ? ORDER BY idx LIMIT ?");
  q.Bind(session_id).Bind(from).Bind(int64_t{limit});
  std::vector<StoredEvent> out;
  while (q.Step() == SQLITE_ROW) {
    out.push_back({session_id, q.Int(0), q.Int(1), q.Text(2), q.Text(3)});
  }
  if (q.Failed()) return ReadError("reading the events of " + session_id);
  return out;
}

absl::StatusOr<std::vector<StoredEvent>> Store::EventsOfKinds(
    const std::vector<std::string>& kinds) {
  absl::MutexLock lock(&mu_);
  std::string marks;
  for (size_t i = 0; i < kinds.size(); ++i) absl::StrAppend(&marks, i == 0 ? "?" : ", ?");
  Statement q(db_, absl::StrCat("SELECT session_id, idx, time_ms, kind, body FROM session_events "
                                "WHERE kind IN (",
                                marks, ") ORDER BY session_id, idx")
                       .c_str());
  for (const std::string& k : kinds) q.Bind(k);
  std::vector<StoredEvent> out;
  while (q.Step() == SQLITE_ROW) {
    out.push_back({q.Text(0), q.Int(1), q.Int(2), q.Text(3), q.Text(4)});
  }
  if (q.Failed()) return Error("reading session events");
  return out;
}

absl::StatusOr<std::vector<EvaluationRecord>> Store::UnloggedAgentEvaluations() {
  absl::MutexLock lock(&mu_);
  Statement q(db_, absl::StrCat("SELECT ", kEvaluationColumns,
                                ", verdict FROM evaluations WHERE session_id != '' AND "
                                "session_by = 'agent' AND session_logged = 0 AND "
                                "state IN ('done', 'failed') ORDER BY finished_ms, id")
                       .c_str());
  std::vector<EvaluationRecord> out;
  while (q.Step() == SQLITE_ROW) {
    out.push_back(ReadEvaluationRow(q));
    out.back().verdict = q.Text(kEvaluationExtra);
  }
  if (q.Failed()) return Error("listing the agents' evaluations");
  return out;
}

absl::Status Store::AddSessionToken(const std::string& token_hash, const std::string& session_id,
                                    int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  Statement q(db_, "INSERT INTO session_tokens(hash, session_id, created_ms) VALUES(?, ?, ?)");
  q.Bind(token_hash).Bind(session_id).Bind(now_ms);
  if (q.Step() != SQLITE_DONE) return Error("adding a token for session " + session_id);
  return absl::OkStatus();
}

absl::StatusOr<SessionRecord> Store::LookupSessionToken(const std::string& token_hash) {
  absl::MutexLock lock(&reader_mu_);
  std::string columns;
  for (absl::string_view c : absl::StrSplit(kSessionColumns, ", ")) {
    absl::StrAppend(&columns, columns.empty() ? "" : ", ", "s.", c);
  }
  Statement q(reader_, absl::StrCat("SELECT ", columns,
                                " FROM session_tokens t JOIN sessions s ON t.session_id = s.id "
                                "JOIN users u ON s.user = u.name WHERE t.hash = ? AND u.revoked = 0 "
                                "AND s.state IN ('created', 'running', 'verifying')")
                       .c_str());
  q.Bind(token_hash);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return absl::NotFoundError("unknown token, or its session has ended");
  if (rc != SQLITE_ROW) return ReadError("looking up a session token");
  return ReadSessionRow(q);
}

}  // namespace kseek::server
