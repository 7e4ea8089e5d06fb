// Requests that do not parse (see malformed_request.h).
#include "server/malformed_request.h"

#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "google/protobuf/stubs/logging.h"

namespace kseek::server {

namespace {

// The string field protobuf last refused as invalid UTF-8 on this thread,
// fully qualified; deserialization and the interceptor's look at it run on
// the same thread.
thread_local std::string last_utf8_field;

void OnProtobufLog(google::protobuf::LogLevel level, const char* filename, int line,
                   const std::string& message) {
  // "String field 'kernelseek.v1.EvaluationRequest.kernel_name' contains
  // invalid UTF-8 data when parsing a protocol buffer. ..."
  constexpr char kPrefix[] = "String field '";
  if (absl::StartsWith(message, kPrefix) && absl::StrContains(message, "invalid UTF-8 data when parsing")) {
    size_t start = sizeof(kPrefix) - 1;
    size_t end = message.find('\'', start);
    if (end != std::string::npos) last_utf8_field = message.substr(start, end - start);
  }
  static const char* const kLevels[] = {"INFO", "WARNING", "ERROR", "FATAL"};
  std::fprintf(stderr, "[libprotobuf %s %s:%d] %s\n", kLevels[level < 0 || level > 3 ? 2 : level], filename,
               line, message.c_str());
}

// "kernelseek.v1.EvaluationRequest.kernel_name" -> "kernel_name"; a field
// of a nested message keeps its message's name ("TaskFiles.FilesEntry.key").
std::string FieldName(const std::string& qualified) {
  absl::string_view name = qualified;
  absl::ConsumePrefix(&name, "kernelseek.v1.");
  size_t dot = name.find('.');
  if (dot != absl::string_view::npos && name.find('.', dot + 1) == absl::string_view::npos) {
    name.remove_prefix(dot + 1);
  }
  return std::string(name);
}

class MalformedRequestInterceptor final : public grpc::experimental::Interceptor {
 public:
  // Only calls with one request message are watched: for a client stream,
  // the read that finds the stream's end also brings no message.
  MalformedRequestInterceptor(const char* method, bool single_request)
      : method_(method == nullptr ? "" : method), single_request_(single_request) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (single_request_ && methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      if (methods->GetRecvMessage() == nullptr) {
        malformed_ = true;
        field_ = last_utf8_field;
      }
      last_utf8_field.clear();
    }
    if (malformed_ && methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      std::string message =
          field_.empty()
              ? absl::StrCat("request: cannot be parsed as the request message of ", method_)
              : absl::StrCat(FieldName(field_), ": not valid UTF-8 (proto string fields must hold UTF-8 text)");
      methods->ModifySendStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  const bool single_request_;
  bool malformed_ = false;
  std::string field_;
};

class Factory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    using Type = grpc::experimental::ServerRpcInfo::Type;
    return new MalformedRequestInterceptor(info->method(),
                                           info->type() == Type::UNARY || info->type() == Type::SERVER_STREAMING);
  }
};

}  // namespace

void CaptureProtobufErrors() { google::protobuf::SetLogHandler(&OnProtobufLog); }

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MalformedRequestInterceptorFactory() {
  return std::make_unique<Factory>();
}

}  // namespace kseek::server
