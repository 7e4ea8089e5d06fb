// Tests of the compile driver: host compiles, the cache, failures, the
// ptxas report parser, the compiler lookup, and (with nvcc) CUDA compiles
// for both GPU targets.
#include "harness/src/compile.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for the life of the object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    if (old != nullptr) old_ = std::string(old);
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A host kernel implementing the ABI: y = 2 * x over f32.
constexpr char kHostKernel[] = R"(// Doubles a vector.
#include "kernelseek/abi.h"

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  if (args->num_tensors != 2) return 1;
  const float* x = static_cast<const float*>(args->tensors[0].data);
  float* y = static_cast<float*>(args->tensors[1].data);
  int64_t n = kseek_param_get(args, "n", 0);
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];
  return 0;
}
)";

CompileRequest HostRequest(const std::string& cache_dir, const std::string& source = kHostKernel) {
  CompileRequest req;
  req.target = Target::kHost;
  req.source = source;
  req.source_name = "kernel.cc";
  req.cache_dir = cache_dir;
  req.timeout_s = 120;
  return req;
}

// Files directly in `dir` whose name ends with `suffix`.
int CountFiles(const std::string& dir, const std::string& suffix) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      ++n;
    }
  }
  return n;
}

TEST(CompileHost, BuildsALoadableLibrary) {
  const std::string cache = testing::TempDir("kseek-compile");
  absl::StatusOr<CompileOutput> out = Compile(HostRequest(cache));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->info.ok) << out->info.log;
  EXPECT_FALSE(out->info.cached);
  EXPECT_EQ(fs::path(out->library).parent_path(), fs::path(cache));
  EXPECT_EQ(fs::path(out->library).extension(), ".so");
  for (const char* flag : {"-O3", "-march=native", "-std=c++17", "-fPIC", "-shared", "kernel.cc"}) {
    EXPECT_NE(out->info.command.find(flag), std::string::npos)
        << flag << " missing from " << out->info.command;
  }
  EXPECT_EQ(out->info.registers, 0);  // no ptxas report for the host

  // The library really implements the ABI.
  void* lib = dlopen(out->library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto launch = reinterpret_cast<kseek_launch_fn>(dlsym(lib, "kseek_launch"));
  ASSERT_NE(launch, nullptr);
  float x[3] = {1, 2, 3}, y[3] = {0, 0, 0};
  kseek_param param = {"n", 3};
  kseek_tensor tensors[2] = {};
  tensors[0].data = x;
  tensors[1].data = y;
  kseek_launch_args args = {};
  args.abi_version = KSEEK_ABI_VERSION;
  args.num_params = 1;
  args.params = &param;
  args.num_tensors = 2;
  args.tensors = tensors;
  EXPECT_EQ(launch(&args), 0);
  EXPECT_EQ(y[0], 2.0f);
  EXPECT_EQ(y[2], 6.0f);
  dlclose(lib);
}

TEST(CompileHost, SecondCompileIsACacheHit) {
  const std::string cache = testing::TempDir("kseek-compile");
  absl::StatusOr<CompileOutput> first = Compile(HostRequest(cache));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->info.ok) << first->info.log;
  ASSERT_FALSE(first->info.cached);

  absl::StatusOr<CompileOutput> second = Compile(HostRequest(cache));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->info.ok);
  EXPECT_TRUE(second->info.cached);
  EXPECT_EQ(second->library, first->library);
  EXPECT_EQ(second->info.log, first->info.log);
  EXPECT_EQ(second->info.command, first->info.command);
  EXPECT_EQ(CountFiles(cache, ".so"), 1);

  // A hit speaks of the caller's file name.
  CompileRequest renamed = HostRequest(cache);
  renamed.source_name = "other.cc";
  absl::StatusOr<CompileOutput> third = Compile(renamed);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->info.cached);
  EXPECT_NE(third->info.command.find(" other.cc"), std::string::npos) << third->info.command;
  EXPECT_EQ(third->info.command.find("kernel.cc"), std::string::npos) << third->info.command;
  // Nothing temporary is left behind.
  for (const auto& entry : fs::directory_iterator(cache)) {
    EXPECT_EQ(entry.path().filename().string().find("tmp"), std::string::npos) << entry.path();
  }
}

TEST(CompileHost, ConcurrentCompilesOfOneSourceAgree) {
  const std::string cache = testing::TempDir("kseek-compile");
  constexpr int kThreads = 4;
  std::vector<absl::StatusOr<CompileOutput>> outs(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&outs, &cache, i] { outs[i] = Compile(HostRequest(cache)); });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::StatusOr<CompileOutput>& out : outs) {
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->info.ok) << out->info.log;
    EXPECT_EQ(out->library, outs[0]->library);
  }
  EXPECT_EQ(CountFiles(cache, ".so"), 1);
  EXPECT_EQ(CountFiles(cache, ".log"), 1);
  EXPECT_EQ(CountFiles(cache, ".cmd"), 1);
}

