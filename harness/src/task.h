// A task: one kernel problem described as data (task.json).
//
// LoadTask reads and validates a task folder; every error names the file,
// the field (as a JSON path such as `tensors[2].shape[1]`) and what is
// wrong. A TaskSpec is a plain value: copyable, immutable after loading,
// safe to share between threads.
//
// The format is documented in harness/README.md.
#ifndef KERNELSEEK_HARNESS_TASK_H_
#define KERNELSEEK_HARNESS_TASK_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/src/expr.h"
#include "kernelseek/abi.h"
#include "nlohmann/json.hpp"

namespace kseek {

// The targets a task or a worker can name.
enum class Target { kSm90a, kSm100a, kHost };
std::string TargetName(Target t);  // "sm_90a", "sm_100a", "host"
absl::StatusOr<Target> ParseTarget(const std::string& name);
// "cuda" for the GPU targets, "host" for kHost: the key of task sources.
std::string TargetFamily(Target t);

std::string DtypeName(kseek_dtype d);  // "f32", "f16", "bf16", ...
absl::StatusOr<kseek_dtype> ParseDtype(const std::string& name);

// A named integer parameter. A dtype parameter takes dtype names in
// task.json and carries the kseek_dtype value at run time.
struct ParamSpec {
  std::string name;
  bool is_dtype = false;
  std::vector<kseek_dtype> allowed_dtypes;  // when is_dtype
  std::optional<int64_t> min, max;          // when not is_dtype
  std::optional<int64_t> multiple_of;       // when not is_dtype: v % it == 0
};

enum class TensorRole { kIn, kOut, kScratch };

// How an input tensor is filled.
struct Distribution {
  enum Kind { kNormal, kUniform } kind = kNormal;
  double a = 0.0;  // mean (normal) or low (uniform)
  double b = 1.0;  // stddev (normal) or high (uniform)
};

struct Tolerance {
  double rel_l2 = 0.0;   // ||out - ref||_2 / ||ref||_2 over finite elements
  double max_abs = 0.0;  // max |out - ref|
};

struct TensorSpec {
  std::string name;
  TensorRole role = TensorRole::kIn;
  // Either a fixed dtype or the name of a dtype parameter.
  std::optional<kseek_dtype> fixed_dtype;
  std::string dtype_param;
  std::vector<Expr> shape;  // row-major, contiguous
  Distribution init;        // role kIn
  // role kOut: tolerance per dtype name ("f32", "bf16", ...); the key "*"
  // applies to dtypes not listed.
  std::map<std::string, Tolerance> tolerance;
};

struct Scenario {
  std::string name;
  // Every parameter of the task, dtype parameters by their kseek_dtype.
  std::map<std::string, int64_t> params;
  // Targets this scenario runs on; empty means every target of the task.
  std::vector<Target> targets;

  bool RunsOn(Target t) const;
};

// Sources for one target family ("cuda" or "host"), as absolute paths.
struct FamilySources {
  std::string reference;
  std::string baseline;
  std::vector<std::string> kernels;  // shipped optimised kernels
  // The targets of a shipped kernel that task.json restricts
  // ({"file": ..., "targets": [...]}); any other runs on every target of
  // the family.
  std::map<std::string, std::vector<Target>> kernel_targets;

  bool KernelRunsOn(const std::string& kernel, Target t) const;
};

struct Policy {
  std::vector<std::string> forbidden_includes;  // substrings of an include
  std::vector<std::string> forbidden_symbols;   // identifiers
};

struct TaskSpec {
  std::string dir;   // absolute path of the task folder
  std::string file;  // absolute path of task.json
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  std::vector<TensorSpec> tensors;
  std::optional<Expr> flops;  // per call
  std::optional<Expr> bytes;  // per call, the fewest bytes that must move
  std::map<std::string, FamilySources> sources;  // by family
  Policy policy;  // the task's own additions to the built-in policy
  std::vector<Target> targets;
  std::vector<Scenario> scenarios;
  double goal_speedup = 1.0;
  // Hard limits for the runner (seconds).
  double scenario_timeout_s = 60.0;
  double job_timeout_s = 1800.0;

  const ParamSpec* FindParam(const std::string& name) const;
  bool Supports(Target t) const;
};

// Reads DIR/task.json.
absl::StatusOr<TaskSpec> LoadTask(const std::string& dir);

// Parses a scenario list (an array, or an object with "scenarios") against
// `task`; `origin` names the file in errors.
absl::StatusOr<std::vector<Scenario>> ParseScenarios(
    const TaskSpec& task, const nlohmann::json& j, const std::string& origin);

// Evaluation context of a scenario: its parameters as expression variables.
ExprEnv ScenarioEnv(const Scenario& s);

// The concrete dtype and shape of tensor `t` in scenario `s`.
kseek_dtype TensorDtype(const TensorSpec& t, const Scenario& s);
absl::StatusOr<std::vector<int64_t>> TensorShape(const TensorSpec& t,
                                                 const Scenario& s);

// The scenario's parameters as JSON, dtype parameters by name.
nlohmann::json ScenarioParamsJson(const TaskSpec& task, const Scenario& s);

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_TASK_H_
