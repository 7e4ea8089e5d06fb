// gRPC server reflection v1 (see reflection_v1.h).
#include "server/reflection_v1.h"

#include <set>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"

namespace kseek::server {

namespace {

namespace r1 = ::grpc::reflection::v1;
using google::protobuf::DescriptorPool;
using google::protobuf::FileDescriptor;

// One stream: reads a request, writes its answer, reads the next, until
// the client half-closes.
class Stream final : public grpc::ServerBidiReactor<r1::ServerReflectionRequest, r1::ServerReflectionResponse> {
 public:
  explicit Stream(const std::vector<std::string>* services) : services_(services) { StartRead(&request_); }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::OK);
      return;
    }
    Answer();
    StartWrite(&response_);
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
      return;
    }
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  void Answer() {
    response_.Clear();
    response_.set_valid_host(request_.host());
    *response_.mutable_original_request() = request_;
    const DescriptorPool* pool = DescriptorPool::generated_pool();
    switch (request_.message_request_case()) {
      case r1::ServerReflectionRequest::kListServices:
        for (const std::string& name : *services_) response_.mutable_list_services_response()->add_service()->set_name(name);
        return;
      case r1::ServerReflectionRequest::kFileByFilename:
        return Files(pool->FindFileByName(request_.file_by_filename()), request_.file_by_filename());
      case r1::ServerReflectionRequest::kFileContainingSymbol:
        return Files(pool->FindFileContainingSymbol(request_.file_containing_symbol()),
                     request_.file_containing_symbol());
      case r1::ServerReflectionRequest::kFileContainingExtension: {
        const auto& ext = request_.file_containing_extension();
        const google::protobuf::Descriptor* type = pool->FindMessageTypeByName(ext.containing_type());
        const google::protobuf::FieldDescriptor* field =
            type == nullptr ? nullptr : pool->FindExtensionByNumber(type, ext.extension_number());
        return Files(field == nullptr ? nullptr : field->file(),
                     ext.containing_type() + " extension " + std::to_string(ext.extension_number()));
      }
      case r1::ServerReflectionRequest::kAllExtensionNumbersOfType: {
        const google::protobuf::Descriptor* type = pool->FindMessageTypeByName(request_.all_extension_numbers_of_type());
        if (type == nullptr) return NotFound(request_.all_extension_numbers_of_type());
        std::vector<const google::protobuf::FieldDescriptor*> extensions;
        pool->FindAllExtensions(type, &extensions);
        auto* out = response_.mutable_all_extension_numbers_response();
        out->set_base_type_name(type->full_name());
        for (const auto* f : extensions) out->add_extension_number(f->number());
        return;
      }
      case r1::ServerReflectionRequest::MESSAGE_REQUEST_NOT_SET:
        break;
    }
    auto* error = response_.mutable_error_response();
    error->set_error_code(static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
    error->set_error_message("message_request: not set");
  }

  // `file` and the files it imports, transitively, that this stream has
  // not sent yet (`file` itself always).
  void Files(const FileDescriptor* file, const std::string& what) {
    if (file == nullptr) return NotFound(what);
    auto* out = response_.mutable_file_descriptor_response();
    std::vector<const FileDescriptor*> todo = {file};
    std::set<std::string> queued = {file->name()};
    while (!todo.empty()) {
      const FileDescriptor* f = todo.back();
      todo.pop_back();
      if (f != file && sent_.count(f->name()) != 0) continue;
      sent_.insert(f->name());
      google::protobuf::FileDescriptorProto proto;
      f->CopyTo(&proto);
      proto.SerializeToString(out->add_file_descriptor_proto());
      for (int i = 0; i < f->dependency_count(); ++i) {
        if (queued.insert(f->dependency(i)->name()).second) todo.push_back(f->dependency(i));
      }
    }
  }

  void NotFound(const std::string& what) {
    auto* error = response_.mutable_error_response();
    error->set_error_code(static_cast<int>(grpc::StatusCode::NOT_FOUND));
    error->set_error_message(what + ": not found");
  }

  const std::vector<std::string>* const services_;
  r1::ServerReflectionRequest request_;
  r1::ServerReflectionResponse response_;
  std::set<std::string> sent_;  // file names
};

}  // namespace

grpc::ServerBidiReactor<r1::ServerReflectionRequest, r1::ServerReflectionResponse>* ReflectionV1::ServerReflectionInfo(
    grpc::CallbackServerContext* context) {
  return new Stream(&services_);
}

}  // namespace kseek::server
