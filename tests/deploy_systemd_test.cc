// The systemd units of deploy/systemd pass `systemd-analyze verify`. The
// units expect the bundle in /opt/kernelseek; the copies checked here name
// this build instead, so that the binaries they start are also checked to
// be where the bundle's layout puts them (bin/). Skips where
// systemd-analyze is missing.
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

namespace fs = std::filesystem;

const char* const kUnits[] = {"kernelseekd.service", "kseek-worker-host.service", "kseek-worker@.service"};

std::string SystemdAnalyze() {
  for (const char* p : {"/usr/bin/systemd-analyze", "/bin/systemd-analyze"})
    if (access(p, X_OK) == 0) return p;
  return "";
}

// Copies the units into `dir` with /opt/kernelseek replaced by the build,
// applying `edit` to each text; returns the unit paths to verify (the
// template as its instance @0).
std::vector<std::string> CopyUnits(const std::string& dir,
                                   const std::function<std::string(const std::string&)>& edit) {
  const std::string bundle = fs::path(testing::BinDir()).parent_path().string();
  std::vector<std::string> paths;
  for (const char* unit : kUnits) {
    std::string text = testing::ReadFile(testing::SourceDir() + "/deploy/systemd/" + unit);
    testing::WriteFile(dir + "/" + unit, edit(absl::StrReplaceAll(text, {{"/opt/kernelseek", bundle}})));
    paths.push_back(dir + "/" + absl::StrReplaceAll(unit, {{"@.service", "@0.service"}}));
  }
  return paths;
}

// The lines of systemd-analyze's output about our units.
std::string Complaints(const testing::ProcessResult& r) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(r.out + r.err, '\n'))
    for (const char* unit : kUnits)
      if (absl::StrContains(line, absl::StrReplaceAll(unit, {{"@.service", "@"}}))) {
        absl::StrAppend(&out, line, "\n");
        break;
      }
  return out;
}

TEST(DeploySystemd, UnitsVerify) {
  const std::string analyze = SystemdAnalyze();
  if (analyze.empty()) GTEST_SKIP() << "skipped: no systemd-analyze to verify the systemd units";
  const std::string dir = testing::TempDir("units");
  std::vector<std::string> argv = {analyze, "verify"};
  for (const auto& p : CopyUnits(dir, [](const std::string& t) { return t; })) argv.push_back(p);
  testing::ProcessResult r = testing::RunProcess(argv);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Complaints(r), "") << "systemd-analyze verify complains about the units";

  // The check sees a broken unit: an unknown key and a bad service type.
  const std::string broken = testing::TempDir("units");
  argv = {analyze, "verify"};
  for (const auto& p : CopyUnits(broken, [](const std::string& t) {
         return absl::StrReplaceAll(t, {{"Type=exec", "Type=exek"}, {"[Install]", "[Install]\nWantedByy=x"}});
       }))
    argv.push_back(p);
  r = testing::RunProcess(argv);
  const std::string complaints = Complaints(r);
  for (const char* unit : kUnits)
    EXPECT_TRUE(absl::StrContains(complaints, absl::StrReplaceAll(unit, {{"@.service", "@"}})))
        << unit << " not reported:\n" << r.out << r.err;
}

}  // namespace
}  // namespace kseek
