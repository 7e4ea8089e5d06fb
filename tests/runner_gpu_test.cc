// RunScenarios and kseek-runner on a CUDA device: a tiny task (y = 2x) as
// CUDA kernels built with nvcc for both sm_90a and sm_100a; the tests use
// whichever target the device is. Skipped without a device or nvcc.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "harness/src/compile.h"
#include "harness/src/runner.h"
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

constexpr char kGpuTaskJson[] = R"({
  "name": "scale_gpu",
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
  "sources": {"cuda": {"reference": "reference.cu", "baseline": "baseline.cu"}},
  "targets": ["sm_90a", "sm_100a"],
  "scenarios": [
    {"name": "n1000000_f32", "params": {"n": 1000000, "dtype": "f32"}},
    {"name": "n4096_bf16", "params": {"n": 4096, "dtype": "bf16"}},
    {"name": "n777777_f32", "params": {"n": 777777, "dtype": "f32"}}
  ]
})";

// A CUDA kernel library: `body` runs with x, y, n and stream in scope.
std::string CudaKernelSource(const std::string& body) {
  return std::string(R"(
#include <cstdint>
#include <cuda_runtime.h>
#include "kernelseek/abi.h"

__device__ float LoadX(const void* p, int dtype, long i) {
  if (dtype == KSEEK_BF16) {
    return __uint_as_float(static_cast<unsigned>(static_cast<const unsigned short*>(p)[i]) << 16);
  }
  return static_cast<const float*>(p)[i];
}

__device__ void StoreY(void* p, int dtype, long i, float v) {
  if (dtype == KSEEK_BF16) {
    unsigned u = __float_as_uint(v);
    u += 0x7fffu + ((u >> 16) & 1u);
    static_cast<unsigned short*>(p)[i] = static_cast<unsigned short>(u >> 16);
  } else {
    static_cast<float*>(p)[i] = v;
  }
}

__global__ void Scale(const void* x, void* y, int dtype, long n, float factor) {
  long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) StoreY(y, dtype, i, factor * LoadX(x, dtype, i));
}

__global__ void Spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void Poke(int* p) { *p = 1; }

__global__ void SetY(void* y, int dtype, long i, float v) { StoreY(y, dtype, i, v); }

// moments[0] += sum of x, moments[1] += sum of x^2.
__global__ void Moments(const void* x, int dtype, long n, double* moments) {
  double s = 0, s2 = 0;
  for (long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    const double v = LoadX(x, dtype, i);
    s += v;
    s2 += v * v;
  }
  atomicAdd(&moments[0], s);
  atomicAdd(&moments[1], s2);
}

// Returns 3 unless x looks drawn from the standard normal (mean within six
// standard errors of 0, variance within [0.8, 1.2]).
int CheckStandardNormal(const kseek_tensor& x, long n, cudaStream_t stream) {
  static double* moments = nullptr;
  if (moments == nullptr && cudaMalloc(&moments, 2 * sizeof(double)) != cudaSuccess) return 4;
  double host[2] = {0, 0};
  cudaMemcpyAsync(moments, host, sizeof(host), cudaMemcpyHostToDevice, stream);
  Moments<<<64, 256, 0, stream>>>(x.data, x.dtype, n, moments);
  cudaMemcpyAsync(host, moments, sizeof(host), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  const double mean = host[0] / n, var = host[1] / n - mean * mean;
  const double bound = 6.0 / __builtin_sqrt(static_cast<double>(n));
  return mean > -bound && mean < bound && var > 0.8 && var < 1.2 ? 0 : 3;
}

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* a) {
  const kseek_tensor& x = a->tensors[0];
  const kseek_tensor& y = a->tensors[1];
  const long n = kseek_param_get(a, "n", 0);
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  (void)stream;
  (void)blocks;
)") + body + R"(
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";
}

constexpr char kGpuGood[] = "Scale<<<blocks, 256, 0, stream>>>(x.data, y.data, x.dtype, n, 2.0f);";

class RunnerGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(TempDir("runner_gpu_test"));
    WriteFile(*dir_ + "/task.json", kGpuTaskJson);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    KSEEK_REQUIRE_CUDA_DEVICE();
    if (!testing::HaveNvcc()) GTEST_SKIP() << "skipped: nvcc not found";
    if (!task_built_) {
      ASSERT_TRUE(Build("reference", kGpuGood) && Build("baseline", kGpuGood));
      task_built_ = true;
    }
    absl::StatusOr<TaskSpec> task = LoadTask(*dir_);
    ASSERT_TRUE(task.ok()) << task.status();
    task_ = *task;
  }

  // Compiles NAME.cu into libNAME.so for both GPU targets.
  bool Build(const std::string& name, const std::string& body) {
    const std::string src = *dir_ + "/" + name + ".cu";
    WriteFile(src, CudaKernelSource(body));
    testing::ProcessResult r = RunProcess(
        {CompilerFor(Target::kSm90a), "-shared", "-Xcompiler", "-fPIC", "-O2", "-std=c++17",
         "-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_100a,code=sm_100a",
         "-I" + SourceDir() + "/harness/include", src, "-o", Lib(name)});
    EXPECT_EQ(r.exit_code, 0) << "compiling " << name << ":\n" << r.err;
    return r.exit_code == 0;
  }
  std::string Lib(const std::string& name) const { return *dir_ + "/lib" + name + ".so"; }

  RunJob Job(const std::string& candidate, Target target) {
    RunJob job;
    job.task = &task_;
    job.target = target;
    job.reference_lib = Lib("reference");
    job.baseline_lib = Lib("baseline");
    job.candidate_lib = Lib(candidate);
    job.scenarios = task_.scenarios;
    job.seed = 777;
    job.timing.warmup = 2;
    job.timing.min_samples = 3;
    job.timing.max_samples = 20;
    job.timing.max_seconds = 0.5;
    job.runner_path = testing::BinDir() + "/kseek-runner";
    job.work_dir = TempDir("runner_gpu_job");
    return job;
  }

  // Runs the job on the device's target (sm_90a, else sm_100a).
  RunResult Run(const std::string& candidate) {
    absl::StatusOr<RunResult> r = RunScenarios(Job(candidate, Target::kSm90a), nullptr);
    if (!r.ok() && r.status().message().find("compute capability") != std::string::npos) {
      r = RunScenarios(Job(candidate, Target::kSm100a), nullptr);
    }
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : RunResult();
  }

  static std::string Describe(const RunResult& r) {
    std::string out;
    for (const ScenarioResult& s : r.scenarios) {
      out += s.name + ": " + StatusName(s.status) + " " + s.error + "\n";
    }
    return out + "log:\n" + r.log;
  }

  static std::string* dir_;
  static bool task_built_;
  TaskSpec task_;
};

