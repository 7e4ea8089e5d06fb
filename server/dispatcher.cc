// The dispatcher of kernelseekd (see dispatcher.h).
#include "server/dispatcher.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/log.h"
#include "base/time.h"
#include "harness/src/task.h"
#include "kernelseek/v1/worker.grpc.pb.h"
#include "proto/job_credential.h"
#include "server/auth.h"

namespace kseek::server {

namespace v1 = ::kernelseek::v1;

namespace {

// How often the loop looks at heartbeats when nothing else wakes it.
constexpr absl::Duration kTick = absl::Milliseconds(200);
// How often a healthy worker's heartbeat time is written to the store.
constexpr int64_t kPersistHeartbeatMs = 10000;

}  // namespace

Dispatcher::Dispatcher(Store* store, EventHub* hub, DispatcherOptions options)
    : store_(store), hub_(hub), options_(std::move(options)) {}

Dispatcher::~Dispatcher() { Stop(); }

absl::Status Dispatcher::Start() {
  absl::Status st = store_->MarkAllWorkersUnhealthy();
  if (!st.ok()) return st;
  absl::StatusOr<std::vector<WorkerRecord>> workers = store_->ListWorkers();
  if (!workers.ok()) return workers.status();
  absl::StatusOr<std::vector<EvaluationRecord>> pending = store_->PendingEvaluations();
  if (!pending.ok()) return pending.status();

  absl::MutexLock lock(&mu_);
  for (const WorkerRecord& r : *workers) {
    Worker& w = workers_[r.id];
    w.info.ParseFromString(r.info);
    w.info.set_worker_id(r.id);
    w.last_heartbeat_ms = r.last_heartbeat_ms;
    w.registered_ms = r.registered_ms;
  }
  int requeued = 0;
  for (const EvaluationRecord& e : *pending) {
    bool was_running = e.state == kStateRunning;
    if (was_running) {
      absl::StatusOr<bool> changed = store_->Requeue(e.id);
      if (!changed.ok()) return changed.status();
      ++requeued;
    }
    hub_->Open(e.id);
    pending_[e.id] = Pending{e.user, e.target, e.session_id};
    EnqueueLocked(e.id, was_running);
  }
  for (const auto& [target, q] : queues_) PublishPositionsLocked(target);
  Logf("%d evaluations pending (%d were running and are queued again), %d workers known",
       pending->size(), requeued, workers_.size());
  loop_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void Dispatcher::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && !loop_.joinable()) return;
    stopping_ = true;
    for (auto& [id, w] : workers_) {
      if (w.call != nullptr) w.call->TryCancel();
    }
  }
  if (loop_.joinable()) loop_.join();
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* n) { return *n == 0; }, &running_attempts_));
  }
  attempt_threads_.JoinAll();
}

// ---- queues ----

void Dispatcher::EnqueueLocked(const std::string& id, bool front) {
  const Pending& p = pending_.at(id);
  TargetQueue& q = queues_[p.target];
  if (front) {
    q.retries.push_back(id);
  } else {
    std::deque<std::string>& mine = q.by_user[p.user];
    if (mine.empty()) q.users.push_back(p.user);
    mine.push_back(id);
  }
  wake_ = true;
}

std::vector<std::string> Dispatcher::OrderLocked(const TargetQueue& q) const {
  std::vector<std::string> order(q.retries.begin(), q.retries.end());
  // Round-robin over the users in serving order, one evaluation each per
  // round, exactly as PopLocked serves them.
  std::vector<std::pair<const std::deque<std::string>*, size_t>> cursors;
  for (const std::string& user : q.users) cursors.push_back({&q.by_user.at(user), 0});
  bool any = true;
  while (any) {
    any = false;
    for (auto& [ids, next] : cursors) {
      if (next < ids->size()) {
        order.push_back((*ids)[next++]);
        any = true;
      }
    }
  }
  return order;
}

std::string Dispatcher::PopLocked(TargetQueue* q) {
  if (!q->retries.empty()) {
    std::string id = q->retries.front();
    q->retries.pop_front();
    return id;
  }
  std::string user = q->users.front();
  q->users.pop_front();
  std::deque<std::string>& mine = q->by_user[user];
  std::string id = mine.front();
  mine.pop_front();
  if (mine.empty()) {
    q->by_user.erase(user);
  } else {
    q->users.push_back(user);
  }
  return id;
}

