// Agent adapters: how to run one turn of a general-purpose coding-agent CLI
// in a session's workspace, and how to read what it prints.
//
// The coordinator's turn loop uses an adapter like this:
//
//   auto adapter = MakeAdapter(config);              // once per session
//   TurnRequest turn{workspace, prompt, env, resume_session_id};
//   auto invocation = (*adapter)->Invocation(turn);  // argv + env + cwd
//   auto process = AgentProcess::Start(*invocation, (*adapter)->NewParser(),
//                                      limits, sink);  // agent_process.h
//
// The first turn has an empty resume_session_id; every later turn passes the
// id from the previous turn's agent_session_id event, so that the CLI carries
// on the same conversation (the question or the human's message is the new
// prompt). Adapters:
//
//   claude   Claude Code in print mode with stream-json output
//            (claude_adapter.h)
//   codex    Codex's non-interactive `codex exec --json` (codex_adapter.h)
//   command  any program, from a template; each line it prints is an
//            agent_message (command_adapter.h)
//
// Adapters are immutable after MakeAdapter and safe to share between
// threads; a parser holds the state of one run and belongs to one thread.
#ifndef KERNELSEEK_SERVER_AGENT_ADAPTER_H_
#define KERNELSEEK_SERVER_AGENT_ADAPTER_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/agent/event.h"

namespace kseek::agent {

// How a session's agent is run; chosen when the session is created.
struct AgentConfig {
  // "claude", "codex" or "command".
  std::string kind;
  // claude, codex: the program to run; empty means "claude" or "codex",
  // looked up on PATH.
  std::string program;
  // claude, codex: the model (--model / -m); empty leaves the CLI's default.
  std::string model;
  // claude, codex: more directories the agent may read and write besides
  // the workspace (claude --add-dir; codex writable_roots).
  std::vector<std::string> extra_dirs;
  // claude, codex: arguments added as given, after the adapter's own.
  std::vector<std::string> extra_args;
  // command: the command line of a first turn, e.g.
  // "my-agent --dir {workspace} {prompt}". Split into words at spaces
  // (single and double quotes group, a backslash escapes the next
  // character; no shell runs it), then {workspace}, {prompt}, {session_id}
  // and {model} are replaced inside each word, so that a prompt with spaces
  // stays one argument.
  std::string start_template;
  // command: the command line of a later turn; it may use {session_id}.
  // Empty: the program cannot resume, and every turn runs start_template.
  std::string resume_template;
};

// One turn to run.
struct TurnRequest {
  // The session's workspace: an absolute path to an existing directory.
  // The agent runs there and works on the files in it.
  std::string workspace;
  // What the agent is asked: the brief on the first turn, a question or a
  // human's message later. Must not be empty.
  std::string prompt;
  // Variables added to the agent's environment (over the coordinator's own),
  // e.g. the coordinator's address and the session token for `kseek eval`.
  std::map<std::string, std::string> env;
  // The agent's own conversation id to resume (from an agent_session_id
  // event), or empty to start a new conversation.
  std::string resume_session_id;
};

// How an agent's processes are confined (agent/confinement.h makes the
// user): they run as `uid`/`gid` with no supplementary groups, under
// `rlimits`, and with `isolate_network` in a network namespace of their own
// (no interface but a loopback that is down: only Unix sockets reach out).
struct AgentConfinement {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<std::pair<int, uint64_t>> rlimits;  // {RLIMIT_x, soft = hard}
  bool isolate_network = false;
};

// A process to start: the program and its arguments, environment additions
// and working directory, and its confinement (none: it runs as this
// process's user). argv[0] is a name looked up on PATH (the PATH of the
// merged environment) or a path.
struct AgentInvocation {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string cwd;
  std::optional<AgentConfinement> confinement;
};

// Reads one run's standard output, line by line, into events. Holds what
// it needs across lines (e.g. which tool a result belongs to).
class EventParser {
 public:
  virtual ~EventParser() = default;
  // `line` is one line of stdout without its newline. Parsers never emit
  // turn_end for the end of the process: AgentProcess adds the turn's one
  // turn_end when the stream did not carry one.
  virtual std::vector<AgentEvent> ParseLine(absl::string_view line) = 0;
};

class AgentAdapter {
 public:
  virtual ~AgentAdapter() = default;
  // "claude", "codex" or "command".
  virtual absl::string_view name() const = 0;
  // False when a turn cannot continue an earlier conversation (a command
  // adapter without resume_template): the turn loop must then put what the
  // agent needs to know into each prompt.
  virtual bool CanResume() const = 0;
  // The process for one turn. INVALID_ARGUMENT names the field at fault (a
  // relative or missing workspace, an empty prompt, a resume the adapter
  // cannot do).
  virtual absl::StatusOr<AgentInvocation> Invocation(const TurnRequest& turn) const = 0;
  // A fresh parser for one run's stdout.
  virtual std::unique_ptr<EventParser> NewParser() const = 0;
};

// The adapter for config.kind; INVALID_ARGUMENT names the field at fault
// (an unknown kind, a command adapter without start_template or with an
// unknown {placeholder}).
absl::StatusOr<std::unique_ptr<AgentAdapter>> MakeAdapter(const AgentConfig& config);

// Checks what every adapter requires of a turn: an absolute workspace that
// is a directory, and a prompt that is not empty.
absl::Status ValidateTurn(const TurnRequest& turn);

}  // namespace kseek::agent

#endif  // KERNELSEEK_SERVER_AGENT_ADAPTER_H_
