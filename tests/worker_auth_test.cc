// A worker registered with a real kernelseekd, reached by someone else: its
// port refuses every attempt without the coordinator's job credential
// (UNAUTHENTICATED, the attempt never starts), whatever else the caller holds,
// while the coordinator's own evaluations run there; revoking the worker's
// token ends the credential.
#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/worker.grpc.pb.h"
#include "proto/job_credential.h"
#include "proto/request.h"
#include "tests/session_testing.h"

namespace kseek {
namespace {

namespace v1 = ::kernelseek::v1;
using testing::Cluster;
using testing::Softmax;

v1::Attempt ForgedAttempt() {
  v1::Attempt attempt;
  attempt.set_evaluation_id("ev_forged");
  attempt.set_number(1);
  absl::StatusOr<v1::TaskFiles> files = PackTask(Softmax(), Target::kHost);
  EXPECT_TRUE(files.ok()) << files.status();
  *attempt.mutable_request()->mutable_task() = *files;
  attempt.mutable_request()->set_target("host");
  attempt.mutable_request()->set_kernel_source(testing::ReadFile(Softmax() + "/fast_host.cc"));
  attempt.mutable_request()->set_kernel_name("fast_host.cc");
  return attempt;
}

// The status of Evaluate on the worker with `metadata` ({key, value}).
grpc::Status Forge(const std::string& worker, const std::vector<std::pair<std::string, std::string>>& metadata) {
  auto stub = v1::Worker::NewStub(grpc::CreateChannel(worker, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  for (const auto& [k, v] : metadata) ctx.AddMetadata(k, v);
  auto reader = stub->Evaluate(&ctx, ForgedAttempt());
  v1::EvaluationEvent event;
  if (reader->Read(&event)) ADD_FAILURE() << "the forged attempt sent " << event.DebugString();
  return reader->Finish();
}

TEST(WorkerAuth, AWorkerRunsItsCoordinatorsAttemptsAndNobodyElses) {
  Cluster c;
  c.StartCoordinator();
  c.StartWorker();
  const std::string worker_token = testing::ReadFile(c.dir() + "/state/worker.token");
  const std::string admin_token = c.Token();
  for (const auto& metadata : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {},
           {{kJobCredentialMetadata, "forged"}},
           {{kJobCredentialMetadata, std::string(absl::StripAsciiWhitespace(worker_token))}},
           {{"authorization", "Bearer " + admin_token}},
           {{kJobCredentialMetadata, admin_token}}}) {
    grpc::Status st = Forge(c.worker_address(), metadata);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED)
        << (metadata.empty() ? "none" : metadata[0].first) << ": " << st.error_message();
  }
  EXPECT_NE(c.WorkerLog().find("refused evaluation ev_forged"), std::string::npos) << c.WorkerLog();
  EXPECT_EQ(c.WorkerLog().find("evaluation ev_forged (attempt"), std::string::npos) << c.WorkerLog();

  // The coordinator's evaluation runs on the same worker.
  testing::ProcessResult eval =
      c.Kseek({"eval", "--task", Softmax(), "--target", "host", "--scenarios", "r64_c33_f32_host",
               "--no-timing", Softmax() + "/fast_host.cc"});
  EXPECT_EQ(eval.exit_code, 0) << eval.out << eval.err << c.WorkerLog();

  // A revoked worker token ends the credential at the worker's next
  // heartbeat.
  testing::ProcessResult revoke = c.Kseek({"admin", "user", "revoke", "local-workers"});
  ASSERT_EQ(revoke.exit_code, 0) << revoke.err;
  bool ended = false;
  for (int i = 0; i < 300 && !ended; ++i) {
    ended = c.WorkerLog().find("refused this worker's token") != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(ended) << c.WorkerLog();
}

}  // namespace
}  // namespace kseek