void Dispatcher::RemoveQueued(TargetQueue* q, const std::string& id) {
  q->retries.erase(std::remove(q->retries.begin(), q->retries.end(), id), q->retries.end());
  for (auto it = q->by_user.begin(); it != q->by_user.end();) {
    std::deque<std::string>& ids = it->second;
    ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
    if (!ids.empty()) {
      ++it;
      continue;
    }
    q->users.erase(std::remove(q->users.begin(), q->users.end(), it->first), q->users.end());
    it = q->by_user.erase(it);
  }
}

std::vector<std::string> Dispatcher::WithdrawSession(const std::string& session_id,
                                                     const std::string& reason) {
  std::vector<std::string> withdrawn;
  if (session_id.empty()) return withdrawn;
  absl::MutexLock lock(&mu_);
  std::vector<std::string> targets;
  for (auto it = pending_.begin(); it != pending_.end();) {
    const Pending& p = it->second;
    if (p.session_id != session_id || p.running) {
      ++it;
      continue;
    }
    auto q = queues_.find(p.target);
    if (q != queues_.end()) RemoveQueued(&q->second, it->first);
    // Stored as failed, so that neither this process nor the next (whose
    // Start reads the store) runs it.
    absl::StatusOr<bool> changed = store_->FinishFailed(it->first, reason, NowMs());
    if (!changed.ok()) Log(changed.status().message());
    if (changed.ok() && *changed) {
      v1::EvaluationEvent e;
      e.set_evaluation_id(it->first);
      e.mutable_failed()->set_error(reason);
      hub_->Publish(e);
    }
    Logf("evaluation %s withdrawn: %s", it->first, reason);
    withdrawn.push_back(it->first);
    targets.push_back(p.target);
    it = pending_.erase(it);
  }
  for (const std::string& target : targets) PublishPositionsLocked(target);
  return withdrawn;
}

int Dispatcher::QueuePosition(const std::string& id) {
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(id);
  if (it == pending_.end() || it->second.running) return 0;
  auto q = queues_.find(it->second.target);
  if (q == queues_.end()) return 0;
  std::vector<std::string> order = OrderLocked(q->second);
  auto pos = std::find(order.begin(), order.end(), id);
  return pos == order.end() ? 0 : static_cast<int>(pos - order.begin()) + 1;
}

absl::Status Dispatcher::Cancel(const std::string& id, const std::string& reason) {
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("evaluation ", id, " is not queued or running"));
  }
  Pending& p = it->second;
  if (p.running) {
    p.cancel_reason = reason;
    for (auto& [worker_id, w] : workers_) {
      if (w.current != id || w.call == nullptr) continue;
      w.cancel_reason = reason;
      w.call->TryCancel();
    }
    Logf("evaluation %s: cancelling its attempt: %s", id, reason);
    return absl::OkStatus();
  }
  auto q = queues_.find(p.target);
  if (q != queues_.end()) RemoveQueued(&q->second, id);
  std::string target = p.target;
  pending_.erase(it);
  EndFailed(id, reason);
  Logf("evaluation %s cancelled while queued: %s", id, reason);
  PublishPositionsLocked(target);
  return absl::OkStatus();
}

std::string Dispatcher::CancelReason(const std::string& id) {
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(id);
  return it == pending_.end() ? "" : it->second.cancel_reason;
}

absl::StatusOr<bool> Dispatcher::WithRetries(const std::string& what,
                                             const std::function<absl::StatusOr<bool>()>& write) {
  absl::StatusOr<bool> result = write();
  absl::Duration delay = options_.store_retry_delay;
  for (int i = 0; i < options_.store_retries && !result.ok(); ++i) {
    Logf("%s: %s; trying again in %s", what, result.status().message(),
         absl::FormatDuration(delay));
    absl::SleepFor(delay);
    delay *= 2;
    result = write();
  }
  return result;
}

