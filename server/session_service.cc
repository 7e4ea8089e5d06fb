// The session RPCs of the Coordinator service (see coordinator_service.h
// and proto/kernelseek/v1/session.proto).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "kernelseek/v1/evaluation.pb.h"
#include "question_bank/src/question.h"
#include "server/coordinator_service.h"

namespace kseek::server {

namespace v1 = ::kernelseek::v1;
namespace qb = ::kseek::question_bank;

namespace {

constexpr int kDefaultListLimit = 50;
constexpr int kMaxListLimit = 1000;
// Events read from the store at a time by a stream.
constexpr int kStreamBatch = 256;

v1::Session ToProto(const SessionRecord& r) {
  v1::Session s;
  v1::CreateSessionRequest spec;
  spec.ParseFromString(r.spec);
  s.set_session_id(r.id);
  s.set_user(r.user);
  s.set_task(r.task);
  s.set_target(r.target);
  *s.mutable_agent() = spec.agent();
  s.set_goal_speedup(r.goal_speedup);
  *s.mutable_budget() = spec.budget();
  s.set_state(r.state);
  s.set_reason(r.reason);
  s.set_created_ms(r.created_ms);
  s.set_updated_ms(r.updated_ms);
  s.set_turns(r.turns);
  s.set_evaluations(r.evaluations);
  s.set_cost_usd(r.cost_usd);
  if (r.has_best) s.set_best_speedup(r.best_speedup);
  s.set_best_evaluation_id(r.best_evaluation_id);
  s.set_events(r.events);
  s.set_workspace(r.workspace);
  s.set_self_ask(spec.self_ask());
  return s;
}

// A stream of one session's trace from an index: the stored events, then
// (when following) each new one as the SessionManager announces it, until
// the session has ended and every event is written.
class SessionStream final : public QueuedWriter<v1::SessionEvent> {
 public:
  static SessionStream* Rejected(const absl::Status& status) {
    auto* s = new SessionStream(nullptr, "", 0, false);
    s->Finish(ToGrpc(status));
    return s;
  }

  static SessionStream* Open(SessionManager* sessions, const std::string& id, int64_t from,
                             bool follow) {
    auto* s = new SessionStream(sessions, id, from, follow);
    if (follow) {
      uint64_t handle = sessions->Subscribe(id, [s] { s->Wake(); });
      absl::MutexLock lock(&s->mu_);
      s->handle_ = handle;
    }
    s->Wake();
    return s;
  }

 private:
  SessionStream(SessionManager* sessions, std::string id, int64_t from, bool follow)
      : sessions_(sessions), id_(std::move(id)), next_(from), follow_(follow) {}

  void AfterWriteLocked(const v1::SessionEvent&) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    PumpLocked();
  }

  void Unsubscribe(uint64_t handle) override { sessions_->Unsubscribe(id_, handle); }

  void Wake() {
    absl::MutexLock lock(&mu_);
    PumpLocked();
  }

  // Writes the next event, reading more from the store when none is queued;
  // finishes once nothing is left to send.
  void PumpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || finished_) return;
    if (queue_.empty()) {
      absl::StatusOr<SessionRecord> session = sessions_->store()->GetSession(id_);
      absl::StatusOr<std::vector<StoredEvent>> events =
          sessions_->store()->ReadSessionEvents(id_, next_, kStreamBatch);
      if (!session.ok() || !events.ok()) {
        FinishLocked(ToGrpc(!session.ok() ? session.status() : events.status()));
        return;
      }
      for (StoredEvent& e : *events) {
        v1::SessionEvent out;
        out.set_session_id(e.session_id);
        out.set_index(e.index);
        out.set_time_ms(e.time_ms);
        out.set_kind(e.kind);
        out.set_json(std::move(e.json));
        queue_.push_back(std::move(out));
        next_ = e.index + 1;
      }
      if (queue_.empty()) {
        if (!follow_ || SessionEnded(session->state)) FinishLocked(grpc::Status::OK);
        return;
      }
    }
    WriteNextLocked();
  }

  SessionManager* const sessions_;
  const std::string id_;
  int64_t next_ ABSL_GUARDED_BY(mu_);
  const bool follow_;
};

}  // namespace

