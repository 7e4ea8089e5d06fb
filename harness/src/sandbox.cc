// The kernel host's seccomp filter (sandbox.h).
#include "harness/src/sandbox.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kseek {

namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
#error "the kernel-host sandbox knows x86-64 and aarch64 only"
#endif

constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kRefuse = SECCOMP_RET_TRAP;  // SIGSYS: the handler says which, returns EPERM
constexpr uint32_t kNoSuchCall = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr uint32_t kSupervise = SECCOMP_RET_USER_NOTIF;

constexpr uint32_t kNrOffset = offsetof(struct seccomp_data, nr);
constexpr uint32_t kArchOffset = offsetof(struct seccomp_data, arch);
// The low 32 bits of argument i (little-endian).
constexpr uint32_t ArgLow(int i) { return offsetof(struct seccomp_data, args) + 8 * i; }

class Program {
 public:
  void Load(uint32_t offset) { code_.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void Ret(uint32_t action) { code_.push_back(BPF_STMT(BPF_RET | BPF_K, action)); }
  void JumpEq(uint32_t k, uint8_t jt, uint8_t jf) {
    code_.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf));
  }
  void JumpSet(uint32_t k, uint8_t jt, uint8_t jf) {
    code_.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, k, jt, jf));
  }
  void JumpGe(uint32_t k, uint8_t jt, uint8_t jf) {
    code_.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, k, jt, jf));
  }

  // Every block below starts with the system call number in the
  // accumulator and, when it is not its call, falls through with it still
  // there; when it is, it returns on every path.
  void Answer(long nr, uint32_t action) {
    JumpEq(static_cast<uint32_t>(nr), 0, 1);
    Ret(action);
  }
  // Refused when argument `arg` has any bit of `bits`.
  void RefuseWhenSet(long nr, int arg, uint32_t bits) {
    JumpEq(static_cast<uint32_t>(nr), 0, 4);
    Load(ArgLow(arg));
    JumpSet(bits, 0, 1);
    Ret(kRefuse);
    Ret(kAllow);
  }
  // Allowed only when argument `arg` is one of `values`.
  void AllowOnlyFor(long nr, int arg, const std::vector<uint32_t>& values) {
    const uint8_t n = static_cast<uint8_t>(values.size());
    JumpEq(static_cast<uint32_t>(nr), 0, static_cast<uint8_t>(n + 3));
    Load(ArgLow(arg));
    for (uint8_t i = 0; i < n; ++i) JumpEq(values[i], static_cast<uint8_t>(n - i), 0);
    Ret(kRefuse);
    Ret(kAllow);
  }
  // An open: refused when it creates or truncates; with `supervise`, one
  // for writing goes to the supervisor, else it is refused too.
  void Open(long nr, int arg, bool supervise) {
    if (!supervise) {
      RefuseWhenSet(nr, arg, O_WRONLY | O_RDWR | O_CREAT | O_TRUNC);
      return;
    }
    JumpEq(static_cast<uint32_t>(nr), 0, 6);
    Load(ArgLow(arg));
    JumpSet(O_CREAT | O_TRUNC, 2, 0);
    JumpSet(O_WRONLY | O_RDWR, 2, 0);
    Ret(kAllow);
    Ret(kRefuse);
    Ret(kSupervise);
  }
  // mmap: executable only as a read-only mapping of a file.
  void Mmap(long nr) {
    JumpEq(static_cast<uint32_t>(nr), 0, 7);
    Load(ArgLow(2));
    JumpSet(PROT_EXEC, 0, 4);
    JumpSet(PROT_WRITE, 2, 0);
    Load(ArgLow(3));
    JumpSet(MAP_ANONYMOUS, 0, 1);
    Ret(kRefuse);
    Ret(kAllow);
  }

  sock_fprog Get() {
    return sock_fprog{static_cast<unsigned short>(code_.size()), code_.data()};
  }

 private:
  std::vector<sock_filter> code_;
};

