// The coordinator's durable state: one SQLite database (WAL journal,
// synchronous=FULL, so a committed write survives a crash of the process or
// the machine) holding users, hashed tokens, workers, evaluations, and
// sessions with their append-only traces and agent tokens.
//
// The schema is versioned with `PRAGMA user_version`; Open creates it in an
// empty file and refuses a file written by a newer schema. Every method is
// thread-safe (a writing connection and a reading one, each serialised by a
// mutex of its own, so that lookups never wait behind a commit's fsync) and
// reports failures
// as absl::Status whose message names the database file: RESOURCE_EXHAUSTED
// when the disk is full, DATA_LOSS when the file is damaged, INTERNAL
// otherwise.
//
// Room on disk: new work is admitted only while the file system holding the
// database has `min_free_bytes` free (CheckRoomForNewWork), and a reserve
// file (PATH.reserve) holds `reserve_bytes` that ReleaseReserve gives back
// when the disk has filled anyway, so that work already accepted can still
// be ended as failed with its reason.
#ifndef KERNELSEEK_SERVER_STORE_H_
#define KERNELSEEK_SERVER_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"

struct sqlite3;

namespace kseek::server {

// Evaluation states, as stored and as reported.
inline constexpr char kStateQueued[] = "queued";
inline constexpr char kStateRunning[] = "running";
inline constexpr char kStateDone[] = "done";
inline constexpr char kStateFailed[] = "failed";

struct StoreOptions {
  // CheckRoomForNewWork refuses below this much free space.
  int64_t min_free_bytes = int64_t{64} << 20;
  // The size of PATH.reserve (0: no reserve).
  int64_t reserve_bytes = int64_t{1} << 20;
};

// What to tell an operator whose store at `path` is lost or damaged.
std::string RestoreAdvice(const std::string& path);

struct UserRecord {
  std::string name;
  std::string role;  // admin, user or worker
  bool revoked = false;
  int64_t created_ms = 0;
  int tokens = 0;  // tokens not revoked
};

struct WorkerRecord {
  std::string id;
  std::string info;  // a serialized kernelseek.v1.WorkerInfo
  bool healthy = false;
  int64_t last_heartbeat_ms = 0;
  int64_t registered_ms = 0;
};

struct EvaluationRecord {
  std::string id;
  std::string user;
  std::string target;
  std::string task;
  std::string kernel_name;
  std::string request;  // a serialized kernelseek.v1.EvaluationRequest
  std::string state = kStateQueued;
  int attempts = 0;     // dispatches started so far
  std::string worker_id;
  int64_t created_ms = 0;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  std::string verdict;  // a serialized kernelseek.v1.Verdict, when done
  std::string error;    // when failed
  int scenarios_done = 0;
  int scenarios_total = 0;
  std::string session_id;  // the session it belongs to, if any
  std::string session_by;  // "agent" or "verification", with session_id
};

// Session states, as stored, reported and traced.
inline constexpr char kSessionCreated[] = "created";
inline constexpr char kSessionRunning[] = "running";
inline constexpr char kSessionVerifying[] = "verifying";
inline constexpr char kSessionSucceeded[] = "succeeded";
inline constexpr char kSessionFailed[] = "failed";
inline constexpr char kSessionCancelled[] = "cancelled";
inline constexpr char kSessionBudgetSpent[] = "budget_spent";
// Every session state, in the order of a session's life; Session.state in
// proto/kernelseek/v1/session.proto lists the same set, and nothing else is
// stored, reported or accepted as a filter.
inline constexpr const char* kSessionStates[] = {
    kSessionCreated, kSessionRunning,   kSessionVerifying,  kSessionSucceeded,
    kSessionFailed,  kSessionCancelled, kSessionBudgetSpent};
bool IsSessionState(const std::string& state);
// Whether a session in `state` has ended (succeeded, failed, cancelled,
// budget_spent).
bool SessionEnded(const std::string& state);

// Every kind of session trace event (server/README.md, "The session
// trace", gives each kind's fields); SessionEvent.kind in session.proto
// lists the same set. AppendSessionEvents refuses any other kind.
inline constexpr const char* kSessionEventKinds[] = {
    "state",          "turn_start",  "turn_end",     "agent_message",      "tool_call",
    "tool_result",    "agent_error", "cost",         "agent_session",      "evaluation_started",
    "scenario",       "evaluation",  "verification", "decision_point",     "question",
    "human_message",  "best"};
bool IsSessionEventKind(const std::string& kind);

struct SessionRecord {
  std::string id;
  std::string user;
  std::string task;
  std::string target;
  std::string spec;  // a serialized kernelseek.v1.CreateSessionRequest, defaults filled in
  double goal_speedup = 0;
  std::string workspace;
  std::string state = kSessionCreated;
  std::string reason;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  // The coordinator's verification in flight, if any (resumed after a restart).
  std::string verifying_evaluation_id;
  // The process group of the agent's running turn (0: none).
  int64_t agent_pgid = 0;
  // Kept current from the events as they are appended.
  int64_t events = 0;
  int turns = 0;
  int evaluations = 0;
  double cost_usd = 0;
  bool has_best = false;
  double best_speedup = 0;
  std::string best_evaluation_id;
  std::string agent_session_id;
};

// A change to a session's row, applied with the events it comes with.
struct SessionChange {
  std::optional<std::string> state;
  std::optional<std::string> reason;
  std::optional<std::string> verifying_evaluation_id;
  std::optional<int64_t> agent_pgid;
  // Append only while the session has not ended (FAILED_PRECONDITION once
  // it has), as a change of `state` always is: for events that must not
  // follow a final state (an evaluation's progress).
  bool unless_ended = false;
};

// One stored trace event.
struct StoredEvent {
  std::string session_id;
  int64_t index = 0;
  int64_t time_ms = 0;
  std::string kind;
  std::string json;  // the whole event
};

class Store {
 public:
  // The schema version this code writes.
  // Version 2 added sessions, session_events, session_tokens and the
  // session columns of evaluations; a version 1 file is upgraded in place.
  static constexpr int kSchemaVersion = 2;

