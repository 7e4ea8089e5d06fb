// ChildProcess: the one way KernelSeek starts, watches and ends a child
// process (compilers, kseek-runner and its kernel hosts, agents, the
// worker's device check, `kseek up`'s daemons).
//
// A ChildProcess owns one child and the pipes of its output. Start() forks
// and applies the ChildSpec in the child before exec: its own process group
// (or session), stdin from /dev/null, stdout/stderr to pipes, a file or
// /dev/null, only the descriptors named in `pass_fds`, an empty signal mask
// and default dispositions (except those it is told to ignore), resource
// limits, namespaces, another user, and a last `before_exec` step. Pump()
// reads the output line by line until a deadline, the end of the output, a
// wake-up descriptor or the child's exit, and carries a stop sequence
// (signals to the whole group with grace periods) forward on its own.
// Exit is detected with WNOWAIT first, so that the group id cannot be
// reused while what is left of the group is killed; then the child is
// reaped and ExitDescription() says how it ended.
//
// Not thread-safe: one thread drives a ChildProcess. The destructor kills
// the group and reaps the child when it is still running.
#ifndef KSEEK_BASE_CHILD_PROCESS_H_
#define KSEEK_BASE_CHILD_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace kseek {

// Where one of the child's output streams goes.
enum class ChildOutput {
  kPipe,     // a pipe this process reads (Pump)
  kFile,     // ChildSpec::output_file (created 0600, truncated, appended to)
  kNull,     // /dev/null
  kInherit,  // this process's own descriptor
};

struct ChildSpec {
  std::string path;               // the program; no PATH search
  std::vector<std::string> argv;  // argv[0] included
  // "NAME=value" entries; nullopt: this process's environment.
  std::optional<std::vector<std::string>> env;
  std::string cwd;  // empty: this process's

  ChildOutput stdout_to = ChildOutput::kPipe;
  ChildOutput stderr_to = ChildOutput::kPipe;
  // kPipe for both and merged: one pipe for both streams, delivered as
  // stdout.
  bool merge_stderr = false;
  std::string output_file;  // for kFile (both streams share it)

  // Descriptors of this process given to the child: {fd here, fd number
  // there}. Every other descriptor is closed in the child.
  std::vector<std::pair<int, int>> pass_fds;

  bool new_session = false;      // setsid(); otherwise a new process group
  bool die_with_parent = false;  // PR_SET_PDEATHSIG SIGKILL
  std::vector<int> ignore_signals;
  // {RLIMIT_x, soft = hard}; never above this process's hard limit.
  std::vector<std::pair<int, uint64_t>> rlimits;
  // unshare() flags (CLONE_NEWNET, CLONE_NEWNS, ...); a failure is fatal
  // to the start only when `unshare_required`.
  int unshare_flags = 0;
  bool unshare_required = false;
  // Another identity (requires the privilege): groups, gid, then uid.
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  std::vector<gid_t> groups;  // supplementary groups with `gid`
  // A last step in the child, right before exec: async-signal-safe calls
  // only. Returns 0, or an errno value that fails the start.
  std::function<int()> before_exec;
};

// One complete line of output (without its newline).
using LineSink = std::function<void(absl::string_view line)>;

// What Pump() saw before it returned.
struct PumpResult {
  bool exited = false;       // the child has exited (and was reaped)
  bool output_closed = false;  // every output pipe reached end of file
  bool woken = false;        // a wake descriptor became readable
  bool lines = false;        // at least one line was delivered
  bool deadline = false;     // `until` passed
};

class ChildProcess {
 public:
  // Starts the child. Fails with the errno text of what could not be done
  // (e.g. "cannot run /bin/x: No such file or directory", "setuid(1001):
  // Operation not permitted").
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const ChildSpec& spec);

  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Gives the child up: it is no longer watched, stopped or reaped by this
  // object (a daemon meant to outlive its starter, such as `kseek up
  // --detach`'s); returns its pid.
  pid_t Release();

  // Where complete lines go; a line longer than `max_line_bytes` is cut
  // there and delivered, the rest of it dropped. Lines are delivered from
  // Pump() and from Wait().
  void OnStdoutLine(LineSink sink) { out_.sink = std::move(sink); }
  void OnStderrLine(LineSink sink) { err_.sink = std::move(sink); }
  void set_max_line_bytes(size_t n) { max_line_bytes_ = n; }

  // Reads output and watches the child until `until`, until lines were
  // delivered, until the child has exited and its output is closed (or
  // `drain` has passed since it exited), or until one of `wake_fds` is
  // readable (not read here).
  // Advances a stop sequence begun with Stop().
  PumpResult Pump(absl::Time until, const std::vector<int>& wake_fds = {});

  // Begins ending the child: sends signals[0] to its group now, and each
  // next signal once the previous one's grace has passed while it runs
  // (Pump and Wait advance it). The last signal is normally SIGKILL.
  void Stop(std::vector<std::pair<int, absl::Duration>> sequence);
  // SIGKILL to the whole group, now.
  void Kill();
  // Sends `sig` to the group (not after the child was reaped).
  void Signal(int sig);

  // Whether the child has exited; reaps it (after killing what is left of
  // its group) when it has.
  bool Exited();
  // Pumps until the child exits (or `until`; then it is killed) and its
  // output is drained, and reaps it.
  void Wait(absl::Time until = absl::InfiniteFuture());

  // After exit: the wait status, and how the child ended in words ("exited
  // with status 3", "was killed by signal 9 (Killed)").
  bool reaped() const { return reaped_; }
  int wait_status() const { return wait_status_; }
  std::string ExitDescription() const;
  bool ExitedNormally(int* code) const;
  int TermSignal() const;  // 0 unless killed by a signal

  // How long output is still read after the child exited, for grandchildren
  // that keep the pipe open.
  void set_drain(absl::Duration d) { drain_ = d; }

 private:
  struct Stream {
    int fd = -1;
    std::string partial;
    bool dropping = false;
    LineSink sink;
  };

  ChildProcess() = default;
  void ReadAvailable(Stream* s);
  void Deliver(Stream* s, absl::string_view line);
  void Flush(Stream* s);
  void AdvanceStop(absl::Time now);
  absl::Time NextStopAt() const;

  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool reaped_ = false;
  int wait_status_ = 0;
  absl::Time exited_at_ = absl::InfiniteFuture();
  absl::Duration drain_ = absl::Seconds(1);
  size_t max_line_bytes_ = size_t{1} << 20;
  Stream out_;
  Stream err_;
  std::vector<std::pair<int, absl::Duration>> stop_;
  size_t stop_next_ = 0;
  bool delivered_ = false;  // a line was delivered since the last poll
  absl::Time stop_at_ = absl::InfiniteFuture();
};

// "exited with status 3", "was killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int status);

// A child run to its end with its merged output kept (at most `max_output`
// bytes, the end of it): compilers, probes.
struct FinishedChild {
  std::string output;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false;
  std::string description;  // DescribeWaitStatus
};
absl::StatusOr<FinishedChild> RunToEnd(ChildSpec spec, absl::Duration timeout,
                                       size_t max_output = size_t{16} << 20);

}  // namespace kseek

#endif  // KSEEK_BASE_CHILD_PROCESS_H_
