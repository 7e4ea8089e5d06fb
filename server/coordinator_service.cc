// The Coordinator and Admin services of kernelseekd (see
// coordinator_service.h).
#include "server/coordinator_service.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/time.h"
#include "harness/src/evaluate.h"
#include "proto/request.h"

namespace kseek::server {

namespace v1 = ::kernelseek::v1;

namespace {

constexpr int kDefaultListLimit = 50;
constexpr int kMaxListLimit = 1000;

v1::EvaluationEvent Event(const std::string& id) {
  v1::EvaluationEvent e;
  e.set_evaluation_id(id);
  return e;
}

// The terminal event of a finished evaluation, from the store.
absl::StatusOr<v1::EvaluationEvent> OutcomeEvent(const EvaluationRecord& r) {
  v1::EvaluationEvent e = Event(r.id);
  if (r.state == kStateDone) {
    if (!e.mutable_verdict()->ParseFromString(r.verdict)) {
      return absl::InternalError(absl::StrCat("evaluation ", r.id, ": stored verdict is corrupt"));
    }
  } else {
    e.mutable_failed()->set_error(r.error);
  }
  return e;
}

v1::Evaluation ToProto(const EvaluationRecord& r, int queue_position, bool full_verdict) {
  v1::Evaluation e;
  e.set_evaluation_id(r.id);
  e.set_user(r.user);
  e.set_target(r.target);
  e.set_task(r.task);
  e.set_kernel_name(r.kernel_name);
  e.set_state(r.state);
  e.set_queue_position(queue_position);
  e.set_worker_id(r.worker_id);
  e.set_attempts(r.attempts);
  e.set_created_ms(r.created_ms);
  e.set_started_ms(r.started_ms);
  e.set_finished_ms(r.finished_ms);
  e.set_error(r.error);
  e.set_scenarios_done(r.scenarios_done);
  e.set_scenarios_total(r.scenarios_total);
  if (!r.verdict.empty() && e.mutable_verdict()->ParseFromString(r.verdict) && !full_verdict) {
    // Listings keep the summary: no per-scenario results, no compiler log.
    e.mutable_verdict()->clear_scenarios();
    e.mutable_verdict()->mutable_compile()->clear_log();
  }
  return e;
}

// A stream of one evaluation's events to one client. It queues events
// handed to it by the EventHub and writes them one at a time; the terminal
// event finishes the call. A submission's stream exists while the request
// is being admitted (on an Admission thread); Admitted or Refused ends
// that, and the object outlives the call until it has.
class EventStream final : public QueuedWriter<v1::EvaluationEvent> {
 public:
  // A stream that fails at once with `status`.
  static EventStream* Rejected(const absl::Status& status) {
    auto* s = new EventStream(nullptr, nullptr, "");
    s->Finish(ToGrpc(status));
    return s;
  }

  // A stream that writes `first`, then follows evaluation `id`.
  static EventStream* Follow(EventHub* hub, Store* store, const std::string& id,
                             std::vector<v1::EvaluationEvent> first) {
    auto* s = new EventStream(hub, store, id);
    for (v1::EvaluationEvent& e : first) s->Push(std::move(e));
    s->Attach();
    return s;
  }

  // A stream waiting for its submission to be admitted.
  static EventStream* Admitting(EventHub* hub, Store* store) {
    auto* s = new EventStream(hub, store, "");
    absl::MutexLock lock(&s->mu_);  // not shared yet, but admitting_ is mu_'s
    s->admitting_ = true;
    return s;
  }

  // Whether the client has gone away (or the call ended) already.
  bool Abandoned() {
    absl::MutexLock lock(&mu_);
    return finished_;
  }
  // The submission was stored as `id`: Accepted, then its events.
  void Admitted(const std::string& id) {
    id_ = id;
    v1::EvaluationEvent accepted = Event(id);
    accepted.mutable_accepted();
    Push(std::move(accepted));
    Attach();
    EndAdmission();
  }
  // The submission was refused with `status`.
  void Refused(const absl::Status& status) {
    {
      absl::MutexLock lock(&mu_);
      if (!finished_) FinishLocked(ToGrpc(status));
    }
    EndAdmission();
  }