void Dispatcher::EndFailed(const std::string& id, const std::string& error) {
  absl::StatusOr<bool> changed = store_->FinishFailed(id, error, NowMs());
  if (!changed.ok() && absl::IsResourceExhausted(changed.status()) && store_->ReleaseReserve()) {
    Logf("the disk is full: gave up the store's reserve to record that %s failed", id);
    changed = store_->FinishFailed(id, error, NowMs());
  }
  v1::EvaluationEvent e;
  e.set_evaluation_id(id);
  if (changed.ok()) {
    if (!*changed) return;  // it had ended already, and that was published
    e.mutable_failed()->set_error(error);
  } else {
    Logf("evaluation %s failed (%s), and that could not be stored either (%s): the store keeps "
         "it pending and the next start runs it again",
         id, error, changed.status().message());
    e.mutable_failed()->set_error(absl::StrCat(
        error, "; not recorded either (", changed.status().message(),
        "), so the coordinator runs it again after its next restart"));
  }
  hub_->Publish(e);
}

int Dispatcher::MatchingWorkersLocked(const std::string& target) const {
  int n = 0;
  for (const auto& [id, w] : workers_) {
    if (w.registered && w.healthy && !w.info.draining() && w.info.target() == target) ++n;
  }
  return n;
}

void Dispatcher::PublishPositionsLocked(const std::string& target) {
  auto q = queues_.find(target);
  if (q == queues_.end()) return;
  int matching = MatchingWorkersLocked(target);
  std::vector<std::string> order = OrderLocked(q->second);
  for (size_t i = 0; i < order.size(); ++i) {
    Pending& p = pending_.at(order[i]);
    int position = static_cast<int>(i) + 1;
    if (p.published_position == position && p.published_matching == matching) continue;
    p.published_position = position;
    p.published_matching = matching;
    v1::EvaluationEvent e;
    e.set_evaluation_id(order[i]);
    e.mutable_queued()->set_position(position);
    e.mutable_queued()->set_matching_workers(matching);
    hub_->Publish(e);
  }
}

absl::Status Dispatcher::Submit(const EvaluationRecord& eval) {
  absl::Status room = store_->CheckRoomForNewWork();
  if (!room.ok()) return room;
  // The channel opens first so that a watcher who learns the id from the
  // store always finds it; a failed insert closes it again.
  hub_->Open(eval.id);
  absl::Status st = store_->InsertEvaluation(eval);
  if (!st.ok()) {
    v1::EvaluationEvent e;
    e.set_evaluation_id(eval.id);
    e.mutable_failed()->set_error(std::string(st.message()));
    hub_->Publish(e);
    return st;
  }
  absl::MutexLock lock(&mu_);
  pending_[eval.id] = Pending{eval.user, eval.target, eval.session_id};
  EnqueueLocked(eval.id, false);
  PublishPositionsLocked(eval.target);
  return absl::OkStatus();
}

// ---- workers ----

namespace {

constexpr size_t kMaxWorkerIdBytes = 64;
constexpr size_t kMaxDescriptionBytes = 256;  // device_name, compiler_version

// HOST:PORT with a host name, an IPv4 address or a bracketed IPv6 address,
// and a port from 1 to 65535.
bool ParsableAddress(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return false;
  std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  if (port.size() > 5 || !std::all_of(port.begin(), port.end(), ::isdigit)) return false;
  int number = std::stoi(port);
  if (number < 1 || number > 65535) return false;
  if (host.front() == '[') {
    return host.size() > 2 && host.back() == ']' &&
           std::all_of(host.begin() + 1, host.end() - 1,
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'; });
  }
  if (host.size() > 253) return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
  });
}

