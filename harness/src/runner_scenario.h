// One scenario inside kseek-runner, the judge: correctness of the candidate
// against the reference (on the scenario's inputs, then on two partial
// changes of them, with every tensor between guard regions), then (when
// asked and correct) interleaved timing of the candidate and the baseline
// with a random subset of the timed calls checked and the reported times
// cross-checked against clocks outside their processes, then a re-check of
// the candidate in fresh buffers. The candidate and the baseline run in
// kernel hosts (kernel_host.h), never in this process. The steps are DESIGN.md "Evaluating a
// candidate" 4 and 5; harness/README.md ("Runner protocol") states them
// precisely.
//
// Runs on the calling thread. A kernel host that crashes ends the scenario
// as a crash; one that hangs is ended by the parent's time limit, which
// ends this process too.
#ifndef KERNELSEEK_HARNESS_RUNNER_SCENARIO_H_
#define KERNELSEEK_HARNESS_RUNNER_SCENARIO_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "harness/src/kernel_host.h"
#include "harness/src/runner.h"
#include "harness/src/runner_device.h"
#include "harness/src/task.h"
#include "harness/src/verdict.h"
#include "kernelseek/abi.h"

namespace kseek {

// A shared library implementing the ABI, loaded for the process lifetime.
struct Kernel {
  kseek_launch_fn launch = nullptr;
  kseek_error_message_fn error_message = nullptr;  // optional
};

// dlopen (RTLD_NOW | RTLD_LOCAL) and resolve kseek_launch; `role`
// ("reference", "baseline", "candidate") and `name` (default: `path`) name
// the library in errors.
absl::StatusOr<Kernel> LoadKernel(const std::string& path, const std::string& role,
                                  const std::string& name = "");

struct ScenarioJob {
  const TaskSpec* task = nullptr;
  Device* device = nullptr;            // the judge's
  const Kernel* reference = nullptr;   // in the judge's process
  KernelHost* baseline = nullptr;      // may be null: no baseline timing
  KernelHost* candidate = nullptr;
  uint64_t seed = 0;
  TimingOptions timing;
};

// Evaluates scenario `index` (the index seeds its inputs). Failures of the
// kernels are results; after a device error job.device->broken() is true.
ScenarioResult RunScenario(const ScenarioJob& job, int index, const Scenario& scenario);

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_RUNNER_SCENARIO_H_
