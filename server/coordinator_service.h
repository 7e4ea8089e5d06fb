// The gRPC services of kernelseekd: Coordinator (evaluations for users and
// admins; registration and heartbeats for workers) and Admin (users and
// tokens, admin tokens only). Callback API; each call authenticates first.
//
// The session RPCs are in session_service.cc; their streams (WatchSession,
// ExportTrace) read the trace from the store, woken by the SessionManager
// after each append.
//
// SubmitEvaluation checks and stores a request on an admission thread
// (admission.h), not on gRPC's, so that cheap calls stay quick during a
// burst of submissions.
//
// Streams (SubmitEvaluation, WatchEvaluation) are EventHub subscribers:
// they replay the evaluation's current state, then relay live events until
// the Verdict or Failed event, or until the client goes away (which does
// not cancel the evaluation).
//
// The services only borrow the store, hub, dispatcher and authenticator,
// which must outlive the grpc::Server. Thread-safe.
#ifndef KERNELSEEK_SERVER_COORDINATOR_SERVICE_H_
#define KERNELSEEK_SERVER_COORDINATOR_SERVICE_H_

#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "server/admission.h"
#include "server/auth.h"
#include "server/dispatcher.h"
#include "server/event_hub.h"
#include "server/service_util.h"
#include "server/session_manager.h"
#include "server/store.h"
#include "server/task_catalog.h"
#include "server/thread_set.h"

namespace kseek::server {

// The parts of the server the services share.
struct ServiceContext {
  Store* store;
  EventHub* hub;
  Dispatcher* dispatcher;
  const Authenticator* auth;
  SessionManager* sessions;
  const TaskCatalog* tasks = nullptr;  // null: no catalog
};

class CoordinatorService final : public kernelseek::v1::Coordinator::CallbackService {
 public:
  explicit CoordinatorService(ServiceContext ctx) : ctx_(ctx) {}

  // Submissions waiting for an admission thread, at most; more are refused
  // with RESOURCE_EXHAUSTED.
  static constexpr int kAdmissionQueue = 4096;

  grpc::ServerWriteReactor<kernelseek::v1::EvaluationEvent>* SubmitEvaluation(
      grpc::CallbackServerContext* context,
      const kernelseek::v1::EvaluationRequest* request) override;
  grpc::ServerWriteReactor<kernelseek::v1::EvaluationEvent>* WatchEvaluation(
      grpc::CallbackServerContext* context, const kernelseek::v1::EvaluationRef* request) override;
  grpc::ServerUnaryReactor* GetEvaluation(grpc::CallbackServerContext* context,
                                          const kernelseek::v1::EvaluationRef* request,
                                          kernelseek::v1::Evaluation* response) override;
  grpc::ServerUnaryReactor* ListEvaluations(
      grpc::CallbackServerContext* context, const kernelseek::v1::ListEvaluationsRequest* request,
      kernelseek::v1::ListEvaluationsResponse* response) override;
  grpc::ServerUnaryReactor* ListWorkers(grpc::CallbackServerContext* context,
                                        const kernelseek::v1::ListWorkersRequest* request,
                                        kernelseek::v1::ListWorkersResponse* response) override;
  grpc::ServerUnaryReactor* ListTasks(grpc::CallbackServerContext* context,
                                      const kernelseek::v1::ListTasksRequest* request,
                                      kernelseek::v1::ListTasksResponse* response) override;
  grpc::ServerUnaryReactor* CancelEvaluation(
      grpc::CallbackServerContext* context, const kernelseek::v1::EvaluationRef* request,
      kernelseek::v1::CancelEvaluationResponse* response) override;
  grpc::ServerUnaryReactor* RegisterWorker(
      grpc::CallbackServerContext* context, const kernelseek::v1::WorkerInfo* request,
      kernelseek::v1::RegisterWorkerResponse* response) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* context,
                                      const kernelseek::v1::HeartbeatRequest* request,
                                      kernelseek::v1::HeartbeatResponse* response) override;

