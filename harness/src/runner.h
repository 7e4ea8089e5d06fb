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
#include "harness/src/task.h"
#include "harness/src/verdict.h"

namespace kseek {

struct TimingOptions {
  bool enabled = true;
  int warmup = 3;
  int min_samples = 10;
  int max_samples = 300;
  double target_rse = 0.005;        // stop once stderr/mean is below this
  double max_seconds = 2.0;         // timing budget per scenario and kernel
};

// Confinement of the runner children, for a service that runs other
// people's kernels (kseek-worker); local `kseek eval` leaves it off. Applied
// between fork and exec: the child gets only the environment variables named
// in `keep_env` (plus TMPDIR pointing at a private folder inside the job's
// work_dir), the resource limits below, and, where the kernel allows it, a
// network namespace of its own (no network). It is killed when the thread
// that started it ends (a service killed outright leaves no kernel running),
// and it ignores SIGTERM, SIGINT and SIGHUP: a stop signal sent to every
// process of a batch job reaches the service alone, which drains.
struct SandboxOptions {
  bool enabled = false;
  std::vector<std::string> keep_env = {"PATH", "HOME", "LANG", "LD_LIBRARY_PATH",
                                       "CUDA_VISIBLE_DEVICES"};
  uint64_t max_file_bytes = uint64_t{1} << 30;     // RLIMIT_FSIZE
  uint64_t max_open_files = 1024;                  // RLIMIT_NOFILE
  uint64_t max_address_space_bytes = 0;            // RLIMIT_AS; 0: no limit
  bool isolate_network = true;                     // unshare(CLONE_NEWNET)
  // The seccomp filter of the kernel hosts (sandbox.h), whether or not the
  // rest is enabled: off only where the machine cannot install it
  // (CanUseSeccomp), which the caller says.
  bool seccomp_kernels = true;
  // The user the kernel hosts run as when the judge runs as root (a name;
  // empty: root, without capabilities). Used only where that user can run
  // the runner, which the judge tries first.
  std::string kernel_host_user = "nobody";
};

// The environment ("NAME=value" entries) of a sandboxed child: the variables
// of `parent_env` (a null-terminated array, like `environ`) that `sandbox`
// keeps, in their order, and TMPDIR=`temp_dir`.
std::vector<std::string> SandboxEnvironment(const SandboxOptions& sandbox,
                                            const char* const* parent_env,
                                            const std::string& temp_dir);

// Whether this process may give a child its own network namespace (tried in
// a short-lived child); `why` says what failed otherwise.
bool CanIsolateNetwork(std::string* why);

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
  SandboxOptions sandbox;     // off unless enabled
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
