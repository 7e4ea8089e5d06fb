// Registration and heartbeats of a kseek-worker (registration.h).
#include "worker/registration.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/file.h"
#include "base/log.h"

namespace kseek {

namespace v1 = ::kernelseek::v1;

Registration::Registration(RegistrationOptions options, WorkerService* service)
    : options_(std::move(options)), service_(service), token_(options_.token) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options_.tls_ca_pem.empty()) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options_.tls_ca_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  // gRPC's own reconnect backoff (up to two minutes by default) would hide
  // a coordinator that came back; it follows this loop's bounds instead.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              static_cast<int>(absl::ToInt64Milliseconds(options_.min_backoff)));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(absl::ToInt64Milliseconds(options_.max_backoff)));
  stub_ = v1::Coordinator::NewStub(
      grpc::CreateCustomChannel(options_.coordinator, credentials, args));
}

Registration::~Registration() { Stop(); }

void Registration::Start() { thread_ = std::thread([this] { Loop(); }); }

void Registration::Wake() {
  absl::MutexLock lock(&mu_);
  wake_ = true;
}

void Registration::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stop_) return;
    stop_ = true;
  }
  if (!thread_.joinable()) return;
  thread_.join();
  bool known = false;
  if (!worker_id_.empty()) Beat(&known);
}

void Registration::Prepare(grpc::ClientContext* context) const {
  context->set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_deadline));
  if (!token_.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token_));
}

void Registration::Refused(const grpc::Status& status) {
  last_error_ = absl::StrCat("status ", static_cast<int>(status.error_code()), ": ",
                             status.error_message());
  if (status.error_code() != grpc::StatusCode::UNAUTHENTICATED &&
      status.error_code() != grpc::StatusCode::PERMISSION_DENIED) {
    return;
  }
  Log(absl::StrCat("the coordinator refused this worker's token (", status.error_message(),
                   "); no attempt is accepted until it registers again"));
  service_->SetJobCredential("");
}

bool Registration::Sleep(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(
                           +[](Registration* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
                             return self->stop_ || self->wake_;
                           },
                           this),
                       d);
  wake_ = false;
  return stop_;
}

bool Registration::Register() {
  // The last id (if any) travels in the info, so that a coordinator that
  // still knows this worker may keep it.
  const v1::WorkerInfo info = service_->CurrentInfo();
  if (!options_.token_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile("--token-file", options_.token_file);
    if (!token.ok()) {
      last_error_ = std::string(token.status().message());
      return false;
    }
    token_ = *std::move(token);
  }
  grpc::ClientContext context;
  Prepare(&context);
  v1::RegisterWorkerResponse response;
  grpc::Status status = stub_->RegisterWorker(&context, info, &response);
  if (!status.ok()) {
    Refused(status);
    return false;
  }
  if (response.job_credential().empty()) {
    Log("the coordinator gave no job credential: it cannot dispatch jobs to this worker");
  }
  worker_id_ = response.worker_id();
  service_->SetWorkerId(worker_id_);
  service_->SetJobCredential(response.job_credential());
  interval_ = response.heartbeat_interval_ms() > 0
                  ? absl::Milliseconds(response.heartbeat_interval_ms())
                  : absl::Seconds(1);
  return true;
}

bool Registration::Beat(bool* known) {
  const v1::WorkerInfo info = service_->CurrentInfo();
  v1::HeartbeatRequest request;
  request.set_worker_id(worker_id_);
  request.set_draining(info.draining());
  request.set_queue_length(info.queue_length());
  grpc::ClientContext context;
  Prepare(&context);
  v1::HeartbeatResponse response;
  grpc::Status status = stub_->Heartbeat(&context, request, &response);
  if (!status.ok()) {
    Refused(status);
    return false;
  }
  *known = response.known();
  return true;
}

void Registration::Loop() {
  absl::Duration backoff = options_.min_backoff;
  bool registered = false;
  bool reachable = true;  // as last logged
  int failures = 0;
  while (true) {
    bool ok;
    if (!registered) {
      ok = registered = Register();
      if (ok) {
        Log(absl::StrCat("registered with coordinator ", options_.coordinator, " as ",
                         worker_id_, " (heartbeat every ",
                         absl::FormatDuration(interval_), ")"));
      }
    } else {
      bool known = true;
      ok = Beat(&known);
      if (ok && !known) {
        Log("the coordinator does not know this worker; registering again");
        registered = false;
        continue;
      }
      // Unreachable: it may come back as a fresh process, so register anew.
      if (!ok) registered = false;
    }
    if (ok) {
      if (!reachable) {
        Log(absl::StrCat("coordinator ", options_.coordinator, " is reachable again after ",
                         failures, " failed attempt", failures == 1 ? "" : "s"));
      }
      reachable = true;
      failures = 0;
      backoff = options_.min_backoff;
      if (Sleep(interval_)) return;
      continue;
    }
    ++failures;
    if (reachable) {
      Log(absl::StrCat("coordinator ", options_.coordinator, " unreachable (", last_error_,
                       "); retrying with backoff up to ",
                       absl::FormatDuration(options_.max_backoff)));
      reachable = false;
    }
    if (Sleep(backoff)) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace kseek
