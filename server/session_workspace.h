// A session's workspace: the folder the agent works in. It holds the task
// as WorkspaceTask leaves it (task.json, the reference and baseline sources
// and the headers they include: never the task's shipped kernels), kernel.cu (the starting kernel, then the
// agent's), BRIEF.md (the goal, the budget and how to evaluate) and
// .kernelseek/client.json (the coordinator's address, the session's agent
// token and its target, mode 0600, so that kseek finds them even where the
// agent's shell drops environment variables). With these, a plain `kseek
// eval kernel.cu` there evaluates on the session's task and target (kseek
// named by its absolute path in the brief).
//
// Plain functions; not safe against two writers of one workspace.
#ifndef KERNELSEEK_SERVER_SESSION_WORKSPACE_H_
#define KERNELSEEK_SERVER_SESSION_WORKSPACE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernelseek/v1/session.pb.h"

namespace kseek::server {

inline constexpr char kWorkspaceKernel[] = "kernel.cu";
inline constexpr char kWorkspaceBrief[] = "BRIEF.md";

// The part of a packed task a session keeps (its workspace, its
// verifications): task.json with no `sources.*.kernels` (the shipped
// optimised kernels an agent is not to see), the reference and baseline of
// each source family, and the task folder's headers they include ("...",
// transitively). Every other file is dropped. INVALID_ARGUMENT names the
// field when task.json or a named source is missing.
absl::StatusOr<kernelseek::v1::TaskFiles> WorkspaceTask(const kernelseek::v1::TaskFiles& task);

// What the agent is told in BRIEF.md and in its first prompt; in self-ask
// mode `bank_text` (question_bank::RenderBankForAgent) is appended. `kseek`
// is how the brief names the CLI: its absolute path when the coordinator
// knows it (a login shell, as Codex runs commands in, resets PATH), else
// "kseek".
std::string BriefText(const std::string& task, const kernelseek::v1::CreateSessionRequest& spec,
                      double goal_speedup, const std::string& bank_text,
                      const std::string& kseek);

// Creates `dir` with the task, kernel.cu and BRIEF.md. Files already there
// are kept (a restarted coordinator must not undo the agent's work).
absl::Status PrepareWorkspace(const std::string& dir,
                              const kernelseek::v1::CreateSessionRequest& spec,
                              const std::string& brief);

// The agent's kernel.cu in `dir`, read as the coordinator (which may read
// more than the agent): only a regular file with one link, never through a
// symbolic link or from a FIFO or device the agent put there, and at most
// `max_bytes`. FAILED_PRECONDITION says what is wrong with it.
absl::StatusOr<std::string> ReadWorkspaceKernel(const std::string& dir, size_t max_bytes);

// Writes DIR/.kernelseek/client.json (0600) naming the coordinator, the
// token and the target (kseek eval's default --target).
absl::Status WriteWorkspaceClientConfig(const std::string& dir, const std::string& coordinator,
                                        const std::string& token, const std::string& target);

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_SESSION_WORKSPACE_H_
