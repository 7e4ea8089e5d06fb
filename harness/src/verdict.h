// The verdict of one evaluation: what `kseek eval --json` prints and what
// the service stores. Plain values; ToJson/FromJson round-trip exactly.
#ifndef KERNELSEEK_HARNESS_VERDICT_H_
#define KERNELSEEK_HARNESS_VERDICT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace kseek {

enum class ScenarioStatus {
  kOk,               // correct (and timed, when timing was asked for)
  kIncorrect,        // wrong, unwritten, non-finite, or wrote an input
  kCrash,            // the call failed, or the runner died during it
  kTimeout,          // the scenario passed its time limit
  kCompileError,     // the candidate did not compile
  kPolicyViolation,  // the candidate uses something the task forbids
};
std::string StatusName(ScenarioStatus s);
absl::StatusOr<ScenarioStatus> ParseStatus(const std::string& name);

// Summary of repeated timings, milliseconds.
struct TimeStats {
  double median = 0, mean = 0, stderr_ms = 0, min = 0, max = 0;
  int n = 0;
};
// Computes the statistics of `samples_ms` (non-empty).
TimeStats Summarize(std::vector<double> samples_ms);

// Error of one output tensor against the reference.
struct OutputError {
  std::string tensor;
  double rel_l2 = 0;
  double max_abs = 0;
  bool within = false;  // inside the task's tolerance for it
};

struct ScenarioResult {
  int index = 0;  // position in the evaluated scenario list
  std::string name;
  nlohmann::json params;  // dtype parameters by name
  ScenarioStatus status = ScenarioStatus::kOk;
  std::string error;  // empty when ok
  // kCrash: the signal that ended the runner during the scenario (0: it
  // was not a signal). Not part of the verdict's JSON or proto: a service
  // uses it to tell a kernel's fault from a stop signal sent from outside.
  int runner_signal = 0;
  std::vector<OutputError> outputs;
  double rel_l2 = 0;   // worst over outputs
  double max_abs = 0;  // worst over outputs
  std::optional<TimeStats> time;      // candidate
  std::optional<TimeStats> baseline;  // baseline, same job
  std::optional<double> speedup;      // baseline median / candidate median
  std::optional<double> tflops;       // from the task's FLOP count
  std::optional<double> gbps;         // from the task's byte count
  std::string flag;  // non-empty: a result to review (e.g. above speed of light)
  // The cross-check of the candidate's reported times against the judge's
  // clock (runner_scenario.cc): the candidate's and the baseline's median
  // excess of the outside clock over the reported time, per call, and what
  // the candidate's excess over the baseline's may be. Absent when the
  // scenario was not timed. The last measurement when it was measured twice.
  struct CrossCheck {
    double candidate_excess_ms = 0;
    double baseline_excess_ms = 0;
    double allowed_ms = 0;
    int measurements = 1;
  };
  std::optional<CrossCheck> cross_check;
  // Where the judge's time went in this scenario: seconds by phase
  // ("inputs", "share", "candidate", "reference", "compare", "timing",
  // "baseline", "other"; runner_scenario.cc says what each holds). Empty
  // when not measured (a scenario that never started).
  std::map<std::string, double> phase_seconds;
};

struct CompileInfo {
  bool ok = false;
  bool cached = false;
  int registers = 0;      // max over the kernels in the library
  int smem_bytes = 0;     // static shared memory, max over kernels
  int spill_bytes = 0;    // spill stores + loads, summed over kernels
  int stack_bytes = 0;    // max stack frame
  std::string command;    // the compiler command line
  std::string log;        // full compiler output
  double seconds = 0;
};

struct DeviceInfo {
  std::string name;  // "NVIDIA H200", or the host CPU model
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
  double sm_clock_mhz = 0;        // maximum SM clock
  double mem_bandwidth_gbps = 0;  // theoretical, from clock and bus width
  std::string driver;
};

struct Verdict {
  std::string task;
  std::string target;
  DeviceInfo device;
  uint64_t seed = 0;  // the secret seed, revealed after the evaluation
  CompileInfo compile;
  std::vector<ScenarioResult> scenarios;
  bool all_correct = false;
  std::optional<double> geomean_speedup;  // over timed scenarios
  double goal_speedup = 1.0;
  bool goal_met = false;
  std::string error;  // an evaluation-wide failure (policy, compile, ...)

  // Recomputes all_correct, geomean_speedup and goal_met from scenarios.
  void Finalize();
};

nlohmann::json ToJson(const TimeStats& t);
nlohmann::json ToJson(const ScenarioResult& s);
nlohmann::json ToJson(const Verdict& v);
absl::StatusOr<TimeStats> TimeStatsFromJson(const nlohmann::json& j);
absl::StatusOr<ScenarioResult> ScenarioResultFromJson(const nlohmann::json& j);
absl::StatusOr<Verdict> VerdictFromJson(const nlohmann::json& j);

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_VERDICT_H_