  // Opens (creating when absent) the database at `path`. DATA_LOSS, with
  // RestoreAdvice, for a file that is not a database.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path,
                                                     StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }

  // SQLite's `PRAGMA quick_check`: DATA_LOSS naming the file, with what the
  // check found and RestoreAdvice, unless the file is sound.
  absl::Status CheckIntegrity();
  // A consistent copy of the database at `dest` (replaced if present), made
  // with SQLite's online backup while the store stays in use, and checked
  // with quick_check before this returns.
  absl::Status Backup(const std::string& dest);

  // OK while the database's file system has at least min_free_bytes free
  // and the reserve is in place (re-created here once there is room again);
  // RESOURCE_EXHAUSTED saying how much is free otherwise.
  absl::Status CheckRoomForNewWork();
  // Deletes the reserve file to make room on a full disk; false when it
  // was already gone (or there is none).
  bool ReleaseReserve();

  // Users and tokens. Tokens are only ever seen here as hashes.
  // Adds a user and its first token in one transaction; ALREADY_EXISTS when
  // the name is taken.
  absl::Status AddUser(const std::string& name, const std::string& role,
                       const std::string& token_hash, int64_t now_ms);
  absl::StatusOr<UserRecord> GetUser(const std::string& name);
  absl::StatusOr<std::vector<UserRecord>> ListUsers();
  // Marks the user and all its tokens revoked; returns how many tokens were
  // still live. NOT_FOUND for an unknown user.
  absl::StatusOr<int> RevokeUser(const std::string& name);
  // NOT_FOUND for an unknown user, FAILED_PRECONDITION for a revoked one.
  absl::Status AddToken(const std::string& user, const std::string& token_hash,
                        int64_t now_ms);
  // The live user owning a live token; NOT_FOUND otherwise.
  absl::StatusOr<UserRecord> LookupToken(const std::string& token_hash);

  // Workers: inserted or replaced by id.
  absl::Status PutWorker(const WorkerRecord& worker);
  absl::StatusOr<std::vector<WorkerRecord>> ListWorkers();
  absl::Status SetWorkerHealth(const std::string& id, bool healthy,
                               int64_t last_heartbeat_ms);
  // Marks every worker unhealthy (a fresh start knows none of them alive).
  absl::Status MarkAllWorkersUnhealthy();

  // Evaluations.
  // Inserts a new evaluation; committed (fsync'd) when this returns.
  absl::Status InsertEvaluation(const EvaluationRecord& eval);
  absl::StatusOr<EvaluationRecord> GetEvaluation(const std::string& id);
  // Newest first, without the request (and, when `with_verdict` is false,
  // without the verdict). Empty `user` or `state`: no filter.
  absl::StatusOr<std::vector<EvaluationRecord>> ListEvaluations(
      const std::string& user, const std::string& state, int limit, bool with_verdict);
  // Queued and running evaluations, oldest first, with their requests.
  absl::StatusOr<std::vector<EvaluationRecord>> PendingEvaluations();

