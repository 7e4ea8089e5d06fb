// AgentAllowlist: the agents a coordinator runs, as its operator configured
// them. Each entry has a name that users choose by (`kseek session start
// --agent NAME`) and everything that decides what runs: the adapter kind,
// the program, the command templates, extra arguments and directories, and
// environment variables for the agent. A user never supplies any of these;
// the model is the only choice left to them.
//
// The file (kernelseekd --agents FILE) is JSON:
//
//   {"agents": {
//     "claude":   {"kind": "claude"},
//     "codex":    {"kind": "codex", "program": "/usr/local/bin/codex"},
//     "scripted": {"kind": "command", "start_template": "/opt/agents/run {prompt}",
//                  "resume_template": "/opt/agents/run --resume {session_id} {prompt}",
//                  "env": {"AGENT_MODE": "fast"}}
//   }}
//
// Keys of an entry: kind (required: claude, codex or command), program,
// model (the default), extra_args, extra_dirs, start_template,
// resume_template, env, network. `network` is "none" (where agents are
// confined: a network namespace of its own, reaching the coordinator only
// through its Unix socket) or "host" (the machine's network: the CLIs must
// reach their model's API); the default is "none" for command agents and
// "host" for claude and codex. Without a file the allowlist is claude and
// codex, found on PATH. Immutable after loading; thread-safe.
#ifndef KERNELSEEK_SERVER_AGENT_ALLOWLIST_H_
#define KERNELSEEK_SERVER_AGENT_ALLOWLIST_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/agent/adapter.h"

namespace kseek::agent {

struct AllowedAgent {
  std::string name;
  AgentConfig config;
  std::map<std::string, std::string> env;  // added to the agent's environment
  bool isolate_network = false;            // network "none"
};

class AgentAllowlist {
 public:
  // claude and codex with their defaults.
  static AgentAllowlist Default();
  // Parses and checks every entry (the adapter must accept it);
  // INVALID_ARGUMENT names the file and the key at fault.
  static absl::StatusOr<AgentAllowlist> Parse(const std::string& json_text,
                                              const std::string& source);
  static absl::StatusOr<AgentAllowlist> Load(const std::string& path);

  // The agent called `name`; PERMISSION_DENIED naming the known ones when
  // there is none.
  absl::StatusOr<AllowedAgent> Find(const std::string& name) const;
  std::vector<std::string> Names() const;
  const std::string& source() const { return source_; }

 private:
  std::map<std::string, AllowedAgent> agents_;
  std::string source_;  // the file, or "the default allowlist"
};

}  // namespace kseek::agent

#endif  // KERNELSEEK_SERVER_AGENT_ALLOWLIST_H_