// The calls the filter names when it refuses one: the name and, for
// calls that take a path, which argument; `always`: refused whatever the
// arguments (the others are refused by their arguments, in Build).
struct CallName {
  long nr;
  const char* name;
  int path_arg;  // -1: none
  bool always;
};

#define KSEEK_REFUSED(n) CallName{SYS_##n, #n, -1, true}
#define KSEEK_REFUSED_PATH(n, arg) CallName{SYS_##n, #n, arg, true}
#define KSEEK_BY_ARGS(n) CallName{SYS_##n, #n, -1, false}
#define KSEEK_BY_ARGS_PATH(n, arg) CallName{SYS_##n, #n, arg, false}
constexpr CallName kCallNames[] = {
#ifdef SYS_open
    KSEEK_BY_ARGS_PATH(open, 0),
#endif
    KSEEK_BY_ARGS_PATH(openat, 1), KSEEK_BY_ARGS(clone), KSEEK_BY_ARGS(mprotect),
    KSEEK_BY_ARGS(pkey_mprotect), KSEEK_BY_ARGS(mmap), KSEEK_BY_ARGS(kill), KSEEK_BY_ARGS(tgkill),
    KSEEK_BY_ARGS(rt_sigqueueinfo), KSEEK_BY_ARGS(rt_tgsigqueueinfo),
#ifdef SYS_fork
    KSEEK_REFUSED(fork), KSEEK_REFUSED(vfork),
#endif
    KSEEK_REFUSED_PATH(execve, 0), KSEEK_REFUSED_PATH(execveat, 1), KSEEK_REFUSED(tkill),
    KSEEK_REFUSED(pidfd_send_signal), KSEEK_REFUSED(pidfd_open), KSEEK_REFUSED(pidfd_getfd),
    KSEEK_REFUSED(ptrace), KSEEK_REFUSED(process_vm_readv), KSEEK_REFUSED(process_vm_writev),
    KSEEK_REFUSED(kcmp), KSEEK_REFUSED(process_madvise), KSEEK_REFUSED(socket),
    KSEEK_REFUSED(socketpair), KSEEK_REFUSED(memfd_create),
#ifdef SYS_memfd_secret
    KSEEK_REFUSED(memfd_secret),
#endif
    KSEEK_REFUSED(io_uring_setup), KSEEK_REFUSED(io_uring_enter), KSEEK_REFUSED(io_uring_register),
    KSEEK_REFUSED(bpf), KSEEK_REFUSED(perf_event_open), KSEEK_REFUSED(userfaultfd),
    KSEEK_REFUSED(unshare), KSEEK_REFUSED(setns), KSEEK_REFUSED(setsid), KSEEK_REFUSED(setpgid),
    KSEEK_REFUSED_PATH(mount, 1), KSEEK_REFUSED_PATH(umount2, 0), KSEEK_REFUSED(pivot_root),
    KSEEK_REFUSED_PATH(chroot, 0), KSEEK_REFUSED(open_tree), KSEEK_REFUSED(move_mount),
    KSEEK_REFUSED(fsopen), KSEEK_REFUSED(fsconfig), KSEEK_REFUSED(fsmount), KSEEK_REFUSED(fspick),
    KSEEK_REFUSED(mount_setattr), KSEEK_REFUSED(name_to_handle_at),
    KSEEK_REFUSED(open_by_handle_at),
#ifdef SYS_creat
    KSEEK_REFUSED_PATH(creat, 0), KSEEK_REFUSED_PATH(unlink, 0), KSEEK_REFUSED_PATH(rename, 0),
    KSEEK_REFUSED_PATH(mkdir, 0), KSEEK_REFUSED_PATH(rmdir, 0), KSEEK_REFUSED_PATH(link, 1),
    KSEEK_REFUSED_PATH(symlink, 1), KSEEK_REFUSED_PATH(chmod, 0), KSEEK_REFUSED_PATH(chown, 0),
    KSEEK_REFUSED_PATH(lchown, 0), KSEEK_REFUSED_PATH(mknod, 0), KSEEK_REFUSED_PATH(utime, 0),
    KSEEK_REFUSED_PATH(utimes, 0), KSEEK_REFUSED_PATH(futimesat, 1),
#endif
    KSEEK_REFUSED_PATH(unlinkat, 1), KSEEK_REFUSED_PATH(renameat, 1),
    KSEEK_REFUSED_PATH(renameat2, 1), KSEEK_REFUSED_PATH(mkdirat, 1),
    KSEEK_REFUSED_PATH(linkat, 3), KSEEK_REFUSED_PATH(symlinkat, 2), KSEEK_REFUSED(fchmod),
    KSEEK_REFUSED_PATH(fchmodat, 1), KSEEK_REFUSED(fchown), KSEEK_REFUSED_PATH(fchownat, 1),
    KSEEK_REFUSED_PATH(truncate, 0), KSEEK_REFUSED(ftruncate), KSEEK_REFUSED(fallocate),
    KSEEK_REFUSED_PATH(mknodat, 1), KSEEK_REFUSED_PATH(utimensat, 1),
    KSEEK_REFUSED_PATH(setxattr, 0), KSEEK_REFUSED_PATH(lsetxattr, 0), KSEEK_REFUSED(fsetxattr),
    KSEEK_REFUSED_PATH(removexattr, 0), KSEEK_REFUSED_PATH(lremovexattr, 0),
    KSEEK_REFUSED(fremovexattr), KSEEK_REFUSED(init_module), KSEEK_REFUSED(finit_module),
    KSEEK_REFUSED(delete_module), KSEEK_REFUSED(kexec_load), KSEEK_REFUSED(kexec_file_load),
    KSEEK_REFUSED(reboot), KSEEK_REFUSED(personality), KSEEK_REFUSED(keyctl),
    KSEEK_REFUSED(add_key), KSEEK_REFUSED(request_key), KSEEK_REFUSED_PATH(acct, 0),
    KSEEK_REFUSED(settimeofday), KSEEK_REFUSED(clock_settime), KSEEK_REFUSED(clock_adjtime),
    KSEEK_REFUSED(adjtimex), KSEEK_REFUSED(sethostname), KSEEK_REFUSED(setdomainname),
    KSEEK_REFUSED_PATH(swapon, 0), KSEEK_REFUSED_PATH(swapoff, 0), KSEEK_REFUSED(quotactl),
    KSEEK_REFUSED(fanotify_init), KSEEK_REFUSED(setpriority), KSEEK_REFUSED(seccomp),
#if defined(__x86_64__)
    KSEEK_REFUSED(iopl), KSEEK_REFUSED(ioperm), KSEEK_REFUSED_PATH(uselib, 0),
#endif
};
#undef KSEEK_REFUSED
#undef KSEEK_REFUSED_PATH
#undef KSEEK_BY_ARGS
#undef KSEEK_BY_ARGS_PATH