absl::Status ValidateWorkerInfo(const v1::WorkerInfo& info) {
  absl::StatusOr<Target> target = ParseTarget(info.target());
  if (!target.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("target: ", target.status().message()));
  }
  if (info.address().empty()) {
    return absl::InvalidArgumentError("address: empty (where the worker's service listens)");
  }
  if (!ParsableAddress(info.address())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "address: \"", info.address().substr(0, 80), info.address().size() > 80 ? "..." : "",
        "\" is not HOST:PORT (a host name, IPv4 address or [IPv6] address, and a port 1-65535)"));
  }
  const std::string& id = info.worker_id();
  if (id.size() > kMaxWorkerIdBytes ||
      !std::all_of(id.begin(), id.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      })) {
    return absl::InvalidArgumentError(absl::StrCat("worker_id: at most ", kMaxWorkerIdBytes,
                                                   " letters, digits, '.', '_' or '-'"));
  }
  for (const auto& [field, value] : {std::pair<const char*, const std::string&>{"device_name", info.device_name()},
                                     {"compiler_version", info.compiler_version()},
                                     {"confinement", info.confinement()}}) {
    if (value.size() > kMaxDescriptionBytes) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": ", value.size(),
                                                     " bytes, more than the limit of ", kMaxDescriptionBytes));
    }
  }
  if (info.gpu() < -1) return absl::InvalidArgumentError("gpu: -1 (none: a host worker) or a device ordinal");
  if (info.sm_count() < 0) return absl::InvalidArgumentError("sm_count: must not be negative");
  if (info.memory_bytes() < 0) return absl::InvalidArgumentError("memory_bytes: must not be negative");
  if (info.queue_length() < 0) return absl::InvalidArgumentError("queue_length: must not be negative");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::RegisterWorkerResponse> Dispatcher::RegisterWorker(const v1::WorkerInfo& info) {
  if (absl::Status valid = ValidateWorkerInfo(info); !valid.ok()) return valid;
  std::string id = info.worker_id().empty() ? absl::StrCat("wk_", RandomHex(6)) : info.worker_id();
  int64_t now = NowMs();
  WorkerRecord record{id, "", true, now, now};
  v1::WorkerInfo stored = info;
  stored.set_worker_id(id);
  stored.SerializeToString(&record.info);
  absl::Status st = store_->PutWorker(record);
  if (!st.ok()) return st;

  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  std::shared_ptr<grpc::ChannelCredentials> creds = options_.worker_credentials;
  if (creds == nullptr) creds = grpc::InsecureChannelCredentials();

  absl::MutexLock lock(&mu_);
  Worker& w = workers_[id];
  w.info = stored;
  w.registered = true;
  w.healthy = true;
  w.last_heartbeat_ms = now;
  w.last_persisted_ms = now;
  w.registered_ms = now;
  if (w.call == nullptr) w.current.clear();
  w.channel = grpc::CreateCustomChannel(info.address(), creds, args);
  w.job_credential = RandomHex(32);
  Logf("worker %s registered: target %s at %s (%s)", id, info.target(), info.address(),
       info.device_name());
  PublishPositionsLocked(info.target());
  wake_ = true;

  v1::RegisterWorkerResponse response;
  response.set_worker_id(id);
  response.set_job_credential(w.job_credential);
  response.set_heartbeat_interval_ms(
      static_cast<int32_t>(absl::ToInt64Milliseconds(options_.heartbeat_interval)));
  return response;
}

bool Dispatcher::Heartbeat(const v1::HeartbeatRequest& request) {
  int64_t now = NowMs();
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(request.worker_id());
  if (it == workers_.end() || !it->second.registered) return false;
  Worker& w = it->second;
  w.last_heartbeat_ms = now;
  bool changed = !w.healthy || w.info.draining() != request.draining();
  w.info.set_draining(request.draining());
  w.info.set_queue_length(request.queue_length());
  bool persist = !w.healthy || now - w.last_persisted_ms >= kPersistHeartbeatMs;
  if (!w.healthy) Logf("worker %s is healthy again", request.worker_id());
  w.healthy = true;
  if (persist) {
    w.last_persisted_ms = now;
    absl::Status st = store_->SetWorkerHealth(request.worker_id(), true, now);
    if (!st.ok()) Log(st.message());
  }
  if (changed) PublishPositionsLocked(w.info.target());
  wake_ = true;
  return true;
}

std::vector<v1::WorkerStatus> Dispatcher::ListWorkers() {
  absl::MutexLock lock(&mu_);
  std::vector<v1::WorkerStatus> out;
  for (const auto& [id, w] : workers_) {
    v1::WorkerStatus s;
    *s.mutable_info() = w.info;
    s.set_healthy(w.registered && w.healthy);
    s.set_current_evaluation(w.current);
    s.set_last_heartbeat_ms(w.last_heartbeat_ms);
    s.set_registered_ms(w.registered_ms);
    out.push_back(std::move(s));
  }
  return out;
}

