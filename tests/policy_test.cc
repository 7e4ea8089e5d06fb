// Tests of the static policy check: one group per rule family, then the
// reading of comments and literals, false positives, and line numbers.
#include "harness/src/policy.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

std::vector<PolicyViolation> Check(const std::string& src, const Policy& policy = Policy()) {
  return CheckPolicy(src, "cuda", policy);
}

// The rules of the violations found in `src`.
std::vector<std::string> Rules(const std::string& src, const Policy& policy = Policy()) {
  std::vector<std::string> rules;
  for (const PolicyViolation& v : Check(src, policy)) rules.push_back(v.rule);
  return rules;
}

void ExpectClean(const std::string& src) {
  std::vector<PolicyViolation> found = Check(src);
  for (const PolicyViolation& v : found) {
    ADD_FAILURE() << "unexpected violation in:\n"
                  << src << "\n"
                  << DescribeViolation("kernel.cu", v);
  }
}

void ExpectRule(const std::string& src, const std::string& rule) {
  std::vector<std::string> rules = Rules(src);
  EXPECT_NE(std::find(rules.begin(), rules.end(), rule), rules.end())
      << "expected \"" << rule << "\" for:\n"
      << src;
}

TEST(PolicyIncludes, VendorLibrariesAreForbidden) {
  ExpectRule("#include <cublas_v2.h>\n", "forbidden include: cublas_v2.h");
  ExpectRule("#include <cublasLt.h>\n", "forbidden include: cublasLt.h");
  ExpectRule("#include \"cutlass/gemm/device/gemm.h\"\n",
             "forbidden include: cutlass/gemm/device/gemm.h");
  ExpectRule("#include <cute/tensor.hpp>\n", "forbidden include: cute/tensor.hpp");
  ExpectRule("#include <cudnn.h>\n", "forbidden include: cudnn.h");
  ExpectRule("#include <cufft.h>\n", "forbidden include: cufft.h");
  ExpectRule("#include <curand_kernel.h>\n", "forbidden include: curand_kernel.h");
  ExpectRule("#include <cusparse.h>\n", "forbidden include: cusparse.h");
  ExpectRule("#include <cusolverDn.h>\n", "forbidden include: cusolverDn.h");
  ExpectRule("#include <nccl.h>\n", "forbidden include: nccl.h");
  ExpectRule("#include <torch/extension.h>\n", "forbidden include: torch/extension.h");
  ExpectRule("#include <ATen/ATen.h>\n", "forbidden include: ATen/ATen.h");
  // Case and relative paths do not hide a library.
  ExpectRule("#include <CUBLAS_V2.H>\n", "forbidden include: CUBLAS_V2.H");
  ExpectRule("#include \"../third_party/cutlass/include/cutlass/cutlass.h\"\n",
             "forbidden include: ../third_party/cutlass/include/cutlass/cutlass.h");
}

TEST(PolicyIncludes, HostThreadAndSystemHeadersAreForbidden) {
  for (const char* header :
       {"thread", "future", "fstream", "filesystem", "unistd.h", "dlfcn.h", "fcntl.h", "spawn.h",
        "signal.h", "csignal", "pthread.h", "sys/mman.h", "sys/syscall.h"}) {
    ExpectRule(std::string("#include <") + header + ">\n",
               std::string("forbidden include: ") + header);
  }
}

TEST(PolicyIncludes, CudaAndStandardHeadersAreAllowed) {
  ExpectClean(
      "#include <cuda_runtime.h>\n"
      "#include <cuda_bf16.h>\n"
      "#include <cuda_fp16.h>\n"
      "#include <cuda/barrier>\n"
      "#include <cooperative_groups.h>\n"
      "#include <cub/cub.cuh>\n"
      "#include <mma.h>\n"
      "#include <cstdio>\n"
      "#include <cstdlib>\n"
      "#include <cstdint>\n"
      "#include <iostream>\n"
      "#include \"kernelseek/abi.h\"\n"
      // Names that merely contain a forbidden word.
      "#include \"execute/plan.h\"\n"
      "#include \"concatenate.h\"\n"
      "#include \"thread_tile.h\"\n"
      "#include \"my_futures.h\"\n");
}

