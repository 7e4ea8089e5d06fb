// RunScenarios and kseek-runner on the host target: a tiny task (y = 2x)
// and kernels, good and bad, compiled here with the host compiler.
#include "harness/src/runner.h"

#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "harness/src/open_broker.h"
#include "harness/src/sandbox.h"
#include "harness/src/task.h"
#include "harness/src/verdict.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

using ::kseek::testing::RunProcess;
using ::kseek::testing::SourceDir;
using ::kseek::testing::TempDir;
using ::kseek::testing::WriteFile;

constexpr char kTaskJson[] = R"({
  "name": "scale",
  "description": "y = 2 x",
  "params": {"n": {"min": 1}, "dtype": {"dtype": ["f32", "bf16"]}},
  "tensors": [
    {"name": "x", "role": "in", "dtype": "dtype", "shape": ["n"],
     "init": {"dist": "normal", "mean": 0, "std": 1}},
    {"name": "y", "role": "out", "dtype": "dtype", "shape": ["n"],
     "tolerance": {"f32": {"rel_l2": 1e-6, "max_abs": 1e-5},
                   "bf16": {"rel_l2": 1e-2, "max_abs": 2e-2}}}
  ],
  "flops": "n",
  "sources": {"host": {"reference": "reference.cc", "baseline": "baseline.cc"}},
  "targets": ["host"],
  "scenarios": [
    {"name": "n1000_f32", "params": {"n": 1000, "dtype": "f32"}},
    {"name": "n4096_bf16", "params": {"n": 4096, "dtype": "bf16"}},
    {"name": "n777_f32", "params": {"n": 777, "dtype": "f32"}}
  ]
})";

// Element access shared by every kernel of the test.
constexpr char kCommonHeader[] = R"(
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "kernelseek/abi.h"

inline float LoadX(const kseek_tensor& t, int64_t i) {
  if (t.dtype == KSEEK_BF16) {
    uint32_t u = static_cast<uint32_t>(static_cast<const uint16_t*>(t.data)[i]) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  return static_cast<const float*>(t.data)[i];
}

inline void StoreY(const kseek_tensor& t, int64_t i, float v) {
  if (t.dtype == KSEEK_BF16) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    static_cast<uint16_t*>(t.data)[i] = static_cast<uint16_t>(u >> 16);
  } else {
    static_cast<float*>(t.data)[i] = v;
  }
}
)";

// A kernel: `body` runs with x, y (tensors) and n in scope and returns.
std::string KernelSource(const std::string& body, const std::string& extra = "") {
  return std::string("#include \"scale_common.h\"\n") + extra +
         "\nextern \"C\" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* a) {\n"
         "  const kseek_tensor& x = a->tensors[0];\n"
         "  const kseek_tensor& y = a->tensors[1];\n"
         "  const int64_t n = kseek_param_get(a, \"n\", 0);\n"
         "  (void)x; (void)y;\n" +
         body + "\n  return 0;\n}\n";
}

constexpr char kGoodLoop[] = "for (int64_t i = 0; i < n; ++i) StoreY(y, i, 2.0f * LoadX(x, i));";

// A kernel library's kseek_error_message, returning `message`.
std::string ErrorMessageIs(const std::string& message) {
  return "extern \"C\" KSEEK_EXPORT const char* kseek_error_message() { return \"" + message +
         "\"; }\n";
}

// A kernel library's constant kPath, holding `path`.
std::string PathIs(const std::string& path) {
  return "static const char kPath[] = \"" + path + "\";\n";
}

class RunnerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(TempDir("runner_test"));
    WriteFile(*dir_ + "/task.json", kTaskJson);
    WriteFile(*dir_ + "/scale_common.h", kCommonHeader);
    reference_ = new std::string(Build("reference", KernelSource(kGoodLoop)));
    baseline_ = new std::string(Build(
        "baseline", KernelSource(std::string("for (int rep = 0; rep < 3; ++rep) ") + kGoodLoop)));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete reference_;
    delete baseline_;
  }

  void SetUp() override {
    absl::StatusOr<TaskSpec> task = LoadTask(*dir_);
    ASSERT_TRUE(task.ok()) << task.status();
    task_ = *task;
  }

  // Compiles `source` (written to NAME.cc in the task folder) into a shared
  // library; returns its path.
  static std::string Build(const std::string& name, const std::string& source) {
    const std::string src = *dir_ + "/" + name + ".cc";
    const std::string lib = *dir_ + "/lib" + name + ".so";
    WriteFile(src, source);
    testing::ProcessResult r = RunProcess({"c++", "-std=c++17", "-shared", "-fPIC", "-O2",
                                           "-I" + SourceDir() + "/harness/include",
                                           "-I" + *dir_, src, "-o", lib});
    EXPECT_EQ(r.exit_code, 0) << "compiling " << name << ":\n" << r.err;
    return lib;
  }

  RunJob Job(const std::string& candidate_lib) {
    RunJob job;
    job.task = &task_;
    job.target = Target::kHost;
    job.reference_lib = *reference_;
    job.baseline_lib = *baseline_;
    job.candidate_lib = candidate_lib;
    job.scenarios = task_.scenarios;
    job.seed = 12345;
    job.timing.enabled = false;
    job.timing.warmup = 1;
    job.timing.min_samples = 3;
    job.timing.max_samples = 20;
    job.timing.max_seconds = 0.5;
    job.runner_path = testing::BinDir() + "/kseek-runner";
    job.work_dir = TempDir("runner_job");
    return job;
  }

  // Runs `job`; the callback must see every scenario once, in order.
  RunResult Run(const RunJob& job) {
    std::vector<int> seen;
    absl::StatusOr<RunResult> r =
        RunScenarios(job, [&](const ScenarioResult& s) { seen.push_back(s.index); });
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return RunResult();
    EXPECT_EQ(r->scenarios.size(), job.scenarios.size());
    std::vector<int> all;
    for (size_t i = 0; i < job.scenarios.size(); ++i) all.push_back(static_cast<int>(i));
    EXPECT_EQ(seen, all);
    for (size_t i = 0; i < r->scenarios.size(); ++i) {
      EXPECT_EQ(r->scenarios[i].index, static_cast<int>(i));
      EXPECT_EQ(r->scenarios[i].name, job.scenarios[i].name);
    }
    return *r;
  }

  // Runs `job` on its first scenario only, in the sandbox.
  RunResult RunFirstScenarioSandboxed(RunJob job) {
    job.scenarios.resize(1);
    job.sandbox.enabled = true;
    return Run(job);
  }

  // A file holding "before" that anyone may write, in a folder anyone may
  // enter: only the sandbox stands between a kernel and it.
  static std::string FileAnyoneMayWrite() {
    const std::string path = *dir_ + "/anyone_may_write";
    WriteFile(path, "before");
    EXPECT_EQ(chmod(path.c_str(), 0666), 0);
    EXPECT_EQ(chmod(dir_->c_str(), 0755), 0);
    return path;
  }

  static std::string Describe(const RunResult& r) {
    std::string out;
    for (const ScenarioResult& s : r.scenarios) {
      out += s.name + ": " + StatusName(s.status) + " " + s.error + "\n";
    }
    return out + "log:\n" + r.log;
  }

  static std::string* dir_;
  static std::string* reference_;
  static std::string* baseline_;
  TaskSpec task_;
};

std::string* RunnerTest::dir_ = nullptr;
std::string* RunnerTest::reference_ = nullptr;
std::string* RunnerTest::baseline_ = nullptr;

TEST_F(RunnerTest, CorrectKernelIsOkAndTimedAgainstTheBaseline) {
  RunJob job = Job(Build("good", KernelSource(kGoodLoop)));
  job.timing.enabled = true;
  RunResult r = Run(job);
  EXPECT_FALSE(r.device.name.empty());
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kOk) << Describe(r);
    EXPECT_TRUE(s.error.empty());
    ASSERT_EQ(s.outputs.size(), 1u);
    EXPECT_EQ(s.outputs[0].tensor, "y");
    EXPECT_TRUE(s.outputs[0].within);
    EXPECT_EQ(s.rel_l2, 0.0);
    ASSERT_TRUE(s.time.has_value());
    EXPECT_GE(s.time->n, 3);
    EXPECT_LE(s.time->n, 20);
    EXPECT_GT(s.time->median, 0.0);
    ASSERT_TRUE(s.baseline.has_value());
    // Each kernel is sampled until it is precise: the baseline at least 5
    // times (min_samples is 3 here), at most max_samples.
    EXPECT_GE(s.baseline->n, 5);
    EXPECT_LE(s.baseline->n, 20);
    ASSERT_TRUE(s.speedup.has_value());
    EXPECT_GT(*s.speedup, 0.0);
  }
}

TEST_F(RunnerTest, WithoutBaselineThereAreNoBaselineStats) {
  RunJob job = Job(Build("good", KernelSource(kGoodLoop)));
  job.timing.enabled = true;
  job.baseline_lib.clear();
  job.scenarios.resize(1);
  RunResult r = Run(job);
  ASSERT_EQ(r.scenarios[0].status, ScenarioStatus::kOk) << Describe(r);
  ASSERT_TRUE(r.scenarios[0].time.has_value());
  EXPECT_GE(r.scenarios[0].time->n, 3);
  EXPECT_FALSE(r.scenarios[0].baseline.has_value());
  EXPECT_FALSE(r.scenarios[0].speedup.has_value());
}

