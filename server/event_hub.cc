// The evaluation event hub (see event_hub.h).
#include "server/event_hub.h"

#include <utility>

namespace kseek::server {

namespace v1 = ::kernelseek::v1;

bool EventHub::IsTerminal(const v1::EvaluationEvent& event) {
  return event.has_verdict() || event.has_failed();
}

void EventHub::Open(const std::string& id) {
  absl::MutexLock lock(&mu_);
  channels_.try_emplace(id);
}

void EventHub::Publish(const v1::EvaluationEvent& event) {
  absl::MutexLock lock(&mu_);
  auto it = channels_.find(event.evaluation_id());
  if (it == channels_.end()) return;
  Channel& ch = it->second;
  for (auto& [handle, sink] : ch.sinks) sink(event);
  if (IsTerminal(event)) {
    channels_.erase(it);
    return;
  }
  switch (event.event_case()) {
    case v1::EvaluationEvent::kQueued:
    case v1::EvaluationEvent::kStarted:
      // A new position, or a new attempt: what came before is history.
      ch.replay.clear();
      ch.replay.push_back(event);
      break;
    case v1::EvaluationEvent::kScenario:
      ch.replay.push_back(event);
      break;
    default:
      break;
  }
}

uint64_t EventHub::Subscribe(const std::string& id, Sink sink) {
  absl::MutexLock lock(&mu_);
  auto it = channels_.find(id);
  if (it == channels_.end()) return 0;
  for (const v1::EvaluationEvent& e : it->second.replay) sink(e);
  uint64_t handle = next_handle_++;
  it->second.sinks.emplace(handle, std::move(sink));
  return handle;
}

void EventHub::Unsubscribe(const std::string& id, uint64_t handle) {
  absl::MutexLock lock(&mu_);
  auto it = channels_.find(id);
  if (it != channels_.end()) it->second.sinks.erase(handle);
}

}  // namespace kseek::server
