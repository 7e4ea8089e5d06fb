// The small helpers of base/: file reading, flag files, TLS files, the
// status macros and the log line.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "absl/status/status.h"
#include "absl/time/civil_time.h"
#include "base/cpu_model.h"
#include "base/file.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "base/tls.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

class BaseTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::TempDir("base"); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    testing::WriteFile(path, text);
    return path;
  }
  std::string dir_;
};

TEST_F(BaseTest, ReadFileReturnsTheBytesOrNamesThePathAndTheReason) {
  const std::string binary("a\0b\n", 4);
  EXPECT_EQ(*ReadFile(Write("f", binary)), binary);
  absl::StatusOr<std::string> missing = ReadFile(dir_ + "/nope");
  EXPECT_EQ(missing.status(),
            absl::NotFoundError(dir_ + "/nope: cannot read: No such file or directory"));
  EXPECT_EQ(ReadFile(dir_).status().message(), dir_ + ": cannot read: Is a directory");
}

TEST_F(BaseTest, NamedFilesSayWhichSettingNamedThemAndRefuseEmptyOnes) {
  EXPECT_EQ(ReadNamedFile("--tls-ca", dir_ + "/nope").status().message(),
            "--tls-ca " + dir_ + "/nope: cannot read: No such file or directory");
  const std::string empty = Write("empty", "");
  EXPECT_EQ(ReadNamedFile("--tls-ca", empty).status(),
            absl::InvalidArgumentError("--tls-ca " + empty + ": the file is empty"));
  EXPECT_EQ(*ReadTokenFile("--token-file", Write("t", "  s3cret\n")), "s3cret");
  const std::string blank = Write("blank", " \n");
  EXPECT_EQ(ReadTokenFile("--token-file", blank).status().message(),
            "--token-file " + blank + ": the file is empty");
}

TEST_F(BaseTest, TlsServerFilesGoTogether) {
  absl::StatusOr<std::optional<TlsServerPem>> none = ReadTlsServerPem("", "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(ReadTlsServerPem(Write("c", "CERT"), "").status(),
            absl::InvalidArgumentError("--tls-cert and --tls-key go together"));
  absl::StatusOr<std::optional<TlsServerPem>> pem = ReadTlsServerPem(Write("c", "CERT"), Write("k", "KEY"));
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_EQ((*pem)->cert, "CERT");
  EXPECT_EQ((*pem)->key, "KEY");
  EXPECT_EQ(ReadTlsServerPem(dir_ + "/c", dir_ + "/gone").status().message(),
            "--tls-key " + dir_ + "/gone: cannot read: No such file or directory");
}

absl::Status FailsWhen(bool fail) {
  return fail ? absl::UnavailableError("down") : absl::OkStatus();
}

absl::StatusOr<int> Twice(absl::StatusOr<int> v) {
  KSEEK_ASSIGN_OR_RETURN(int x, v);
  return 2 * x;
}

absl::Status Steps(bool fail_first, int* reached) {
  KSEEK_RETURN_IF_ERROR(FailsWhen(fail_first));
  *reached = 1;
  KSEEK_RETURN_IF_ERROR(FailsWhen(true));
  *reached = 2;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, ReturnTheFirstErrorOrGoOnWithTheValue) {
  int reached = 0;
  EXPECT_EQ(Steps(true, &reached), absl::UnavailableError("down"));
  EXPECT_EQ(reached, 0);
  EXPECT_EQ(Steps(false, &reached), absl::UnavailableError("down"));
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(*Twice(21), 42);
  EXPECT_EQ(Twice(absl::NotFoundError("x")).status(), absl::NotFoundError("x"));
}

TEST(LogTest, ALineHasTheTimeInUtcAndTheProgram) {
  const absl::Time t = absl::FromCivil(absl::CivilSecond(2026, 12, 1, 14, 5, 9), absl::UTCTimeZone()) +
                       absl::Milliseconds(123);
  EXPECT_EQ(LogLine("kernelseekd", t, "serving"), "2026-12-01T14:05:09.123Z kernelseekd: serving\n");
}

TEST_F(BaseTest, LogWritesOneLineToStderrNamedAfterTheProgram) {
  const std::string path = dir_ + "/stderr";
  fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  dup2(fd, STDERR_FILENO);
  Logf("evaluation %s: %d scenarios", "ev_1", 3);
  dup2(saved, STDERR_FILENO);
  close(fd);
  close(saved);
  const std::string line = *ReadFile(path);
  EXPECT_NE(line.find(" base_test: evaluation ev_1: 3 scenarios\n"), std::string::npos) << line;
  // One line, the time before the program's name.
  EXPECT_EQ(line.find(" base_test"), std::string("2026-12-01T14:05:09.123Z").size()) << line;
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
}

TEST(CpuModelTest, IsTheFirstModelNameLineOrAGenericName) {
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\n"
                                "model name\t: AMD EPYC 9654 96-Core Processor \n"
                                "model name\t: second\n"),
            "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\n"), "host CPU");
  EXPECT_EQ(CpuModelFromCpuinfo(""), "host CPU");
  EXPECT_FALSE(CpuModel().empty());
}

TEST(TimeTest, NowMsIsTheUnixTimeInMilliseconds) {
  const int64_t before = absl::ToUnixMillis(absl::Now());
  const int64_t now = NowMs();
  EXPECT_GE(now, before);
  EXPECT_LE(now, absl::ToUnixMillis(absl::Now()));
}

}  // namespace
}  // namespace kseek
