// The coordinator's admission threads: where submissions are checked
// (unpacking the task, validating the request) and stored (an fsync'd
// insert) away from gRPC's callback threads, so that cheap calls keep being
// answered during a burst of submissions.
//
// A fixed number of threads, run at a lower scheduling priority (nice +10)
// than the threads serving calls, take jobs first in first out. Run refuses
// a job (returns false) while `max_waiting` jobs wait. The destructor runs
// what is queued, then joins the threads. Thread-safe.
#ifndef KERNELSEEK_SERVER_ADMISSION_H_
#define KERNELSEEK_SERVER_ADMISSION_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kseek::server {

class Admission {
 public:
  Admission(int threads, int max_waiting);
  ~Admission();
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // Queues `job`; false (and `job` dropped) when the queue is full.
  bool Run(std::function<void()> job);

 private:
  void Loop();

  const size_t max_waiting_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_ADMISSION_H_
