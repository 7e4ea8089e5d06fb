#include "server/thread_set.h"

#include <utility>

namespace kseek::server {

ThreadSet::~ThreadSet() { JoinAll(); }

void ThreadSet::Start(std::function<void()> work) {
  std::vector<std::thread> done;
  {
    absl::MutexLock lock(&mu_);
    done = TakeFinishedLocked();
    const uint64_t id = next_++;
    // The thread reports itself finished under mu_, which it cannot take
    // before its std::thread is in running_.
    running_[id] = std::thread([this, id, work = std::move(work)] {
      work();
      absl::MutexLock lock(&mu_);
      finished_.push_back(id);
    });
  }
  // Their work is done; they end as soon as they have released mu_.
  for (std::thread& t : done) t.join();
}

void ThreadSet::JoinAll() {
  std::vector<std::thread> done;
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](ThreadSet* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {  // Await holds mu_
          return s->finished_.size() == s->running_.size();
        },
        this));
    done = TakeFinishedLocked();
  }
  for (std::thread& t : done) t.join();
}

std::vector<std::thread> ThreadSet::TakeFinishedLocked() {
  std::vector<std::thread> done;
  for (uint64_t id : finished_) {
    auto it = running_.find(id);
    done.push_back(std::move(it->second));
    running_.erase(it);
  }
  finished_.clear();
  return done;
}

}  // namespace kseek::server