  // State transitions. Each returns whether it changed anything: a
  // transition that does not apply to the current state (e.g. finishing an
  // evaluation already finished) is a no-op, so repeating one is harmless.
  // queued -> running on `worker_id`, attempts+1; `*attempt` gets the new
  // attempt number.
  absl::StatusOr<bool> MarkRunning(const std::string& id, const std::string& worker_id,
                                   int64_t now_ms, int* attempt);
  // Progress of the running attempt `attempt`.
  absl::StatusOr<bool> SetProgress(const std::string& id, int attempt, int done, int total);
  // running -> queued (the worker was lost, or the coordinator restarted).
  // `refund_attempt`: the attempt never ran (the worker refused it), so the
  // attempt count goes back down.
  absl::StatusOr<bool> Requeue(const std::string& id, bool refund_attempt = false);
  // queued|running -> done with `verdict`.
  absl::StatusOr<bool> FinishDone(const std::string& id, const std::string& verdict,
                                  int64_t now_ms);
  // queued|running -> failed with `error`.
  absl::StatusOr<bool> FinishFailed(const std::string& id, const std::string& error,
                                    int64_t now_ms);

  // Sessions. Events are JSON objects with "kind", "time_ms" and the kind's
  // fields; the store adds "session_id" and "index" (dense from 0 per
  // session), and keeps the counters of SessionRecord current from them.
  // Inserts a session with its first events in one transaction.
  absl::Status InsertSession(const SessionRecord& session,
                             std::vector<nlohmann::json> first_events);
  absl::StatusOr<SessionRecord> GetSession(const std::string& id);
  // Newest first; empty `user` or `state`: no filter.
  absl::StatusOr<std::vector<SessionRecord>> ListSessions(const std::string& user,
                                                          const std::string& state, int limit);
  // Sessions that have not ended, oldest first.
  absl::StatusOr<std::vector<SessionRecord>> ActiveSessions();
  // Appends `events` and applies `change` in one transaction (committed when
  // this returns); `logged_evaluation` (when not empty) is marked as entered
  // in its session's trace in the same transaction. Returns the stored
  // events. NOT_FOUND for an unknown session; FAILED_PRECONDITION (and
  // nothing written) when `change` sets a state and the session has ended:
  // an ended session never changes state again.
  absl::StatusOr<std::vector<StoredEvent>> AppendSessionEvents(
      const std::string& session_id, std::vector<nlohmann::json> events,
      const SessionChange& change = {}, const std::string& logged_evaluation = "");
  // Events with index >= `from`, at most `limit`, in order.
  absl::StatusOr<std::vector<StoredEvent>> ReadSessionEvents(const std::string& session_id,
                                                             int64_t from, int limit);
  // The events of every session whose kind is in `kinds`, by session then index.
  absl::StatusOr<std::vector<StoredEvent>> EventsOfKinds(const std::vector<std::string>& kinds);
  // Finished evaluations submitted by a session's agent and not yet entered
  // in its trace, oldest first, with their verdicts.
  absl::StatusOr<std::vector<EvaluationRecord>> UnloggedAgentEvaluations();

  // Agent tokens: each reaches one session, and only while it has not ended.
  absl::Status AddSessionToken(const std::string& token_hash, const std::string& session_id,
                               int64_t now_ms);
  // The session (not ended) of a live agent token; NOT_FOUND otherwise.
  absl::StatusOr<SessionRecord> LookupSessionToken(const std::string& token_hash);

 private:
  class Statement;

  Store(std::string path, sqlite3* db, StoreOptions options)
      : path_(std::move(path)), options_(options), db_(db) {}
  // Writes PATH.reserve when it is absent and there is room for it.
  void EnsureReserveLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(reserve_mu_);
  absl::Status Migrate() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Inside a transaction: stores `events` after the session's last one and
  // updates its counters (and `change`).
  absl::StatusOr<std::vector<StoredEvent>> AppendEventsLocked(
      const std::string& session_id, std::vector<nlohmann::json> events,
      const SessionChange& change) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Exec(const char* sql) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Error(const std::string& what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReadError(const std::string& what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(reader_mu_);

  const std::string path_;
  const StoreOptions options_;
  absl::Mutex reserve_mu_;
  bool reserve_present_ ABSL_GUARDED_BY(reserve_mu_) = false;
  absl::Mutex mu_;
  sqlite3* const db_ ABSL_GUARDED_BY(mu_);
  absl::Mutex reader_mu_;
  sqlite3* reader_ ABSL_GUARDED_BY(reader_mu_) = nullptr;
};

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_STORE_H_