// Appends `s` to text[*len], at most up to `cap`.
void Append(char* text, size_t* len, size_t cap, const char* s, size_t max) {
  for (size_t i = 0; i < max && s[i] != '\0' && *len < cap; ++i) text[(*len)++] = s[i];
}

// Writes "kseek sandbox: system call N (NAME[ PATH]) refused" (the name
// where it is known; for open and openat, "for writing"; the path where
// the call takes one, as the process passed it, at most kRefusedPathBytes) and
// makes the call return -EPERM. Async-signal-safe. The path is read from
// the process's own memory: a pointer that is not readable ends the
// process with SIGSEGV, which is its own doing.
void OnRefused(int, siginfo_t* info, void* context) {
  constexpr size_t kCap = 300;
  char text[kCap + 1];
  size_t len = 0;
  Append(text, &len, kCap, "kseek sandbox: system call ", 64);
  char digits[16];
  int n = 0;
  unsigned v = static_cast<unsigned>(info->si_syscall);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && n < 15);
  while (n > 0) text[len++] = digits[--n];
  auto* uc = static_cast<ucontext_t*>(context);
  const CallName* call = nullptr;
  for (const CallName& c : kCallNames) {
    if (c.nr == info->si_syscall) call = &c;
  }
  if (call != nullptr) {
    Append(text, &len, kCap, " (", 8);
    Append(text, &len, kCap, call->name, 32);
    bool open_call = call->nr == SYS_openat;
#ifdef SYS_open
    open_call = open_call || call->nr == SYS_open;
#endif
    if (open_call) Append(text, &len, kCap, " for writing", 16);
    if (call->path_arg >= 0) {
#if defined(__x86_64__)
      const int regs[6] = {REG_RDI, REG_RSI, REG_RDX, REG_R10, REG_R8, REG_R9};
      const auto path = reinterpret_cast<const char*>(uc->uc_mcontext.gregs[regs[call->path_arg]]);
#elif defined(__aarch64__)
      const auto path = reinterpret_cast<const char*>(uc->uc_mcontext.regs[call->path_arg]);
#endif
      if (path != nullptr) {
        Append(text, &len, kCap, " ", 1);
        Append(text, &len, kCap, path, kRefusedPathBytes);
      }
    }
    Append(text, &len, kCap, ")", 1);
  }
  Append(text, &len, kCap, " refused\n", 16);
  if (text[len - 1] != '\n') text[len++] = '\n';
  (void)!write(STDERR_FILENO, text, len);