std::string* RunnerGpuTest::dir_ = nullptr;
bool RunnerGpuTest::task_built_ = false;

TEST_F(RunnerGpuTest, CorrectKernelIsOkAndTimed) {
  ASSERT_TRUE(Build("good", kGpuGood));
  RunResult r = Run("good");
  ASSERT_EQ(r.scenarios.size(), 3u) << Describe(r);
  EXPECT_NE(r.device.name.find("NVIDIA"), std::string::npos) << r.device.name;
  EXPECT_TRUE(r.device.cc_major == 9 || r.device.cc_major == 10);
  EXPECT_GT(r.device.sm_count, 0);
  EXPECT_GT(r.device.l2_bytes, 0);
  EXPECT_GT(r.device.memory_bytes, 0);
  EXPECT_GT(r.device.mem_bandwidth_gbps, 0);
  EXPECT_FALSE(r.device.driver.empty());
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kOk) << Describe(r);
    ASSERT_TRUE(s.time.has_value());
    EXPECT_GE(s.time->n, 3);
    ASSERT_TRUE(s.baseline.has_value());
    ASSERT_TRUE(s.speedup.has_value());
  }
}

// The driver opens its device files again when it maps a memory pool's
// memory, after the host's filter is installed: the judge's OpenBroker
// opens them for the host (open_broker.h). A kernel that allocates from a
// pool of its own and from the device's default pool runs sandboxed.
TEST_F(RunnerGpuTest, MemoryPoolsWorkUnderTheSandbox) {
  std::string why;
  if (!CanUseSeccomp(&why)) GTEST_SKIP() << "skipped: no seccomp filter here: " << why;
  ASSERT_TRUE(Build("pools", R"(
  static cudaMemPool_t pool = nullptr;
  if (pool == nullptr) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    int device = 0;
    cudaGetDevice(&device);
    props.location.id = device;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) return 5;
    // Both pools keep their memory across calls, as a kernel library's
    // pools do. One that gives it back at every synchronization (CUDA's
    // default) maps it again on the next call: 0.06-0.09 ms of host work
    // per pool and call on an H100, sandboxed or not
    // (scripts/device/pool_cost.sh), which the judge's clock counts; with
    // two pools that exceeds its 0.1 ms allowance.
    cudaMemPool_t default_pool = nullptr;
    if (cudaDeviceGetDefaultMemPool(&default_pool, device) != cudaSuccess) return 8;
    unsigned long long keep = ~0ull;
    for (cudaMemPool_t p : {pool, default_pool}) {
      if (cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
        return 9;
      }
    }
  }
  const size_t bytes = static_cast<size_t>(n) * (x.dtype == KSEEK_BF16 ? 2 : 4);
  void* from_pool = nullptr;
  void* from_default = nullptr;
  if (cudaMallocFromPoolAsync(&from_pool, bytes, pool, stream) != cudaSuccess) return 6;
  if (cudaMallocAsync(&from_default, bytes, stream) != cudaSuccess) return 7;
  Scale<<<blocks, 256, 0, stream>>>(x.data, from_pool, x.dtype, n, 2.0f);
  cudaMemcpyAsync(from_default, from_pool, bytes, cudaMemcpyDeviceToDevice, stream);
  cudaMemcpyAsync(y.data, from_default, bytes, cudaMemcpyDeviceToDevice, stream);
  cudaFreeAsync(from_pool, stream);
  cudaFreeAsync(from_default, stream);)"));
  RunJob job = Job("pools", Target::kSm90a);
  job.sandbox.enabled = true;
  absl::StatusOr<RunResult> r = RunScenarios(job, nullptr);
  if (!r.ok() && r.status().message().find("compute capability") != std::string::npos) {
    job.target = Target::kSm100a;
    r = RunScenarios(job, nullptr);
  }
  ASSERT_TRUE(r.ok()) << r.status();
  for (const ScenarioResult& s : r->scenarios) {
    EXPECT_EQ(s.status, ScenarioStatus::kOk) << Describe(*r);
  }
}

