// ThreadSet: every thread it starts is joined, by JoinAll() or the
// destructor; a thread of the set may start another.
#include "server/thread_set.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kseek::server {
namespace {

TEST(ThreadSetTest, JoinAllWaitsForEveryThread) {
  std::atomic<int> done{0};
  ThreadSet threads;
  for (int i = 0; i < 50; ++i) {
    threads.Start([&done] {
      absl::SleepFor(absl::Milliseconds(2));
      ++done;
    });
  }
  threads.JoinAll();
  EXPECT_EQ(done.load(), 50);
}

TEST(ThreadSetTest, TheDestructorJoinsAThreadStillRunning) {
  std::atomic<bool> finished{false};
  absl::Notification started;
  {
    ThreadSet threads;
    threads.Start([&] {
      started.Notify();
      absl::SleepFor(absl::Milliseconds(50));
      finished = true;
    });
    started.WaitForNotification();
  }
  EXPECT_TRUE(finished.load());
}

TEST(ThreadSetTest, AThreadOfTheSetMayStartAnother) {
  std::atomic<int> done{0};
  ThreadSet threads;
  absl::Notification second_started;
  threads.Start([&] {
    threads.Start([&] {
      ++done;
      second_started.Notify();
    });
    ++done;
  });
  second_started.WaitForNotification();
  threads.JoinAll();
  EXPECT_EQ(done.load(), 2);
}

TEST(ThreadSetTest, ManyThreadsOneAfterAnother) {
  ThreadSet threads;
  for (int i = 0; i < 200; ++i) {
    absl::Notification ran;
    threads.Start([&ran] { ran.Notify(); });
    ran.WaitForNotification();
  }
  threads.JoinAll();
}

}  // namespace
}  // namespace kseek::server
