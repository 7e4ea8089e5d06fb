// A real kernelseekd on loopback, called through the generated stubs the
// way a client in any language would: invalid UTF-8 in a string field gets
// INVALID_ARGUMENT naming the field; over-long, repeated, non-finite and
// out-of-range inputs and unparsable registrations are refused, naming the
// field, and nothing of them is stored.
#include <signal.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "proto/request.h"
#include "tests/test_util.h"

namespace kseek::testing {
namespace {

namespace v1 = ::kernelseek::v1;

class BoundsE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    state_ = new std::string(TempDir("bounds_e2e") + "/state");
    daemon_ = new Daemon({BinDir() + "/kernelseekd", "--listen", "127.0.0.1:0", "--state-dir", *state_},
                         *state_ + ".log");
    address_ = new std::string(daemon_->WaitListening(30));
    ASSERT_FALSE(address_->empty()) << ReadFile(*state_ + ".log");
  }
  static void TearDownTestSuite() {
    daemon_->Signal(SIGTERM);
    EXPECT_EQ(daemon_->Wait(30), 0);
    delete daemon_;
    delete address_;
    delete state_;
  }

  static std::unique_ptr<v1::Coordinator::Stub> Stub() {
    return v1::Coordinator::NewStub(grpc::CreateChannel(*address_, grpc::InsecureChannelCredentials()));
  }
  static void Prepare(grpc::ClientContext* context, const std::string& token_file = "admin.token") {
    std::string token = ReadFile(*state_ + "/" + token_file);
    while (!token.empty() && token.back() == '\n') token.pop_back();
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  }

  static v1::EvaluationRequest ValidRequest() {
    v1::EvaluationRequest r;
    std::string task = SourceDir() + "/kernels/softmax";
    absl::StatusOr<v1::TaskFiles> files = PackTask(task, Target::kHost);
    EXPECT_TRUE(files.ok()) << files.status();
    *r.mutable_task() = *files;
    r.set_target("host");
    r.set_kernel_source(ReadFile(task + "/fast_host.cc"));
    r.set_kernel_name("fast_host.cc");
    r.mutable_timing()->set_disabled(true);
    return r;
  }

  // The status a submission ends with (the first event is Accepted for a
  // request taken, so a refused one ends with no event).
  static grpc::Status Submit(const v1::EvaluationRequest& request, bool* accepted) {
    grpc::ClientContext context;
    Prepare(&context);
    auto stub = Stub();
    auto reader = stub->SubmitEvaluation(&context, request);
    v1::EvaluationEvent event;
    *accepted = reader->Read(&event) && event.has_accepted();
    if (*accepted) context.TryCancel();
    return reader->Finish();
  }

  static int StoredEvaluations() {
    grpc::ClientContext context;
    Prepare(&context);
    v1::ListEvaluationsResponse list;
    EXPECT_TRUE(Stub()->ListEvaluations(&context, {}, &list).ok());
    return list.evaluations_size();
  }

  static std::string* state_;
  static std::string* address_;
  static Daemon* daemon_;
};

std::string* BoundsE2eTest::state_ = nullptr;
std::string* BoundsE2eTest::address_ = nullptr;
Daemon* BoundsE2eTest::daemon_ = nullptr;

TEST_F(BoundsE2eTest, InvalidUtf8IsInvalidArgumentNamingTheField) {
  v1::EvaluationRequest request = ValidRequest();
  request.set_kernel_name("k\xff\xfe.cc");
  bool accepted = false;
  grpc::Status status = Submit(request, &accepted);
  EXPECT_FALSE(accepted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(status.error_message(), "kernel_name: not valid UTF-8 (proto string fields must hold UTF-8 text)");

  request = ValidRequest();
  request.add_scenario_names("r1_c1_f32_host\xc3");
  status = Submit(request, &accepted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "scenario_names: not valid UTF-8")) << status.error_message();

  // A unary call too.
  grpc::ClientContext context;
  Prepare(&context);
  v1::EvaluationRef ref;
  ref.set_evaluation_id("ev_\x80");
  v1::Evaluation out;
  status = Stub()->GetEvaluation(&context, ref, &out);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "evaluation_id: not valid UTF-8")) << status.error_message();
  EXPECT_EQ(StoredEvaluations(), 0);
}

TEST_F(BoundsE2eTest, UnboundedWorkAndBadNumbersAreRefusedAndNotStored) {
  struct Case {
    std::string what;
    v1::EvaluationRequest request;
    std::string message;
  };
  std::vector<Case> cases;
  v1::EvaluationRequest r = ValidRequest();
  for (int i = 0; i < 100000; ++i) r.add_scenario_names("r1_c1_f32_host");
  cases.push_back({"100,000 repeated names", r, "scenario_names: 100000 names, more than the limit of 1024"});
  r = ValidRequest();
  r.add_scenario_names("r1_c1_f32_host");
  r.add_scenario_names("r1_c1_f32_host");
  cases.push_back({"a repeated name", r,
                   "scenario_names[1]: 'r1_c1_f32_host' is scenario_names[0] already; name each scenario once"});
  for (double t : {std::nan(""), std::numeric_limits<double>::infinity(), 1e-300}) {
    r = ValidRequest();
    r.set_scenario_timeout_s(t);
    cases.push_back({"timeout " + std::to_string(t), r, "scenario_timeout_s: "});
  }
  r = ValidRequest();
  r.mutable_timing()->set_max_seconds(std::nan(""));
  cases.push_back({"NaN max_seconds", r, "timing.max_seconds: "});
  for (const Case& c : cases) {
    bool accepted = false;
    grpc::Status status = Submit(c.request, &accepted);
    EXPECT_FALSE(accepted) << c.what;
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.what;
    EXPECT_TRUE(absl::StartsWith(status.error_message(), c.message)) << c.what << ": " << status.error_message();
  }
  EXPECT_EQ(StoredEvaluations(), 0);
}

TEST_F(BoundsE2eTest, RegistrationWithAnUnparsableAddressOrHugeDeviceNameIsRefused) {
  auto do_register = [](const v1::WorkerInfo& info) {
    grpc::ClientContext context;
    Prepare(&context, "worker.token");
    v1::RegisterWorkerResponse response;
    return Stub()->RegisterWorker(&context, info, &response);
  };
  v1::WorkerInfo info;
  info.set_target("host");
  info.set_address("not an address");
  grpc::Status status = do_register(info);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "address: \"not an address\" is not HOST:PORT"))
      << status.error_message();
  info.set_address("127.0.0.1:1");
  info.set_device_name(std::string(1 << 20, 'd'));
  status = do_register(info);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "device_name: 1048576 bytes, more than the limit of 256");

  grpc::ClientContext context;
  Prepare(&context);
  v1::ListWorkersResponse workers;
  ASSERT_TRUE(Stub()->ListWorkers(&context, {}, &workers).ok());
  EXPECT_EQ(workers.workers_size(), 0);
}

}  // namespace
}  // namespace kseek::testing