TEST_F(RunnerGpuTest, WrongDeviceIsRefused) {
  ASSERT_TRUE(Build("good", kGpuGood));
  absl::StatusOr<RunResult> a = RunScenarios(Job("good", Target::kSm90a), nullptr);
  absl::StatusOr<RunResult> b = RunScenarios(Job("good", Target::kSm100a), nullptr);
  // Exactly one of the two targets is this device's.
  ASSERT_NE(a.ok(), b.ok());
  const absl::Status& refused = a.ok() ? b.status() : a.status();
  EXPECT_NE(refused.message().find("needs a device of compute capability"), std::string::npos)
      << refused;
}

TEST_F(RunnerGpuTest, WorkOnABlockingSideStreamIsCounted) {
  ASSERT_TRUE(Build("side_blocking", R"(
  static cudaStream_t side = nullptr;
  if (side == nullptr) cudaStreamCreate(&side);
  Spin<<<1, 1, 0, side>>>(200000);
  Scale<<<blocks, 256, 0, side>>>(x.data, y.data, x.dtype, n, 2.0f);)"));
  RunResult r = Run("side_blocking");
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kOk) << Describe(r);
    ASSERT_TRUE(s.time.has_value());
    EXPECT_GT(s.time->median, 0.05);  // the spin is inside the events
  }
}

TEST_F(RunnerGpuTest, WorkOnANonBlockingStreamEscapesAndIsIncorrect) {
  ASSERT_TRUE(Build("side_nonblocking", R"(
  static cudaStream_t side = nullptr;
  if (side == nullptr) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  Spin<<<1, 1, 0, side>>>(4000000);
  Scale<<<blocks, 256, 0, side>>>(x.data, y.data, x.dtype, n, 2.0f);)"));
  RunResult r = Run("side_nonblocking");
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_NE(s.error.find("work escaped the timing stream"), std::string::npos) << s.error;
  }
}

