// Helpers shared by the tests (see test_util.h).
#include "test_util.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "absl/synchronization/mutex.h"
#include "compile.h"

namespace kseek::testing {

namespace {

// Folders made by TempDir, removed when the process that made them exits
// (a forked child that exits normally leaves them alone).
class TempDirs {
 public:
  ~TempDirs() {
    if (getpid() != owner_) return;
    absl::MutexLock lock(&mu_);
    std::error_code ec;
    for (const std::string& p : paths_) std::filesystem::remove_all(p, ec);
  }
  void Add(const std::string& path) {
    absl::MutexLock lock(&mu_);
    paths_.push_back(path);
  }

 private:
  const pid_t owner_ = getpid();
  absl::Mutex mu_;
  std::vector<std::string> paths_ ABSL_GUARDED_BY(mu_);
};

TempDirs& AllTempDirs() {
  static TempDirs dirs;
  return dirs;
}

// Reads what is left on `fd` into `out`; false at end of file or error.
bool Drain(int fd, std::string* out) {
  char buf[65536];
  ssize_t n = read(fd, buf, sizeof(buf));
  if (n > 0) {
    out->append(buf, static_cast<size_t>(n));
    return true;
  }
  return n < 0 && (errno == EINTR || errno == EAGAIN);
}

}  // namespace

std::string SourceDir() { return KSEEK_SOURCE_DIR; }

std::string BinDir() { return KSEEK_BIN_DIR; }

std::string TempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  std::string templ = base + "/" + prefix + ".XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + templ + ": " + strerror(errno));
  }
  AllTempDirs().Add(templ);
  return templ;
}

ProcessResult RunProcess(const std::vector<std::string>& argv) {
  ProcessResult result;
  if (argv.empty()) return result;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return result;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return result;
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execvp(args[0], args.data());
    // No allocation between fork and _exit: the parent may have threads.
    const char* why = strerror(errno);
    for (const char* part : {"cannot run ", static_cast<const char*>(args[0]), ": ", why, "\n"}) {
      (void)!write(STDERR_FILENO, part, strlen(part));
    }
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    result.err = "fork failed";
    return result;
  }

  // Read both streams together so that a child filling one pipe never
  // blocks while the other is being waited on.
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      if (!Drain(fds[i].fd, sinks[i])) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = -1;
    result.signal = WTERMSIG(status);
  }
  return result;
}

bool HaveCudaDevice(std::string* why) {
  // The driver API is reached through dlopen so the tests need neither the
  // CUDA headers nor libcuda at link time.
  using CuInitFn = int (*)(unsigned int);
  using CuDeviceGetCountFn = int (*)(int*);
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    if (why != nullptr) *why = "libcuda.so.1 cannot be loaded";
    return false;
  }
  auto cu_init = reinterpret_cast<CuInitFn>(dlsym(lib, "cuInit"));
  auto cu_count = reinterpret_cast<CuDeviceGetCountFn>(dlsym(lib, "cuDeviceGetCount"));
  if (cu_init == nullptr || cu_count == nullptr) {
    if (why != nullptr) *why = "libcuda.so.1 lacks cuInit/cuDeviceGetCount";
    return false;
  }
  int rc = cu_init(0);
  if (rc != 0) {
    if (why != nullptr) *why = "cuInit failed with error " + std::to_string(rc);
    return false;
  }
  int count = 0;
  rc = cu_count(&count);
  if (rc != 0) {
    if (why != nullptr) {
      *why = "cuDeviceGetCount failed with error " + std::to_string(rc);
    }
    return false;
  }
  if (count < 1) {
    if (why != nullptr) *why = "the driver reports 0 devices";
    return false;
  }
  return true;
}

bool HaveNvcc() { return !kseek::CompilerFor(kseek::Target::kSm90a).empty(); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace kseek::testing