TEST_F(RunnerTest, WrongKernelIsIncorrectWithItsError) {
  RunResult r = Run(Job(Build(
      "wrong",
      KernelSource("for (int64_t i = 0; i < n; ++i) StoreY(y, i, 2.1f * LoadX(x, i));"))));
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    ASSERT_EQ(s.outputs.size(), 1u);
    EXPECT_FALSE(s.outputs[0].within);
    EXPECT_GT(s.outputs[0].rel_l2, 0.02);
    EXPECT_LT(s.outputs[0].rel_l2, 0.08);
    EXPECT_EQ(s.rel_l2, s.outputs[0].rel_l2);
    EXPECT_GT(s.max_abs, 0.0);
    EXPECT_NE(s.error.find("output y: rel_l2"), std::string::npos) << s.error;
    EXPECT_FALSE(s.time.has_value());
  }
}

TEST_F(RunnerTest, PartlyUnwrittenOutputIsIncorrect) {
  RunResult r = Run(Job(Build(
      "partial",
      KernelSource("for (int64_t i = 0; i < n / 2; ++i) StoreY(y, i, 2.0f * LoadX(x, i));"))));
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_NE(s.error.find("NaN at element"), std::string::npos) << s.error;
  }
}

TEST_F(RunnerTest, NanOutputIsIncorrect) {
  RunResult r = Run(Job(Build(
      "nan", KernelSource(std::string(kGoodLoop) + "\n  StoreY(y, n / 3, NAN);"))));
  for (size_t i = 0; i < r.scenarios.size(); ++i) {
    const ScenarioResult& s = r.scenarios[i];
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    const int64_t n = task_.scenarios[i].params.at("n");
    EXPECT_NE(s.error.find("NaN at element " + std::to_string(n / 3) + " (1 of"),
              std::string::npos)
        << s.error;
  }
}

TEST_F(RunnerTest, WritingAnInputIsIncorrect) {
  RunResult r = Run(Job(Build(
      "writes_input",
      KernelSource(std::string(kGoodLoop) +
                   "\n  static_cast<unsigned char*>(x.data)[0] ^= 1;"))));
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_NE(s.error.find("input tensor x was modified"), std::string::npos) << s.error;
  }
}

TEST_F(RunnerTest, NonZeroReturnIsACrashWithTheKernelsMessage) {
  RunResult r = Run(Job(Build(
      "returns_error",
      KernelSource("return 7;",
                   ErrorMessageIs("unsupported shape")))));
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kCrash) << Describe(r);
    EXPECT_EQ(s.error, "kseek_launch returned 7: unsupported shape");
  }
}

// What the kernel's process printed during a failed call goes with its
// message: only that call's lines, not an earlier call's.
TEST_F(RunnerTest, NonZeroReturnCarriesWhatTheCallPrinted) {
  RunResult r = Run(Job(Build(
      "prints_and_fails",
      KernelSource("static int calls = 0;\n"
                   "  std::fprintf(stderr, \"arena exhausted at call %d\\n\", ++calls);\n"
                   "  return 5;",
                   "#include <cstdio>\n" + ErrorMessageIs("no arena")))));
  ASSERT_GE(r.scenarios.size(), 2u) << Describe(r);
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kCrash) << Describe(r);
    const std::string head = "kseek_launch returned 5: no arena; its process printed: arena exhausted at call ";
    EXPECT_EQ(s.error.rfind(head, 0), 0u) << s.error;
    EXPECT_EQ(s.error.find("arena", head.size()), std::string::npos) << s.error;  // one line
  }
}

// A kernel that floods its output before failing: the verdict is still
// crash, and its message keeps only the end of what was printed, bounded.
TEST_F(RunnerTest, FloodedOutputIsCutInTheMessage) {
  RunResult r = Run(Job(Build(
      "floods_and_fails",
      KernelSource("for (int i = 0; i < 20000; ++i) std::fprintf(stderr, \"flood line %d\\n\", i);\n"
                   "  return 2;",
                   "#include <cstdio>\n"))));
  ASSERT_FALSE(r.scenarios.empty()) << Describe(r);
  const ScenarioResult& s = r.scenarios[0];
  ASSERT_EQ(s.status, ScenarioStatus::kCrash) << Describe(r);
  EXPECT_EQ(s.error.rfind("kseek_launch returned 2; its process printed: ...", 0), 0u) << s.error;
  EXPECT_NE(s.error.find("flood line 19999"), std::string::npos) << s.error;
  EXPECT_LT(s.error.size(), 700u) << s.error;
}

// A system call the sandbox refuses shows in the failed call's message
// (the kernel host's seccomp filter reports it): here socket(2), refused
// with EPERM, which the kernel reports by returning 1.
TEST_F(RunnerTest, RefusedSystemCallShowsInTheMessage) {
  std::string why;
  if (!CanUseSeccomp(&why)) GTEST_SKIP() << "skipped: no seccomp filter here: " << why;
  RunJob job = Job(Build(
      "refused_socket",
      KernelSource("if (socket(AF_INET, SOCK_STREAM, 0) < 0) return 1;",
                   "#include <sys/socket.h>\n" + ErrorMessageIs("no socket"))));
  RunResult r = RunFirstScenarioSandboxed(job);
  ASSERT_EQ(r.scenarios[0].status, ScenarioStatus::kCrash) << Describe(r);
  EXPECT_EQ(r.scenarios[0].error,
            absl::StrCat("kseek_launch returned 1: no socket; its process printed: "
                         "kseek sandbox: system call ", SYS_socket, " (socket) refused"));
}

