// A kernel host: the process that holds one untrusted or timed kernel
// library (the candidate, or the baseline) apart from the judge.
//
// The judge (kseek-runner) owns every buffer, the inputs, the reference and
// its outputs, the comparisons, the verdict and the result channel with its
// secret. A kernel host is `kseek-runner --kernel-host`, started by the
// judge in its own session, killed when the judge dies, with only a
// SOCK_SEQPACKET socket to the judge and its library (a sealed memfd copy,
// so that it needs no access to the judge's folders), as an unprivileged
// user where the judge is root and that user can run it, else without
// capabilities. It opens the device, installs the
// sandbox (sandbox.h) when asked, then loads the library (so the library's
// own start-up code runs sandboxed), maps the buffers the judge shares with
// it (host: memfd descriptors; CUDA: IPC memory handles) and calls
// kseek_launch on them when told, reporting its return code and the times
// it measured. Nothing a kernel host says is trusted: outputs are checked by
// the judge, and its times are cross-checked with clocks outside it.
//
// Messages are JSON objects, one per packet:
//   host -> judge   {"listener": true} + its filter's listener     (sandboxed, before ready)
//   host -> judge   {"ready": true} | {"error": "..."}              (once, at start)
//   judge -> host   {"op": "map", "id": N, "bytes": B, "handle": "hex"} (+ a memfd on host)
//                   {"op": "unmap", "id": N}
//                   {"op": "arm", "timed": bool, "params": [[name, value], ...],
//                    "tensors": [{"id", "offset", "name", "dtype", "shape"}, ...]}
//   host -> judge   {"ok": true} | {"error": "..."}                  (map, unmap, arm)
//   judge -> host   "g"                                              (make the armed call)
//   host -> judge   a GoReply (status, rc, device_ms, host_ms; binary)
//   judge -> host   "p"; host -> judge "p"                           (a ping)
//   judge -> host   {"op": "last_error"}   after a non-zero rc or a device error
//   host -> judge   {"error": "...", "device": bool}
//
// KernelHost (the judge's side) is not thread-safe.
#ifndef KERNELSEEK_HARNESS_KERNEL_HOST_H_
#define KERNELSEEK_HARNESS_KERNEL_HOST_H_

#include <time.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/child_process.h"
#include "harness/src/open_broker.h"
#include "harness/src/runner_device.h"
#include "harness/src/task.h"
#include "kernelseek/abi.h"

namespace kseek {

struct KernelHostOptions {
  std::string runner_path;  // kseek-runner
  std::string library;
  std::string role;  // "candidate" or "baseline": names it in messages
  Target target = Target::kHost;
  int gpu = 0;
  bool seccomp = true;           // the sandbox of sandbox.h
  bool isolate_network = false;  // a network namespace of its own
  std::string log_path;          // its stdout and stderr
  std::vector<std::string> env;  // its whole environment
  // Another identity for it (the judge must be root); unset: the judge's,
  // with every capability dropped.
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
};

// Whether `runner_path --kernel-host --probe` runs as `uid`/`gid`; `why`
// says what failed otherwise.
bool KernelHostRunsAs(const std::string& runner_path, uid_t uid, gid_t gid, std::string* why);

// A clock's reading in ms (clock_gettime): the judge reads a kernel host's
// CPU clock with it, and a host its own over a timed call.
double ClockMs(clockid_t clock);

// One tensor of a call: buffer `id` (shared with Map) at `offset`.
struct HostTensor {
  int id = 0;
  size_t offset = 0;
  std::string name;
  kseek_dtype dtype = KSEEK_F32;
  std::vector<int64_t> shape;
};

// What a kernel host reports of one call.
struct HostCall {
  int rc = 0;
  std::string message;  // kseek_error_message() after a non-zero rc
  double device_ms = 0;  // timed calls: its device events (host: its clock)
  double host_ms = 0;    // timed calls: its host clock around call + sync
  // Timed calls: the host process's CPU time over the call, as that
  // process says (believed from the baseline's only).
  double cpu_ms = 0;
};

class KernelHost {
 public:
  // Starts the host and waits for it to be ready (library loaded).
  // FailedPrecondition carries why it could not start (the library does
  // not load, the device cannot be opened).
  static absl::StatusOr<std::unique_ptr<KernelHost>> Start(const KernelHostOptions& options);
  ~KernelHost();

  absl::Status Map(int id, const SharedAllocation& allocation);
  absl::Status Unmap(int id);
  // A call in two steps: Arm sends its parameters and tensors (the host
  // prepares the arguments), Go makes it and waits for the host to report
  // (it synchronises the device first), so that the judge's clocks around
  // Go see little but the call. Errors: Aborted when the host died or broke
  // the protocol (the message says how), Internal with "device error ..."
  // when the host reported a device error (it exits after that).
  absl::Status Arm(const std::vector<std::pair<std::string, int64_t>>& params,
                   const std::vector<HostTensor>& tensors, bool timed);
  absl::StatusOr<HostCall> Go();
  // A round trip that returns once the host has handled everything before
  // it and blocked again: the kernel's account of its CPU time then holds
  // all of that.
  absl::Status Ping();

  pid_t pid() const { return child_->pid(); }
  // Whether the host is gone (it died, or broke the protocol and was killed).
  bool dead() const { return dead_; }
  // The last lines of its output.
  std::string LogTail() const;
  // How many bytes of output it has written so far, and what it wrote
  // after the first `offset` of them: its last lines, at most `max_bytes`
  // (a call's own output: what the kernel printed, and the sandbox's
  // report of a system call it refused).
  uint64_t LogBytes() const;
  std::string LogSince(uint64_t offset, size_t max_bytes) const;
  // The signal that ended it, 0 if none.
  int term_signal() const { return child_->TermSignal(); }

 private:
  KernelHost() = default;
  absl::Status Send(const std::string& text, int fd = -1);
  // `spin`: poll before blocking (kernel_host.cc, kSpinWait). With
  // `broker`, a first packet that hands over the host's filter listener
  // starts *broker on it, and the next packet is returned.
  absl::StatusOr<std::string> Receive(bool spin = false,
                                      std::unique_ptr<OpenBroker>* broker = nullptr);
  // Marks the host dead and says how it ended, for an error message.
  std::string Died(const std::string& what);

  KernelHostOptions options_;
  std::unique_ptr<ChildProcess> child_;
  int socket_ = -1;
  std::unique_ptr<OpenBroker> broker_;  // answers its opens for writing, when sandboxed
  bool dead_ = false;
};

// The host's side: `kseek-runner --kernel-host ...` (argv after the binary
// name). Returns the process's exit status.
int ServeKernel(int argc, char** argv);

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_KERNEL_HOST_H_
