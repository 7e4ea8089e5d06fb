// Requests that do not parse, answered as INVALID_ARGUMENT naming the field.
//
// gRPC's callback API answers a request it cannot deserialize with
// UNIMPLEMENTED and an empty message. The commonest cause from a client in
// another language is a proto `string` field holding bytes that are not
// UTF-8, which protobuf refuses while parsing (and logs, naming the field).
// MalformedRequestInterceptorFactory's interceptors notice a request that
// failed to deserialize (in calls with one request message: unary and
// server-streaming) and replace that status with INVALID_ARGUMENT:
// "FIELD: not valid UTF-8 ..." when protobuf named a string field on this
// thread, else "request: cannot be parsed as ...". CaptureProtobufErrors
// installs the protobuf log handler that records the field (and still logs
// every message to stderr); call it once, before serving. Thread-safe.
#ifndef KERNELSEEK_SERVER_MALFORMED_REQUEST_H_
#define KERNELSEEK_SERVER_MALFORMED_REQUEST_H_

#include <memory>

#include "grpcpp/support/server_interceptor.h"

namespace kseek::server {

void CaptureProtobufErrors();

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MalformedRequestInterceptorFactory();

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_MALFORMED_REQUEST_H_