TEST_F(RunnerTest, RefusedOpenForWritingNamesThePath) {
  std::string why;
  if (!CanUseSeccomp(&why)) GTEST_SKIP() << "skipped: no seccomp filter here: " << why;
  const std::string target = *dir_ + "/written_by_the_kernel";
  RunJob job = Job(Build(
      "refused_open",
      KernelSource("if (open(kPath, O_RDWR | O_CREAT, 0600) < 0) return 1;",
                   "#include <fcntl.h>\n" + PathIs(target) + ErrorMessageIs("no file"))));
  RunResult r = RunFirstScenarioSandboxed(job);
  ASSERT_EQ(r.scenarios[0].status, ScenarioStatus::kCrash) << Describe(r);
  EXPECT_EQ(r.scenarios[0].error,
            absl::StrCat("kseek_launch returned 1: no file; its process printed: "
                         "kseek sandbox: system call ", SYS_openat, " (openat for writing ",
                         target, ") refused"));
  EXPECT_NE(access(target.c_str(), F_OK), 0) << target << " was created";
}

// Opens for writing that create or truncate nothing go to the judge's
// OpenBroker: the null device (and, on GPU machines, the driver's device
// files) opens; a file does not, and the refusal names it.
TEST_F(RunnerTest, TheNullDeviceOpensForWritingUnderTheSandbox) {
  std::string why;
  if (!CanUseSeccomp(&why)) GTEST_SKIP() << "skipped: no seccomp filter here: " << why;
  if (!CanSuperviseOpens()) GTEST_SKIP() << "skipped: this kernel cannot supervise opens";
  RunJob job = Job(Build(
      "null_device",
      KernelSource(std::string("const int fd = open(\"/dev/null\", O_WRONLY | O_CLOEXEC);\n"
                               "  if (fd < 0 || write(fd, \"x\", 1) != 1) return 1;\n"
                               "  close(fd);\n  ") +
                       kGoodLoop,
                   "#include <fcntl.h>\n#include <unistd.h>\n")));
  job.sandbox.enabled = true;
  RunResult r = Run(job);
  for (const ScenarioResult& s : r.scenarios) {
    EXPECT_EQ(s.status, ScenarioStatus::kOk) << Describe(r);
  }
}

TEST_F(RunnerTest, SupervisedOpenOfAFileForWritingIsRefusedWithThePath) {
  std::string why;
  if (!CanUseSeccomp(&why)) GTEST_SKIP() << "skipped: no seccomp filter here: " << why;
  if (!CanSuperviseOpens()) GTEST_SKIP() << "skipped: this kernel cannot supervise opens";
  const std::string target = FileAnyoneMayWrite();
  for (const std::string& path : {target, std::string("/proc/self/mem")}) {
    RunJob job = Job(Build(
        "refused_rdwr",
        KernelSource("const int fd = open(kPath, O_RDWR);\n"
                     "  if (fd < 0) return 1;\n"
                     "  (void)!write(fd, \"after\", 5);\n  close(fd);",
                     "#include <fcntl.h>\n#include <unistd.h>\n" + PathIs(path) +
                         ErrorMessageIs("not opened"))));
    RunResult r = RunFirstScenarioSandboxed(job);
    ASSERT_EQ(r.scenarios[0].status, ScenarioStatus::kCrash) << Describe(r);
    EXPECT_EQ(r.scenarios[0].error,
              absl::StrCat("kseek_launch returned 1: not opened; its process printed: "
                           "kseek sandbox: system call ", SYS_openat, " (openat for writing ",
                           path, ") refused"));
  }
  EXPECT_EQ(testing::ReadFile(target), "before");
}

