// Helpers shared by the tests: where the source tree and binaries are,
// running a child process, scratch folders, and whether a CUDA device is
// present.
#ifndef KERNELSEEK_TESTS_TEST_UTIL_H_
#define KERNELSEEK_TESTS_TEST_UTIL_H_

#include <string>
#include <vector>

namespace kseek::testing {

std::string SourceDir();  // the repository root
std::string BinDir();     // build/bin

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

// True when a CUDA device can be used (libcuda loads and reports >= 1
// device); `why` says what is missing otherwise.
bool HaveCudaDevice(std::string* why);
// True when nvcc is found (the compile driver's lookup).
bool HaveNvcc();

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);

}  // namespace kseek::testing

// Skips the test with "skipped: no CUDA device (...)".
#define KSEEK_REQUIRE_CUDA_DEVICE()                                    \
  do {                                                                 \
    std::string why_;                                                  \
    if (!::kseek::testing::HaveCudaDevice(&why_))                      \
      GTEST_SKIP() << "skipped: no CUDA device (" << why_ << ")";      \
  } while (0)

#endif  // KERNELSEEK_TESTS_TEST_UTIL_H_
