// The judge's answer to a kernel host's opens for writing (open_broker.h).
#include "harness/src/open_broker.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/file.h"
#include "harness/src/sandbox.h"

namespace kseek {

namespace {

constexpr size_t kMaxPath = 4096;

// Reads a NUL-terminated string of at most kMaxPath bytes at `address` in
// process `pid`, a page at a time (a read that crosses into an unmapped
// page fails as a whole).
bool ReadString(pid_t pid, uint64_t address, std::string* out) {
  out->clear();
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  char buffer[kMaxPath];
  while (out->size() < kMaxPath) {
    const uint64_t at = address + out->size();
    const size_t want = std::min<uint64_t>(page - at % page, kMaxPath - out->size());
    iovec local{buffer, want};
    iovec remote{reinterpret_cast<void*>(at), want};
    const ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0) return false;
    const void* end = memchr(buffer, '\0', static_cast<size_t>(n));
    if (end != nullptr) {
      out->append(buffer, static_cast<const char*>(end) - buffer);
      return true;
    }
    out->append(buffer, static_cast<size_t>(n));
  }
  return false;
}

}  // namespace

bool BrokerMayOpen(dev_t rdev, const std::string& proc_devices) {
  if (major(rdev) == 1 && minor(rdev) == 3) return true;  // /dev/null
  bool character = false;
  for (absl::string_view line : absl::StrSplit(proc_devices, '\n')) {
    if (line == "Character devices:") {
      character = true;
      continue;
    }
    if (line.empty() || absl::EndsWith(line, ":")) {
      character = false;
      continue;
    }
    if (!character) continue;
    std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(absl::StripLeadingAsciiWhitespace(line), absl::MaxSplits(' ', 1));
    unsigned number = 0;
    if (absl::SimpleAtoi(parts.first, &number) && absl::StartsWith(parts.second, "nvidia") &&
        number == major(rdev)) {
      return true;
    }
  }
  return false;
}

std::unique_ptr<OpenBroker> OpenBroker::Start(int listener, std::string log_path) {
  std::unique_ptr<OpenBroker> broker(new OpenBroker());
  broker->listener_ = listener;
  broker->log_path_ = std::move(log_path);
  broker->proc_devices_ = ReadFile("/proc/devices").value_or("");
  seccomp_notif_sizes sizes{};
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0 ||
      pipe2(broker->wake_, O_CLOEXEC) != 0) {
    return nullptr;  // the destructor closes the listener: the host's opens fail
  }
  broker->request_bytes_ = std::max<size_t>(sizes.seccomp_notif, sizeof(seccomp_notif));
  broker->response_bytes_ = std::max<size_t>(sizes.seccomp_notif_resp, sizeof(seccomp_notif_resp));
  broker->thread_ = std::thread([b = broker.get()] { b->Loop(); });
  return broker;
}

OpenBroker::~OpenBroker() {
  if (thread_.joinable()) {
    (void)!write(wake_[1], "x", 1);
    thread_.join();
  }
  for (int fd : {listener_, wake_[0], wake_[1]}) {
    if (fd >= 0) close(fd);
  }
}

void OpenBroker::Loop() {
  while (true) {
    pollfd fds[2] = {{listener_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) != 0) {
      Answer();
    } else if (fds[0].revents != 0) {
      return;  // no process uses the filter any more
    }
  }
}

