// kseek against a kernelseekd that speaks only TLS, as real processes on
// loopback: plaintext fails with a hint to pass --tls-ca (or set
// $KSEEK_TLS_CA), and either of them gets through.
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek::testing {
namespace {

TEST(KseekTlsTest, PlaintextAgainstTlsHintsAtTheCaAndTheCaGetsThrough) {
  const std::string dir = TempDir("kseek_tls");
  const std::string cert = dir + "/cert.pem", key = dir + "/key.pem";
  ProcessResult made =
      RunProcess({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out",
                  cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"});
  if (made.exit_code != 0) GTEST_SKIP() << "skipped: openssl cannot make a certificate: " << made.err;
  Daemon coordinator({BinDir() + "/kernelseekd", "--listen", "127.0.0.1:0", "--state-dir", dir + "/state",
                      "--tls-cert", cert, "--tls-key", key},
                     dir + "/kernelseekd.log");
  const std::string address = coordinator.WaitListening(30);
  ASSERT_FALSE(address.empty()) << ReadFile(dir + "/kernelseekd.log");
  std::string token = ReadFile(dir + "/state/admin.token");
  while (!token.empty() && token.back() == '\n') token.pop_back();
  auto kseek = [&](const std::vector<std::string>& env, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "KSEEK_TLS_CA", "-C", dir, "HOME=" + dir,
                                     "KSEEK_COORDINATOR=" + address, "KSEEK_TOKEN=" + token};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(BinDir() + "/kseek");
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  };

  ProcessResult plain = kseek({}, {"workers", "--json"});
  EXPECT_EQ(plain.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(plain.err, "cannot reach coordinator " + address)) << plain.err;
  EXPECT_TRUE(absl::StrContains(plain.err, "if the coordinator speaks TLS, pass --tls-ca FILE or set $KSEEK_TLS_CA"))
      << plain.err;

  ProcessResult by_flag = kseek({}, {"workers", "--json", "--tls-ca", cert});
  EXPECT_EQ(by_flag.exit_code, 0) << by_flag.err;
  EXPECT_EQ(by_flag.out, "[]\n");
  ProcessResult by_env = kseek({"KSEEK_TLS_CA=" + cert}, {"workers", "--json"});
  EXPECT_EQ(by_env.exit_code, 0) << by_env.err;
  EXPECT_EQ(by_env.out, "[]\n");

  coordinator.Signal(SIGTERM);
  EXPECT_EQ(coordinator.Wait(30), 0);
}

}  // namespace
}  // namespace kseek::testing