  // Sessions (session_service.cc).
  grpc::ServerUnaryReactor* CreateSession(grpc::CallbackServerContext* context,
                                          const kernelseek::v1::CreateSessionRequest* request,
                                          kernelseek::v1::Session* response) override;
  grpc::ServerUnaryReactor* GetSession(grpc::CallbackServerContext* context,
                                       const kernelseek::v1::SessionRef* request,
                                       kernelseek::v1::Session* response) override;
  grpc::ServerUnaryReactor* ListSessions(grpc::CallbackServerContext* context,
                                         const kernelseek::v1::ListSessionsRequest* request,
                                         kernelseek::v1::ListSessionsResponse* response) override;
  grpc::ServerWriteReactor<kernelseek::v1::SessionEvent>* WatchSession(
      grpc::CallbackServerContext* context,
      const kernelseek::v1::WatchSessionRequest* request) override;
  grpc::ServerUnaryReactor* PostMessage(grpc::CallbackServerContext* context,
                                        const kernelseek::v1::PostMessageRequest* request,
                                        kernelseek::v1::PostMessageResponse* response) override;
  grpc::ServerUnaryReactor* CancelSession(grpc::CallbackServerContext* context,
                                          const kernelseek::v1::SessionRef* request,
                                          kernelseek::v1::CancelSessionResponse* response) override;
  grpc::ServerUnaryReactor* GetBestKernel(grpc::CallbackServerContext* context,
                                          const kernelseek::v1::SessionRef* request,
                                          kernelseek::v1::BestKernel* response) override;
  grpc::ServerWriteReactor<kernelseek::v1::SessionEvent>* ExportTrace(
      grpc::CallbackServerContext* context, const kernelseek::v1::SessionRef* request) override;
  grpc::ServerUnaryReactor* GetQuestionStats(
      grpc::CallbackServerContext* context, const kernelseek::v1::QuestionStatsRequest* request,
      kernelseek::v1::QuestionStatsResponse* response) override;
  grpc::ServerUnaryReactor* ListBank(grpc::CallbackServerContext* context,
                                     const kernelseek::v1::ListBankRequest* request,
                                     kernelseek::v1::ListBankResponse* response) override;

 private:
  // The stored session `id`, if `caller` may see it: INVALID_ARGUMENT for
  // an empty id, NOT_FOUND, or PERMISSION_DENIED (another user's session, or
  // an agent token of another session).
  absl::StatusOr<SessionRecord> VisibleSession(const Caller& caller, const std::string& id);

  // The stored evaluation `id`, if `caller` may see it: NOT_FOUND when
  // there is none, PERMISSION_DENIED when it belongs to another user.
  absl::StatusOr<EvaluationRecord> Visible(const Caller& caller, const std::string& id);

  // Validates and stores a submission (on an admission thread); the new
  // evaluation's id.
  absl::StatusOr<std::string> Admit(const Caller& caller, kernelseek::v1::EvaluationRequest request);

  const ServiceContext ctx_;
  Admission admission_{2, kAdmissionQueue};
  ThreadSet cancels_;  // CancelSession's waits for an agent to stop
};

class AdminService final : public kernelseek::v1::Admin::CallbackService {
 public:
  explicit AdminService(ServiceContext ctx) : ctx_(ctx) {}

  grpc::ServerUnaryReactor* AddUser(grpc::CallbackServerContext* context,
                                    const kernelseek::v1::AddUserRequest* request,
                                    kernelseek::v1::TokenResponse* response) override;
  grpc::ServerUnaryReactor* ListUsers(grpc::CallbackServerContext* context,
                                      const kernelseek::v1::ListUsersRequest* request,
                                      kernelseek::v1::ListUsersResponse* response) override;
  grpc::ServerUnaryReactor* RevokeUser(grpc::CallbackServerContext* context,
                                       const kernelseek::v1::RevokeUserRequest* request,
                                       kernelseek::v1::RevokeUserResponse* response) override;
  grpc::ServerUnaryReactor* CreateToken(grpc::CallbackServerContext* context,
                                        const kernelseek::v1::CreateTokenRequest* request,
                                        kernelseek::v1::TokenResponse* response) override;
  grpc::ServerWriteReactor<kernelseek::v1::BackupChunk>* BackupStore(
      grpc::CallbackServerContext* context,
      const kernelseek::v1::BackupStoreRequest* request) override;

 private:
  const ServiceContext ctx_;
};

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_COORDINATOR_SERVICE_H_