  void OnDone() override {
    {
      absl::MutexLock lock(&mu_);
      done_ = true;
      if (admitting_) return;  // EndAdmission finishes the job
    }
    QueuedWriter<v1::EvaluationEvent>::OnDone();
  }

 private:
  EventStream(EventHub* hub, Store* store, std::string id)
      : hub_(hub), store_(store), id_(std::move(id)) {}

  void EndAdmission() {
    {
      absl::MutexLock lock(&mu_);
      admitting_ = false;
      if (!done_) return;
    }
    QueuedWriter<v1::EvaluationEvent>::OnDone();  // deletes this
  }

  void AfterWriteLocked(const v1::EvaluationEvent& written) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (EventHub::IsTerminal(written)) {
      FinishLocked(grpc::Status::OK);
      return;
    }
    WriteNextLocked();
  }

  void Unsubscribe(uint64_t handle) override { hub_->Unsubscribe(id_, handle); }

  // Subscribes to the hub; when the evaluation has already finished (no
  // channel), writes its outcome from the store instead.
  void Attach() {
    uint64_t handle =
        hub_->Subscribe(id_, [this](const v1::EvaluationEvent& e) { Push(e); });
    if (handle != 0) {
      absl::MutexLock lock(&mu_);
      handle_ = handle;
      return;
    }
    absl::StatusOr<EvaluationRecord> r = store_->GetEvaluation(id_);
    absl::Status st = r.status();
    if (st.ok() && r->state != kStateDone && r->state != kStateFailed) {
      st = absl::UnavailableError(
          absl::StrCat("evaluation ", id_, " is ", r->state, " but not tracked; retry"));
    }
    absl::StatusOr<v1::EvaluationEvent> outcome =
        st.ok() ? OutcomeEvent(*r) : absl::StatusOr<v1::EvaluationEvent>(st);
    if (outcome.ok()) {
      Push(*std::move(outcome));
    } else {
      absl::MutexLock lock(&mu_);
      if (!finished_) FinishLocked(ToGrpc(outcome.status()));
    }
  }

  void Push(v1::EvaluationEvent event) {
    absl::MutexLock lock(&mu_);
    if (finished_ || terminal_queued_) return;
    terminal_queued_ = EventHub::IsTerminal(event);
    queue_.push_back(std::move(event));
    if (!writing_) WriteNextLocked();
  }

  EventHub* const hub_;
  Store* const store_;
  // Set before the stream subscribes, and only read after.
  std::string id_;
  bool terminal_queued_ ABSL_GUARDED_BY(mu_) = false;
  bool admitting_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;  // gRPC called OnDone
};

}  // namespace

// ---- Coordinator ----

absl::StatusOr<EvaluationRecord> CoordinatorService::Visible(const Caller& caller,
                                                             const std::string& id) {
  if (id.empty()) return absl::InvalidArgumentError("evaluation_id: empty");
  absl::StatusOr<EvaluationRecord> r = ctx_.store->GetEvaluation(id);
  if (!r.ok()) return r.status();
  if (caller.role == Role::kAgent) {
    if (r->session_id != caller.session_id) {
      return absl::PermissionDeniedError(
          absl::StrCat("evaluation ", id, " is not of this agent's session"));
    }
    return r;
  }
  if (caller.role != Role::kAdmin && r->user != caller.user) {
    return absl::PermissionDeniedError(
        absl::StrCat("evaluation ", id, " belongs to another user"));
  }
  return r;
}

