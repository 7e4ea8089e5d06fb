// Evaluate(): policy -> compile -> run -> verdict (evaluate.h).
#include "harness/src/evaluate.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/file.h"
#include "harness/src/compile.h"
#include "harness/src/policy.h"

namespace kseek {

namespace {

// Removes a scratch folder when the evaluation ends.
class ScratchDir {
 public:
  // Under `root`, or the system temp dir when it is empty.
  explicit ScratchDir(const std::string& root) {
    std::error_code ec;
    std::string base = (root.empty() ? std::filesystem::temp_directory_path(ec).string() : root) +
                       "/kseek-eval-XXXXXX";
    std::vector<char> buf(base.begin(), base.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) != nullptr) path_ = buf.data();
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Compiles reqs[i] into (*outs)[i] for i in [begin, end), at most `jobs` at
// once (compiles are independent; the compile cache is safe to share).
void CompileRange(const std::vector<CompileRequest>& reqs, size_t begin, size_t end, int jobs,
                  std::vector<absl::StatusOr<CompileOutput>>* outs) {
  std::atomic<size_t> next{begin};
  auto work = [&] {
    for (size_t i = next++; i < end; i = next++) (*outs)[i] = Compile(reqs[i]);
  };
  const size_t helpers = std::min<size_t>(std::max(jobs, 1), end - begin);
  std::vector<std::thread> threads;
  for (size_t t = 1; t < helpers; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
}

uint64_t FreshSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

// Dense matrix-unit FLOP per clock per SM by compute capability: an upper
// bound used only to flag results faster than the hardware allows.
double PeakFlopsPerClockPerSm(int cc_major) {
  if (cc_major >= 10) return 8192;
  if (cc_major == 9) return 4096;
  return 2048;
}

// Fills TFLOP/s, GB/s and the speed-of-light flag of a timed scenario.
void AddRates(const TaskSpec& task, const Scenario& scenario, const DeviceInfo& device,
              Target target, ScenarioResult* r) {
  if (!r->time || r->time->median <= 0) return;
  ExprEnv env = ScenarioEnv(scenario);
  double seconds = r->time->median * 1e-3;
  double floor_s = 0;
  if (task.flops) {
    if (auto f = task.flops->Eval(env); f.ok()) {
      r->tflops = static_cast<double>(*f) / seconds * 1e-12;
      if (target != Target::kHost && device.sm_count > 0 && device.sm_clock_mhz > 0) {
        double peak = device.sm_count * device.sm_clock_mhz * 1e6 * PeakFlopsPerClockPerSm(device.cc_major);
        floor_s = std::max(floor_s, static_cast<double>(*f) / peak);
      }
    }
  }
  if (task.bytes) {
    if (auto b = task.bytes->Eval(env); b.ok()) {
      r->gbps = static_cast<double>(*b) / seconds * 1e-9;
      if (target != Target::kHost && device.mem_bandwidth_gbps > 0)
        floor_s = std::max(floor_s, static_cast<double>(*b) / (device.mem_bandwidth_gbps * 1e9));
    }
  }
  if (floor_s > 0 && seconds < 0.9 * floor_s)
    r->flag = absl::StrCat("faster than the device's speed of light (", seconds * 1e3, " ms < ",
                           floor_s * 1e3, " ms from the FLOP and byte counts): review before trusting");
}

// Marks every scenario with one status, for verdicts decided before running.
void FailAll(const TaskSpec& task, const std::vector<Scenario>& scenarios, ScenarioStatus status,
             const std::string& error, Verdict* v) {
  for (size_t i = 0; i < scenarios.size(); ++i) {
    ScenarioResult r;
    r.index = static_cast<int>(i);
    r.name = scenarios[i].name;
    r.params = ScenarioParamsJson(task, scenarios[i]);
    r.status = status;
    r.error = error;
    v->scenarios.push_back(std::move(r));
  }
  v->error = error;
}

}  // namespace

std::vector<Scenario> ScenariosFor(const TaskSpec& task, Target target) {
  std::vector<Scenario> out;
  for (const auto& s : task.scenarios)
    if (s.RunsOn(target)) out.push_back(s);
  return out;
}

absl::StatusOr<std::vector<Scenario>> SelectScenarios(const TaskSpec& task, Target target,
                                                      const std::string& spec) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(spec, ec)) {
    auto text = ReadFile(spec);
    if (!text.ok()) return text.status();
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(spec, ": not valid JSON"));
    auto parsed = ParseScenarios(task, j, spec);
    if (!parsed.ok()) return parsed.status();
    std::vector<Scenario> out;
    for (auto& s : *parsed) {
      if (!s.RunsOn(target))
        return absl::InvalidArgumentError(
            absl::StrCat(spec, ": scenario '", s.name, "' does not run on target ", TargetName(target)));
      out.push_back(std::move(s));
    }
    if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(spec, ": no scenarios"));
    return out;
  }
  std::vector<Scenario> out;
  for (absl::string_view name : absl::StrSplit(spec, ',', absl::SkipEmpty())) {
    const Scenario* found = nullptr;
    for (const auto& s : task.scenarios)
      if (s.name == name) found = &s;
    if (found == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(
          "--scenarios: '", name, "' is neither a file nor a scenario of task '", task.name, "'"));
    if (!found->RunsOn(target))
      return absl::InvalidArgumentError(
          absl::StrCat("--scenarios: scenario '", name, "' does not run on target ", TargetName(target)));
    out.push_back(*found);
  }
  if (out.empty()) return absl::InvalidArgumentError("--scenarios: no scenario named");
  return out;
}