void Dispatcher::SetUnhealthyLocked(Worker* w, const std::string& id, const std::string& why) {
  if (!w->healthy) return;
  w->healthy = false;
  Logf("worker %s is unhealthy: %s", id, why);
  absl::Status st = store_->SetWorkerHealth(id, false, w->last_heartbeat_ms);
  if (!st.ok()) Log(st.message());
  PublishPositionsLocked(w->info.target());
}

void Dispatcher::CheckHeartbeatsLocked(int64_t now_ms) {
  int64_t timeout = absl::ToInt64Milliseconds(options_.heartbeat_timeout);
  for (auto& [id, w] : workers_) {
    if (!w.registered || !w.healthy || now_ms - w.last_heartbeat_ms <= timeout) continue;
    std::string why = absl::StrCat("no heartbeat for ", now_ms - w.last_heartbeat_ms, " ms");
    SetUnhealthyLocked(&w, id, why);
    // Its attempt cannot be trusted to finish: break the stream, which
    // re-queues the evaluation.
    if (w.call != nullptr) {
      w.cancel_reason = why;
      w.call->TryCancel();
    }
  }
}

// ---- dispatch ----

bool Dispatcher::IdleFor(const Worker& w, const std::string& target) {
  return w.registered && w.healthy && !w.info.draining() && w.current.empty() &&
         w.info.queue_length() == 0 && w.info.target() == target;
}

void Dispatcher::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](Dispatcher* d) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                               return d->wake_ || d->stopping_;
                             },
                             this),
                         kTick);
    if (stopping_) break;
    wake_ = false;
    int64_t now = NowMs();
    CheckHeartbeatsLocked(now);
    DispatchLocked(now);
  }
}

void Dispatcher::DispatchLocked(int64_t now_ms) {
  if (now_ms < hold_until_ms_) return;
  for (auto& [target, q] : queues_) {
    bool moved = false;
    while (!q.retries.empty() || !q.users.empty()) {
      Worker* best = nullptr;
      std::string best_id;
      for (auto& [id, w] : workers_) {
        if (!IdleFor(w, target)) continue;
        if (best == nullptr || w.last_dispatch_ms < best->last_dispatch_ms) {
          best = &w;
          best_id = id;
        }
      }
      if (best == nullptr) break;
      std::string eval_id = PopLocked(&q);
      Pending& p = pending_.at(eval_id);
      p.running = true;
      p.published_position = -1;
      p.published_matching = -1;
      best->current = eval_id;
      best->last_dispatch_ms = now_ms;
      best->call = std::make_shared<grpc::ClientContext>();
      best->call->AddMetadata(kJobCredentialMetadata, best->job_credential);
      best->cancel_reason.clear();
      ++running_attempts_;
      moved = true;
      attempt_threads_.Start([this, eval_id, best_id, channel = best->channel, call = best->call] {
        RunAttempt(eval_id, best_id, channel, call);
      });
    }
    if (moved) PublishPositionsLocked(target);
  }
}

void Dispatcher::SetSessionProgressObserver(
    std::function<void(const SessionProgress&)> observer) {
  absl::WriterMutexLock lock(&observer_mu_);
  session_progress_ = std::move(observer);
}

void Dispatcher::ReportSessionProgress(const EvaluationRecord& eval, int attempt, int done,
                                       int total, const v1::EvaluationEvent& event) {
  if (eval.session_id.empty()) return;
  absl::ReaderMutexLock lock(&observer_mu_);
  if (!session_progress_) return;
  SessionProgress p;
  p.session_id = eval.session_id;
  p.session_by = eval.session_by;
  p.evaluation_id = eval.id;
  p.attempt = attempt;
  p.done = done;
  p.total = total;
  p.event = event;
  session_progress_(p);
}

void Dispatcher::Notice(const std::string& id, const std::string& text) {
  v1::EvaluationEvent e;
  e.set_evaluation_id(id);
  e.mutable_notice()->set_text(text);
  hub_->Publish(e);
}

