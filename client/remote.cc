// Coordinator connection settings, channel and error reporting (remote.h).
#include "client/remote.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/file.h"
#include "client/cli.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(std::string, coordinator, "",
          "coordinator address HOST:PORT (default: $KSEEK_COORDINATOR or the config file)");
ABSL_FLAG(std::string, token_file, "", "file holding the bearer token (default: $KSEEK_TOKEN or the config file)");
ABSL_FLAG(std::string, tls_ca, "", "PEM file of the CA that signed the coordinator's certificate (TLS)");

namespace kseek::cli {

namespace fs = std::filesystem;

namespace {

std::string Env(const char* name) {
  const char* v = getenv(name);
  return v == nullptr ? "" : v;
}


}  // namespace

std::string FindConfigFile() {
  std::vector<std::string> candidates = {".kernelseek/client.json"};
  if (std::string home = Env("HOME"); !home.empty())
    candidates.push_back(home + "/.config/kernelseek/client.json");
  std::error_code ec;
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec)) return c;
  return "";
}

absl::StatusOr<RemoteSettings> LoadRemoteSettings() {
  RemoteSettings s;
  nlohmann::json config = nlohmann::json::object();
  s.config_file = FindConfigFile();
  fs::path config_dir;
  if (!s.config_file.empty()) {
    auto text = ReadNamedFile("config file", s.config_file);
    if (!text.ok()) return text.status();
    config = nlohmann::json::parse(*text, nullptr, false);
    if (config.is_discarded() || !config.is_object())
      return absl::InvalidArgumentError(absl::StrCat("config file ", s.config_file, ": not a JSON object"));
    for (const char* key : {"coordinator", "token", "token_file", "tls_ca", "target"})
      if (config.contains(key) && !config[key].is_string())
        return absl::InvalidArgumentError(
            absl::StrCat("config file ", s.config_file, ": \"", key, "\" must be a string"));
    config_dir = fs::path(s.config_file).parent_path();
  }
  auto from_config = [&](const char* key) -> std::string {
    return config.contains(key) ? config[key].get<std::string>() : "";
  };
  auto config_path = [&](const char* key) -> std::string {
    std::string p = from_config(key);
    if (p.empty() || fs::path(p).is_absolute()) return p;
    return (config_dir / p).string();
  };

  if (s.coordinator = absl::GetFlag(FLAGS_coordinator); !s.coordinator.empty()) {
    s.coordinator_source = "--coordinator";
  } else if (s.coordinator = Env("KSEEK_COORDINATOR"); !s.coordinator.empty()) {
    s.coordinator_source = "$KSEEK_COORDINATOR";
  } else if (s.coordinator = from_config("coordinator"); !s.coordinator.empty()) {
    s.coordinator_source = s.config_file;
  }

  if (std::string file = absl::GetFlag(FLAGS_token_file); !file.empty()) {
    auto t = ReadTokenFile("token file", file);
    if (!t.ok()) return t.status();
    s.token = *t;
  } else if (std::string env = Env("KSEEK_TOKEN"); !env.empty()) {
    s.token = std::string(absl::StripAsciiWhitespace(env));
  } else if (std::string token = from_config("token"); !token.empty()) {
    s.token = token;
  } else if (std::string file = config_path("token_file"); !file.empty()) {
    auto t = ReadTokenFile("token file", file);
    if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat(t.status().message(), " (named in ",
                                                                      s.config_file, ")"));
    s.token = *t;
  }

  s.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  if (s.tls_ca.empty()) s.tls_ca = Env("KSEEK_TLS_CA");
  if (s.tls_ca.empty()) s.tls_ca = config_path("tls_ca");
  s.target = from_config("target");
  return s;
}

