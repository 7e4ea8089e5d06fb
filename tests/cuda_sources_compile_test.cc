// Every CUDA source in the repository compiles for every GPU target.
//
// Finds each *.cu under kernels/, tests/ and scripts/ (folders named build* are
// skipped) and registers one test per file and target. The compiles go
// through Compile() into a scratch cache, several at once; the file's own
// folder is on the include path, as it is when a task is evaluated.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "harness/src/compile.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

namespace fs = std::filesystem;

// The *.cu files under `root`, relative to SourceDir(), sorted.
std::vector<std::string> CudaSources(const std::string& root) {
  std::vector<std::string> found;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return found;
  fs::recursive_directory_iterator it(root, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (it->is_directory(ec) && p.filename().string().rfind("build", 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && p.extension() == ".cu") {
      found.push_back(fs::relative(p, testing::SourceDir()).string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// A test name from a path: letters and digits kept, the rest '_'.
std::string TestName(const std::string& path, Target target) {
  std::string name = path + "_" + TargetName(target);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// One compile: a source file (relative to SourceDir()) for a target.
struct Job {
  std::string path;
  Target target;
};

// Every job, filled in when the tests are registered.
std::vector<Job>& Jobs() {
  static std::vector<Job> jobs;
  return jobs;
}

absl::StatusOr<CompileOutput> RunJob(const Job& job, const std::string& cache_dir) {
  const std::string full = testing::SourceDir() + "/" + job.path;
  CompileRequest req;
  req.target = job.target;
  try {
    req.source = testing::ReadFile(full);
  } catch (const std::exception& e) {
    return absl::NotFoundError(e.what());
  }
  req.source_name = job.path;
  req.include_dirs = {fs::path(full).parent_path().string()};
  req.cache_dir = cache_dir;
  return Compile(req);
}

// The result of every job, by index. The first test to ask runs them all,
// as many at once as there are cores, so a large machine finishes sooner.
const std::vector<absl::StatusOr<CompileOutput>>& Results() {
  static const std::vector<absl::StatusOr<CompileOutput>>* results = [] {
    const std::vector<Job>& jobs = Jobs();
    auto* out = new std::vector<absl::StatusOr<CompileOutput>>(jobs.size(),
                                                               absl::UnknownError("not compiled"));
    const std::string cache = testing::TempDir("kseek-cuda-sources");
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < jobs.size(); i = next++) (*out)[i] = RunJob(jobs[i], cache);
    };
    const size_t workers =
        std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), jobs.size()));
    std::vector<std::thread> threads;
    for (size_t w = 0; w < workers; ++w) threads.emplace_back(work);
    for (std::thread& t : threads) t.join();
    return out;
  }();
  return *results;
}

class CudaSourceCompiles : public ::testing::Test {
 public:
  explicit CudaSourceCompiles(size_t job) : job_(job) {}

  void TestBody() override {
    if (!testing::HaveNvcc()) GTEST_SKIP() << "skipped: nvcc not found";
    const Job& job = Jobs()[job_];
    const absl::StatusOr<CompileOutput>& out = Results()[job_];
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->info.ok) << job.path << " does not compile for " << TargetName(job.target)
                              << "\n"
                              << out->info.command << "\n"
                              << out->info.log;
  }

 private:
  size_t job_;
};

class NoCudaSources : public ::testing::Test {
 public:
  void TestBody() override {
    GTEST_SKIP() << "skipped: no *.cu files under kernels/, tests/ or scripts/ of " << testing::SourceDir();
  }
};

// Registers the tests before main() runs them.
const bool kRegistered = [] {
  std::vector<std::string> files = CudaSources(testing::SourceDir() + "/kernels");
  for (const char* root : {"/tests", "/scripts"}) {
    for (const std::string& f : CudaSources(testing::SourceDir() + root)) files.push_back(f);
  }
  if (files.empty()) {
    ::testing::RegisterTest("CudaSources", "NoneFound", nullptr, nullptr, __FILE__, __LINE__,
                            []() -> ::testing::Test* { return new NoCudaSources; });
  }
  for (const std::string& file : files) {
    for (Target target : {Target::kSm90a, Target::kSm100a}) {
      const size_t job = Jobs().size();
      Jobs().push_back({file, target});
      ::testing::RegisterTest("CudaSources", TestName(file, target).c_str(), nullptr, file.c_str(),
                              __FILE__, __LINE__,
                              [job]() -> ::testing::Test* { return new CudaSourceCompiles(job); });
    }
  }
  return true;
}();

}  // namespace
}  // namespace kseek