void Dispatcher::RunAttempt(std::string id, std::string worker_id,
                        std::shared_ptr<grpc::Channel> channel,
                        std::shared_ptr<grpc::ClientContext> call) {
  std::string lost_reason;
  bool worker_busy = false;
  bool worker_refused = false;
  AttemptEnd end =
      Execute(id, worker_id, channel, call.get(), &lost_reason, &worker_busy, &worker_refused);

  absl::MutexLock lock(&mu_);
  auto w = workers_.find(worker_id);
  if (w != workers_.end() && w->second.call == call) {
    w->second.current.clear();
    w->second.call.reset();
    // Busy with someone else's attempt (say, one from before this process
    // started): not idle until a heartbeat says so. Otherwise its queue is
    // as empty as this attempt left it.
    w->second.info.set_queue_length(worker_busy ? 1 : 0);
    if (end == AttemptEnd::kRequeue && !worker_busy) {
      SetUnhealthyLocked(&w->second, worker_id, lost_reason);
    }
    // Its next heartbeat answers known=false: it registers again and gets
    // a new credential.
    if (worker_refused) w->second.registered = false;
  }
  auto p = pending_.find(id);
  if (p != pending_.end()) {
    if (end == AttemptEnd::kRequeue || end == AttemptEnd::kRetryLater) {
      p->second.running = false;
      EnqueueLocked(id, true);
      PublishPositionsLocked(p->second.target);
      if (end == AttemptEnd::kRetryLater) hold_until_ms_ = NowMs() + 1000;
    } else if (end == AttemptEnd::kFinished) {
      pending_.erase(p);
    }
  }
  --running_attempts_;
  wake_ = true;
}