TEST(CompileHost, SourceAndFlagsChangeTheKey) {
  const std::string cache = testing::TempDir("kseek-compile");
  absl::StatusOr<CompileOutput> base = Compile(HostRequest(cache));
  ASSERT_TRUE(base.ok()) << base.status();

  absl::StatusOr<CompileOutput> other_source =
      Compile(HostRequest(cache, std::string(kHostKernel) + "// changed\n"));
  ASSERT_TRUE(other_source.ok()) << other_source.status();
  EXPECT_FALSE(other_source->info.cached);
  EXPECT_NE(other_source->library, base->library);

  CompileRequest with_include = HostRequest(cache);
  with_include.include_dirs = {testing::TempDir("kseek-include")};
  absl::StatusOr<CompileOutput> other_flags = Compile(with_include);
  ASSERT_TRUE(other_flags.ok()) << other_flags.status();
  EXPECT_FALSE(other_flags->info.cached);
  EXPECT_NE(other_flags->library, base->library);
  EXPECT_NE(other_flags->info.command.find(with_include.include_dirs[0]), std::string::npos);
  EXPECT_EQ(CountFiles(cache, ".so"), 3);
}

TEST(CompileHost, SyntaxErrorIsReportedAndNotCached) {
  const std::string cache = testing::TempDir("kseek-compile");
  const std::string bad =
      "#include \"kernelseek/abi.h\"\n"
      "extern \"C\" int kseek_launch(const kseek_launch_args* args) {\n"
      "  return 0 +;\n"
      "}\n";
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<CompileOutput> out = Compile(HostRequest(cache, bad));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_FALSE(out->info.ok);
    EXPECT_FALSE(out->info.cached);
    EXPECT_TRUE(out->library.empty());
    // The error names the caller's file and line, not a temporary path.
    EXPECT_NE(out->info.log.find("kernel.cc:3"), std::string::npos) << out->info.log;
    EXPECT_NE(out->info.log.find("error"), std::string::npos) << out->info.log;
    EXPECT_NE(out->info.log.find("exited with status"), std::string::npos) << out->info.log;
  }
  EXPECT_TRUE(fs::is_empty(cache));
}

TEST(CompileHost, TimeoutKillsTheCompiler) {
  const std::string cache = testing::TempDir("kseek-compile");
  // Constant evaluation far beyond what any compiler finishes in the limit.
  const std::string slow =
      "constexpr long Spin() {\n"
      "  long s = 0;\n"
      "  for (long i = 0; i < 200000; ++i)\n"
      "    for (long j = 0; j < 200000; ++j) s += i ^ j;\n"
      "  return s;\n"
      "}\n"
      "static_assert(Spin() != 1, \"spin\");\n";
  CompileRequest req = HostRequest(cache, slow);
  req.timeout_s = 1;
  absl::StatusOr<CompileOutput> out = Compile(req);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->info.ok);
  EXPECT_NE(out->info.log.find("timed out after 1 s"), std::string::npos) << out->info.log;
  EXPECT_TRUE(fs::is_empty(cache));
}

TEST(CompileEnvironment, MissingCompilerIsAnError) {
  ScopedEnv cxx("KSEEK_CXX", "/nonexistent/bin/c++");
  EXPECT_EQ(CompilerFor(Target::kHost), "");
  absl::StatusOr<CompileOutput> out = Compile(HostRequest(testing::TempDir("kseek-compile")));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(out.status().message().find("KSEEK_CXX"), std::string::npos) << out.status();
}

TEST(CompileEnvironment, CompilerLookupFollowsTheEnvironment) {
  {
    ScopedEnv kseek_cxx("KSEEK_CXX", nullptr);
    ScopedEnv cxx("CXX", "/bin/sh");
    EXPECT_EQ(CompilerFor(Target::kHost), "/bin/sh");
  }
  {
    ScopedEnv nvcc("KSEEK_NVCC", "/bin/sh");
    EXPECT_EQ(CompilerFor(Target::kSm90a), "/bin/sh");
    EXPECT_EQ(CompilerFor(Target::kSm100a), "/bin/sh");
  }
  {
    ScopedEnv nvcc("KSEEK_NVCC", "/nonexistent/nvcc");
    EXPECT_EQ(CompilerFor(Target::kSm90a), "");
  }
}

