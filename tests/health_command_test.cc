// `kseek health` against real servers over loopback: a kernelseekd and a
// kseek-worker (SERVING, as a whole and for their services by name; a
// draining worker's NOT_SERVING is in worker_test.cc), an in-process gRPC
// server whose health status the test sets (NOT_SERVING, then SERVING), a
// port nobody listens on, and a listener that never answers. Checks the exit codes (0 serving, 1 not
// serving, 2 unreachable or bad usage) and that every message names the
// address.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/worker.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek {
namespace {

using testing::Daemon;

testing::ProcessResult Health(std::vector<std::string> args) {
  args.insert(args.begin(), {testing::BinDir() + "/kseek", "health"});
  return testing::RunProcess(args);
}

class HealthCommand : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::TempDir("health"); }

  std::string StartCoordinator() {
    coordinator_ = std::make_unique<Daemon>(
        std::vector<std::string>{testing::BinDir() + "/kernelseekd", "--listen",
                                 absl::StrCat("127.0.0.1:", testing::FreePort()), "--state-dir", dir_ + "/state"},
        dir_ + "/kernelseekd.log");
    std::string address = coordinator_->WaitListening(30);
    EXPECT_FALSE(address.empty()) << testing::ReadFile(dir_ + "/kernelseekd.log");
    return address;
  }

  std::string StartWorker() {
    worker_ = std::make_unique<Daemon>(
        std::vector<std::string>{testing::BinDir() + "/kseek-worker", "--listen", "127.0.0.1:0", "--target", "host",
                                 "--cache-dir", dir_ + "/cache"},
        dir_ + "/worker.log");
    std::string address = worker_->WaitListening(30);
    EXPECT_FALSE(address.empty()) << testing::ReadFile(dir_ + "/worker.log");
    return address;
  }

  std::string dir_;
  std::unique_ptr<Daemon> coordinator_, worker_;
};

TEST_F(HealthCommand, CoordinatorAndWorkerAreServing) {
  const std::string coordinator = StartCoordinator();
  const std::string worker = StartWorker();
  ASSERT_FALSE(coordinator.empty());
  ASSERT_FALSE(worker.empty());

  testing::ProcessResult r = Health({"--coordinator", coordinator});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "coordinator " + coordinator + ": SERVING\n");

  r = Health({"--worker", worker, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ(j.value("worker", ""), worker) << r.out;
  EXPECT_EQ(j.value("status", ""), "SERVING") << r.out;
  EXPECT_FALSE(j.contains("error")) << r.out;

  // Each server answers for its services by name too.
  r = Health({"--coordinator", coordinator, "--service", "kernelseek.v1.Coordinator"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "coordinator " + coordinator + " (kernelseek.v1.Coordinator): SERVING\n");
  r = Health({"--coordinator", coordinator, "--service", "kernelseek.v1.Admin"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Health({"--worker", worker, "--service", "kernelseek.v1.Worker"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "worker " + worker + " (kernelseek.v1.Worker): SERVING\n");

  // The configured coordinator, when no address is given.
  r = testing::RunProcess({"env", "KSEEK_COORDINATOR=" + coordinator, testing::BinDir() + "/kseek", "health"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // A service the server does not report on.
  r = Health({"--worker", worker, "--service", "no.such.Service", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out, nullptr, false).value("status", ""), "SERVICE_UNKNOWN") << r.out;
  EXPECT_TRUE(absl::StrContains(r.err, "worker " + worker + " does not serve no.such.Service")) << r.err;

  // A stopped coordinator is unreachable.
  coordinator_->Signal(SIGTERM);
  ASSERT_EQ(coordinator_->Wait(30), 0);
  r = Health({"--coordinator", coordinator});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "cannot reach coordinator " + coordinator)) << r.err;
}

TEST_F(HealthCommand, NotServingIsExitOne) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  // A server needs a service of its own besides health checking; this one
  // answers UNIMPLEMENTED to everything.
  kernelseek::v1::Worker::Service unimplemented;
  builder.RegisterService(&unimplemented);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_NE(port, 0);
  const std::string address = absl::StrCat("127.0.0.1:", port);

  server->GetHealthCheckService()->SetServingStatus(false);
  testing::ProcessResult r = Health({"--worker", address});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(absl::StrContains(r.err, "worker " + address + " is NOT_SERVING")) << r.err;

  server->GetHealthCheckService()->SetServingStatus(true);
  r = Health({"--worker", address});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  server->Shutdown();
}

TEST_F(HealthCommand, UnreachableSilentAndBadUsageAreExitTwo) {
  const std::string nobody = absl::StrCat("127.0.0.1:", testing::FreePort());
  testing::ProcessResult r = Health({"--worker", nobody, "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(nlohmann::json::parse(r.out, nullptr, false).value("status", ""), "UNREACHABLE") << r.out;
  EXPECT_TRUE(absl::StrContains(r.err, "cannot reach worker " + nobody)) << r.err;

  // A listener that accepts connections and never speaks: the deadline ends it.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 8), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string silent = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
  r = Health({"--coordinator", silent, "--timeout", "1"});
  close(fd);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "coordinator " + silent + " did not answer within 1 s")) << r.err;

  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--worker", "a:1", "--coordinator", "b:1"}, {"--worker", "a:1", "--timeout", "0"}, {"extra"},
           {"--worker", "a:1", "--token-file", "t"}}) {
    r = Health(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "usage: kseek health")) << r.err;
  }
}

}  // namespace
}  // namespace kseek