absl::StatusOr<std::string> CoordinatorService::Admit(const Caller& caller,
                                                      v1::EvaluationRequest request) {
  if (!request.task_name().empty()) {
    if (ctx_.tasks == nullptr) return absl::InvalidArgumentError("task_name: this coordinator has no task catalog");
    absl::Status st = ctx_.tasks->Resolve(&request);
    if (!st.ok()) return st;
  }
  absl::StatusOr<std::unique_ptr<UnpackedRequest>> unpacked = UnpackedRequest::Create(request);
  if (!unpacked.ok()) return unpacked.status();
  EvaluationRecord r;
  r.id = absl::StrCat("ev_", RandomHex(6));
  r.user = caller.user;
  r.target = request.target();
  r.task = (*unpacked)->task().name;
  r.kernel_name = (*unpacked)->eval().kernel_name;
  // No scenario named means every scenario of the task for the target.
  const EvalRequest& eval = (*unpacked)->eval();
  r.scenarios_total = static_cast<int>(eval.scenarios.empty()
                                           ? ScenariosFor((*unpacked)->task(), eval.target).size()
                                           : eval.scenarios.size());
  r.created_ms = NowMs();
  if (caller.role == Role::kAgent) {
    // An agent's evaluation enters its session's trace when it finishes.
    r.session_id = caller.session_id;
    r.session_by = "agent";
  }
  request.SerializeToString(&r.request);
  unpacked->reset();
  absl::Status st = ctx_.dispatcher->Submit(r);
  if (!st.ok()) return st;
  return r.id;
}

grpc::ServerWriteReactor<v1::EvaluationEvent>* CoordinatorService::SubmitEvaluation(
    grpc::CallbackServerContext* context, const v1::EvaluationRequest* request) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin, Role::kAgent}, "SubmitEvaluation");
  if (!caller.ok()) return EventStream::Rejected(caller.status());
  // Checking and storing the request is slow work (files unpacked, an
  // fsync): it runs on an admission thread, and this one goes back to
  // serving calls. The request is copied, as gRPC owns it only as long as
  // the call.
  EventStream* stream = EventStream::Admitting(ctx_.hub, ctx_.store);
  bool queued = admission_.Run([this, stream, who = *caller, copy = *request]() mutable {
    if (stream->Abandoned()) {
      // The client went away before it could learn the id: nothing stored.
      stream->Refused(absl::CancelledError("the client went away"));
      return;
    }
    absl::StatusOr<std::string> id = Admit(who, std::move(copy));
    if (id.ok()) {
      stream->Admitted(*id);
    } else {
      stream->Refused(id.status());
    }
  });
  if (!queued) {
    stream->Refused(absl::ResourceExhaustedError(absl::StrCat(
        "the coordinator has ", kAdmissionQueue,
        " submissions waiting to be checked already; submit again in a moment")));
  }
  return stream;
}

grpc::ServerWriteReactor<v1::EvaluationEvent>* CoordinatorService::WatchEvaluation(
    grpc::CallbackServerContext* context, const v1::EvaluationRef* request) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin, Role::kAgent}, "WatchEvaluation");
  if (!caller.ok()) return EventStream::Rejected(caller.status());
  absl::StatusOr<EvaluationRecord> r = Visible(*caller, request->evaluation_id());
  if (!r.ok()) return EventStream::Rejected(r.status());
  return EventStream::Follow(ctx_.hub, ctx_.store, r->id, {});
}