TEST(PolicyIncludes, DirectiveSpellingsAreRecognised) {
  ExpectRule("  #  include <cublas_v2.h>\n", "forbidden include: cublas_v2.h");
  ExpectRule("%:include <cublas_v2.h>\n", "forbidden include: cublas_v2.h");
  ExpectRule("#include_next <cudnn.h>\n", "forbidden include: cudnn.h");
  ExpectRule("#inc\\\nlude <cublas_v2.h>\n", "forbidden include: cublas_v2.h");
  ExpectRule("#include /* note */ <cublas_v2.h>\n", "forbidden include: cublas_v2.h");
}

TEST(PolicyIncludes, MacroIncludeIsForbidden) {
  std::vector<PolicyViolation> found = Check("#define LIB <cublas_v2.h>\n#include LIB\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].line, 2);
  EXPECT_NE(found[0].rule.find("include of a macro"), std::string::npos);
}

TEST(PolicySymbols, StreamGraphAndEventCreation) {
  for (const char* call :
       {"cudaStreamCreate(&s);", "cudaStreamCreateWithFlags(&s, 1);",
        "cudaStreamCreateWithPriority(&s, 1, 0);", "cuStreamCreate(&s, 0);",
        "cudaStreamBeginCapture(s, m);", "cudaGraphCreate(&g, 0);",
        "cudaGraphInstantiate(&e, g, 0);", "cudaGraphLaunch(e, s);", "cudaEventCreate(&e);",
        "cudaEventCreateWithFlags(&e, 0);", "cuEventCreate(&e, 0);",
        "k<<<1, 1, 0, cudaStreamPerThread>>>();", "cudaDeviceReset();", "cudaSetDevice(1);",
        "cudaDeviceSetLimit(l, 0);", "cudaCtxResetPersistingL2Cache();", "cudaProfilerStart();",
        "cudaLaunchHostFunc(s, f, 0);"}) {
    std::string src = std::string("void f() { ") + call + " }\n";
    std::string name = std::string(call).substr(0, std::string(call).find('('));
    if (name.find("<<<") != std::string::npos) name = "cudaStreamPerThread";
    ExpectRule(src, "forbidden symbol: " + name);
  }
}

TEST(PolicySymbols, HostThreads) {
  ExpectRule("std::thread t(work);\n", "forbidden symbol: thread");
  ExpectRule("auto f = std::async(work);\n", "forbidden symbol: async");
  ExpectRule("pthread_create(&t, 0, work, 0);\n", "forbidden symbol: pthread_create");
  ExpectRule("pid_t p = fork();\n", "forbidden symbol: fork");
  ExpectRule("vfork();\n", "forbidden symbol: vfork");
}

TEST(PolicySymbols, FileAndProcessCalls) {
  ExpectRule("FILE* f = fopen(\"x\", \"w\");\n", "forbidden symbol: fopen");
  ExpectRule("int fd = open(\"/proc/self/mem\", 2);\n", "forbidden symbol: open");
  ExpectRule("int fd = ::open(p, 0);\n", "forbidden symbol: open");
  ExpectRule("write(1, buf, n);\n", "forbidden symbol: write");
  ExpectRule("read(0, buf, n);\n", "forbidden symbol: read");
  ExpectRule("void* p = mmap(0, n, 3, 34, -1, 0);\n", "forbidden symbol: mmap");
  ExpectRule("system(\"rm -rf /\");\n", "forbidden symbol: system");
  ExpectRule("FILE* p = popen(cmd, \"r\");\n", "forbidden symbol: popen");
  ExpectRule("execvp(argv[0], argv);\n", "forbidden symbol: execvp");
  ExpectRule("posix_spawn(&pid, p, 0, 0, a, e);\n", "forbidden symbol: posix_spawn");
  ExpectRule("exit(0);\n", "forbidden symbol: exit");
  ExpectRule("std::exit(0);\n", "forbidden symbol: exit");
  ExpectRule("_exit(0);\n", "forbidden symbol: _exit");
  ExpectRule("quick_exit(0);\n", "forbidden symbol: quick_exit");
  ExpectRule("kill(getppid(), 9);\n", "forbidden symbol: kill");
  ExpectRule("raise(11);\n", "forbidden symbol: raise");
  ExpectRule("signal(11, h);\n", "forbidden symbol: signal");
  ExpectRule("void* h = dlopen(\"libc.so.6\", 2);\n", "forbidden symbol: dlopen");
  ExpectRule("auto w = dlsym(h, \"write\");\n", "forbidden symbol: dlsym");
  ExpectRule("long r = syscall(1, 1, b, n);\n", "forbidden symbol: syscall");
  ExpectRule("const char* s = getenv(\"SEED\");\n", "forbidden symbol: getenv");
  ExpectRule("std::ofstream out(\"x\");\n", "forbidden symbol: ofstream");
  ExpectRule("atexit(report);\n", "forbidden symbol: atexit");
  // Reaching a call through a pointer or a macro still names it.
  ExpectRule("auto w = &write;\n", "forbidden symbol: write");
  ExpectRule("auto w = write;\n", "forbidden symbol: write");
  ExpectRule("#define OUT write\n", "forbidden symbol: write");
}

TEST(PolicySymbols, AbortStaysAllowed) { ExpectClean("void f() { abort(); printf(\"x\\n\"); }\n"); }

TEST(PolicySymbols, LoadTimeCode) {
  ExpectRule("__attribute__((constructor)) static void init() {}\n",
             "forbidden symbol: constructor");
  ExpectRule("__attribute__((__destructor__)) static void fini() {}\n",
             "forbidden symbol: __destructor__");
  ExpectRule("[[gnu::constructor]] static void init() {}\n", "forbidden symbol: constructor");
  ExpectRule("__attribute__((section(\".init_array\"))) void* p = 0;\n",
             "forbidden symbol: section");
  ExpectClean(
      "__attribute__((visibility(\"default\"))) int x;\n"
      "struct S { S() {} };\n"
      "int constructor = 3;\n");
}

TEST(PolicySymbols, AsmSystemCalls) {
  ExpectRule("void f() { asm volatile(\"mov $60, %rax\\n syscall\"); }\n",
             "forbidden asm: syscall");
  ExpectRule("void f() { __asm__ __volatile__(\"int $0x80\"); }\n", "forbidden asm: int $0x80");
  ExpectRule("asm(\".section .init_array\\n .quad f\");\n", "forbidden asm: init_array");
  ExpectClean(
      "__device__ void f(unsigned a) {\n"
      "  asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" :: \"r\"(a));\n"
      "}\n");
}

TEST(PolicyReading, CommentsNeitherTripNorHide) {
  ExpectClean(
      "// cudaStreamCreate(&s); #include <cublas_v2.h>\n"
      "/* std::thread t; fopen(\"x\", \"w\");\n"
      "   exit(1); */\n"
      "int x = 1; // write(1, b, n)\n");
  ExpectRule("void f() { cudaStreamCreate/* c */(&s); }\n", "forbidden symbol: cudaStreamCreate");
  ExpectRule("/* a */ #include <cublas_v2.h>\n", "forbidden include: cublas_v2.h");
  ExpectRule("std::/* a */thread t(work);\n", "forbidden symbol: thread");
  // A line comment continued by a backslash swallows the next line.
  ExpectClean("// note \\\nexit(1);\n");
}

TEST(PolicyReading, LiteralsAreBlanked) {
  ExpectClean(
      "const char* a = \"exit(1); fopen(\\\"x\\\") cudaStreamCreate\";\n"
      "const char* b = R\"raw(\" write(1, b, 1); )\" still in)raw\";\n"
      "const char* c = u8\"#include <cublas_v2.h>\";\n"
      "char d = '\"'; int e = 1'000'000; char f = '\\'';\n"
      "#define MSG \"system(ls)\"\n");
  // A quote inside a char literal does not start a string that would hide
  // what follows.
  ExpectRule("char q = '\"'; int fd = open(p, 0);\n", "forbidden symbol: open");
  // Nor does a digit separator start a char literal.
  ExpectRule("int n = 1'000; exit(n); int m = 2'0;\n", "forbidden symbol: exit");
}

TEST(PolicyReading, NoFalsePositives) {
  ExpectClean(
      "#include <cuda_runtime.h>\n"
      "__global__ void k(const float* in, float* out, int n) {\n"
      "  int thread = threadIdx.x;\n"
      "  int read_count = 0, written = 0;\n"
      "  float v = in[thread];\n"
      "  out[thread] = v;\n"
      "}\n"
      "void host(cudaStream_t stream, Reader& r, Writer* w, float* d) {\n"
      "  cudaMemcpyAsync(d, d, 4, cudaMemcpyDeviceToDevice, stream);\n"
      "  cudaStreamSynchronize(stream);\n"
      "  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 1);\n"
      "  r.read(d, 4);\n"
      "  w->write(d, 4);\n"
      "  file::open(\"x\");\n"
      "  Log<float>::write(d, 4);\n"
      "  decltype(r)::read(d);\n"
      "  auto s = cuda::thread_scope_system;\n"
      "  x.clone();\n"
      "  mystd::thread t;\n"
      "  int exit_code = 0, opened = 1;\n"
      "  cudaStreamCreateX(&stream);\n"
      "  float e = 1e-5f + 0x1p-3;\n"
      "}\n");
}

TEST(PolicyLines, ReportedLineAndTextAreTheOriginal) {
  const std::string src =
      "// header\n"                      // 1
      "/* a block comment\n"             // 2
      "   spanning lines */\n"           // 3
      "#define JOIN(a, b) \\\n"          // 4
      "    a##b\n"                       // 5
      "const char* s = \"multi\\n\";\n"  // 6
      "void f() {\n"                     // 7
      "    cudaEventCreate(&e);   \n"    // 8
      "}\n"                              // 9
      "#include <cublas_v2.h>\n";        // 10
  std::vector<PolicyViolation> found = Check(src);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].line, 4);
  EXPECT_EQ(found[0].text, "#define JOIN(a, b) \\");
  EXPECT_EQ(found[0].rule.rfind("token pasting (##)", 0), 0u) << found[0].rule;
  EXPECT_EQ(found[1].line, 8);
  EXPECT_EQ(found[1].text, "cudaEventCreate(&e);");
  EXPECT_EQ(found[1].rule, "forbidden symbol: cudaEventCreate");
  EXPECT_EQ(found[2].line, 10);
  EXPECT_EQ(found[2].text, "#include <cublas_v2.h>");
}