TEST_F(RunnerGpuTest, IllegalAddressCrashesOnlyItsScenario) {
  ASSERT_TRUE(Build("illegal", std::string(R"(
  if (n == 4096) Poke<<<1, 1, 0, stream>>>(reinterpret_cast<int*>(16));
  )") + kGpuGood));
  RunResult r = Run("illegal");
  ASSERT_EQ(r.scenarios.size(), 3u) << Describe(r);
  EXPECT_EQ(r.scenarios[0].status, ScenarioStatus::kOk) << Describe(r);
  ASSERT_EQ(r.scenarios[1].status, ScenarioStatus::kCrash) << Describe(r);
  EXPECT_NE(r.scenarios[1].error.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos)
      << r.scenarios[1].error;
  EXPECT_EQ(r.scenarios[2].status, ScenarioStatus::kOk) << Describe(r);
}

// The judge draws every input on the device (scenario, probes, pools of the
// timed calls, re-check): each call's x must look standard normal.
TEST_F(RunnerGpuTest, EveryCallGetsStandardNormalInputs) {
  ASSERT_TRUE(Build("moments", R"(
    if (int rc = CheckStandardNormal(x, n, stream)) return rc;
    Scale<<<blocks, 256, 0, stream>>>(x.data, y.data, x.dtype, n, 2.0f);)"));
  RunResult r = Run("moments");
  for (const ScenarioResult& s : r.scenarios) {
    EXPECT_EQ(s.status, ScenarioStatus::kOk) << Describe(r);
    EXPECT_TRUE(s.time.has_value());
  }
}

// The comparison on the device finds the first NaN of several blocks (the
// kernel compares 65536 elements per block), counts them, and measures a
// single wrong element.
TEST_F(RunnerGpuTest, DeviceComparisonNamesTheFirstBadElement) {
  ASSERT_TRUE(Build("nan2", R"(
    Scale<<<blocks, 256, 0, stream>>>(x.data, y.data, x.dtype, n, 2.0f);
    SetY<<<1, 1, 0, stream>>>(y.data, y.dtype, n - 1, __builtin_nanf(""));
    SetY<<<1, 1, 0, stream>>>(y.data, y.dtype, n / 3, __builtin_nanf(""));)"));
  RunResult r = Run("nan2");
  ASSERT_EQ(r.scenarios.size(), 3u) << Describe(r);
  const long n[3] = {1000000, 4096, 777777};
  for (int i = 0; i < 3; ++i) {
    const ScenarioResult& s = r.scenarios[i];
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_NE(s.error.find("NaN at element " + std::to_string(n[i] / 3) + " (2 of " +
                           std::to_string(n[i]) + " elements are NaN)"),
              std::string::npos)
        << s.error;
  }
  ASSERT_TRUE(Build("one_wrong", R"(
    Scale<<<blocks, 256, 0, stream>>>(x.data, y.data, x.dtype, n, 2.0f);
    SetY<<<1, 1, 0, stream>>>(y.data, y.dtype, n / 2, 1000.0f);)"));
  r = Run("one_wrong");
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_NE(s.error.find("max_abs"), std::string::npos) << s.error;
    EXPECT_GT(s.max_abs, 990) << s.error;
    EXPECT_LT(s.max_abs, 1010) << s.error;
  }
}

// The input check on the device names the first changed element.
TEST_F(RunnerGpuTest, DeviceInputCheckNamesTheFirstChangedElement) {
  ASSERT_TRUE(Build("write_x", R"(
    Scale<<<blocks, 256, 0, stream>>>(x.data, y.data, x.dtype, n, 2.0f);
    SetY<<<1, 1, 0, stream>>>(x.data, x.dtype, n - 2, 77.0f);
    SetY<<<1, 1, 0, stream>>>(x.data, x.dtype, n / 2 + 1, 77.0f);)"));
  RunResult r = Run("write_x");
  const long n[3] = {1000000, 4096, 777777};
  for (int i = 0; i < 3; ++i) {
    const ScenarioResult& s = r.scenarios[i];
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_NE(s.error.find("input tensor x was modified (first at element " +
                           std::to_string(n[i] / 2 + 1) + ")"),
              std::string::npos)
        << s.error;
  }
}

TEST_F(RunnerGpuTest, PartlyUnwrittenOutputIsIncorrect) {
  ASSERT_TRUE(Build("partial",
                    "Scale<<<blocks / 2, 256, 0, stream>>>(x.data, y.data, x.dtype, n, 2.0f);"));
  RunResult r = Run("partial");
  for (const ScenarioResult& s : r.scenarios) {
    ASSERT_EQ(s.status, ScenarioStatus::kIncorrect) << Describe(r);
    EXPECT_NE(s.error.find("NaN at element"), std::string::npos) << s.error;
  }
}

}  // namespace
}  // namespace kseek