// A host that floods the judge's broker with refused opens: each is
// refused, but only the first kBrokerLoggedRefusals reach the log, then
// one line says the rest are not logged (the broker's writes are not under
// the host's file-size limit).
TEST_F(RunnerTest, AFloodOfRefusedOpensLogsOnlyTheFirst) {
  std::string why;
  if (!CanUseSeccomp(&why)) GTEST_SKIP() << "skipped: no seccomp filter here: " << why;
  if (!CanSuperviseOpens()) GTEST_SKIP() << "skipped: this kernel cannot supervise opens";
  const std::string target = FileAnyoneMayWrite();
  constexpr int kOpens = 200;
  RunJob job = Job(Build(
      "refused_flood",
      KernelSource(absl::StrCat("int refused = 0;\n"
                                "  for (int i = 0; i < ", kOpens, "; ++i) {\n"
                                "    const int fd = open(kPath, O_WRONLY);\n"
                                "    if (fd < 0) ++refused; else close(fd);\n"
                                "  }\n"
                                "  if (refused == ", kOpens, ") return 1;"),
                   "#include <fcntl.h>\n#include <unistd.h>\n" + PathIs(target) +
                       ErrorMessageIs("every open refused"))));
  RunResult r = RunFirstScenarioSandboxed(job);
  ASSERT_EQ(r.scenarios[0].status, ScenarioStatus::kCrash) << Describe(r);
  EXPECT_NE(r.scenarios[0].error.find("kseek_launch returned 1: every open refused"),
            std::string::npos)
      << Describe(r);
  // Per kernel host process (a log file each, candidate-PID-N.log in the
  // job's folder): the first kBrokerLoggedRefusals refusals, then the one
  // line for the rest.
  const std::string refusal =
      absl::StrCat("kseek sandbox: system call ", SYS_openat, " (openat for writing ", target,
                   ") refused");
  const std::string rest = "kseek sandbox: more opens for writing refused, not logged";
  int hosts = 0;
  for (const auto& entry : std::filesystem::directory_iterator(job.work_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("candidate-", 0) != 0) continue;
    const std::string log = testing::ReadFile(entry.path().string());
    if (!absl::StrContains(log, refusal)) continue;
    ++hosts;
    const std::vector<std::string> lines = absl::StrSplit(log, '\n');
    const auto count = [&](const std::string& text) {
      return std::count(lines.begin(), lines.end(), text);
    };
    EXPECT_EQ(count(refusal), kBrokerLoggedRefusals) << log;
    EXPECT_EQ(count(rest), 1) << log;
  }
  EXPECT_GE(hosts, 1) << "no candidate host log in " << job.work_dir;
  EXPECT_EQ(testing::ReadFile(target), "before");
}

TEST(OpenBrokerTest, OpensTheDriversCharacterDevicesAndTheNullDeviceOnly) {
  const std::string devices =
      "Character devices:\n  1 mem\n  4 tty\n195 nvidia-frontend\n508 nvidia-uvm\n"
      "511 nvidia-caps\n\nBlock devices:\n  7 loop\n259 blkext\n";
  EXPECT_TRUE(BrokerMayOpen(makedev(195, 0), devices));
  EXPECT_TRUE(BrokerMayOpen(makedev(195, 255), devices));
  EXPECT_TRUE(BrokerMayOpen(makedev(508, 1), devices));
  EXPECT_TRUE(BrokerMayOpen(makedev(1, 3), devices));   // /dev/null
  EXPECT_FALSE(BrokerMayOpen(makedev(1, 1), devices));  // /dev/mem
  EXPECT_FALSE(BrokerMayOpen(makedev(1, 5), devices));  // /dev/zero
  EXPECT_FALSE(BrokerMayOpen(makedev(4, 0), devices));
  EXPECT_FALSE(BrokerMayOpen(makedev(259, 0), devices));  // a block device's number
  EXPECT_FALSE(BrokerMayOpen(makedev(195, 0), "Character devices:\n  1 mem\n"));
  EXPECT_FALSE(BrokerMayOpen(makedev(195, 0), "Block devices:\n195 nvidia\n"));
}

TEST_F(RunnerTest, AFilterOfTheKernelsOwnIsRefused) {
  std::string why;
  if (!CanUseSeccomp(&why)) GTEST_SKIP() << "skipped: no seccomp filter here: " << why;
  RunJob job = Job(Build(
      "own_filter",
      KernelSource("uint32_t action = SECCOMP_RET_USER_NOTIF;\n"
                   "  if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) return 1;",
                   "#include <linux/seccomp.h>\n#include <sys/syscall.h>\n#include <unistd.h>\n" +
                       ErrorMessageIs("no filter"))));
  RunResult r = RunFirstScenarioSandboxed(job);
  ASSERT_EQ(r.scenarios[0].status, ScenarioStatus::kCrash) << Describe(r);
  EXPECT_EQ(r.scenarios[0].error,
            absl::StrCat("kseek_launch returned 1: no filter; its process printed: "
                         "kseek sandbox: system call ", SYS_seccomp, " (seccomp) refused"));
}

TEST_F(RunnerTest, SegfaultCrashesOnlyItsScenario) {
  RunJob job = Job(Build(
      "segfault",
      KernelSource(std::string("if (n == 4096) { *reinterpret_cast<volatile int*>(16) = 1; }\n  ") +
                   kGoodLoop)));
  job.timing.enabled = true;
  RunResult r = Run(job);
  ASSERT_EQ(r.scenarios[0].status, ScenarioStatus::kOk) << Describe(r);
  EXPECT_TRUE(r.scenarios[0].time.has_value());
  ASSERT_EQ(r.scenarios[1].status, ScenarioStatus::kCrash) << Describe(r);
  EXPECT_NE(r.scenarios[1].error.find("killed by signal 11"), std::string::npos)
      << r.scenarios[1].error;
  EXPECT_NE(r.scenarios[1].error.find("during the scenario"), std::string::npos);
  ASSERT_EQ(r.scenarios[2].status, ScenarioStatus::kOk) << Describe(r);
  EXPECT_TRUE(r.scenarios[2].time.has_value());
}

