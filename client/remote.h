// kseek talking to a coordinator (kernelseekd): where it is and which token
// to send (flags, environment, config file), the gRPC channel, per-call
// metadata and deadlines, and gRPC errors turned into messages and exit
// codes.
#ifndef KERNELSEEK_CLIENT_REMOTE_H_
#define KERNELSEEK_CLIENT_REMOTE_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"

ABSL_DECLARE_FLAG(std::string, coordinator);
ABSL_DECLARE_FLAG(std::string, token_file);
ABSL_DECLARE_FLAG(std::string, tls_ca);

namespace kseek::cli {

// The flags every remote command accepts (for ParseFlags' allowed list).
inline const std::vector<std::string> kRemoteFlags = {"coordinator", "token_file", "tls_ca"};

// Where the settings below came from, in order of precedence:
//   coordinator: --coordinator, $KSEEK_COORDINATOR, the config file
//   token:       --token-file, $KSEEK_TOKEN, the config file ("token" or
//                "token_file")
//   tls_ca:      --tls-ca, $KSEEK_TLS_CA, the config file
//   target:      the config file (kseek eval's default --target)
// The config file is the first of ./.kernelseek/client.json and
// ~/.config/kernelseek/client.json that exists; relative paths in it are
// relative to its folder.
struct RemoteSettings {
  std::string coordinator;  // empty: no coordinator configured
  std::string coordinator_source;  // "--coordinator", "$KSEEK_COORDINATOR" or the config file
  std::string token;        // empty: none (the coordinator will refuse)
  std::string tls_ca;       // PEM file; empty: plaintext
  std::string config_file;  // the config file read, if any
  std::string target;       // the config file's "target", if any
};

// Errors name the file that could not be read or parsed.
absl::StatusOr<RemoteSettings> LoadRemoteSettings();

// The config file kseek would read now ("" when none exists).
std::string FindConfigFile();

// A channel to the coordinator and the stubs over it.
class Remote {
 public:
  static absl::StatusOr<std::unique_ptr<Remote>> Connect(const RemoteSettings& settings);

  kernelseek::v1::Coordinator::Stub& coordinator() { return *coordinator_; }
  kernelseek::v1::Admin::Stub& admin() { return *admin_; }
  const std::string& address() const { return settings_.coordinator; }
  const RemoteSettings& settings() const { return settings_; }

  // Adds the bearer token and, unless `deadline` is zero (streams), a
  // deadline to a call's context.
  void Prepare(grpc::ClientContext* context,
               std::chrono::milliseconds deadline = kUnaryDeadline) const;

  static constexpr std::chrono::milliseconds kUnaryDeadline{30000};

 private:
  explicit Remote(RemoteSettings settings) : settings_(std::move(settings)) {}
  RemoteSettings settings_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<kernelseek::v1::Coordinator::Stub> coordinator_;
  std::unique_ptr<kernelseek::v1::Admin::Stub> admin_;
};

// Loads the settings and connects; on failure prints "kseek COMMAND: ..."
// and returns null. A missing coordinator is a failure ("no coordinator
// configured ...").
std::unique_ptr<Remote> ConnectOrReport(const std::string& command);

// Prints a failed call's status as "kseek COMMAND: ..." (UNAVAILABLE as
// "cannot reach coordinator ADDR: ...") and returns the exit code (2).
int ReportRpcError(const std::string& command, const Remote& remote, const grpc::Status& status);

// A status code as words ("resource exhausted"), for messages.
std::string StatusCodeName(grpc::StatusCode code);

// Milliseconds since the Unix epoch, formatted "2026-11-30 15:04:05" in
// local time ("-" for 0).
std::string FormatTimeMs(int64_t ms);

}  // namespace kseek::cli

#endif  // KERNELSEEK_CLIENT_REMOTE_H_