// The tricks that once passed the policy: each is now refused with its
// line. (The run-time sandbox refuses what they do in any case.)
TEST(PolicyHardening, EveryKnownEvasionIsRefused) {
  struct Case {
    const char* src;
    const char* rule;
  };
  const Case cases[] = {
      {"void f() { asm volatile(\"sys\" \"call\" ::: \"memory\"); }\n", "forbidden asm: syscall"},
      {"void f() { (fopen)(\"/tmp/x\", \"w\"); }\n", "forbidden symbol: fopen"},
      {"void f() { (kill)(1, 9); }\n", "forbidden symbol: kill"},
      {"#include <link.h>\n", "forbidden include: link.h"},
      {"#/**/include <thread>\n", "forbidden include: thread"},
      {"#include <bits/std_thread.h>\n", "forbidden include: bits/std_thread.h"},
      {"using namespace std;\nvoid f() { thread t([] {}); t.join(); }\n", "forbidden symbol: thread"},
      {"#define P(a, b) a##b\nvoid f() { P(sys, tem)(\"x\"); }\n",
       "token pasting (##): names assembled by the preprocessor cannot be checked"},
      {"int g() __attribute__((ifunc(\"r\")));\n", "forbidden symbol: ifunc"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> rules = Rules(c.src);
    EXPECT_NE(std::find(rules.begin(), rules.end(), c.rule), rules.end())
        << c.src << "gave: " << ::testing::PrintToString(rules);
  }
  // Still allowed: a variable named thread without `using namespace std`,
  // and a parenthesised expression that is not a call.
  EXPECT_TRUE(Rules("int thread = 0; int y = (thread) + 1;\n").empty());
}

TEST(PolicyLines, SplicedIdentifierReportsItsFirstLine) {
  std::vector<PolicyViolation> found = Check("int a;\nvoid f() { cudaStream\\\nCreate(&s); }\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].line, 2);
  EXPECT_EQ(found[0].rule, "forbidden symbol: cudaStreamCreate");
}

TEST(PolicyLines, OneViolationPerLineAndRule) {
  std::vector<PolicyViolation> found = Check("exit(1); exit(2);\nexit(3);\n");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].line, 1);
  EXPECT_EQ(found[1].line, 2);
}