TEST_F(RunnerTest, HangTimesOutAndTheOthersAreEvaluated) {
  task_.scenario_timeout_s = 1;
  RunResult r = Run(Job(Build(
      "hang", KernelSource(std::string("if (n == 4096) { for (volatile int k = 0;; k = k + 1) {} }\n  ") +
                           kGoodLoop))));
  EXPECT_EQ(r.scenarios[0].status, ScenarioStatus::kOk) << Describe(r);
  ASSERT_EQ(r.scenarios[1].status, ScenarioStatus::kTimeout) << Describe(r);
  EXPECT_EQ(r.scenarios[1].error, "scenario time limit of 1 s reached");
  EXPECT_EQ(r.scenarios[2].status, ScenarioStatus::kOk) << Describe(r);
}

TEST_F(RunnerTest, JobTimeLimitEndsTheRemainingScenarios) {
  task_.job_timeout_s = 1.5;
  RunResult r = Run(Job(Build(
      "hang", KernelSource(std::string("if (n == 4096) { for (volatile int k = 0;; k = k + 1) {} }\n  ") +
                           kGoodLoop))));
  EXPECT_EQ(r.scenarios[0].status, ScenarioStatus::kOk) << Describe(r);
  for (int i : {1, 2}) {
    ASSERT_EQ(r.scenarios[i].status, ScenarioStatus::kTimeout) << Describe(r);
    EXPECT_EQ(r.scenarios[i].error, "job time limit of 1.5 s reached");
  }
}

TEST_F(RunnerTest, ExitInsideTheKernelIsACrash) {
  RunResult r = Run(Job(Build(
      "exits", KernelSource(std::string("if (n == 4096) std::exit(0);\n  ") + kGoodLoop))));
  EXPECT_EQ(r.scenarios[0].status, ScenarioStatus::kOk) << Describe(r);
  ASSERT_EQ(r.scenarios[1].status, ScenarioStatus::kCrash) << Describe(r);
  EXPECT_NE(r.scenarios[1].error.find("exited with status 0 during the scenario"),
            std::string::npos)
      << r.scenarios[1].error;
  EXPECT_EQ(r.scenarios[2].status, ScenarioStatus::kOk) << Describe(r);
}

TEST_F(RunnerTest, WritingPastTheEndOfAnOutputIsIncorrect) {
  RunResult r = Run(Job(Build(
      "writes_past_end",
      KernelSource(std::string(kGoodLoop) +
                   "\n  for (int64_t i = n; i < n + 16; ++i) StoreY(y, i, 1.0f);"))));
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_EQ(s.error.rfind("wrote outside tensor y: ", 0), 0u) << s.error;
    EXPECT_NE(s.error.find(" bytes after its end were changed (farthest: "), std::string::npos)
        << s.error;
    EXPECT_EQ(s.error.find("before its start"), std::string::npos) << s.error;
  }
}

TEST_F(RunnerTest, WritingBeforeTheStartOfAnInputIsIncorrect) {
  RunResult r = Run(Job(Build(
      "writes_before_start",
      KernelSource(std::string(kGoodLoop) +
                   "\n  static_cast<unsigned char*>(x.data)[-100] ^= 0xFF;"))));
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_EQ(s.error,
              "wrote outside tensor x: 1 byte before its start was changed "
              "(farthest: 100 bytes before it)");
  }
}

// Computes once per input pointer, then copies the saved output back.
constexpr char kReplayByPointer[] = R"(
  static const void* seen[16];
  static std::vector<unsigned char> saved[16];
  static int count = 0;
  const size_t bytes = static_cast<size_t>(n) * kseek_dtype_size(y.dtype);
  for (int s = 0; s < count; ++s) {
    if (seen[s] == x.data && saved[s].size() == bytes) {
      std::memcpy(y.data, saved[s].data(), bytes);
      return 0;
    }
  }
  for (int64_t i = 0; i < n; ++i) StoreY(y, i, 2.0f * LoadX(x, i));
  if (count < 16) {
    seen[count] = x.data;
    saved[count].assign(static_cast<unsigned char*>(y.data),
                        static_cast<unsigned char*>(y.data) + bytes);
    ++count;
  })";

TEST_F(RunnerTest, ReplayByPointerIsIncorrect) {
  RunResult r = Run(Job(Build("replay", KernelSource(kReplayByPointer))));
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    // The first call is honest; the probe reuses its buffers.
    EXPECT_EQ(s.error.rfind("wrong when only the second half of the inputs changed: output y", 0),
              0u)
        << s.error;
  }
}

