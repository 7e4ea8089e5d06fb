// gRPC server reflection v1 on a real kernelseekd over loopback, through
// the generated grpc.reflection.v1 stub (what grpcurl and Postman try
// first): the services are listed, and the file defining the Coordinator
// comes with its imports, each once per stream.
#include <signal.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.pb.h"
#include "grpc_reflection_v1.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek::testing {
namespace {

namespace r1 = ::grpc::reflection::v1;

TEST(ReflectionE2eTest, V1ListsTheServicesAndDescribesTheCoordinator) {
  const std::string dir = TempDir("reflection");
  Daemon coordinator({BinDir() + "/kernelseekd", "--listen", "127.0.0.1:0", "--state-dir", dir + "/state"},
                     dir + "/kernelseekd.log");
  const std::string address = coordinator.WaitListening(30);
  ASSERT_FALSE(address.empty()) << ReadFile(dir + "/kernelseekd.log");
  auto stub = r1::ServerReflection::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = stub->ServerReflectionInfo(&context);
  auto ask = [&](const r1::ServerReflectionRequest& request) {
    EXPECT_TRUE(stream->Write(request));
    r1::ServerReflectionResponse response;
    EXPECT_TRUE(stream->Read(&response));
    return response;
  };

  r1::ServerReflectionRequest list;
  list.set_list_services("");
  std::set<std::string> services;
  r1::ServerReflectionResponse listed = ask(list);
  for (const auto& s : listed.list_services_response().service()) services.insert(s.name());
  for (const char* name : {"kernelseek.v1.Coordinator", "kernelseek.v1.Admin", "grpc.health.v1.Health",
                           "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"}) {
    EXPECT_EQ(services.count(name), 1u) << name;
  }

  r1::ServerReflectionRequest symbol;
  symbol.set_file_containing_symbol("kernelseek.v1.Coordinator");
  std::vector<std::string> files;
  bool has_cancel = false;
  r1::ServerReflectionResponse described = ask(symbol);
  for (const std::string& bytes : described.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto file;
    ASSERT_TRUE(file.ParseFromString(bytes));
    files.push_back(file.name());
    for (const auto& service : file.service()) {
      for (const auto& method : service.method()) has_cancel = has_cancel || method.name() == "CancelEvaluation";
    }
  }
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(files[0], "kernelseek/v1/coordinator.proto");
  EXPECT_EQ(std::set<std::string>(files.begin(), files.end()),
            (std::set<std::string>{"kernelseek/v1/coordinator.proto", "kernelseek/v1/evaluation.proto",
                                   "kernelseek/v1/session.proto", "kernelseek/v1/verdict.proto",
                                   "kernelseek/v1/worker.proto"}));
  EXPECT_TRUE(has_cancel);

  // Sent files are not sent again on this stream.
  r1::ServerReflectionRequest by_name;
  by_name.set_file_by_filename("kernelseek/v1/worker.proto");
  EXPECT_EQ(ask(by_name).file_descriptor_response().file_descriptor_proto_size(), 1);

  r1::ServerReflectionRequest unknown;
  unknown.set_file_containing_symbol("kernelseek.v1.Nothing");
  r1::ServerReflectionResponse error = ask(unknown);
  EXPECT_EQ(error.error_response().error_code(), static_cast<int>(grpc::StatusCode::NOT_FOUND));

  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  coordinator.Signal(SIGTERM);
  EXPECT_EQ(coordinator.Wait(30), 0);
}

}  // namespace
}  // namespace kseek::testing
