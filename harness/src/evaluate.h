// One evaluation of a candidate kernel against a task: the harness protocol
// of DESIGN.md end to end. Policy check, compile (candidate, reference,
// baseline, all through the compile cache), run the scenarios in
// `kseek-runner` children, and fold everything into a Verdict.
//
// Used by `kseek eval` in local mode and by `kseek-worker`. Evaluate()
// blocks; separate calls may run on separate threads.
#ifndef KERNELSEEK_HARNESS_EVALUATE_H_
#define KERNELSEEK_HARNESS_EVALUATE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/src/runner.h"
#include "harness/src/task.h"
#include "harness/src/verdict.h"

namespace kseek {

struct EvalRequest {
  Target target = Target::kHost;
  std::string kernel_source;   // the candidate's text
  std::string kernel_name;     // its file name, for messages ("kernel.cu")
  // Skips the text policy (local `kseek eval --skip-policy`, to test the
  // run-time sandbox); the service never sets it.
  bool skip_policy = false;
  // Scenarios to run; empty means the task's own scenarios for the target.
  std::vector<Scenario> scenarios;
  std::optional<uint64_t> seed;  // fixed seed; otherwise a fresh secret one
  TimingOptions timing;
  std::optional<double> scenario_timeout_s;  // overrides the task's limit
  std::string cache_dir;    // compile cache; empty: DefaultCacheDir()
  std::string runner_path;  // empty: DefaultRunnerPath()
  int gpu = 0;
  // Where the evaluation's private scratch folder is made (and removed);
  // empty: the system temp dir.
  std::string work_dir;
  // How many of the candidate, reference and baseline compiles run at once.
  int compile_jobs = 1;
  SandboxOptions sandbox;  // for the runner children; off by default
};

// What an evaluation is doing, for progress displays.
struct EvalProgress {
  enum Stage { kPolicy, kCompiling, kRunning, kScenarioDone, kDone } stage;
  int done = 0;   // scenarios finished
  int total = 0;  // scenarios in the evaluation
  const ScenarioResult* last = nullptr;  // kScenarioDone: the one finished
};
using ProgressCallback = std::function<void(const EvalProgress&)>;

// Errors are for what is wrong with the request or the environment (no
// scenario for the target, a task source that does not compile, no runner);
// everything a candidate does wrong is a verdict.
absl::StatusOr<Verdict> Evaluate(const TaskSpec& task, const EvalRequest& req,
                                 const ProgressCallback& progress = nullptr);

// The task's scenarios that run on `target`.
std::vector<Scenario> ScenariosFor(const TaskSpec& task, Target target);

// Picks scenarios by a comma-separated list of names, or reads a scenario
// file (a path that exists) in the task's format.
absl::StatusOr<std::vector<Scenario>> SelectScenarios(const TaskSpec& task,
                                                      Target target,
                                                      const std::string& spec);

// $KSEEK_RUNNER, else kseek-runner beside the running executable.
std::string DefaultRunnerPath();

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_EVALUATE_H_