TEST(CompileEnvironment, DefaultCacheDir) {
  {
    ScopedEnv dir("KSEEK_CACHE_DIR", "/srv/kseek-cache");
    EXPECT_EQ(DefaultCacheDir(), "/srv/kseek-cache");
  }
  ScopedEnv dir("KSEEK_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(DefaultCacheDir(), "/x/cache/kernelseek/compile");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(DefaultCacheDir(), "/home/someone/.cache/kernelseek/compile");
}

TEST(CompileEnvironment, AbiIncludeDir) {
  const std::string dir = AbiIncludeDir();
  ASSERT_FALSE(dir.empty());
  EXPECT_TRUE(fs::exists(dir + "/kernelseek/abi.h"));

  const std::string other = testing::TempDir("kseek-include");
  fs::create_directories(other + "/kernelseek");
  testing::WriteFile(other + "/kernelseek/abi.h", "/* copy */\n");
  {
    ScopedEnv env("KSEEK_INCLUDE_DIR", other.c_str());
    EXPECT_EQ(AbiIncludeDir(), other);
  }
  {
    // A folder without the header is passed over.
    ScopedEnv env("KSEEK_INCLUDE_DIR", "/nonexistent");
    EXPECT_EQ(AbiIncludeDir(), dir);
  }
}

TEST(PtxasReport, FoldsEveryFunction) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z3fwdPK13__nv_bfloat16PS_' "
      "for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z3fwdPK13__nv_bfloat16PS_\n"
      "    24 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 16384 bytes smem, "
      "400 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z3bwdPf' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z3bwdPf\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 0 barriers, 32768 bytes smem, "
      "360 bytes cmem[0], 8 bytes cmem[2]\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "    48 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n";
  CompileInfo info;
  ParsePtxasReport(log, &info);
  EXPECT_EQ(info.registers, 168);
  EXPECT_EQ(info.smem_bytes, 32768);
  EXPECT_EQ(info.stack_bytes, 48);
  EXPECT_EQ(info.spill_bytes, 8 + 8 + 4 + 12);
}

TEST(PtxasReport, OlderFormatAndOtherText) {
  CompileInfo info;
  ParsePtxasReport(
      "kernel.cu(3): warning #177-D: variable \"used\" was declared but never "
      "referenced\n"
      "ptxas info    : Used 32 registers, 2048 bytes smem, 352 bytes cmem[0]\n",
      &info);
  EXPECT_EQ(info.registers, 32);
  EXPECT_EQ(info.smem_bytes, 2048);
  EXPECT_EQ(info.spill_bytes, 0);

  CompileInfo empty;
  ParsePtxasReport("g++: some message\n", &empty);
  EXPECT_EQ(empty.registers, 0);
  EXPECT_EQ(empty.smem_bytes, 0);
  EXPECT_EQ(empty.stack_bytes, 0);
  EXPECT_EQ(empty.spill_bytes, 0);
}

// A small CUDA kernel implementing the ABI.
constexpr char kCudaKernel[] = R"(// Scales a vector.
#include <cuda_runtime.h>
#include "kernelseek/abi.h"

__global__ void Scale(const float* x, float* y, long n, float a) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + sqrtf(fabsf(x[i]));
}

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  long n = (long)kseek_param_get(args, "n", 0);
  Scale<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)args->stream>>>(
      (const float*)args->tensors[0].data, (float*)args->tensors[1].data, n,
      2.0f);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

class CompileCuda : public ::testing::TestWithParam<Target> {};

TEST_P(CompileCuda, ReportsResourcesFromPtxas) {
  if (!testing::HaveNvcc()) GTEST_SKIP() << "skipped: nvcc not found";
  const std::string cache = testing::TempDir("kseek-compile");
  CompileRequest req;
  req.target = GetParam();
  req.source = kCudaKernel;
  req.source_name = "scale.cu";
  req.cache_dir = cache;
  absl::StatusOr<CompileOutput> out = Compile(req);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->info.ok) << out->info.log;
  const std::string arch = GetParam() == Target::kSm90a ? "90a" : "100a";
  EXPECT_NE(out->info.command.find("-gencode=arch=compute_" + arch + ",code=sm_" + arch),
            std::string::npos)
      << out->info.command;
  // The flags come from harness/src/cuda_flags.inc, read as the scripts
  // that build kernels like the harness read it: its quoted strings, in
  // order (kernels/flash_attention_fwd/bench/run_variants.sh).
  const std::string inc = testing::ReadFile(testing::SourceDir() + "/harness/src/cuda_flags.inc");
  std::string listed;
  for (size_t open = inc.find('"'); open != std::string::npos; open = inc.find('"', open)) {
    const size_t close = inc.find('"', open + 1);
    ASSERT_NE(close, std::string::npos) << "unbalanced quote in cuda_flags.inc";
    listed += (listed.empty() ? "" : " ") + inc.substr(open + 1, close - open - 1);
    open = close + 1;
  }
  EXPECT_NE(listed.find("-O3"), std::string::npos) << listed;
  EXPECT_NE(out->info.command.find(listed), std::string::npos)
      << "command: " << out->info.command << "\ncuda_flags.inc: " << listed;
  EXPECT_NE(out->info.log.find("ptxas info"), std::string::npos) << out->info.log;
  EXPECT_GT(out->info.registers, 0) << out->info.log;
  EXPECT_TRUE(fs::exists(out->library));

  absl::StatusOr<CompileOutput> again = Compile(req);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->info.cached);
  EXPECT_EQ(again->info.registers, out->info.registers);
}

INSTANTIATE_TEST_SUITE_P(Targets, CompileCuda, ::testing::Values(Target::kSm90a, Target::kSm100a),
                         [](const ::testing::TestParamInfo<Target>& info) {
                           return TargetName(info.param);
                         });

}  // namespace
}  // namespace kseek
