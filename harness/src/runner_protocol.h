// What RunScenarios (runner.cc) and the kseek-runner child (runner_main.cc)
// exchange: the job file the parent writes, the device description of the
// child's `hello` message, the message token and the child's exit codes.
// Implemented in runner.cc so that both sides share one definition; the
// protocol is documented in harness/README.md ("Runner protocol").
//
// Plain values and pure functions; thread-safe.
#ifndef KERNELSEEK_HARNESS_RUNNER_PROTOCOL_H_
#define KERNELSEEK_HARNESS_RUNNER_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/src/runner.h"
#include "harness/src/task.h"
#include "harness/src/verdict.h"
#include "nlohmann/json.hpp"

namespace kseek {

// One scenario of a job file, with its index in the caller's list.
struct JobScenario {
  int index = 0;
  Scenario scenario;  // name and params only
};

// Everything a kseek-runner child needs. Written by the parent once per
// child, read and then deleted by the child (it holds the secret seed and
// the message token).
struct JobFile {
  std::string task_dir;  // LoadTask reads it again in the child
  Target target = Target::kHost;
  std::string reference_lib;
  std::string baseline_lib;  // empty: no baseline
  std::string candidate_lib;
  std::vector<JobScenario> scenarios;  // those still to run, in order
  uint64_t seed = 0;
  TimingOptions timing;
  int gpu = 0;
  // Where the judge writes its kernel hosts' logs (the job's private
  // folder), and how they are confined.
  std::string work_dir;
  bool seccomp = true;
  bool isolate_network = false;
  std::string host_user;  // SandboxOptions::kernel_host_user
  // Every message of the child carries this value; a line without it (for
  // instance one a kernel wrote to the result pipe) is a broken channel.
  std::string token;
};

nlohmann::json JobFileToJson(const JobFile& job);
// `origin` names the file in errors.
absl::StatusOr<JobFile> JobFileFromJson(const nlohmann::json& j,
                                        const std::string& origin);

nlohmann::json DeviceInfoToJson(const DeviceInfo& d);
absl::StatusOr<DeviceInfo> DeviceInfoFromJson(const nlohmann::json& j);

// The last lines of a child's log file (at most 12, 3000 bytes), quoted in
// crash messages of runner children and kernel hosts alike.
std::string LastLinesOfFile(const std::string& path);

// Exit codes of kseek-runner.
inline constexpr int kRunnerExitDone = 0;         // every scenario reported
inline constexpr int kRunnerExitFatal = 2;        // could not start (see `fatal`)
inline constexpr int kRunnerExitDeviceLost = 3;   // a device error made the
                                                  // context unusable
inline constexpr int kRunnerExitUsage = 64;       // bad command line

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_RUNNER_PROTOCOL_H_