std::string DefaultRunnerPath() {
  if (const char* env = getenv("KSEEK_RUNNER"); env && *env) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "kseek-runner";
  return (self.parent_path() / "kseek-runner").string();
}

absl::StatusOr<Verdict> Evaluate(const TaskSpec& task, const EvalRequest& req,
                                 const ProgressCallback& progress) {
  auto report = [&](EvalProgress::Stage stage, int done, int total, const ScenarioResult* last) {
    if (progress) progress(EvalProgress{stage, done, total, last});
  };
  if (!task.Supports(req.target))
    return absl::InvalidArgumentError(absl::StrCat("task '", task.name, "' does not support target ",
                                                   TargetName(req.target)));
  std::vector<Scenario> scenarios = req.scenarios.empty() ? ScenariosFor(task, req.target) : req.scenarios;
  if (scenarios.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("task '", task.name, "' has no scenario for target ", TargetName(req.target)));
  const std::string family = TargetFamily(req.target);
  const FamilySources& sources = task.sources.at(family);

  Verdict v;
  v.task = task.name;
  v.target = TargetName(req.target);
  v.goal_speedup = task.goal_speedup;
  v.seed = req.seed ? *req.seed : FreshSeed();
  int total = static_cast<int>(scenarios.size());

  report(EvalProgress::kPolicy, 0, total, nullptr);
  auto violations = req.skip_policy ? std::vector<PolicyViolation>{}
                                    : CheckPolicy(req.kernel_source, family, task.policy);
  if (!violations.empty()) {
    std::vector<std::string> lines;
    for (const auto& viol : violations) lines.push_back(DescribeViolation(req.kernel_name, viol));
    FailAll(task, scenarios, ScenarioStatus::kPolicyViolation, absl::StrJoin(lines, "\n"), &v);
    v.Finalize();
    report(EvalProgress::kDone, total, total, nullptr);
    return v;
  }

  report(EvalProgress::kCompiling, 0, total, nullptr);
  // The candidate, then the task's own reference and baseline: with one
  // compile job the task's are compiled only for a candidate that compiles.
  CompileRequest creq;
  creq.target = req.target;
  creq.cache_dir = req.cache_dir.empty() ? DefaultCacheDir() : req.cache_dir;
  creq.include_dirs = {task.dir};
  creq.source = req.kernel_source;
  creq.source_name = req.kernel_name;
  std::vector<CompileRequest> creqs = {creq};
  std::vector<std::string> task_paths = {sources.reference};
  if (!sources.baseline.empty()) task_paths.push_back(sources.baseline);
  for (const std::string& path : task_paths) {
    auto text = ReadFile(path);
    if (!text.ok()) return text.status();
    CompileRequest r = creq;
    r.source = *text;
    r.source_name = std::filesystem::path(path).filename().string();
    creqs.push_back(std::move(r));
  }
  std::vector<absl::StatusOr<CompileOutput>> compiled(creqs.size(),
                                                      absl::UnknownError("not compiled"));
  const bool together = req.compile_jobs > 1;
  CompileRange(creqs, 0, together ? creqs.size() : 1, req.compile_jobs, &compiled);
  const auto& candidate = compiled[0];
  if (!candidate.ok()) return candidate.status();
  v.compile = candidate->info;
  if (!candidate->info.ok) {
    FailAll(task, scenarios, ScenarioStatus::kCompileError,
            absl::StrCat(req.kernel_name, " does not compile for ", v.target, " (see compile.log)"), &v);
    v.Finalize();
    report(EvalProgress::kDone, total, total, nullptr);
    return v;
  }
  if (!together) CompileRange(creqs, 1, creqs.size(), 1, &compiled);

  // The task's own kernels must compile; if not, the task is broken.
  std::vector<std::string> task_libs;
  for (size_t i = 1; i < compiled.size(); ++i) {
    if (!compiled[i].ok()) return compiled[i].status();
    if (!compiled[i]->info.ok)
      return absl::FailedPreconditionError(absl::StrCat(task_paths[i - 1], " (part of task '", task.name,
                                                        "') does not compile:\n", compiled[i]->info.log));
    task_libs.push_back(compiled[i]->library);
  }
  const std::string& reference = task_libs[0];
  const std::string baseline = task_libs.size() > 1 ? task_libs[1] : "";

  ScratchDir scratch(req.work_dir);
  if (scratch.path().empty())
    return absl::InternalError(absl::StrCat("cannot create a scratch folder under ",
                                            req.work_dir.empty() ? "the temp dir" : req.work_dir));
  TaskSpec limited = task;
  if (req.scenario_timeout_s) limited.scenario_timeout_s = *req.scenario_timeout_s;
  RunJob job;
  job.task = &limited;
  job.target = req.target;
  job.reference_lib = reference;
  job.baseline_lib = baseline;
  job.candidate_lib = candidate->library;
  job.scenarios = scenarios;
  job.seed = v.seed;
  job.timing = req.timing;
  job.runner_path = req.runner_path.empty() ? DefaultRunnerPath() : req.runner_path;
  job.work_dir = scratch.path();
  job.gpu = req.gpu;
  job.sandbox = req.sandbox;

  report(EvalProgress::kRunning, 0, total, nullptr);
  int done = 0;
  auto run = RunScenarios(job, [&](const ScenarioResult& r) {
    ++done;
    report(EvalProgress::kScenarioDone, done, total, &r);
  });
  if (!run.ok()) return run.status();
  v.device = run->device;
  v.scenarios = std::move(run->scenarios);
  for (auto& r : v.scenarios) {
    if (r.index < 0 || r.index >= total) continue;
    const Scenario& s = scenarios[r.index];
    r.name = s.name;
    r.params = ScenarioParamsJson(task, s);
    if (r.time && r.baseline && r.time->median > 0) r.speedup = r.baseline->median / r.time->median;
    AddRates(task, s, v.device, req.target, &r);
  }
  v.Finalize();
  report(EvalProgress::kDone, total, total, nullptr);
  return v;
}

}  // namespace kseek
