// A client in another language: tests/node_client/client.js (Node.js,
// @grpc/grpc-js and @grpc/proto-loader loading proto/kernelseek/v1/*.proto
// at run time, no generated code; the task named from the coordinator's
// catalog, then packed by the rule the TaskFiles comment states) against a
// real kernelseekd and host worker on loopback, over plaintext and TLS. scripts/setup.sh installs the Node packages; the
// test skips, saying so, without node or them.
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek::testing {
namespace {

namespace fs = std::filesystem;

class NodeClientE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunProcess({"/usr/bin/env", "node", "--version"}).exit_code != 0) GTEST_SKIP() << "skipped: no node on PATH";
    if (!fs::exists(SourceDir() + "/tests/node_client/node_modules/@grpc/grpc-js/package.json")) {
      GTEST_SKIP() << "skipped: tests/node_client/node_modules is not installed (scripts/setup.sh installs it)";
    }
    dir_ = TempDir("node_client");
  }

  // A coordinator serving kernels/ and a host worker registered with it;
  // `tls` adds the coordinator's certificate, and the worker trusts it.
  void Start(bool tls) {
    std::vector<std::string> coordinator = {BinDir() + "/kernelseekd", "--listen", "127.0.0.1:0", "--state-dir",
                                            dir_ + "/state", "--tasks", SourceDir() + "/kernels"};
    std::vector<std::string> worker_tls;
    if (tls) {
      ProcessResult made = RunProcess({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                                       "-keyout", dir_ + "/key.pem", "-out", Cert(), "-days", "1", "-subj",
                                       "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"});
      ASSERT_EQ(made.exit_code, 0) << made.err;
      coordinator.insert(coordinator.end(), {"--tls-cert", Cert(), "--tls-key", dir_ + "/key.pem"});
      worker_tls = {"--tls-ca", Cert()};
    }
    coordinator_ = std::make_unique<Daemon>(coordinator, dir_ + "/kernelseekd.log");
    address_ = coordinator_->WaitListening(30);
    ASSERT_FALSE(address_.empty()) << ReadFile(dir_ + "/kernelseekd.log");
    std::vector<std::string> worker = {BinDir() + "/kseek-worker", "--listen", "127.0.0.1:0", "--coordinator",
                                       address_, "--target", "host", "--token-file", dir_ + "/state/worker.token",
                                       "--cache-dir", dir_ + "/cache"};
    worker.insert(worker.end(), worker_tls.begin(), worker_tls.end());
    worker_ = std::make_unique<Daemon>(worker, dir_ + "/worker.log");
    ASSERT_FALSE(worker_->WaitListening(60).empty()) << ReadFile(dir_ + "/worker.log");
  }
  void TearDown() override {
    worker_.reset();
    if (coordinator_ != nullptr) {
      coordinator_->Signal(SIGTERM);
      EXPECT_EQ(coordinator_->Wait(30), 0);
    }
  }
  std::string Cert() const { return dir_ + "/cert.pem"; }

  ProcessResult RunClient(bool tls) {
    std::string token = ReadFile(dir_ + "/state/admin.token");
    while (!token.empty() && token.back() == '\n') token.pop_back();
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "-u",
                                     "KSEEK_TLS_CA",
                                     "KSEEK_COORDINATOR=" + address_,
                                     "KSEEK_TOKEN=" + token,
                                     "KSEEK_PROTO_DIR=" + SourceDir() + "/proto",
                                     "KSEEK_TASK_DIR=" + SourceDir() + "/kernels/softmax",
                                     "KSEEK_KERNEL=" + SourceDir() + "/kernels/softmax/fast_host.cc"};
    if (tls) argv.push_back("KSEEK_TLS_CA=" + Cert());
    argv.insert(argv.end(), {"node", SourceDir() + "/tests/node_client/client.js"});
    ProcessResult r = RunProcess(argv);
    std::cout << r.out << r.err;
    return r;
  }

  std::string dir_, address_;
  std::unique_ptr<Daemon> coordinator_, worker_;
};

void ExpectEveryStep(const ProcessResult& r, const std::string& transport) {
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* step : {"ListTasks: flash_attention_fwd, softmax", "SubmitEvaluation: ev_", "WatchEvaluation: ev_",
                           "GetEvaluation: ev_", "ListEvaluations: ", "ListWorkers: 1 healthy host worker",
                           "SubmitEvaluation with packed files (7): ev_"}) {
    EXPECT_TRUE(absl::StrContains(r.out, transport + " " + step)) << step << "\n" << r.out << r.err;
  }
  EXPECT_TRUE(absl::StrContains(r.out, "accepted queued started scenario verdict; all correct") ||
              absl::StrContains(r.out, "accepted started scenario verdict; all correct"))
      << r.out;
}

TEST_F(NodeClientE2eTest, SubmitsWatchesAndListsOverPlaintext) {
  Start(false);
  ExpectEveryStep(RunClient(false), "plaintext");
}

TEST_F(NodeClientE2eTest, SubmitsWatchesAndListsOverTls) {
  Start(true);
  ExpectEveryStep(RunClient(true), "tls");
}

}  // namespace
}  // namespace kseek::testing