absl::StatusOr<SessionRecord> CoordinatorService::VisibleSession(const Caller& caller,
                                                                 const std::string& id) {
  if (id.empty()) return absl::InvalidArgumentError("session_id: empty");
  absl::StatusOr<SessionRecord> r = ctx_.store->GetSession(id);
  if (!r.ok()) return r.status();
  if (caller.role == Role::kAgent) {
    if (caller.session_id != id) {
      return absl::PermissionDeniedError(
          absl::StrCat("this agent token reaches session ", caller.session_id, " only"));
    }
    return r;
  }
  if (caller.role != Role::kAdmin && r->user != caller.user) {
    return absl::PermissionDeniedError(absl::StrCat("session ", id, " belongs to another user"));
  }
  return r;
}

grpc::ServerUnaryReactor* CoordinatorService::CreateSession(
    grpc::CallbackServerContext* context, const v1::CreateSessionRequest* request,
    v1::Session* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "CreateSession");
  if (!caller.ok()) return Done(context, caller.status());
  absl::StatusOr<SessionRecord> r = ctx_.sessions->Create(*caller, *request);
  if (!r.ok()) return Done(context, r.status());
  *response = ToProto(*r);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::GetSession(grpc::CallbackServerContext* context,
                                                         const v1::SessionRef* request,
                                                         v1::Session* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin, Role::kAgent}, "GetSession");
  if (!caller.ok()) return Done(context, caller.status());
  absl::StatusOr<SessionRecord> r = VisibleSession(*caller, request->session_id());
  if (!r.ok()) return Done(context, r.status());
  *response = ToProto(*r);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::ListSessions(
    grpc::CallbackServerContext* context, const v1::ListSessionsRequest* request,
    v1::ListSessionsResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "ListSessions");
  if (!caller.ok()) return Done(context, caller.status());
  const std::string& state = request->state();
  if (!state.empty() && !IsSessionState(state)) {
    return Done(context, absl::InvalidArgumentError(absl::StrCat(
                             "state: \"", state, "\" is not one of ",
                             absl::StrJoin(kSessionStates, ", "))));
  }
  if (request->limit() < 0) {
    return Done(context, absl::InvalidArgumentError("limit: must not be negative"));
  }
  int limit = request->limit() == 0 ? kDefaultListLimit : std::min(request->limit(), kMaxListLimit);
  std::string user = caller->role == Role::kAdmin ? "" : caller->user;
  absl::StatusOr<std::vector<SessionRecord>> list = ctx_.store->ListSessions(user, state, limit);
  if (!list.ok()) return Done(context, list.status());
  for (const SessionRecord& r : *list) *response->add_sessions() = ToProto(r);
  return Done(context, absl::OkStatus());
}

grpc::ServerWriteReactor<v1::SessionEvent>* CoordinatorService::WatchSession(
    grpc::CallbackServerContext* context, const v1::WatchSessionRequest* request) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "WatchSession");
  if (!caller.ok()) return SessionStream::Rejected(caller.status());
  if (request->from_index() < 0) {
    return SessionStream::Rejected(absl::InvalidArgumentError("from_index: must not be negative"));
  }
  absl::StatusOr<SessionRecord> r = VisibleSession(*caller, request->session_id());
  if (!r.ok()) return SessionStream::Rejected(r.status());
  return SessionStream::Open(ctx_.sessions, r->id, request->from_index(), true);
}

grpc::ServerWriteReactor<v1::SessionEvent>* CoordinatorService::ExportTrace(
    grpc::CallbackServerContext* context, const v1::SessionRef* request) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "ExportTrace");
  if (!caller.ok()) return SessionStream::Rejected(caller.status());
  absl::StatusOr<SessionRecord> r = VisibleSession(*caller, request->session_id());
  if (!r.ok()) return SessionStream::Rejected(r.status());
  return SessionStream::Open(ctx_.sessions, r->id, 0, false);
}

