// Evaluation requests in transit: packing a task folder on the client,
// validating a request on the coordinator (INVALID_ARGUMENT naming the
// field), and turning it back into a harness EvalRequest on the worker.
// Plain functions; thread-safe.
#ifndef KERNELSEEK_PROTO_REQUEST_H_
#define KERNELSEEK_PROTO_REQUEST_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/src/evaluate.h"
#include "harness/src/task.h"
#include "kernelseek/v1/evaluation.pb.h"

namespace kseek {

// Size limits a coordinator enforces.
inline constexpr size_t kMaxKernelSourceBytes = 1 << 20;     // 1 MiB
inline constexpr size_t kMaxTaskBytes = 16 << 20;            // all task files
inline constexpr size_t kMaxScenariosJsonBytes = 4 << 20;
inline constexpr int kMaxScenarios = 1024;                   // per request, no duplicates
inline constexpr int kMaxTaskFiles = 256;
inline constexpr size_t kMaxNameBytes = 255;                 // kernel_name, task file paths
inline constexpr int kMaxTimingSamples = 100000;             // timing.max_samples
inline constexpr double kMaxTimingSeconds = 600;             // timing.max_seconds
inline constexpr double kMinScenarioTimeoutS = 0.1;          // scenario_timeout_s
inline constexpr double kMaxScenarioTimeoutS = 3600;

// Reads task.json, every source it names, and the headers beside them
// (*.h, *.cuh, *.hpp, *.inc in the task folder). Fails when the task does
// not support `target`.
absl::StatusOr<kernelseek::v1::TaskFiles> PackTask(const std::string& task_dir, Target target);

// Writes the files under `dir` (created), refusing absolute paths and "..".
absl::Status UnpackTask(const kernelseek::v1::TaskFiles& files, const std::string& dir);

// A request unpacked into a private folder: the loaded task and the harness
// request (scenarios resolved, timing options applied). The folder is
// removed with the object.
class UnpackedRequest {
 public:
  // Validates everything a coordinator must check before accepting:
  // target, sizes and counts (the limits above), task files and task.json,
  // kernel source present, scenario names (each once) or scenario file,
  // numbers finite and in range. Errors are INVALID_ARGUMENT and name the
  // field (e.g. "task.files[task.json]: ...", "scenario_names[2]: ...").
  static absl::StatusOr<std::unique_ptr<UnpackedRequest>> Create(
      const kernelseek::v1::EvaluationRequest& request);
  ~UnpackedRequest();

  const TaskSpec& task() const { return task_; }
  const EvalRequest& eval() const { return eval_; }
  EvalRequest& mutable_eval() { return eval_; }
  const std::string& dir() const { return dir_; }

 private:
  UnpackedRequest() = default;
  std::string dir_;
  TaskSpec task_;
  EvalRequest eval_;
};

}  // namespace kseek

#endif  // KERNELSEEK_PROTO_REQUEST_H_
