// In-memory fan-out of evaluation events to the streams watching them.
//
// Each pending evaluation has a channel. A channel remembers what a new
// subscriber must see to catch up — the latest Queued event, or the Started
// event and the scenario results of the running attempt — and replays it on
// Subscribe before any live event, so a watcher neither misses nor repeats
// an event. A Verdict or Failed event is delivered and closes the channel;
// later subscribers read the outcome from the store instead.
//
// Thread-safe. Sinks run under the hub's lock: they must be quick and must
// not call back into the hub.
#ifndef KERNELSEEK_SERVER_EVENT_HUB_H_
#define KERNELSEEK_SERVER_EVENT_HUB_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "kernelseek/v1/evaluation.pb.h"

namespace kseek::server {

class EventHub {
 public:
  using Sink = std::function<void(const kernelseek::v1::EvaluationEvent&)>;

  // Opens the channel of evaluation `id` (no-op when open).
  void Open(const std::string& id);
  // Delivers `event` to the subscribers of its evaluation and updates the
  // replay state; no-op when the channel is not open.
  void Publish(const kernelseek::v1::EvaluationEvent& event);
  // Replays the channel's state to `sink`, then delivers live events until
  // Unsubscribe or the channel closes. Returns 0 (and calls nothing) when
  // the channel is not open, else a handle for Unsubscribe.
  uint64_t Subscribe(const std::string& id, Sink sink);
  void Unsubscribe(const std::string& id, uint64_t handle);

  // Whether `event` ends an evaluation (Verdict or Failed).
  static bool IsTerminal(const kernelseek::v1::EvaluationEvent& event);

 private:
  struct Channel {
    std::vector<kernelseek::v1::EvaluationEvent> replay;
    std::map<uint64_t, Sink> sinks;
  };

  absl::Mutex mu_;
  uint64_t next_handle_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, Channel> channels_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_EVENT_HUB_H_