grpc::ServerUnaryReactor* CoordinatorService::PostMessage(grpc::CallbackServerContext* context,
                                                          const v1::PostMessageRequest* request,
                                                          v1::PostMessageResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "PostMessage");
  if (!caller.ok()) return Done(context, caller.status());
  absl::StatusOr<SessionRecord> r = VisibleSession(*caller, request->session_id());
  if (!r.ok()) return Done(context, r.status());
  absl::StatusOr<int64_t> index =
      ctx_.sessions->PostMessage(r->id, request->text(), request->now());
  if (!index.ok()) return Done(context, index.status());
  response->set_index(*index);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::CancelSession(
    grpc::CallbackServerContext* context, const v1::SessionRef* request,
    v1::CancelSessionResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "CancelSession");
  if (!caller.ok()) return Done(context, caller.status());
  absl::StatusOr<SessionRecord> r = VisibleSession(*caller, request->session_id());
  if (!r.ok()) return Done(context, r.status());
  // Cancel waits for the session's agent to stop (interrupt, terminate,
  // kill: up to about 25 s), so it runs off gRPC's callback threads, on one
  // of cancels_; the call finishes when it is done (the server's shutdown
  // waits for it, and the service's end joins the thread).
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  cancels_.Start([sessions = ctx_.sessions, id = r->id, user = caller->user, response, reactor] {
    absl::Status st = sessions->Cancel(id, user);
    if (st.ok()) response->set_state(kSessionCancelled);
    reactor->Finish(ToGrpc(st));
  });
  return reactor;
}

grpc::ServerUnaryReactor* CoordinatorService::GetBestKernel(grpc::CallbackServerContext* context,
                                                            const v1::SessionRef* request,
                                                            v1::BestKernel* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "GetBestKernel");
  if (!caller.ok()) return Done(context, caller.status());
  absl::StatusOr<SessionRecord> r = VisibleSession(*caller, request->session_id());
  if (!r.ok()) return Done(context, r.status());
  response->set_session_id(r->id);
  if (!r->has_best) return Done(context, absl::OkStatus());
  absl::StatusOr<EvaluationRecord> eval = ctx_.store->GetEvaluation(r->best_evaluation_id);
  if (!eval.ok()) return Done(context, eval.status());
  v1::EvaluationRequest submitted;
  if (!submitted.ParseFromString(eval->request)) {
    return Done(context, absl::DataLossError(absl::StrCat(
                             "evaluation ", eval->id, ": the stored request is corrupt")));
  }
  response->set_found(true);
  response->set_evaluation_id(eval->id);
  response->set_geomean_speedup(r->best_speedup);
  response->set_kernel_name(submitted.kernel_name());
  response->set_kernel_source(submitted.kernel_source());
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::GetQuestionStats(
    grpc::CallbackServerContext* context, const v1::QuestionStatsRequest* request,
    v1::QuestionStatsResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "GetQuestionStats");
  if (!caller.ok()) return Done(context, caller.status());
  absl::StatusOr<std::map<std::string, qb::QuestionStats>> stats = ctx_.sessions->QuestionStats();
  if (!stats.ok()) return Done(context, stats.status());
  for (const qb::Question& q : ctx_.sessions->bank().questions()) {
    v1::QuestionStat* out = response->add_questions();
    out->set_question_id(q.id);
    out->set_text(q.text);
    out->set_category(std::string(qb::CategoryName(q.category)));
    auto it = stats->find(q.id);
    if (it == stats->end()) continue;
    out->set_asked(it->second.asked);
    out->set_gains(it->second.gains_followed);
    if (it->second.median_gain) out->set_median_gain(*it->second.median_gain);
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* CoordinatorService::ListBank(grpc::CallbackServerContext* context,
                                                       const v1::ListBankRequest* request,
                                                       v1::ListBankResponse* response) {
  absl::StatusOr<Caller> caller =
      ctx_.auth->Require(*context, {Role::kUser, Role::kAdmin}, "ListBank");
  if (!caller.ok()) return Done(context, caller.status());
  response->set_source(ctx_.sessions->bank_source());
  for (const qb::Question& q : ctx_.sessions->bank().questions()) {
    v1::BankQuestion* out = response->add_questions();
    out->set_id(q.id);
    out->set_text(q.text);
    out->set_category(std::string(qb::CategoryName(q.category)));
    for (qb::Trigger t : q.triggers) out->add_triggers(std::string(qb::TriggerName(t)));
  }
  return Done(context, absl::OkStatus());
}

}  // namespace kseek::server