#if defined(__x86_64__)
  uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
#elif defined(__aarch64__)
  uc->uc_mcontext.regs[0] = static_cast<uint64_t>(-EPERM);
#endif
}

void Build(const SeccompOptions& options, Program* p) {
  // Another ABI's numbers mean other calls: end the process.
  p->Load(kArchOffset);
  p->JumpEq(kArch, 1, 0);
  p->Ret(kKill);
  p->Load(kNrOffset);
#if defined(__x86_64__)
  p->JumpGe(0x40000000u, 0, 1);  // x32
  p->Ret(kKill);
#endif

  const uint32_t self = static_cast<uint32_t>(getpid());
  p->AllowOnlyFor(SYS_kill, 0, {self, 0});
  p->AllowOnlyFor(SYS_tgkill, 0, {self});
  p->AllowOnlyFor(SYS_rt_sigqueueinfo, 0, {self});
  p->AllowOnlyFor(SYS_rt_tgsigqueueinfo, 0, {self});
  if (options.allow_threads) {
    // A thread shares the process: it ends with it.
    p->JumpEq(SYS_clone, 0, 4);
    p->Load(ArgLow(0));
    p->JumpSet(CLONE_THREAD, 1, 0);
    p->Ret(kRefuse);
    p->Ret(kAllow);
  } else {
    p->Answer(SYS_clone, kRefuse);
  }
  p->Answer(SYS_clone3, kNoSuchCall);
  p->Answer(SYS_openat2, kNoSuchCall);
#ifdef SYS_open
  p->Open(SYS_open, 1, options.supervise_opens);
#endif
  p->Open(SYS_openat, 2, options.supervise_opens);
  p->RefuseWhenSet(SYS_mprotect, 2, PROT_EXEC);
  p->RefuseWhenSet(SYS_pkey_mprotect, 2, PROT_EXEC);
  p->Mmap(SYS_mmap);

  for (const CallName& c : kCallNames) {
    if (c.always) p->Answer(c.nr, kRefuse);
  }
  p->Ret(kAllow);
}

