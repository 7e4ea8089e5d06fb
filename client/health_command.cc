// `kseek health`: asks a coordinator or a worker whether it is serving,
// through gRPC's standard health checking protocol (grpc.health.v1
// Health/Check, which both servers serve), within a deadline. Made for
// container HEALTHCHECKs, Kubernetes exec probes and scripts: the exit code
// says SERVING (0), answered but not serving (1), or unreachable / bad usage
// (2); no token is needed (service_commands.h).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file.h"
#include "client/cli.h"
#include "client/remote.h"
#include "client/service_commands.h"
#include "grpc_health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"

ABSL_DECLARE_FLAG(bool, json);
ABSL_FLAG(std::string, worker, "", "worker address HOST:PORT to check (health)");
ABSL_FLAG(std::string, service, "",
          "service to ask about, e.g. kernelseek.v1.Worker (health; default: the server as a whole)");
ABSL_FLAG(double, timeout, 5.0, "seconds to wait for the answer (health)");
ABSL_FLAG(std::string, tls_server_name, "",
          "name the server's TLS certificate must carry, when it is not the address's host (health)");

namespace kseek::cli {

namespace health = ::grpc::health::v1;

namespace {

const char kHealthUsage[] =
    "usage: kseek health [--coordinator ADDR | --worker ADDR] [--service NAME] [--json]\n"
    "                    [--timeout S] [--tls-ca FILE] [--tls-server-name NAME]\n"
    "\n"
    "Asks a coordinator (default: the configured one) or a worker whether it is serving,\n"
    "with the standard gRPC health check (grpc.health.v1 Health/Check); no token needed.\n"
    "--service NAME asks about one service by its full name (e.g. kernelseek.v1.Worker)\n"
    "instead of the server as a whole; a server that does not report on NAME answers\n"
    "SERVICE_UNKNOWN (kernelseekd and kseek-worker report on the whole server only).\n"
    "Exit status: 0 SERVING, 1 answered but not serving (or does not serve --service),\n"
    "2 unreachable, no answer within --timeout, or bad usage.\n";

// What one Check call found.
struct HealthResult {
  std::string status;  // SERVING, NOT_SERVING, UNKNOWN, SERVICE_UNKNOWN, UNREACHABLE, TIMEOUT, ERROR
  std::string error;   // why, when it is not SERVING
  int exit_code = kExitUsage;
};

HealthResult Check(const std::string& role, const std::string& address, const std::string& tls_ca,
                   const std::string& service) {
  HealthResult r;
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!tls_ca.empty()) {
    absl::StatusOr<std::string> pem = ReadNamedFile("TLS CA file", tls_ca);
    if (!pem.ok()) {
      r.status = "ERROR";
      r.error = std::string(pem.status().message());
      return r;
    }
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = *std::move(pem);
    creds = grpc::SslCredentials(options);
  }
  grpc::ChannelArguments args;
  if (std::string name = absl::GetFlag(FLAGS_tls_server_name); !name.empty()) args.SetSslTargetNameOverride(name);
  auto stub = health::Health::NewStub(grpc::CreateCustomChannel(address, creds, args));

  const double timeout_s = absl::GetFlag(FLAGS_timeout);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  health::HealthCheckRequest request;
  request.set_service(service);
  health::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, request, &response);
  const std::string who = absl::StrCat(role, " ", address);
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      r.status = health::HealthCheckResponse::ServingStatus_Name(response.status());
      if (response.status() == health::HealthCheckResponse::SERVING) {
        r.exit_code = kExitOk;
      } else {
        r.exit_code = kExitFailed;
        r.error = absl::StrCat(who, service.empty() ? "" : absl::StrCat(" (", service, ")"), " is ", r.status);
      }
      return r;
    case grpc::StatusCode::NOT_FOUND:
      r.status = "SERVICE_UNKNOWN";
      r.exit_code = kExitFailed;
      r.error = absl::StrCat(who, " does not serve ", service);
      return r;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      r.status = "TIMEOUT";
      r.error = absl::StrFormat("%s did not answer within %g s", who, timeout_s);
      return r;
    case grpc::StatusCode::UNAVAILABLE:
      r.status = "UNREACHABLE";
      r.error = absl::StrCat("cannot reach ", who, ": ", status.error_message());
      return r;
    case grpc::StatusCode::UNIMPLEMENTED:
      r.status = "ERROR";
      r.error = absl::StrCat(who, " has no grpc.health.v1 Health service (is it a KernelSeek server?)");
      return r;
    default:
      r.status = "ERROR";
      r.error = absl::StrCat(who, " answered ", StatusCodeName(status.error_code()), ": ", status.error_message());
      return r;
  }
}

int UsageError(const std::string& what) {
  fprintf(stderr, "kseek health: %s\n\n%s", what.c_str(), kHealthUsage);
  return kExitUsage;
}

}  // namespace

int HealthCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args, {"coordinator", "worker", "service", "json", "timeout", "tls_ca", "tls_server_name"},
                  kHealthUsage, &positional, &help))
    return help ? kExitOk : kExitUsage;
  if (!positional.empty()) return UsageError("unexpected argument '" + positional[0] + "'");
  const double timeout_s = absl::GetFlag(FLAGS_timeout);
  if (!std::isfinite(timeout_s) || timeout_s <= 0 || timeout_s > 3600)
    return UsageError("--timeout must be more than 0 and at most 3600 seconds");
  const std::string worker = absl::GetFlag(FLAGS_worker);
  if (!worker.empty() && !absl::GetFlag(FLAGS_coordinator).empty())
    return UsageError("give --coordinator or --worker, not both");

  std::string role = "worker", address = worker, tls_ca = absl::GetFlag(FLAGS_tls_ca);
  if (worker.empty()) {
    role = "coordinator";
    auto settings = LoadRemoteSettings();
    if (!settings.ok()) {
      fprintf(stderr, "kseek health: %s\n", std::string(settings.status().message()).c_str());
      return kExitUsage;
    }
    if (settings->coordinator.empty())
      return UsageError("no address: give --coordinator ADDR or --worker ADDR (or configure a coordinator)");
    address = settings->coordinator;
    if (tls_ca.empty()) tls_ca = settings->tls_ca;
  }

  const std::string service = absl::GetFlag(FLAGS_service);
  HealthResult result = Check(role, address, tls_ca, service);
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json j = {{role, address}, {"service", service}, {"status", result.status}};
    if (!result.error.empty()) j["error"] = result.error;
    std::cout << j.dump(2) << "\n";
  } else if (result.exit_code == kExitOk) {
    std::cout << absl::StrCat(role, " ", address, service.empty() ? "" : absl::StrCat(" (", service, ")"),
                              ": SERVING\n");
  }
  if (!result.error.empty()) fprintf(stderr, "kseek health: %s\n", result.error.c_str());
  return result.exit_code;
}

}  // namespace kseek::cli
