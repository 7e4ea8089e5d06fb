// ThreadSet: the threads a component starts for work that must not block
// its caller (an attempt on a worker, a session's cancellation), owned instead of
// detached. A thread that has finished is joined by the next Start();
// JoinAll() (and the destructor) waits for every one. Nothing outlives the
// owner: a component that is stopped has no threads left running.
//
// Thread-safe: Start() may be called from any thread, also from a thread
// of the set. JoinAll() must not be called from one of them.
#ifndef KERNELSEEK_SERVER_THREAD_SET_H_
#define KERNELSEEK_SERVER_THREAD_SET_H_

#include <cstdint>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kseek::server {

class ThreadSet {
 public:
  ThreadSet() = default;
  ~ThreadSet();  // JoinAll()
  ThreadSet(const ThreadSet&) = delete;
  ThreadSet& operator=(const ThreadSet&) = delete;

  // Runs `work` on a new thread of the set.
  void Start(std::function<void()> work);
  // Waits until every thread of the set has finished, and joins them.
  void JoinAll();

 private:
  // The threads that have finished, taken out of running_.
  std::vector<std::thread> TakeFinishedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, std::thread> running_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> finished_ ABSL_GUARDED_BY(mu_);  // in running_, work done
};

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_THREAD_SET_H_
