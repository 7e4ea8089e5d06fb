// Helpers shared by the tests: where the source tree and binaries are,
// running a child process, scratch folders, and whether a CUDA device is
// present.
#ifndef KERNELSEEK_TESTS_TEST_UTIL_H_
#define KERNELSEEK_TESTS_TEST_UTIL_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace kseek::testing {

// The repository root and build/bin; $KSEEK_SOURCE_DIR and $KSEEK_BIN_DIR
// override them (for a bundle run on another machine).
std::string SourceDir();
std::string BinDir();

// The source of a correct f32 softmax for the host target (softmax task)
// that spins `spin_iterations` times before each call: slow enough for a
// test to stop, kill or signal a job in the middle of a scenario. A kernel,
// not a stand-in: it computes the task.
std::string SlowSoftmaxHostKernel(long spin_iterations);

// A fresh empty folder under the system temp dir, removed at exit.
std::string TempDir(const std::string& prefix);

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;     // stdout
  std::string err;     // stderr
};
// Runs argv[0] with arguments (no shell), waits, captures both streams.
ProcessResult RunProcess(const std::vector<std::string>& argv);

// A long-running child process (a daemon under test). Its stdout is read
// line by line; its stderr goes to a log file. The destructor kills it
// (SIGKILL) if it still runs.
class Daemon {
 public:
  // Starts argv (no shell). `log` receives stderr.
  Daemon(const std::vector<std::string>& argv, const std::string& log);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  pid_t pid() const { return pid_; }
  // The next stdout line, or "" after `timeout_s` or at end of output.
  std::string ReadLine(double timeout_s);
  // Reads lines until one starts with "listening on " and returns the
  // address after it ("" on timeout).
  std::string WaitListening(double timeout_s);
  void Signal(int sig);
  // Waits for exit; returns the exit code, or 128 + signal.
  int Wait(double timeout_s);
  bool Running();

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
  int status_ = -1;
};

// A tmpfs of `bytes` mounted on a fresh folder for the life of this object
// (needs root; mounted() is false otherwise, and why() says so, for
// GTEST_SKIP). A disk that fills up, for the tests of what happens then.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(long bytes);
  ~SmallTmpfs();
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& why() const { return why_; }
  const std::string& path() const { return path_; }
  // Writes `name` in the tmpfs until the disk is full; returns the bytes
  // written.
  long Fill(const std::string& name);

 private:
  std::string path_;
  std::string why_;
  bool mounted_ = false;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreePort();

// True when a CUDA device can be used (libcuda loads and reports >= 1
// device); `why` says what is missing otherwise.
bool HaveCudaDevice(std::string* why);
// True when nvcc is found (the compile driver's lookup).
bool HaveNvcc();

// The bytes of `path`; throws std::runtime_error naming the path and the
// reason.
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);

}  // namespace kseek::testing

// Skips the test unless `fs` (a SmallTmpfs) is mounted.
#define KSEEK_REQUIRE_TMPFS(fs)                                          \
  do {                                                                   \
    if (!(fs).mounted()) GTEST_SKIP() << "skipped: " << (fs).why();      \
  } while (0)

// Skips the test with "skipped: no CUDA device (...)".
#define KSEEK_REQUIRE_CUDA_DEVICE()                                    \
  do {                                                                 \
    std::string why_;                                                  \
    if (!::kseek::testing::HaveCudaDevice(&why_))                      \
      GTEST_SKIP() << "skipped: no CUDA device (" << why_ << ")";      \
  } while (0)

#endif  // KERNELSEEK_TESTS_TEST_UTIL_H_
