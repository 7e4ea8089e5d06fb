// gRPC server reflection v1 (grpc.reflection.v1.ServerReflection), served
// beside the v1alpha service of gRPC's own reflection plugin, which gRPC
// 1.51 offers alone. Answers from the generated descriptor pool, so every
// service linked into kernelseekd is described; `services` are the names
// list_services reports. Callback API; thread-safe.
#ifndef KERNELSEEK_SERVER_REFLECTION_V1_H_
#define KERNELSEEK_SERVER_REFLECTION_V1_H_

#include <string>
#include <vector>

#include "grpc_reflection_v1.grpc.pb.h"

namespace kseek::server {

class ReflectionV1 final : public grpc::reflection::v1::ServerReflection::CallbackService {
 public:
  explicit ReflectionV1(std::vector<std::string> services) : services_(std::move(services)) {}

  grpc::ServerBidiReactor<grpc::reflection::v1::ServerReflectionRequest,
                          grpc::reflection::v1::ServerReflectionResponse>*
  ServerReflectionInfo(grpc::CallbackServerContext* context) override;

 private:
  const std::vector<std::string> services_;
};

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_REFLECTION_V1_H_