grpc::ServerUnaryReactor* CoordinatorService::GetEvaluation(grpc::CallbackServerContext* context,
                                                            const v1::EvaluationRef* request,
                                                            v1::Evaluation* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin, Role::kAgent}, "GetEvaluation");
  if (!caller.ok()) return Done(context, caller.status());
  absl::StatusOr<EvaluationRecord> r = Visible(*caller, request->evaluation_id());
  if (!r.ok()) return Done(context, r.status());
  int position = r->state == kStateQueued ? ctx_.dispatcher->QueuePosition(r->id) : 0;
  *response = ToProto(*r, position, true);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::ListEvaluations(
    grpc::CallbackServerContext* context, const v1::ListEvaluationsRequest* request,
    v1::ListEvaluationsResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "ListEvaluations");
  if (!caller.ok()) return Done(context, caller.status());
  const std::string& state = request->state();
  if (!state.empty() && state != kStateQueued && state != kStateRunning && state != kStateDone &&
      state != kStateFailed) {
    return Done(context, absl::InvalidArgumentError(absl::StrCat(
                             "state: \"", state,
                             "\" is not one of queued, running, done, failed")));
  }
  if (request->limit() < 0) {
    return Done(context, absl::InvalidArgumentError("limit: must not be negative"));
  }
  int limit = request->limit() == 0 ? kDefaultListLimit : std::min(request->limit(), kMaxListLimit);
  std::string user = caller->role == Role::kAdmin ? "" : caller->user;
  absl::StatusOr<std::vector<EvaluationRecord>> list =
      ctx_.store->ListEvaluations(user, state, limit, true);
  if (!list.ok()) return Done(context, list.status());
  for (const EvaluationRecord& r : *list) {
    int position = r.state == kStateQueued ? ctx_.dispatcher->QueuePosition(r.id) : 0;
    *response->add_evaluations() = ToProto(r, position, false);
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::ListWorkers(grpc::CallbackServerContext* context,
                                                          const v1::ListWorkersRequest* request,
                                                          v1::ListWorkersResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "ListWorkers");
  if (!caller.ok()) return Done(context, caller.status());
  for (v1::WorkerStatus& w : ctx_.dispatcher->ListWorkers()) {
    *response->add_workers() = std::move(w);
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::ListTasks(grpc::CallbackServerContext* context,
                                                        const v1::ListTasksRequest* request,
                                                        v1::ListTasksResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin, Role::kAgent}, "ListTasks");
  if (!caller.ok()) return Done(context, caller.status());
  if (ctx_.tasks != nullptr) {
    for (v1::TaskSummary& t : ctx_.tasks->List()) *response->add_tasks() = std::move(t);
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::CancelEvaluation(
    grpc::CallbackServerContext* context, const v1::EvaluationRef* request,
    v1::CancelEvaluationResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin, Role::kAgent}, "CancelEvaluation");
  if (!caller.ok()) return Done(context, caller.status());
  absl::StatusOr<EvaluationRecord> r = Visible(*caller, request->evaluation_id());
  if (!r.ok()) return Done(context, r.status());
  if (r->state == kStateDone || r->state == kStateFailed) {
    return Done(context, absl::FailedPreconditionError(
                             absl::StrCat("evaluation ", r->id, " has already finished (", r->state,
                                          "); there is nothing to cancel")));
  }
  absl::Status st = ctx_.dispatcher->Cancel(r->id, absl::StrCat("cancelled by ", caller->user));
  if (!st.ok()) return Done(context, st);
  response->set_was_running(r->state == kStateRunning);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::RegisterWorker(
    grpc::CallbackServerContext* context, const v1::WorkerInfo* request,
    v1::RegisterWorkerResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kWorker, Role::kAdmin}, "RegisterWorker");
  if (!caller.ok()) return Done(context, caller.status());
  absl::StatusOr<v1::RegisterWorkerResponse> r = ctx_.dispatcher->RegisterWorker(*request);
  if (!r.ok()) return Done(context, r.status());
  *response = *std::move(r);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::Heartbeat(grpc::CallbackServerContext* context,
                                                        const v1::HeartbeatRequest* request,
                                                        v1::HeartbeatResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kWorker, Role::kAdmin}, "Heartbeat");
  if (!caller.ok()) return Done(context, caller.status());
  response->set_known(ctx_.dispatcher->Heartbeat(*request));
  return Done(context, absl::OkStatus());
}

// ---- Admin ----

