// Runs scenarios of a task in isolated `kseek-runner` child processes.
//
// The parent side (RunScenarios) writes a job file, starts the child with a
// private result pipe, reads one JSON message per line from it, and enforces
// the per-scenario and per-job time limits. When the child dies or hangs
// during a scenario, that scenario gets `crash` or `timeout` and a fresh
// child continues with the remaining scenarios. The child side lives in
// runner_main.cc. Protocol messages are documented in harness/README.md.
//
// RunScenarios blocks; it is thread-compatible (separate jobs may run on
// separate threads).
#ifndef KERNELSEEK_HARNESS_RUNNER_H_
#define KERNELSEEK_HARNESS_RUNNER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "task.h"
#include "verdict.h"

namespace kseek {

struct TimingOptions {
  bool enabled = true;
  int warmup = 3;
  int min_samples = 10;
  int max_samples = 300;
  double target_rse = 0.005;        // stop once stderr/mean is below this
  double max_seconds = 2.0;         // timing budget per scenario and kernel
};

struct RunJob {
  const TaskSpec* task = nullptr;
  Target target = Target::kHost;
  // Shared libraries implementing the ABI (kernelseek/abi.h).
  std::string reference_lib;
  std::string baseline_lib;   // may be empty: no baseline timing
  std::string candidate_lib;
  std::vector<Scenario> scenarios;
  uint64_t seed = 0;          // secret; every scenario derives its inputs
  TimingOptions timing;
  std::string runner_path;    // the kseek-runner binary
  std::string work_dir;       // private scratch folder for job files
  int gpu = 0;                // CUDA device ordinal
};

struct RunResult {
  DeviceInfo device;
  std::vector<ScenarioResult> scenarios;  // one per job scenario, in order
  std::string log;  // the children's stderr/stdout, for diagnosis
};

// Called as each scenario finishes (from the calling thread).
using ScenarioCallback = std::function<void(const ScenarioResult&)>;

// Returns an error only when no child could be started at all (missing
// runner binary, unusable device); failures of kernels are results.
absl::StatusOr<RunResult> RunScenarios(const RunJob& job,
                                       const ScenarioCallback& on_scenario);

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_RUNNER_H_
