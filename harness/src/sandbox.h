// The run-time sandbox of a kernel host (the process that holds a candidate
// or baseline library): a seccomp-bpf filter installed on every thread of
// the process after its set-up and before the library is loaded, so that
// the library's static constructors, ifunc resolvers and every call run
// under it. harness/README.md ("Threat model") says what it refuses and
// why.
//
// Refused with EPERM (and a line on stderr naming the system call, its
// number, name and, for calls that take one, the path it was given, as long
// as the process keeps the SIGSYS handler installed here): new processes
// (fork, vfork, clone without CLONE_THREAD — and with it too on the host
// target, where kernels may not start threads), exec, signals to any other
// process, ptrace and access to other processes' memory, new sockets, files
// opened for writing (but those a supervisor answers) or created,
// file-system changes, writable memory made executable (and executable
// memory that is not a read-only file mapping),
// memfd, io_uring, bpf, perf events, namespaces, mounts, session and group
// changes, kernel modules, reboot, further seccomp filters (a filter of
// the process's own with a listener would take the supervisor's
// requests). clone3 and openat2 answer ENOSYS, so that
// the C library falls back to clone and openat, whose arguments the filter
// can read. System calls of another ABI (x32, i386) kill the process.
//
// Thread-compatible: called once per process.
#ifndef KERNELSEEK_HARNESS_SANDBOX_H_
#define KERNELSEEK_HARNESS_SANDBOX_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace kseek {

// At most this many bytes of a refused call's path go into its message
// (the filter's, and the supervisor's for the opens it refuses).
constexpr size_t kRefusedPathBytes = 160;

struct SeccompOptions {
  bool allow_threads = false;  // CUDA targets: the driver starts threads
  // Opens for writing that neither create nor truncate (open, openat with
  // O_WRONLY or O_RDWR alone) are not refused here but wait for a
  // supervisor's answer through a listener (SECCOMP_RET_USER_NOTIF): the
  // judge's OpenBroker (open_broker.h), which opens device files of the
  // GPU's driver for the process and refuses everything else. Opens that
  // create or truncate are refused as without it.
  bool supervise_opens = false;
};

// Installs the filter on all threads of this process (SECCOMP_FILTER_FLAG_TSYNC)
// after setting no_new_privs. Fails when the kernel lacks seccomp filters.
// With supervise_opens, *listener is the listener's descriptor (the caller
// hands it to the supervisor and closes its own copy before any code it
// does not trust runs: a process that holds its own listener answers its
// own requests), or -1 where the kernel cannot supervise (before Linux
// 5.14): opens for writing are then refused.
absl::Status InstallSeccomp(const SeccompOptions& options, int* listener = nullptr);

// Whether this kernel can hand opens to a supervisor (supervise_opens).
bool CanSuperviseOpens();

// Whether this machine can install the filter: tried in a short-lived
// child; `why` says what failed otherwise.
bool CanUseSeccomp(std::string* why);

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_SANDBOX_H_
