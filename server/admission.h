// The coordinator's admission threads: where submissions are checked
// (unpacking the task, validating the request) and stored (an fsync'd
// insert) away from gRPC's callback threads, so that cheap calls keep being
// answered during a burst of submissions.
//
// A fixed number of threads take jobs first in first out. They run at the
// serving threads' priority: a lower one (nice +10) bought about 3 ms of
// p99 for cheap calls on a busy 2-core machine, and cost two thirds of a
// burst's admission rate (scripts/bench_service.sh --latency). Run refuses a
// job (returns false) while `max_waiting` jobs wait. The destructor runs what
// is queued, then joins the threads. Thread-safe.
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
