// Confining a session's agent on the coordinator's machine: one
// unprivileged system user per session ("ks-" and the session id's hex,
// made with useradd, its own group, no login shell), which owns the
// session's workspace and home (mode 0700) and nothing else, so that the
// coordinator's state, its tokens and the other sessions' workspaces are
// closed to it by file modes and the separate user. Its processes get
// resource limits, and (per allowlisted agent) a network namespace with no
// interface up. Every process of the user is killed at the end of each
// turn, and the user is removed with the session (its files given back to
// this process's user first, so that a later user with the same uid owns
// nothing of it).
//
// ProbeConfinement says whether this machine can do it (this process must
// be root, useradd and userdel must exist, and every folder above the
// workspaces, and the folder of the kseek agents run, must be searchable by
// other users). Plain functions;
// thread-safe (useradd and userdel take their own locks).
#ifndef KERNELSEEK_SERVER_AGENT_CONFINEMENT_H_
#define KERNELSEEK_SERVER_AGENT_CONFINEMENT_H_

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kseek::agent {

struct ConfinementSupport {
  bool available = false;
  std::string reason;  // why not, when not
};
ConfinementSupport ProbeConfinement(const std::string& workspaces_dir,
                                    const std::string& kseek_dir);

struct AgentUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
};

// The user name of a session's agent.
std::string AgentUserName(const std::string& session_id);
// Creates the session's user when it does not exist yet; returns it.
absl::StatusOr<AgentUser> EnsureAgentUser(const std::string& session_id);
// The session's user, NOT_FOUND when there is none.
absl::StatusOr<AgentUser> FindAgentUser(const std::string& session_id);
// Kills every process of the session's user (if it exists), then removes
// the user and its group. NotFound is not an error.
absl::Status RemoveAgentUser(const std::string& session_id);

// Sends SIGKILL to every process of `uid` (real or saved user id) until
// none but zombies is left, as /proc tells, for at most two seconds. Does
// nothing for uid 0.
void KillAllProcessesOf(uid_t uid);

// Gives `path` and everything under it (symbolic links not followed) to
// uid:gid; `mode` for `path` itself.
absl::Status ChownTree(const std::string& path, uid_t uid, gid_t gid, mode_t mode);

// The limits of a confined agent's processes: no core files, at most 1024
// processes of its user, 4096 descriptors, files up to 8 GiB.
std::vector<std::pair<int, uint64_t>> AgentRlimits();

}  // namespace kseek::agent

#endif  // KERNELSEEK_SERVER_AGENT_CONFINEMENT_H_
