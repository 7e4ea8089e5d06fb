// Authentication and authorisation for kernelseekd.
//
// Callers present `authorization: Bearer TOKEN` metadata. Tokens are "ks_"
// followed by 64 hex digits (32 random bytes); the store keeps only their
// SHA-256. Roles: admin (everything, every evaluation and session), user
// (its own evaluations and sessions), worker (registration and heartbeats
// only), agent (a token minted for one session's agent: it submits
// evaluations linked to that session and reads them and the session, only
// while the session has not ended; never stored in the users table).
//
// PrepareStateDir() and Bootstrap() run on every start: when the store lacks them (the first
// start) it creates the admin user and the "local-workers" worker user and
// writes their tokens to STATE_DIR/admin.token and STATE_DIR/worker.token
// (0600).
//
// Plain functions and a stateless Authenticator over a thread-safe Store:
// everything here is thread-safe.
#ifndef KERNELSEEK_SERVER_AUTH_H_
#define KERNELSEEK_SERVER_AUTH_H_

#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"
#include "server/store.h"

namespace kseek::server {

enum class Role { kAdmin, kUser, kWorker, kAgent };
std::string RoleName(Role role);  // "admin", "user", "worker", "agent"
// The roles a user can have (admin, user, worker); "agent" is refused.
absl::StatusOr<Role> ParseRole(const std::string& name);

inline constexpr char kAdminUser[] = "admin";
inline constexpr char kLocalWorkersUser[] = "local-workers";
inline constexpr char kAdminTokenFile[] = "admin.token";
inline constexpr char kWorkerTokenFile[] = "worker.token";

// `bytes` bytes from the system's random source, as lower-case hex.
std::string RandomHex(int bytes);
// A fresh token: "ks_" + RandomHex(32).
std::string NewToken();
// Lower-case hex SHA-256 of `token`.
std::string HashToken(const std::string& token);

// The token of "Bearer TOKEN" in `authorization`; UNAUTHENTICATED when the
// header is absent or malformed.
absl::StatusOr<std::string> BearerToken(const grpc::ServerContextBase& context);

// Who is calling.
struct Caller {
  std::string user;          // for an agent: the session's owner
  Role role = Role::kUser;
  std::string session_id;    // for an agent: its session
};

class Authenticator {
 public:
  explicit Authenticator(Store* store) : store_(store) {}

  // UNAUTHENTICATED for a missing, unknown or revoked token (or an agent
  // token whose session has ended).
  absl::StatusOr<Caller> Authenticate(const grpc::ServerContextBase& context) const;
  // Authenticate, then PERMISSION_DENIED unless the role is in `allowed`;
  // `what` names the call in the message.
  absl::StatusOr<Caller> Require(const grpc::ServerContextBase& context,
                                 std::initializer_list<Role> allowed,
                                 const std::string& what) const;

 private:
  Store* const store_;
};

// PERMISSION_DENIED unless `caller`'s role is in `allowed`.
absl::Status CheckRole(const Caller& caller, std::initializer_list<Role> allowed,
                       const std::string& what);

// Creates `state_dir` when absent and sets its mode to 0700.
absl::Status PrepareStateDir(const std::string& state_dir);

// For each of the admin and local-workers users the store lacks, creates the
// user and writes its token file into `state_dir`.
absl::Status Bootstrap(Store* store, const std::string& state_dir);

// Writes `text` to `path` with mode 0600 (replacing any file there).
absl::Status WriteSecretFile(const std::string& path, const std::string& text);

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_AUTH_H_
