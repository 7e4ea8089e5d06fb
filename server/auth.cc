// Tokens, roles and the first-start bootstrap of kernelseekd (see auth.h).
#include "server/auth.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/time.h"

namespace kseek::server {

std::string RoleName(Role role) {
  switch (role) {
    case Role::kAdmin: return "admin";
    case Role::kUser: return "user";
    case Role::kWorker: return "worker";
    case Role::kAgent: return "agent";
  }
  return "user";
}

absl::StatusOr<Role> ParseRole(const std::string& name) {
  if (name == "admin") return Role::kAdmin;
  if (name == "user") return Role::kUser;
  if (name == "worker") return Role::kWorker;
  return absl::InvalidArgumentError(
      absl::StrCat("role: \"", name, "\" is not one of user, admin, worker"));
}

std::string RandomHex(int bytes) {
  std::string raw(static_cast<size_t>(bytes), '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), bytes) != 1) {
    // Without a working random source no secret or id can be trusted.
    std::fprintf(stderr, "kernelseekd: RAND_bytes failed; cannot continue\n");
    std::abort();
  }
  return absl::BytesToHexString(raw);
}

std::string NewToken() { return absl::StrCat("ks_", RandomHex(32)); }

std::string HashToken(const std::string& token) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

absl::StatusOr<std::string> BearerToken(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return absl::UnauthenticatedError("missing bearer token");
  std::string value(it->second.data(), it->second.size());
  constexpr absl::string_view kPrefix = "Bearer ";
  if (!absl::StartsWithIgnoreCase(value, kPrefix) || value.size() == kPrefix.size()) {
    return absl::UnauthenticatedError(
        "missing bearer token (authorization metadata must be \"Bearer TOKEN\")");
  }
  return value.substr(kPrefix.size());
}

absl::StatusOr<Caller> Authenticator::Authenticate(
    const grpc::ServerContextBase& context) const {
  absl::StatusOr<std::string> token = BearerToken(context);
  if (!token.ok()) return token.status();
  const std::string hash = HashToken(*token);
  absl::StatusOr<UserRecord> user = store_->LookupToken(hash);
  if (absl::IsNotFound(user.status())) {
    absl::StatusOr<SessionRecord> session = store_->LookupSessionToken(hash);
    if (session.ok()) return Caller{session->user, Role::kAgent, session->id};
    if (!absl::IsNotFound(session.status())) return session.status();
    return absl::UnauthenticatedError("unknown or revoked token");
  }
  if (!user.ok()) return user.status();
  absl::StatusOr<Role> role = ParseRole(user->role);
  if (!role.ok()) {
    return absl::InternalError(
        absl::StrCat("user ", user->name, " has an unknown role \"", user->role, "\""));
  }
  return Caller{user->name, *role, ""};
}

absl::Status CheckRole(const Caller& caller, std::initializer_list<Role> allowed,
                       const std::string& what) {
  for (Role r : allowed) {
    if (caller.role == r) return absl::OkStatus();
  }
  std::vector<std::string> names;
  for (Role r : allowed) names.push_back(RoleName(r));
  return absl::PermissionDeniedError(absl::StrCat(what, " needs a token of role ",
                                                  absl::StrJoin(names, " or "), "; user ",
                                                  caller.user, " has role ",
                                                  RoleName(caller.role)));
}

absl::StatusOr<Caller> Authenticator::Require(const grpc::ServerContextBase& context,
                                              std::initializer_list<Role> allowed,
                                              const std::string& what) const {
  absl::StatusOr<Caller> caller = Authenticate(context);
  if (!caller.ok()) return caller;
  absl::Status st = CheckRole(*caller, allowed, what);
  if (!st.ok()) return st;
  return caller;
}

absl::Status WriteSecretFile(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat(tmp, ": cannot create: ", std::strerror(errno)));
  }
  // The mode given to open() is filtered by the umask; set it exactly.
  bool ok = ::fchmod(fd, 0600) == 0;
  size_t off = 0;
  while (ok && off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) off += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  int err = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) err = errno;
    ::unlink(tmp.c_str());
    return absl::InternalError(absl::StrCat(path, ": cannot write: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::Status PrepareStateDir(const std::string& state_dir) {
  if (::mkdir(state_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat(state_dir, ": cannot create the state folder: ", std::strerror(errno)));
  }
  if (::chmod(state_dir.c_str(), 0700) != 0) {
    return absl::InternalError(
        absl::StrCat(state_dir, ": cannot set mode 0700: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status Bootstrap(Store* store, const std::string& state_dir) {
  // Each user's token file is written before the user exists: a crash in
  // between leaves no user, and the next start writes both again.
  struct Account {
    const char* user;
    const char* role;
    const char* file;
  };
  for (const Account& a : {Account{kAdminUser, "admin", kAdminTokenFile},
                           Account{kLocalWorkersUser, "worker", kWorkerTokenFile}}) {
    absl::StatusOr<UserRecord> existing = store->GetUser(a.user);
    if (existing.ok()) continue;
    if (!absl::IsNotFound(existing.status())) return existing.status();
    std::string token = NewToken();
    absl::Status st = WriteSecretFile(absl::StrCat(state_dir, "/", a.file), token + "\n");
    if (st.ok()) st = store->AddUser(a.user, a.role, HashToken(token),
                                     NowMs());
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace kseek::server