Dispatcher::AttemptEnd Dispatcher::Execute(const std::string& id, const std::string& worker_id,
                                       const std::shared_ptr<grpc::Channel>& channel,
                                       grpc::ClientContext* call,
                                       std::string* lost_reason, bool* worker_busy,
                                       bool* worker_refused) {
  absl::StatusOr<EvaluationRecord> eval = store_->GetEvaluation(id);
  if (!eval.ok()) {
    Logf("evaluation %s cannot start: %s", id, eval.status().message());
    return AttemptEnd::kRetryLater;
  }
  if (eval->state == kStateDone || eval->state == kStateFailed) return AttemptEnd::kFinished;
  if (eval->attempts >= options_.max_attempts) {
    EndFailed(id, absl::StrCat("gave up after ", eval->attempts,
                               " attempts: every worker it ran on was lost"));
    return AttemptEnd::kFinished;
  }
  int attempt = 0;
  absl::StatusOr<bool> started = store_->MarkRunning(id, worker_id, NowMs(), &attempt);
  if (!started.ok()) {
    Logf("evaluation %s cannot start: %s", id, started.status().message());
    return AttemptEnd::kRetryLater;
  }
  if (!*started) return AttemptEnd::kFinished;

  v1::Attempt to_send;
  to_send.set_evaluation_id(id);
  to_send.set_number(attempt);
  if (!to_send.mutable_request()->ParseFromString(eval->request)) {
    EndFailed(id, "the stored request does not parse");
    return AttemptEnd::kFinished;
  }
  Logf("evaluation %s attempt %d on worker %s", id, attempt, worker_id);

  // A long stream: no deadline; a lost worker is noticed by the broken
  // connection, keepalives, or missed heartbeats (which cancel `call`).
  std::unique_ptr<v1::Worker::Stub> stub = v1::Worker::NewStub(channel);
  std::unique_ptr<grpc::ClientReader<v1::EvaluationEvent>> reader = stub->Evaluate(call, to_send);
  v1::EvaluationEvent event;
  int done = 0, total = 0;
  bool finished = false;
  while (!finished && reader->Read(&event)) {
    event.set_evaluation_id(id);
    switch (event.event_case()) {
      case v1::EvaluationEvent::kStarted:
        event.mutable_started()->set_worker_id(worker_id);
        event.mutable_started()->set_attempt(attempt);
        total = event.started().scenarios();
        store_->SetProgress(id, attempt, 0, total).IgnoreError();
        ReportSessionProgress(*eval, attempt, 0, total, event);
        hub_->Publish(event);
        break;
      case v1::EvaluationEvent::kScenario:
        store_->SetProgress(id, attempt, ++done, std::max(total, done)).IgnoreError();
        ReportSessionProgress(*eval, attempt, done, std::max(total, done), event);
        hub_->Publish(event);
        break;
      case v1::EvaluationEvent::kNotice:
        hub_->Publish(event);
        break;
      case v1::EvaluationEvent::kVerdict:
      case v1::EvaluationEvent::kFailed: {
        // The outcome is stored once (idempotent by evaluation id) and
        // published only by the attempt that stored it.
        absl::StatusOr<bool> changed;
        if (event.has_verdict()) {
          std::string bytes;
          event.verdict().SerializeToString(&bytes);
          changed = WithRetries(absl::StrCat("storing the verdict of ", id),
                                [&] { return store_->FinishDone(id, bytes, NowMs()); });
        } else {
          changed = WithRetries(absl::StrCat("storing the failure of ", id), [&] {
            return store_->FinishFailed(id, event.failed().error(), NowMs());
          });
        }
        finished = true;
        if (!changed.ok()) {
          // What the worker found is lost to the store; the evaluation
          // still ends, and says why.
          EndFailed(id, absl::StrCat(event.has_verdict() ? "the verdict" : "the worker's failure (" +
                                                                 event.failed().error() + ")",
                                     " could not be stored: ", changed.status().message()));
          break;
        }
        if (*changed) {
          ReportSessionProgress(*eval, attempt, done, std::max(total, done), event);
          hub_->Publish(event);
        }
        break;
      }
      default:
        break;
    }
  }
  if (finished) {
    // The outcome is stored; the rest of the stream carries nothing.
    call->TryCancel();
    reader->Finish();
    Logf("evaluation %s finished on worker %s", id, worker_id);
    return AttemptEnd::kFinished;
  }
  grpc::Status status = reader->Finish();
  std::string cancel_reason;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return AttemptEnd::kStopped;
    auto w = workers_.find(worker_id);
    if (w != workers_.end() && w->second.call.get() == call) cancel_reason = w->second.cancel_reason;
  }
  std::string cancelled = CancelReason(id);
  if (!cancelled.empty()) {
    EndFailed(id, cancelled);
    Logf("evaluation %s cancelled on worker %s", id, worker_id);
    return AttemptEnd::kFinished;
  }
  if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    EndFailed(id, absl::StrCat("worker ", worker_id, " rejected the request: ",
                               status.error_message()));
    return AttemptEnd::kFinished;
  }
  *worker_busy = status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
  *worker_refused = status.error_code() == grpc::StatusCode::UNAUTHENTICATED;
  if (*worker_refused) {
    *lost_reason = absl::StrCat("it refused this coordinator's job credential (",
                                status.error_message(), ")");
  } else if (!cancel_reason.empty()) {
    *lost_reason = cancel_reason;
  } else if (status.ok()) {
    *lost_reason = "the stream ended without a verdict";
  } else {
    *lost_reason = absl::StrCat("stream broke: ", status.error_message());
  }
  // A worker that refused the attempt never ran it: that attempt does not count.
  absl::StatusOr<bool> requeued = WithRetries(absl::StrCat("re-queueing ", id), [&] {
    return store_->Requeue(id, /*refund_attempt=*/*worker_busy || *worker_refused);
  });
  if (!requeued.ok()) {
    EndFailed(id, absl::StrCat("its worker was lost (", *lost_reason,
                               ") and it could not be re-queued: ", requeued.status().message()));
    return AttemptEnd::kFinished;
  }
  if (!*requeued) return AttemptEnd::kFinished;
  std::string text = *worker_busy
                         ? absl::StrCat("worker ", worker_id, " is busy; re-queued")
                         : absl::StrCat("worker ", worker_id, " lost (", *lost_reason,
                                        "); re-queued");
  Logf("evaluation %s: %s", id, text);
  Notice(id, text);
  return AttemptEnd::kRequeue;
}

}  // namespace kseek::server