TEST(PolicyTask, AdditionsApplyLikeBuiltIns) {
  Policy policy;
  policy.forbidden_includes = {"MyBlas", "cuda/pipeline"};
  policy.forbidden_symbols = {"__nanosleep", "std::sort"};
  std::vector<std::string> rules = Rules(
      "#include \"vendor/mYbLaS_v3.h\"\n"
      "#include <cuda/pipeline>\n"
      "// __nanosleep(10);\n"
      "__device__ void f() { __nanosleep(10); }\n"
      "void g(int* a) { std::sort(a, a + 3); my::sort(a); }\n",
      policy);
  EXPECT_EQ(rules, (std::vector<std::string>{
                       "forbidden include: vendor/mYbLaS_v3.h", "forbidden include: cuda/pipeline",
                       "forbidden symbol: __nanosleep", "forbidden symbol: std::sort"}));
  // Without the task's additions the same source is clean.
  ExpectClean(
      "#include \"vendor/mYbLaS_v3.h\"\n"
      "__device__ void f() { __nanosleep(10); }\n");
}

TEST(PolicyDescribe, Format) {
  std::vector<PolicyViolation> found = Check("\n\n\n\n\n\n\n\n\n\n\n#include <cublas_v2.h>\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(DescribeViolation("kernel.cu", found[0]),
            "kernel.cu:12: forbidden include: cublas_v2.h: "
            "#include <cublas_v2.h>");
}

TEST(PolicyFamilies, HostSourcesGetTheSameRules) {
  std::vector<PolicyViolation> found =
      CheckPolicy("#include <thread>\nint main() { std::thread t([] {}); }\n", "host", Policy());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].rule, "forbidden include: thread");
  EXPECT_EQ(found[1].rule, "forbidden symbol: thread");
}

TEST(PolicyRepository, ShippedKernelsPass) {
  const std::string root = testing::SourceDir() + "/kernels";
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << "skipped: no " << root;
  int checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cu" && ext != ".cc" && ext != ".cuh")) continue;
    const std::string path = entry.path().string();
    const std::string family = ext == ".cc" ? "host" : "cuda";
    for (const PolicyViolation& v : CheckPolicy(testing::ReadFile(path), family, Policy())) {
      ADD_FAILURE() << DescribeViolation(path, v);
    }
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no kernel sources under " << root;
}

}  // namespace
}  // namespace kseek