// Installs `prog`; async-signal-safe (the probe calls it after fork).
// Returns 0 or the errno value of the step that failed (*step names it).
// With `listen`, the filter's listener is *listener (-1 otherwise).
int InstallProgram(sock_fprog* prog, const char** step, bool listen = false,
                   int* listener = nullptr) {
  struct sigaction sa {};
  sa.sa_sigaction = OnRefused;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  *step = "sigaction(SIGSYS)";
  if (sigaction(SIGSYS, &sa, nullptr) != 0) return errno;
  *step = "prctl(PR_SET_NO_NEW_PRIVS)";
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  *step = "seccomp(SECCOMP_SET_MODE_FILTER)";
  if (listen) {
    // TSYNC_ESRCH: with a listener, a thread that cannot be synchronised
    // is reported as ESRCH (its id could not be told from a descriptor).
    const long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                            SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_TSYNC_ESRCH |
                                SECCOMP_FILTER_FLAG_NEW_LISTENER,
                            prog);
    if (fd < 0) return errno;
    *listener = static_cast<int>(fd);
    return 0;
  }
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, prog) != 0) {
    return errno;
  }
  return 0;
}

}  // namespace

// Whether this kernel lets a filter hand requests to a supervisor
// (SECCOMP_RET_USER_NOTIF, Linux 5.0; TSYNC with a listener, 5.7, fails
// the install where missing). A supervisor that cannot hand a descriptor
// over (SECCOMP_IOCTL_NOTIF_ADDFD, 5.9) refuses the open instead.
bool CanSuperviseOpens() {
  seccomp_notif_sizes sizes{};
  return syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0 &&
         syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &kSupervise) == 0;
}

absl::Status InstallSeccomp(const SeccompOptions& options, int* listener) {
  SeccompOptions chosen = options;
  chosen.supervise_opens = options.supervise_opens && listener != nullptr && CanSuperviseOpens();
  if (listener != nullptr) *listener = -1;
  Program program;
  Build(chosen, &program);
  sock_fprog prog = program.Get();
  const char* step = "";
  int err = InstallProgram(&prog, &step, chosen.supervise_opens, listener);
  // A kernel without TSYNC_ESRCH (EINVAL), or one that refuses a listener
  // for another reason: the filter alone, every open for writing refused.
  if (err != 0 && chosen.supervise_opens) {
    chosen.supervise_opens = false;
    Program plain;
    Build(chosen, &plain);
    prog = plain.Get();
    err = InstallProgram(&prog, &step);
  }
  if (err != 0) {
    return absl::FailedPreconditionError(absl::StrCat(step, ": ", strerror(err)));
  }
  return absl::OkStatus();
}

bool CanUseSeccomp(std::string* why) {
  // Everything is prepared before fork: the caller may have threads.
  Program program;
  Build(SeccompOptions{}, &program);
  sock_fprog prog = program.Get();
  struct Report {
    int err = 0;
    int step = 0;  // 0 installed, 1 install failed, 2 clone was not refused
  };
  int p[2];
  if (pipe(p) != 0) {
    *why = absl::StrCat("pipe: ", strerror(errno));
    return false;
  }
  const char* steps[3] = {"", "", ""};
  const pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    Report r;
    r.err = InstallProgram(&prog, &steps[0]);
    if (r.err != 0) {
      r.step = 1;
    } else if (!(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0) < 0 && errno == EPERM)) {
      r.step = 2;
    }
    (void)!write(p[1], &r, sizeof(r));
    _exit(r.step == 0 && r.err == 0 ? 0 : 1);
  }
  close(p[1]);
  if (pid < 0) {
    *why = absl::StrCat("fork: ", strerror(errno));
    close(p[0]);
    return false;
  }
  Report r;
  const bool got = read(p[0], &r, sizeof(r)) == static_cast<ssize_t>(sizeof(r));
  close(p[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got && r.step == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  if (!got) {
    *why = "the probe child died";
  } else if (r.step == 1) {
    *why = absl::StrCat("installing the filter failed: ", strerror(r.err));
  } else {
    *why = "the filter did not refuse clone";
  }
  return false;
}

}  // namespace kseek
