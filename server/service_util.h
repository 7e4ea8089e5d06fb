// What the service implementations share: status conversion, unary
// answers, and a write reactor that writes queued messages one at a time.
#ifndef KSEEK_SERVER_SERVICE_UTIL_H_
#define KSEEK_SERVER_SERVICE_UTIL_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <deque>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace kseek::server {

// The gRPC status carrying an absl::Status (the codes are the same).
inline grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

// A unary call's answer: finishes the call with `status`.
inline grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context,
                                      const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpc(status));
  return reactor;
}

// A server stream of Msg: subclasses queue messages (under mu_) and say
// what follows a completed write (AfterWriteLocked) and how to stop being
// notified (Unsubscribe, with the handle_ they stored). A failed write or
// a cancel finishes the call; the object deletes itself when gRPC is done
// with it.
template <typename Msg>
class QueuedWriter : public grpc::ServerWriteReactor<Msg> {
 public:
  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (finished_) return;
    if (!ok) {
      FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
      return;
    }
    Msg written = std::move(queue_.front());
    queue_.pop_front();
    AfterWriteLocked(written);
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    if (!finished_) FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
  }

  void OnDone() override {
    uint64_t handle;
    {
      absl::MutexLock lock(&mu_);
      handle = handle_;
    }
    if (handle != 0) Unsubscribe(handle);
    delete this;
  }

 protected:
  virtual ~QueuedWriter() = default;

  // After `written` went out (the queue no longer holds it).
  virtual void AfterWriteLocked(const Msg& written) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) = 0;
  virtual void Unsubscribe(uint64_t handle) = 0;

  // Starts writing the queue's front, if any.
  void WriteNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (queue_.empty()) return;
    writing_ = true;
    this->StartWrite(&queue_.front());
  }

  void FinishLocked(const grpc::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    finished_ = true;
    this->Finish(status);
  }

  absl::Mutex mu_;
  std::deque<Msg> queue_ ABSL_GUARDED_BY(mu_);  // front: being written
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t handle_ ABSL_GUARDED_BY(mu_) = 0;  // subscription, 0: none
};

}  // namespace kseek::server

#endif  // KSEEK_SERVER_SERVICE_UTIL_H_
