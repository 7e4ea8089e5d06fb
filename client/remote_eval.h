// One evaluation through the coordinator: submit, follow its events (queue
// position and a progress bar on a terminal), reconnect when the stream
// breaks after acceptance, and hand back the verdict.
#ifndef KERNELSEEK_CLIENT_REMOTE_EVAL_H_
#define KERNELSEEK_CLIENT_REMOTE_EVAL_H_

#include <optional>
#include <string>

#include "kernelseek/v1/evaluation.pb.h"
#include "remote.h"
#include "verdict.h"

namespace kseek::cli {

struct RemoteOutcome {
  std::string evaluation_id;
  std::optional<Verdict> verdict;  // set when the evaluation finished
  std::string failed;              // set when it could not be carried out
};

// Submits `request` and waits for its verdict or failure. `progress`: draw
// the queue position and progress bar on stderr. Returns kExitOk with
// `out` filled when the evaluation ended either way; otherwise prints
// "kseek COMMAND: ..." and returns the exit code.
int SubmitAndWait(Remote& remote, const std::string& command,
                  const kernelseek::v1::EvaluationRequest& request, bool progress, RemoteOutcome* out);

}  // namespace kseek::cli

#endif  // KERNELSEEK_CLIENT_REMOTE_EVAL_H_
