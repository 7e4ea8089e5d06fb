// Helpers shared by the tests (see test_util.h).
#include "tests/test_util.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "absl/synchronization/mutex.h"
#include "base/file.h"
#include "harness/src/compile.h"

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

// The build's paths, unless the environment moves them (a bundle run on
// another machine sets KSEEK_SOURCE_DIR and KSEEK_BIN_DIR).
static std::string FromEnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

std::string SourceDir() { return FromEnvOr("KSEEK_SOURCE_DIR", KSEEK_SOURCE_DIR); }

std::string BinDir() { return FromEnvOr("KSEEK_BIN_DIR", KSEEK_BIN_DIR); }

std::string SlowSoftmaxHostKernel(long spin_iterations) {
  return R"(
#include <math.h>
#include "kernelseek/abi.h"
extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* a) {
  if (a->tensors[0].dtype != KSEEK_F32) return 1;
  for (volatile long spin = 0; spin < )" +
         std::to_string(spin_iterations) + R"(L; ++spin) {
  }
  long rows = kseek_param_get(a, "rows", 0), cols = kseek_param_get(a, "cols", 0);
  const float* x = (const float*)a->tensors[0].data;
  float* y = (float*)a->tensors[1].data;
  for (long r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (long c = 0; c < cols; ++c) m = fmax(m, x[r * cols + c]);
    for (long c = 0; c < cols; ++c) s += exp(x[r * cols + c] - m);
    for (long c = 0; c < cols; ++c) y[r * cols + c] = (float)(exp(x[r * cols + c] - m) / s);
  }
  return 0;
}
)";
}

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

Daemon::Daemon(const std::vector<std::string>& argv, const std::string& log) {
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe failed");
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    int err = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  out_fd_ = out[0];
}

Daemon::~Daemon() {
  if (Running()) {
    kill(pid_, SIGKILL);
    Wait(10);
  }
  if (out_fd_ >= 0) close(out_fd_);
}

std::string Daemon::ReadLine(double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return "";
    pollfd p{out_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return "";
    if (!Drain(out_fd_, &buffer_)) return "";
  }
}

std::string Daemon::WaitListening(double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    std::string line = ReadLine(left);
    if (line.rfind("listening on ", 0) == 0) return line.substr(13);
    if (line.empty() && !Running()) return "";
  }
  return "";
}

void Daemon::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

bool Daemon::Running() {
  if (pid_ <= 0 || status_ >= 0) return false;
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return false;
  }
  return true;
}

int Daemon::Wait(double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (Running()) {
    if (std::chrono::steady_clock::now() > deadline) return -1;
    usleep(20000);
  }
  return status_;
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool HaveNvcc() { return !kseek::CompilerFor(kseek::Target::kSm90a).empty(); }

std::string ReadFile(const std::string& path) {
  absl::StatusOr<std::string> text = kseek::ReadFile(path);
  if (!text.ok()) throw std::runtime_error(std::string(text.status().message()));
  return *std::move(text);
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

SmallTmpfs::SmallTmpfs(long bytes) : path_(TempDir("tmpfs")) {
  if (geteuid() != 0) {
    why_ = "mounting a small tmpfs needs root";
    return;
  }
  std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
  if (::mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    why_ = std::string("cannot mount a tmpfs on ") + path_ + ": " + std::strerror(errno);
    return;
  }
  mounted_ = true;
}

SmallTmpfs::~SmallTmpfs() {
  if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
}

long SmallTmpfs::Fill(const std::string& name) {
  int fd = ::open((path_ + "/" + name).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  std::string block(4096, 'x');
  long total = 0;
  while (true) {
    ssize_t n = ::write(fd, block.data(), block.size());
    if (n <= 0) break;
    total += n;
  }
  ::close(fd);
  return total;
}

}  // namespace kseek::testing
