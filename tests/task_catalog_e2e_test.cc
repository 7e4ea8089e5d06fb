// The coordinator's task catalog, with real processes on loopback: a
// kernelseekd serving the source tree's kernels/ lists them (ListTasks,
// `kseek tasks`), and an evaluation submitted by task name alone, packed by
// the coordinator, runs on a host worker to an all-correct verdict; unknown
// names and names given with files are refused naming the field.
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek::testing {
namespace {

namespace v1 = ::kernelseek::v1;

class TaskCatalogE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("task_catalog");
    coordinator_ = std::make_unique<Daemon>(
        std::vector<std::string>{BinDir() + "/kernelseekd", "--listen", "127.0.0.1:0", "--state-dir",
                                 dir_ + "/state", "--tasks", SourceDir() + "/kernels"},
        dir_ + "/kernelseekd.log");
    address_ = coordinator_->WaitListening(30);
    ASSERT_FALSE(address_.empty()) << ReadFile(dir_ + "/kernelseekd.log");
    token_ = ReadFile(dir_ + "/state/admin.token");
    while (!token_.empty() && token_.back() == '\n') token_.pop_back();
    stub_ = v1::Coordinator::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    worker_.reset();
    coordinator_->Signal(SIGTERM);
    EXPECT_EQ(coordinator_->Wait(30), 0);
  }
  void Prepare(grpc::ClientContext* context, int seconds = 30) {
    context->AddMetadata("authorization", "Bearer " + token_);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  }

  std::string dir_, address_, token_;
  std::unique_ptr<Daemon> coordinator_, worker_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

TEST_F(TaskCatalogE2eTest, ListsTheTasksItServes) {
  grpc::ClientContext context;
  Prepare(&context);
  v1::ListTasksResponse response;
  ASSERT_TRUE(stub_->ListTasks(&context, {}, &response).ok());
  std::vector<std::string> names;
  for (const v1::TaskSummary& t : response.tasks()) names.push_back(t.name());
  EXPECT_EQ(names, (std::vector<std::string>{"flash_attention_fwd", "softmax"}));
  const v1::TaskSummary& softmax = response.tasks(1);
  EXPECT_NE(std::find(softmax.targets().begin(), softmax.targets().end(), "host"), softmax.targets().end());
  for (const v1::TaskScenarios& s : softmax.scenarios()) EXPECT_GT(s.scenarios(), 0) << s.target();

  ProcessResult cli = RunProcess({"/usr/bin/env", "-C", dir_, "HOME=" + dir_, "KSEEK_COORDINATOR=" + address_,
                                  "KSEEK_TOKEN=" + token_, BinDir() + "/kseek", "tasks", "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  nlohmann::json listed = nlohmann::json::parse(cli.out);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1]["name"], "softmax");
  EXPECT_GT(listed[1]["scenarios"]["host"].get<int>(), 0);
}

TEST_F(TaskCatalogE2eTest, AnEvaluationByTaskNameRunsToAVerdict) {
  worker_ = std::make_unique<Daemon>(
      std::vector<std::string>{BinDir() + "/kseek-worker", "--listen", "127.0.0.1:0", "--coordinator", address_,
                               "--target", "host", "--token-file", dir_ + "/state/worker.token",
                               "--cache-dir", dir_ + "/cache"},
      dir_ + "/worker.log");
  ASSERT_FALSE(worker_->WaitListening(60).empty()) << ReadFile(dir_ + "/worker.log");

  v1::EvaluationRequest request;
  request.set_task_name("softmax");
  request.set_target("host");
  request.set_kernel_source(ReadFile(SourceDir() + "/kernels/softmax/fast_host.cc"));
  request.set_kernel_name("fast_host.cc");
  request.add_scenario_names("r1_c1_f32_host");
  request.mutable_timing()->set_disabled(true);
  grpc::ClientContext context;
  Prepare(&context, 300);
  auto reader = stub_->SubmitEvaluation(&context, request);
  v1::EvaluationEvent event;
  bool accepted = false;
  std::string failed;
  std::unique_ptr<v1::Verdict> verdict;
  while (reader->Read(&event)) {
    accepted = accepted || event.has_accepted();
    if (event.has_failed()) failed = event.failed().error();
    if (event.has_verdict()) verdict = std::make_unique<v1::Verdict>(event.verdict());
  }
  grpc::Status status = reader->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(accepted);
  ASSERT_NE(verdict, nullptr) << failed << ReadFile(dir_ + "/worker.log");
  EXPECT_TRUE(verdict->all_correct());
  EXPECT_EQ(verdict->task(), "softmax");
}

TEST_F(TaskCatalogE2eTest, UnknownNamesAndNamesWithFilesAreRefused) {
  auto refused = [&](const v1::EvaluationRequest& request) {
    grpc::ClientContext context;
    Prepare(&context);
    auto reader = stub_->SubmitEvaluation(&context, request);
    v1::EvaluationEvent event;
    EXPECT_FALSE(reader->Read(&event));
    grpc::Status status = reader->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    return status.error_message();
  };
  v1::EvaluationRequest request;
  request.set_task_name("gemm");
  request.set_target("host");
  request.set_kernel_source("int x;");
  EXPECT_EQ(refused(request), "task_name: the coordinator has no task 'gemm' (it has: flash_attention_fwd, softmax)");
  request.set_task_name("flash_attention_fwd");
  EXPECT_EQ(refused(request), "task_name: task 'flash_attention_fwd' does not support target host");
  request.set_task_name("softmax");
  (*request.mutable_task()->mutable_files())["task.json"] = "{}";
  EXPECT_EQ(refused(request), "task_name: give task files or task_name, not both");
}

}  // namespace
}  // namespace kseek::testing
