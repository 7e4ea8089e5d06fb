// AgentProcess: one turn of a coding agent, run as a real child process.
//
// Start() spawns the invocation (from an adapter, see adapter.h) through
// ChildProcess (base/child_process.h) in its working directory, in a
// process group of its own, with stdin from /dev/null and the environment
// of this process plus the invocation's additions, confined as the
// invocation says (another user, limits, no network). One thread per
// process reads stdout line by line as it comes,
// hands each line to the adapter's parser and passes the events to the sink;
// it keeps the last bytes of stderr, enforces the wall-time limit and carries
// out interrupts.
//
// Every run delivers exactly one turn_end event, and it is the last event,
// whatever happens: the program is missing, cannot start, is not logged in,
// exits with an error, crashes, hangs past its limit or is interrupted. The
// failure comes first as an error event that says what happened (the
// program's name, the exit status or signal, the last lines of stderr), and
// the turn_end then has is_error set. A turn_end that the CLI printed is held
// back until the process is gone, so that it can carry such a failure.
//
// Stopping (an interrupt, the wall-time limit, a fatal error such as an
// authentication failure that the CLI would otherwise retry for minutes, or
// a CLI that does not exit within exit_grace of reporting its turn's end):
// SIGINT to the process group (what Ctrl-C sends; Claude Code ends the turn
// and exits, its conversation resumable; Codex exits), then SIGTERM after
// interrupt_grace, then SIGKILL after terminate_grace. When the agent exits,
// whatever it left running in its process group is killed, and a confined
// agent's every process (its user's: a daemon that left the group too).
//
// Thread-safety: Interrupt() and Wait() may be called from any thread. The
// sink is called on the run's own thread, one event at a time, never after
// Wait() returns; it may call Interrupt(), but must not call Wait() or
// destroy the AgentProcess.
#ifndef KERNELSEEK_SERVER_AGENT_AGENT_PROCESS_H_
#define KERNELSEEK_SERVER_AGENT_AGENT_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/child_process.h"
#include "server/agent/adapter.h"
#include "server/agent/event.h"

namespace kseek::agent {

struct AgentLimits {
  absl::Duration wall_time = absl::Hours(2);          // the whole turn
  absl::Duration interrupt_grace = absl::Seconds(20);  // SIGINT -> SIGTERM
  absl::Duration terminate_grace = absl::Seconds(5);   // SIGTERM -> SIGKILL
  // After the CLI printed the end of its turn, how long it may take to exit
  // before it is stopped (the turn still counts as it was reported).
  absl::Duration exit_grace = absl::Seconds(30);
  size_t stderr_tail_bytes = 16 * 1024;
  size_t max_line_bytes = 32 * 1024 * 1024;  // a longer stdout line is dropped
};

// How the run ended.
struct AgentExit {
  bool started = false;    // the program was found and spawned
  int exit_code = -1;      // its exit status, when it exited by itself
  int signal = 0;          // the signal that ended it, if one did
  bool timed_out = false;  // stopped at the wall-time limit
  bool interrupted = false;  // stopped by Interrupt()
  bool turn_error = true;  // the turn_end's is_error
  std::string stderr_tail;
  absl::Duration elapsed;
};

using AgentEventSink = std::function<void(const AgentEvent&)>;

class AgentProcess {
 public:
  // Never fails: a program that cannot run yields an error and a turn_end
  // event on the sink. `sink` may be empty (events are then dropped).
  static std::unique_ptr<AgentProcess> Start(const AgentInvocation& invocation,
                                             std::unique_ptr<EventParser> parser,
                                             const AgentLimits& limits, AgentEventSink sink);
  // Interrupts the run if it still goes on, and waits for it.
  ~AgentProcess();
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  // The child's process id (also its process group id), or -1 if it did not
  // start.
  pid_t pid() const { return pid_; }

  // Asks the agent to stop (e.g. for a human's "--now" message) and returns
  // at once; the run then ends with an "interrupted" error naming `reason`.
  // Does nothing once the process is gone.
  void Interrupt(const std::string& reason);

  // Blocks until the process and the run's thread are done.
  AgentExit Wait();

 private:
  AgentProcess(std::unique_ptr<EventParser> parser, const AgentLimits& limits,
               AgentEventSink sink);
  void Spawn(const AgentInvocation& invocation);
  void Run();

  std::unique_ptr<EventParser> parser_;
  const AgentLimits limits_;
  AgentEventSink sink_;
  std::string program_;  // argv[0], for messages
  pid_t pid_ = -1;
  std::optional<AgentEvent> spawn_error_;  // set when Spawn failed
  std::unique_ptr<ChildProcess> child_;    // driven by the run's thread only
  std::optional<uid_t> confined_uid_;
  int wake_fd_ = -1;  // eventfd: Interrupt() wakes the run's thread
  absl::Time started_at_;
  std::thread thread_;
  std::once_flag joined_;

  absl::Mutex mu_;
  std::optional<std::string> interrupt_reason_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  AgentExit exit_ ABSL_GUARDED_BY(mu_);
};

// Runs one turn to the end: Invocation, Start, Wait. An invalid turn
// returns its INVALID_ARGUMENT status and runs nothing.
absl::StatusOr<AgentExit> RunAgentTurn(const AgentAdapter& adapter, const TurnRequest& turn,
                                       const AgentLimits& limits, AgentEventSink sink);

}  // namespace kseek::agent

#endif  // KERNELSEEK_SERVER_AGENT_AGENT_PROCESS_H_
