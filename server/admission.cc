// The coordinator's admission threads (see admission.h).
#include "server/admission.h"

#include <utility>

namespace kseek::server {

Admission::Admission(int threads, int max_waiting) : max_waiting_(static_cast<size_t>(max_waiting)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

Admission::~Admission() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

bool Admission::Run(std::function<void()> job) {
  absl::MutexLock lock(&mu_);
  if (jobs_.size() >= max_waiting_) return false;
  jobs_.push_back(std::move(job));
  return true;
}

void Admission::Loop() {
  while (true) {
    std::function<void()> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Admission* a) ABSL_NO_THREAD_SAFETY_ANALYSIS { return a->stopping_ || !a->jobs_.empty(); },
          this));
      if (jobs_.empty()) return;  // stopping, and nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace kseek::server
