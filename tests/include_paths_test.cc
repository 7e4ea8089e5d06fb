// Every quoted include of ours names its file from the repository root
// ("harness/src/task.h"), so that no folder is an include path but the
// candidate ABI's (harness/include: "kernelseek/abi.h") and the generated
// gRPC code's (build/: "kernelseek/v1/worker.grpc.pb.h").
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

namespace fs = std::filesystem;

// Headers of the libraries we build on, found through their own paths.
constexpr const char* kLibraryPrefixes[] = {"absl/",  "nlohmann/",        "gtest/", "gmock/",
                                            "grpc/",  "grpcpp/",          "google/protobuf/"};
// Generated into build/ from our .proto files.
constexpr const char* kGenerated[] = {"grpc_health.grpc.pb.h", "grpc_reflection_v1.grpc.pb.h"};

bool Allowed(const std::string& root, const std::string& target) {
  for (const char* prefix : kLibraryPrefixes)
    if (absl::StartsWith(target, prefix)) return true;
  for (const char* name : kGenerated)
    if (target == name) return true;
  if (absl::StartsWith(target, "kernelseek/v1/") && absl::EndsWith(target, ".pb.h")) return true;
  if (target == "kernelseek/abi.h") return true;
  return fs::is_regular_file(fs::path(root) / target);
}

// "FILE:LINE: #include "X"" for every include of `path` that breaks the rule.
std::vector<std::string> Offenders(const std::string& root, const fs::path& path) {
  std::vector<std::string> out;
  const std::string text = testing::ReadFile(path.string());
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (!absl::ConsumePrefix(&line, "#include \"")) continue;
    const size_t end = line.find('"');
    if (end == absl::string_view::npos) continue;
    const std::string target(line.substr(0, end));
    if (!Allowed(root, target)) {
      out.push_back(absl::StrCat(fs::relative(path, root).string(), ":", line_number,
                                 ": #include \"", target, "\""));
    }
  }
  return out;
}

TEST(IncludePaths, NameTheirFolderFromTheRepositoryRoot) {
  const std::string root = testing::SourceDir();
  std::vector<std::string> offenders;
  int files = 0;
  for (const char* folder : {"base", "client", "harness", "proto", "question_bank", "server", "tests",
                             "worker"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(root) / folder)) {
      const fs::path& p = entry.path();
      // The Hopper and Blackwell emulators compile a kernel file rewritten
      // into their build folders, beside emu.h: programs of their own, not
      // libraries of ours.
      if (absl::StrContains(p.string(), "/tests/hopper_emu/") ||
          absl::StrContains(p.string(), "/tests/blackwell_emu/")) {
        continue;
      }
      const std::string ext = p.extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h" && ext != ".cu" && ext != ".inc")) {
        continue;
      }
      ++files;
      for (std::string& o : Offenders(root, p)) offenders.push_back(std::move(o));
    }
  }
  EXPECT_GT(files, 100);
  EXPECT_TRUE(offenders.empty()) << "includes that name no file from the repository root:\n"
                                 << absl::StrJoin(offenders, "\n");
}

}  // namespace
}  // namespace kseek