absl::StatusOr<std::unique_ptr<Remote>> Remote::Connect(const RemoteSettings& settings) {
  if (settings.coordinator.empty())
    return absl::FailedPreconditionError(
        "no coordinator configured (give --coordinator, set $KSEEK_COORDINATOR, run `kseek up`, or write "
        ".kernelseek/client.json)");
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (settings.tls_ca.empty()) {
    creds = grpc::InsecureChannelCredentials();
  } else {
    auto pem = ReadNamedFile("TLS CA file", settings.tls_ca);
    if (!pem.ok()) return pem.status();
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = *pem;
    creds = grpc::SslCredentials(options);
  }
  std::unique_ptr<Remote> remote(new Remote(settings));
  remote->channel_ = grpc::CreateChannel(settings.coordinator, creds);
  remote->coordinator_ = kernelseek::v1::Coordinator::NewStub(remote->channel_);
  remote->admin_ = kernelseek::v1::Admin::NewStub(remote->channel_);
  return remote;
}

void Remote::Prepare(grpc::ClientContext* context, std::chrono::milliseconds deadline) const {
  if (!settings_.token.empty()) context->AddMetadata("authorization", "Bearer " + settings_.token);
  if (deadline.count() > 0) context->set_deadline(std::chrono::system_clock::now() + deadline);
}

std::unique_ptr<Remote> ConnectOrReport(const std::string& command) {
  auto settings = LoadRemoteSettings();
  if (!settings.ok()) {
    fprintf(stderr, "kseek %s: %s\n", command.c_str(), std::string(settings.status().message()).c_str());
    return nullptr;
  }
  auto remote = Remote::Connect(*settings);
  if (!remote.ok()) {
    fprintf(stderr, "kseek %s: %s\n", command.c_str(), std::string(remote.status().message()).c_str());
    return nullptr;
  }
  return std::move(*remote);
}

std::string StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "ok";
    case grpc::StatusCode::CANCELLED: return "cancelled";
    case grpc::StatusCode::UNKNOWN: return "unknown error";
    case grpc::StatusCode::INVALID_ARGUMENT: return "invalid argument";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "deadline exceeded";
    case grpc::StatusCode::NOT_FOUND: return "not found";
    case grpc::StatusCode::ALREADY_EXISTS: return "already exists";
    case grpc::StatusCode::PERMISSION_DENIED: return "permission denied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "resource exhausted";
    case grpc::StatusCode::FAILED_PRECONDITION: return "failed precondition";
    case grpc::StatusCode::ABORTED: return "aborted";
    case grpc::StatusCode::OUT_OF_RANGE: return "out of range";
    case grpc::StatusCode::UNIMPLEMENTED: return "not implemented by this coordinator";
    case grpc::StatusCode::INTERNAL: return "internal error";
    case grpc::StatusCode::UNAVAILABLE: return "unavailable";
    case grpc::StatusCode::DATA_LOSS: return "data loss";
    case grpc::StatusCode::UNAUTHENTICATED: return "unauthenticated";
    default: return "error";
  }
}

int ReportRpcError(const std::string& command, const Remote& remote, const grpc::Status& status) {
  std::string message = status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      message = absl::StrCat("cannot reach coordinator ", remote.address(), ": ", message);
      if (remote.settings().coordinator_source == remote.settings().config_file)
        absl::StrAppend(&message, "\n(the address is from ", remote.settings().config_file,
                        "; `kseek up` starts a coordinator here, --local evaluates without one)");
      // A plaintext client hears a TLS server close the connection, not
      // refuse it.
      if (remote.settings().tls_ca.empty() && message.find("refused") == std::string::npos)
        absl::StrAppend(&message, "\n(if the coordinator speaks TLS, pass --tls-ca FILE or set $KSEEK_TLS_CA "
                        "to the PEM of the CA that signed its certificate)");
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      message = absl::StrCat("coordinator ", remote.address(), " did not answer in time");
      break;
    case grpc::StatusCode::UNAUTHENTICATED:
      message = absl::StrCat(message, " (give --token-file, set $KSEEK_TOKEN, or name a token in the config file)");
      break;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::NOT_FOUND:
      break;
    default:
      message = absl::StrCat("coordinator ", remote.address(), " answered ", StatusCodeName(status.error_code()),
                             ": ", message);
      break;
  }
  fprintf(stderr, "kseek %s: %s\n", command.c_str(), message.c_str());
  return kExitUsage;
}

std::string FormatTimeMs(int64_t ms) {
  if (ms <= 0) return "-";
  time_t secs = static_cast<time_t>(ms / 1000);
  struct tm tm;
  localtime_r(&secs, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

}  // namespace kseek::cli
