// One evaluation through the coordinator: submit, follow its events (queue
// position and a progress bar on a terminal), reconnect when the stream
// breaks after acceptance, and hand back the verdict.
#ifndef KERNELSEEK_CLIENT_REMOTE_EVAL_H_
#define KERNELSEEK_CLIENT_REMOTE_EVAL_H_

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "client/remote.h"
#include "harness/src/verdict.h"
#include "kernelseek/v1/evaluation.pb.h"

namespace kseek::cli {

struct RemoteOutcome {
  std::string evaluation_id;
  std::optional<Verdict> verdict;  // set when the evaluation finished
  std::string failed;              // set when it could not be carried out
};

// The exit code after SIGINT (128 + SIGINT).
inline constexpr int kExitInterrupted = 130;

// Submits `request` and waits for its verdict or failure. `progress`: draw
// the queue position and progress bar on stderr. Returns kExitOk with
// `out` filled when the evaluation ended either way; otherwise prints
// "kseek COMMAND: ..." and returns the exit code.
//
// While no healthy worker of the target is registered it says so on stderr
// at once (terminal or not), and after `no_worker_limit` of that (zero:
// never) cancels the evaluation and returns 2. SIGINT (Ctrl-C) while it
// waits cancels the evaluation too, and returns kExitInterrupted, except
// inside a session ($KSEEK_SESSION set), whose runner owns its agent's
// evaluations.
int SubmitAndWait(Remote& remote, const std::string& command,
                  const kernelseek::v1::EvaluationRequest& request, bool progress, RemoteOutcome* out,
                  absl::Duration no_worker_limit = absl::Minutes(5));

}  // namespace kseek::cli

#endif  // KERNELSEEK_CLIENT_REMOTE_EVAL_H_
