// `kseek admin user add|list|revoke` and `kseek admin token create`: user
// and token administration at a coordinator (admin tokens only;
// service_commands.h).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "client/cli.h"
#include "client/remote.h"
#include "client/service_commands.h"
#include "nlohmann/json.hpp"

ABSL_DECLARE_FLAG(bool, json);
ABSL_FLAG(std::string, role, "user", "the new user's role: user, admin or worker (admin user add)");

namespace kseek::cli {

namespace v1 = ::kernelseek::v1;

namespace {

const char kAdminUsage[] =
    "usage: kseek admin user add [--json] NAME [--role user|admin|worker]\n"
    "       kseek admin user list [--json]\n"
    "       kseek admin user revoke [--json] NAME\n"
    "       kseek admin token create [--json] NAME\n"
    "       kseek admin backup [--json] FILE\n"
    "  (each also takes --coordinator ADDR, --token-file FILE, --tls-ca FILE)\n"
    "\n"
    "User and token administration; needs an admin token (`kseek up` writes one to\n"
    ".kernelseek/admin.token). A new token is printed once on stdout; the coordinator\n"
    "keeps only its hash. Revoking a user revokes all of their tokens.\n"
    "`admin backup FILE` writes a consistent copy of the coordinator's SQLite store to FILE\n"
    "(SQLite's online backup, taken while it keeps serving); to restore, stop kernelseekd,\n"
    "copy FILE to STATE_DIR/kernelseek.db and delete kernelseek.db-wal and -shm there.\n";

int UsageError(const std::string& what) {
  fprintf(stderr, "kseek admin: %s\n\n%s", what.c_str(), kAdminUsage);
  return kExitUsage;
}

// Streams the coordinator's backup into FILE.tmp, then renames it to FILE.
int Backup(Remote& remote, const std::string& file) {
  const std::string tmp = file + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) {
    fprintf(stderr, "kseek admin backup: cannot write %s\n", tmp.c_str());
    return kExitUsage;
  }
  grpc::ClientContext context;
  remote.Prepare(&context, std::chrono::milliseconds(0));
  auto reader = remote.admin().BackupStore(&context, {});
  v1::BackupChunk chunk;
  int64_t written = 0, total = -1;
  while (reader->Read(&chunk)) {
    out.write(chunk.data().data(), static_cast<std::streamsize>(chunk.data().size()));
    written += static_cast<int64_t>(chunk.data().size());
    total = chunk.total_bytes();
  }
  grpc::Status status = reader->Finish();
  out.close();
  if (!status.ok()) {
    std::remove(tmp.c_str());
    return ReportRpcError("admin backup", remote, status);
  }
  if (!out || written != total) {
    std::remove(tmp.c_str());
    fprintf(stderr, "kseek admin backup: %s: wrote %lld of %lld bytes\n", tmp.c_str(),
            static_cast<long long>(written), static_cast<long long>(total));
    return kExitUsage;
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) {
    fprintf(stderr, "kseek admin backup: cannot rename %s to %s: %s\n", tmp.c_str(), file.c_str(),
            std::strerror(errno));
    std::remove(tmp.c_str());
    return kExitUsage;
  }
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << nlohmann::json{{"file", file}, {"bytes", written}, {"coordinator", remote.address()}}.dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << absl::StrFormat("wrote %s (%d bytes), a consistent copy of the store of coordinator %s\n", file,
                               written, remote.address());
  return kExitOk;
}

int PrintToken(const v1::TokenResponse& response) {
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << nlohmann::json{{"name", response.name()}, {"token", response.token()}}.dump(2) << "\n";
    return kExitOk;
  }
  fprintf(stderr, "token for %s (shown once; keep it in a 0600 file):\n", response.name().c_str());
  std::cout << response.token() << "\n";
  return kExitOk;
}

}  // namespace

int AdminCommand(const std::vector<std::string>& args) {
  std::vector<std::string> allowed = {"role", "json"};
  allowed.insert(allowed.end(), kRemoteFlags.begin(), kRemoteFlags.end());
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args, allowed, kAdminUsage, &positional, &help)) return help ? kExitOk : kExitUsage;
  if (!positional.empty() && positional[0] == "backup") {
    if (positional.size() != 2) return UsageError("`backup` needs exactly one FILE");
    std::unique_ptr<Remote> remote = ConnectOrReport("admin backup");
    if (remote == nullptr) return kExitUsage;
    return Backup(*remote, positional[1]);
  }
  if (positional.size() < 2) return UsageError("expected `user add|list|revoke`, `token create` or `backup FILE`");
  const std::string what = positional[0] + " " + positional[1];
  const size_t want_args = what == "user list" ? 2 : 3;
  if (what != "user add" && what != "user list" && what != "user revoke" && what != "token create")
    return UsageError("unknown admin command '" + what + "'");
  if (positional.size() != want_args)
    return UsageError(want_args == 2 ? "`" + what + "` takes no NAME" : "`" + what + "` needs exactly one NAME");
  const std::string command = "admin " + what;
  std::unique_ptr<Remote> remote = ConnectOrReport(command);
  if (remote == nullptr) return kExitUsage;
  grpc::ClientContext context;
  remote->Prepare(&context);

  if (what == "user add") {
    const std::string role = absl::GetFlag(FLAGS_role);
    if (role != "user" && role != "admin" && role != "worker")
      return UsageError("--role must be user, admin or worker, not '" + role + "'");
    v1::AddUserRequest request;
    request.set_name(positional[2]);
    request.set_role(role);
    v1::TokenResponse response;
    grpc::Status status = remote->admin().AddUser(&context, request, &response);
    if (!status.ok()) return ReportRpcError(command, *remote, status);
    return PrintToken(response);
  }
  if (what == "token create") {
    v1::CreateTokenRequest request;
    request.set_name(positional[2]);
    v1::TokenResponse response;
    grpc::Status status = remote->admin().CreateToken(&context, request, &response);
    if (!status.ok()) return ReportRpcError(command, *remote, status);
    return PrintToken(response);
  }
  if (what == "user revoke") {
    v1::RevokeUserRequest request;
    request.set_name(positional[2]);
    v1::RevokeUserResponse response;
    grpc::Status status = remote->admin().RevokeUser(&context, request, &response);
    if (!status.ok()) return ReportRpcError(command, *remote, status);
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << nlohmann::json{{"name", positional[2]}, {"tokens_revoked", response.tokens_revoked()}}.dump(2)
                << "\n";
      return kExitOk;
    }
    std::cout << absl::StrFormat("revoked user %s (%d token%s)\n", positional[2], response.tokens_revoked(),
                                 response.tokens_revoked() == 1 ? "" : "s");
    return kExitOk;
  }
  v1::ListUsersResponse response;
  grpc::Status status = remote->admin().ListUsers(&context, {}, &response);
  if (!status.ok()) return ReportRpcError(command, *remote, status);
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& u : response.users())
      all.push_back({{"name", u.name()},
                     {"role", u.role()},
                     {"revoked", u.revoked()},
                     {"tokens", u.tokens()},
                     {"created_ms", u.created_ms()}});
    std::cout << all.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << absl::StrFormat("%-20s %-7s %-8s %-7s %s\n", "user", "role", "revoked", "tokens", "created");
  for (const auto& u : response.users())
    std::cout << absl::StrFormat("%-20s %-7s %-8s %-7d %s\n", u.name(), u.role(), u.revoked() ? "yes" : "no",
                                 u.tokens(), FormatTimeMs(u.created_ms()));
  return kExitOk;
}

}  // namespace kseek::cli