// Computes once per hash of the first `kKeyBytes` (prefix) or last
// (suffix) bytes of x, then copies the saved output back.
std::string ReplayByContent(bool prefix) {
  return std::string(R"(
  constexpr size_t kKeyBytes = 64;
  static std::map<std::pair<uint64_t, size_t>, std::vector<unsigned char>> saved;
  const size_t bytes = static_cast<size_t>(n) * kseek_dtype_size(y.dtype);
  const auto* p = static_cast<const unsigned char*>(x.data);
  const size_t first = )") +
         (prefix ? "0" : "bytes - kKeyBytes") + R"(;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = first; i < first + kKeyBytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  const auto key = std::make_pair(h, bytes);
  auto it = saved.find(key);
  if (it != saved.end()) {
    std::memcpy(y.data, it->second.data(), bytes);
    return 0;
  }
  for (int64_t i = 0; i < n; ++i) StoreY(y, i, 2.0f * LoadX(x, i));
  saved[key].assign(static_cast<unsigned char*>(y.data),
                    static_cast<unsigned char*>(y.data) + bytes);)";
}

TEST_F(RunnerTest, ReplayByAPrefixOfTheInputIsIncorrect) {
  RunResult r =
      Run(Job(Build("replay_prefix", KernelSource(ReplayByContent(true), "#include <map>"))));
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_EQ(s.error.rfind("wrong when only the second half of the inputs changed: output y", 0),
              0u)
        << s.error;
    ASSERT_EQ(s.outputs.size(), 1u);
    EXPECT_FALSE(s.outputs[0].within);
    EXPECT_EQ(s.rel_l2, s.outputs[0].rel_l2);
  }
}

TEST_F(RunnerTest, ReplayByASuffixOfTheInputIsIncorrect) {
  RunResult r =
      Run(Job(Build("replay_suffix", KernelSource(ReplayByContent(false), "#include <map>"))));
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_EQ(s.error.rfind("wrong when only the first half of the inputs changed: output y", 0),
              0u)
        << s.error;
  }
}

TEST_F(RunnerTest, KernelWrongOnlyAfterTheChecksIsCaughtAfterTiming) {
  // Right for the first three calls of each shape (the checked call and the
  // two probes), wrong from then on.
  RunJob job = Job(Build("wrong_later", KernelSource(R"(
  static std::map<int64_t, int> calls;
  const float scale = ++calls[n] > 3 ? 2.1f : 2.0f;
  for (int64_t i = 0; i < n; ++i) StoreY(y, i, scale * LoadX(x, i));)",
                                                     "#include <map>")));
  job.timing.enabled = true;
  RunResult r = Run(job);
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_FALSE(s.time.has_value());
    // A random subset of the timed calls is checked, and the re-check after
    // timing runs in fresh buffers: either catches it.
    EXPECT_TRUE(s.error.rfind("wrong on a timed call (sample ", 0) == 0 ||
                s.error.rfind("wrong after timing: output y: rel_l2", 0) == 0)
        << s.error;
    EXPECT_NE(s.error.find("output y: rel_l2"), std::string::npos) << s.error;
  }
}

TEST_F(RunnerTest, WritingPastTheEndDuringTimingIsCaughtAfterTiming) {
  // Only the sixth call of each shape (a timed one) stores past the end of
  // y; the guards of every buffer set are read at each later check.
  RunJob job = Job(Build("writes_past_end_once", KernelSource(std::string(kGoodLoop) + R"(
  static std::map<int64_t, int> calls;
  if (++calls[n] == 6) StoreY(y, n, 1.0f);)",
                                                              "#include <map>")));
  job.timing.enabled = true;
  RunResult r = Run(job);
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    // Guards of every set are read by each checked timed call and by the
    // re-check after timing.
    EXPECT_TRUE(s.error.rfind("wrong on a timed call (sample ", 0) == 0 ||
                s.error.rfind("wrong after timing: ", 0) == 0)
        << s.error;
    EXPECT_NE(s.error.find("wrote outside tensor y: "), std::string::npos) << s.error;
  }
}

TEST_F(RunnerTest, CandidateThatDoesNotLoadIsACrash) {
  RunResult r = Run(Job(*dir_ + "/no_such_library.so"));
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kCrash) << Describe(r);
    EXPECT_NE(s.error.find("cannot load the candidate library"), std::string::npos) << s.error;
  }
}