namespace {

absl::Status ValidateUserName(const std::string& name) {
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  if (!std::regex_match(name, kName)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "name: \"", name,
        "\" must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"));
  }
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* AdminService::AddUser(grpc::CallbackServerContext* context,
                                                const v1::AddUserRequest* request,
                                                v1::TokenResponse* response) {
  absl::StatusOr<Caller> caller = ctx_.auth->Require(*context, {Role::kAdmin}, "AddUser");
  if (!caller.ok()) return Done(context, caller.status());
  absl::Status st = ValidateUserName(request->name());
  if (!st.ok()) return Done(context, st);
  absl::StatusOr<Role> role = ParseRole(request->role().empty() ? "user" : request->role());
  if (!role.ok()) return Done(context, role.status());
  std::string token = NewToken();
  st = ctx_.store->AddUser(request->name(), RoleName(*role), HashToken(token),
                           NowMs());
  if (!st.ok()) return Done(context, st);
  response->set_name(request->name());
  response->set_token(token);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* AdminService::ListUsers(grpc::CallbackServerContext* context,
                                                  const v1::ListUsersRequest* request,
                                                  v1::ListUsersResponse* response) {
  absl::StatusOr<Caller> caller = ctx_.auth->Require(*context, {Role::kAdmin}, "ListUsers");
  if (!caller.ok()) return Done(context, caller.status());
  absl::StatusOr<std::vector<UserRecord>> users = ctx_.store->ListUsers();
  if (!users.ok()) return Done(context, users.status());
  for (const UserRecord& u : *users) {
    v1::User* out = response->add_users();
    out->set_name(u.name);
    out->set_role(u.role);
    out->set_revoked(u.revoked);
    out->set_tokens(u.tokens);
    out->set_created_ms(u.created_ms);
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* AdminService::RevokeUser(grpc::CallbackServerContext* context,
                                                   const v1::RevokeUserRequest* request,
                                                   v1::RevokeUserResponse* response) {
  absl::StatusOr<Caller> caller = ctx_.auth->Require(*context, {Role::kAdmin}, "RevokeUser");
  if (!caller.ok()) return Done(context, caller.status());
  if (request->name().empty()) return Done(context, absl::InvalidArgumentError("name: empty"));
  absl::StatusOr<int> revoked = ctx_.store->RevokeUser(request->name());
  if (!revoked.ok()) return Done(context, revoked.status());
  response->set_tokens_revoked(*revoked);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* AdminService::CreateToken(grpc::CallbackServerContext* context,
                                                    const v1::CreateTokenRequest* request,
                                                    v1::TokenResponse* response) {
  absl::StatusOr<Caller> caller = ctx_.auth->Require(*context, {Role::kAdmin}, "CreateToken");
  if (!caller.ok()) return Done(context, caller.status());
  if (request->name().empty()) return Done(context, absl::InvalidArgumentError("name: empty"));
  std::string token = NewToken();
  absl::Status st =
      ctx_.store->AddToken(request->name(), HashToken(token), NowMs());
  if (!st.ok()) return Done(context, st);
  response->set_name(request->name());
  response->set_token(token);
  return Done(context, absl::OkStatus());
}

namespace {

// Streams a file in chunks, then deletes it. The file is unlinked as soon
// as it is open, so nothing is left behind whatever happens to the call.
class FileStream final : public grpc::ServerWriteReactor<v1::BackupChunk> {
 public:
  FileStream(const std::string& path, const absl::Status& made) {
    if (!made.ok()) {
      Finish(ToGrpc(made));
      return;
    }
    in_.open(path, std::ios::binary);
    std::remove(path.c_str());
    if (!in_) {
      Finish(ToGrpc(absl::InternalError(absl::StrCat("cannot read the backup ", path))));
      return;
    }
    in_.seekg(0, std::ios::end);
    total_ = static_cast<int64_t>(in_.tellg());
    in_.seekg(0);
    WriteNext();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
      return;
    }
    WriteNext();
  }
  void OnDone() override { delete this; }

 private:
  static constexpr size_t kChunk = 1 << 20;

  void WriteNext() {
    std::string data(kChunk, '\0');
    in_.read(data.data(), static_cast<std::streamsize>(data.size()));
    data.resize(static_cast<size_t>(in_.gcount()));
    if (data.empty() && sent_ > 0) {
      Finish(grpc::Status::OK);
      return;
    }
    sent_ += static_cast<int64_t>(data.size());
    chunk_.set_data(std::move(data));
    chunk_.set_total_bytes(total_);
    StartWrite(&chunk_);
  }

  std::ifstream in_;
  int64_t total_ = 0;
  int64_t sent_ = 0;
  v1::BackupChunk chunk_;
};

}  // namespace

grpc::ServerWriteReactor<v1::BackupChunk>* AdminService::BackupStore(
    grpc::CallbackServerContext* context, const v1::BackupStoreRequest* request) {
  absl::StatusOr<Caller> caller = ctx_.auth->Require(*context, {Role::kAdmin}, "BackupStore");
  if (!caller.ok()) return new FileStream("", caller.status());
  std::string copy = absl::StrCat(ctx_.store->path(), ".backup-", RandomHex(6));
  absl::Status st = ctx_.store->Backup(copy);
  return new FileStream(copy, st);
}

}  // namespace kseek::server