void OpenBroker::Answer() {
  std::vector<char> request_buffer(request_bytes_, 0);
  auto* request = reinterpret_cast<seccomp_notif*>(request_buffer.data());
  if (ioctl(listener_, SECCOMP_IOCTL_NOTIF_RECV, request) != 0) return;  // gone, or interrupted
  int path_arg = -1;
  int flags_arg = -1;
  const char* name = "openat";
  if (request->data.nr == SYS_openat) {
    path_arg = 1;
    flags_arg = 2;
#ifdef SYS_open
  } else if (request->data.nr == SYS_open) {
    path_arg = 0;
    flags_arg = 1;
    name = "open";
#endif
  }
  std::string path;
  int flags = 0;
  bool readable = false;
  if (path_arg >= 0) {
    flags = static_cast<int>(request->data.args[flags_arg]);
    readable = ReadString(static_cast<pid_t>(request->pid), request->data.args[path_arg], &path);
  }
  // The path was read from the process that asked, not from one that
  // took its number since.
  if (ioctl(listener_, SECCOMP_IOCTL_NOTIF_ID_VALID, &request->id) != 0) return;

  int error = EPERM;
  struct stat st {};
  // The file is looked up once, without opening it (O_PATH: no driver's
  // open runs, a FIFO does not block), checked, and only that file is then
  // opened, through /proc/self/fd: a path swapped after the check (a
  // symlink turned to another file) opens nothing else. World-writable
  // device files only: the broker may run as root for a host that does
  // not, and opens nothing the host could not.
  const int looked_up = readable && !path.empty() && path[0] == '/'
                            ? open(path.c_str(), O_PATH | O_CLOEXEC)
                            : -1;
  const FdCloser close_looked_up(looked_up);
  if (looked_up >= 0 && fstat(looked_up, &st) == 0 && S_ISCHR(st.st_mode) &&
      (st.st_mode & (S_IROTH | S_IWOTH)) == (S_IROTH | S_IWOTH) &&
      BrokerMayOpen(st.st_rdev, proc_devices_)) {
    const int keep = O_ACCMODE | O_NONBLOCK | O_APPEND | O_DSYNC | O_SYNC;
    const std::string same_file = absl::StrCat("/proc/self/fd/", looked_up);
    const int fd = open(same_file.c_str(), (flags & keep) | O_CLOEXEC | O_NOCTTY);
    const FdCloser close_fd(fd);  // the caller holds its own copy once added
    struct stat opened {};
    if (fd >= 0 && fstat(fd, &opened) == 0 && S_ISCHR(opened.st_mode) &&
        opened.st_rdev == st.st_rdev) {
      seccomp_notif_addfd addfd{};
      addfd.id = request->id;
      addfd.flags = SECCOMP_ADDFD_FLAG_SEND;
      addfd.srcfd = static_cast<uint32_t>(fd);
      addfd.newfd_flags = (flags & O_CLOEXEC) != 0 ? O_CLOEXEC : 0;
      int added = ioctl(listener_, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
      if (added < 0 && errno == EINVAL) {  // before Linux 5.14: add, then answer
        addfd.flags = 0;
        added = ioctl(listener_, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
        if (added >= 0) Respond(request->id, added, 0);
      }
      const int add_error = errno;
      if (added >= 0 || add_error == ENOENT) return;  // answered, or the caller is gone
      error = add_error;
    }
  }
  if (error == EPERM && refusals_ <= kBrokerLoggedRefusals) {
    const std::string line =
        ++refusals_ > kBrokerLoggedRefusals
            ? std::string("kseek sandbox: more opens for writing refused, not logged\n")
            : absl::StrCat("kseek sandbox: system call ", request->data.nr, " (", name,
                           " for writing",
                           readable ? absl::StrCat(" ", path.substr(0, kRefusedPathBytes)) : "",
                           ") refused\n");
    const int log = open(log_path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    const FdCloser close_log(log);
    if (log >= 0) (void)!write(log, line.data(), line.size());
  }
  Respond(request->id, 0, error);
}

void OpenBroker::Respond(uint64_t id, int64_t value, int error) {
  std::vector<char> buffer(response_bytes_, 0);
  auto* response = reinterpret_cast<seccomp_notif_resp*>(buffer.data());
  response->id = id;
  response->val = value;
  response->error = -error;
  (void)ioctl(listener_, SECCOMP_IOCTL_NOTIF_SEND, response);
}

}  // namespace kseek