TEST_F(RunnerTest, MissingRunnerBinaryIsAnError) {
  RunJob job = Job(Build("good", KernelSource(kGoodLoop)));
  job.runner_path = *dir_ + "/no-such-runner";
  absl::StatusOr<RunResult> r = RunScenarios(job, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RunnerTest, RunnerThatNeverStartsIsAnError) {
  RunJob job = Job(Build("good", KernelSource(kGoodLoop)));
  job.runner_path = "/bin/false";
  absl::StatusOr<RunResult> r = RunScenarios(job, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("could not start"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("exited with status 1 before it was ready"),
            std::string::npos)
      << r.status();
}

TEST_F(RunnerTest, BrokenReferenceIsAnErrorNamingIt) {
  RunJob job = Job(Build("good", KernelSource(kGoodLoop)));
  job.reference_lib = *dir_ + "/no_such_reference.so";
  absl::StatusOr<RunResult> r = RunScenarios(job, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot load the reference library"), std::string::npos)
      << r.status();
}

TEST_F(RunnerTest, InputsDependOnTheSeed) {
  // A kernel that is right only for one exact input value at element 0
  // passes for no seed but the one it was written for; two seeds give two
  // different first inputs, seen through the reported error.
  const std::string body = std::string(kGoodLoop) + "\n  StoreY(y, 0, 1000.0f);";
  const std::string lib = Build("off_by_one_element", KernelSource(body));
  RunJob a = Job(lib);
  a.scenarios.resize(1);
  RunJob b = a;
  b.seed = a.seed + 1;
  b.work_dir = TempDir("runner_job");
  RunResult ra = Run(a);
  RunResult rb = Run(b);
  RunResult ra2 = Run(a);
  ASSERT_EQ(ra.scenarios[0].status, ScenarioStatus::kIncorrect);
  ASSERT_EQ(rb.scenarios[0].status, ScenarioStatus::kIncorrect);
  EXPECT_NE(ra.scenarios[0].max_abs, rb.scenarios[0].max_abs);
  EXPECT_EQ(ra.scenarios[0].max_abs, ra2.scenarios[0].max_abs);
}

// The sandbox (SandboxOptions): only the kept variables and a private TMPDIR
// reach a runner child.
TEST(SandboxEnvironmentTest, KeepsOnlyTheNamedVariablesAndSetsTmpdir) {
  const char* const parent[] = {"PATH=/usr/bin",  "SECRET_TOKEN=abc", "TMPDIR=/tmp",
                                "HOME=/root",     "LANG=C.UTF-8",     "KSEEK_TOKEN=ks_x",
                                "CUDA_VISIBLE_DEVICES=1", "NO_EQUALS_SIGN", nullptr};
  SandboxOptions sandbox;
  EXPECT_EQ(SandboxEnvironment(sandbox, parent, "/work/job/tmp"),
            (std::vector<std::string>{"PATH=/usr/bin", "HOME=/root", "LANG=C.UTF-8",
                                      "CUDA_VISIBLE_DEVICES=1", "TMPDIR=/work/job/tmp"}));
  sandbox.keep_env = {"SECRET_TOKEN"};
  EXPECT_EQ(SandboxEnvironment(sandbox, parent, "/t"),
            (std::vector<std::string>{"SECRET_TOKEN=abc", "TMPDIR=/t"}));
}

// A kernel that checks what its process was given: the test's secret
// variable must be gone, core dumps off, file size limited, and TMPDIR a
// folder of its own.
constexpr char kSandboxProbe[] = R"(
  rlimit core{};
  rlimit fsize{};
  getrlimit(RLIMIT_CORE, &core);
  getrlimit(RLIMIT_FSIZE, &fsize);
  const char* tmp = std::getenv("TMPDIR");
  struct stat st {};
  if (std::getenv("KSEEK_SANDBOX_TEST_SECRET") != nullptr) { g_why = "secret visible"; return 1; }
  if (core.rlim_cur != 0) { g_why = "core dumps allowed"; return 1; }
  if (fsize.rlim_cur == RLIM_INFINITY) { g_why = "file size unlimited"; return 1; }
  if (tmp == nullptr || stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode) ||
      std::strcmp(tmp, "/tmp") == 0) { g_why = "no private TMPDIR"; return 1; }
)";

TEST_F(RunnerTest, SandboxedChildGetsAScrubbedEnvironmentLimitsAndItsOwnTmpdir) {
  ASSERT_EQ(setenv("KSEEK_SANDBOX_TEST_SECRET", "visible", 1), 0);
  const std::string lib = Build(
      "sandbox_probe",
      KernelSource(std::string(kSandboxProbe) + kGoodLoop,
                   "#include <sys/resource.h>\n#include <sys/stat.h>\n"
                   "static const char* g_why = \"\";\n"
                   "extern \"C\" KSEEK_EXPORT const char* kseek_error_message() { return g_why; }"));
  RunJob open = Job(lib);
  open.scenarios.resize(1);
  RunResult unsandboxed = Run(open);
  ASSERT_EQ(unsandboxed.scenarios[0].status, ScenarioStatus::kCrash) << Describe(unsandboxed);
  EXPECT_EQ(unsandboxed.scenarios[0].error, "kseek_launch returned 1: secret visible");

  RunJob job = Job(lib);
  job.sandbox.enabled = true;
  job.sandbox.max_address_space_bytes = uint64_t{16} << 30;
  std::string why;
  job.sandbox.isolate_network = CanIsolateNetwork(&why);
  RunResult r = Run(job);
  unsetenv("KSEEK_SANDBOX_TEST_SECRET");
  for (const ScenarioResult& s : r.scenarios) EXPECT_EQ(s.status, ScenarioStatus::kOk) << Describe(r);
}

}  // namespace
}  // namespace kseek
