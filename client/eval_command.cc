// Evaluation commands, local or through a coordinator (eval_command.h).
#include "client/eval_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/file.h"
#include "client/cli.h"
#include "client/remote.h"
#include "client/remote_eval.h"
#include "harness/src/compile.h"
#include "harness/src/evaluate.h"
#include "harness/src/task.h"
#include "proto/request.h"

ABSL_FLAG(std::string, task, "",
          "task folder (holding task.json; default: this folder when it holds task.json)");
ABSL_FLAG(std::string, target, "",
          "sm_90a, sm_100a or host (default: the config file's \"target\", else the task's "
          "first target)");
ABSL_FLAG(std::string, scenarios, "", "scenario names (comma-separated) or a scenario file");
ABSL_FLAG(uint64_t, seed, 0, "fixed input seed (default: a fresh secret seed)");
ABSL_FLAG(bool, json, false, "print one JSON object instead of the table");
ABSL_FLAG(bool, timing, true, "time candidate and baseline (--notiming: correctness only)");
ABSL_FLAG(int, max_samples, 300, "most timing samples per scenario and kernel");
ABSL_FLAG(double, max_seconds, 2.0, "timing budget per scenario and kernel, seconds");
ABSL_FLAG(double, scenario_timeout, 0, "per-scenario time limit in seconds (default: the task's)");
ABSL_FLAG(int, gpu, 0, "CUDA device ordinal");
ABSL_FLAG(std::string, cache_dir, "", "compile cache folder (default: ~/.cache/kernelseek/compile)");
ABSL_FLAG(std::string, kernels, "kernels", "folder of task folders (eval-shipped)");
ABSL_FLAG(std::string, targets, "", "targets to try, comma-separated (eval-shipped; default: all)");
ABSL_FLAG(std::string, progress, "auto",
          "auto (a progress line on a terminal), lines (one stderr line per finished scenario "
          "with the elapsed time, for logs) or none");
ABSL_FLAG(bool, local, false, "evaluate on this machine even when a coordinator is configured");
ABSL_FLAG(bool, unconfined, false,
          "local only: kernel hosts without the seccomp filter and as this user, to tell a refusal "
          "of the sandbox from a kernel's own failure");
ABSL_FLAG(bool, skip_policy, false,
          "local only: skip the text policy check, to see what the run-time sandbox does with a kernel");
ABSL_FLAG(absl::Duration, wait_limit, absl::Minutes(5),
          "with a coordinator: how long to wait while no healthy worker of the target exists, then cancel "
          "and exit 2 (e.g. 90s, 10m; 0: forever)");

namespace kseek::cli {

namespace {

const char kEvalUsage[] =
    "usage: kseek eval [--task DIR] [--target sm_90a|sm_100a|host] [--scenarios FILE|NAME,...]\n"
    "                  [--seed N] [--json] [--no-timing] [--max-samples N] [--max-seconds S]\n"
    "                  [--scenario-timeout S] [--gpu N] [--cache-dir DIR] [--local] [--skip-policy]\n"
    "                  [--unconfined] [--progress auto|lines|none] [--wait-limit 5m]\n"
    "                  [--coordinator ADDR] [--token-file FILE] [--tls-ca FILE] KERNEL\n"
    "\n"
    "Checks KERNEL on every scenario of the task (fresh secret inputs), times it against\n"
    "the task's baseline on the same device, and prints the verdict.\n"
    "--task defaults to this folder when it holds task.json; --target to the \"target\" of\n"
    "the config file in effect (a session workspace's names the session's), else the\n"
    "task's first target. So in a session workspace plain `kseek eval kernel.cu` works.\n"
    "With a coordinator configured (--coordinator, $KSEEK_COORDINATOR or\n"
    ".kernelseek/client.json) the evaluation runs on one of its workers (--gpu and\n"
    "--cache-dir are then the worker's business); --local forces this machine.\n"
    "--progress lines prints one line per finished scenario with the elapsed time (for\n"
    "logs, local mode; the default draws a progress line on a terminal only).\n"
    "--skip-policy (local only) skips the text policy check, to see what the run-time\n"
    "sandbox alone does with a kernel; no guarantee rests on the policy. --unconfined\n"
    "(local only) runs the kernel hosts without the seccomp filter and as this user, to\n"
    "tell a refusal of the sandbox from a kernel's own failure.\n"
    "Through a coordinator with no healthy worker of the target, it says so on stderr at\n"
    "once and waits up to --wait-limit (0: forever), then cancels the evaluation. Ctrl-C\n"
    "cancels the evaluation it submitted (not inside a session, which owns its agent's).\n"
    "Exit status: 0 evaluated and all correct, 1 evaluated and not, 2 bad usage or input\n"
    "(including a refused request, an unreachable coordinator, or no worker within\n"
    "--wait-limit), 130 interrupted.\n";

const char kCompileUsage[] =
    "usage: kseek compile --target sm_90a|sm_100a|host [--task DIR] [--json] [--cache-dir DIR] KERNEL\n"
    "\n"
    "Compiles KERNEL with the harness's exact flags (through the compile cache) and prints\n"
    "the shared library's path and the resource report.\n";

const char kShippedUsage[] =
    "usage: kseek eval-shipped [--kernels DIR] [--targets T,...] [--json] [--max_seconds S]\n"
    "                          [--local] [--coordinator ADDR] [--token-file FILE] [--tls-ca FILE]\n"
    "\n"
    "Evaluates the shipped kernels of every task under DIR on every target this machine\n"
    "can run (host always; sm_90a / sm_100a when a matching GPU is present), or, with a\n"
    "coordinator configured, on every target that has a healthy worker there.\n";

std::string Ms(double ms) {
  if (ms >= 100) return absl::StrFormat("%.1f ms", ms);
  if (ms >= 1) return absl::StrFormat("%.3f ms", ms);
  return absl::StrFormat("%.2f us", ms * 1e3);
}

std::string Fit(std::string s, size_t width) {
  if (s.size() > width) s = s.substr(0, width - 1) + "~";
  return s;
}


TimingOptions TimingFromFlags() {
  TimingOptions t;
  t.enabled = absl::GetFlag(FLAGS_timing);
  t.max_samples = absl::GetFlag(FLAGS_max_samples);
  t.min_samples = std::min(t.min_samples, t.max_samples);
  t.max_seconds = absl::GetFlag(FLAGS_max_seconds);
  return t;
}

// Progress of a local evaluation on stderr: one line rewritten in place on
// a terminal (kBar), or one line per finished scenario with the time since
// the start (kLines, for logs of long runs).
class ProgressLine {
 public:
  enum Mode { kNone, kBar, kLines };
  explicit ProgressLine(Mode mode) : mode_(mode), start_(absl::Now()) {}
  ~ProgressLine() { Clear(); }
  void Update(const EvalProgress& p) {
    if (mode_ == kLines) {
      if (p.stage == EvalProgress::kScenarioDone) {
        std::string text = absl::StrFormat("[%d/%d %.1f s] %s %s", p.done, p.total,
                                           absl::ToDoubleSeconds(absl::Now() - start_), p.last->name,
                                           StatusName(p.last->status));
        if (p.last->speedup) absl::StrAppend(&text, absl::StrFormat(" %.2fx", *p.last->speedup));
        fprintf(stderr, "%s\n", text.c_str());
        fflush(stderr);
      }
      return;
    }
    if (mode_ != kBar) return;
    std::string text;
    switch (p.stage) {
      case EvalProgress::kPolicy: text = "checking policy"; break;
      case EvalProgress::kCompiling: text = "compiling"; break;
      case EvalProgress::kRunning: text = absl::StrCat("running 0/", p.total); break;
      case EvalProgress::kScenarioDone:
        text = absl::StrCat("running ", p.done, "/", p.total, "  last: ", p.last->name, " ",
                            StatusName(p.last->status));
        if (p.last->speedup) absl::StrAppend(&text, absl::StrFormat(" %.2fx", *p.last->speedup));
        break;
      case EvalProgress::kDone: Clear(); return;
    }
    fprintf(stderr, "\r\033[K%s", Fit(text, 100).c_str());
    fflush(stderr);
    shown_ = true;
  }
  void Clear() {
    if (shown_) fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  Mode mode_;
  absl::Time start_;
  bool shown_ = false;
};

// The --progress flag: "auto" draws the bar on a terminal unless the
// output is JSON.
absl::StatusOr<ProgressLine::Mode> ProgressMode(bool json) {
  std::string flag = absl::GetFlag(FLAGS_progress);
  if (flag == "lines") return ProgressLine::kLines;
  if (flag == "none") return ProgressLine::kNone;
  if (flag == "auto") return !json && StderrIsTerminal() ? ProgressLine::kBar : ProgressLine::kNone;
  return absl::InvalidArgumentError(absl::StrCat("--progress: '", flag, "' is not auto, lines or none"));
}

int ExitFor(const Verdict& v) { return v.all_correct ? kExitOk : kExitFailed; }

// The remote twin of a harness request: the task folder packed for the
// target, the same kernel, scenarios (by name, or the scenario file's
// text), seed and timing options.
absl::StatusOr<kernelseek::v1::EvaluationRequest> RemoteRequest(const std::string& task_dir,
                                                                const EvalRequest& req,
                                                                const std::string& scenarios_spec) {
  auto files = PackTask(task_dir, req.target);
  if (!files.ok()) return files.status();
  kernelseek::v1::EvaluationRequest r;
  *r.mutable_task() = std::move(*files);
  r.set_target(TargetName(req.target));
  r.set_kernel_source(req.kernel_source);
  r.set_kernel_name(req.kernel_name);
  std::error_code ec;
  if (!scenarios_spec.empty() && std::filesystem::is_regular_file(scenarios_spec, ec)) {
    absl::StatusOr<std::string> text = ReadFile(scenarios_spec);
    if (!text.ok()) return text.status();
    r.set_scenarios_json(*std::move(text));
  } else {
    for (const auto& s : req.scenarios) r.add_scenario_names(s.name);
  }
  if (req.seed) r.set_seed(*req.seed);
  r.mutable_timing()->set_disabled(!req.timing.enabled);
  r.mutable_timing()->set_max_samples(req.timing.max_samples);
  r.mutable_timing()->set_max_seconds(req.timing.max_seconds);
  if (req.scenario_timeout_s) r.set_scenario_timeout_s(*req.scenario_timeout_s);
  return r;
}

// `names` plus the coordinator connection flags.
std::vector<std::string> WithRemoteFlags(std::vector<std::string> names) {
  names.insert(names.end(), kRemoteFlags.begin(), kRemoteFlags.end());
  return names;
}

// Whether commands go through a coordinator: one is configured and
// --local is not given. Sets *error (for exit 2) when the settings cannot
// be read.
bool UseCoordinator(std::string* error) {
  if (absl::GetFlag(FLAGS_local)) return false;
  auto settings = LoadRemoteSettings();
  if (!settings.ok()) {
    *error = std::string(settings.status().message());
    return false;
  }
  return !settings->coordinator.empty();
}

}  // namespace

// The width of the table's error column.
constexpr size_t kErrorColumn = 120;

// The errors the table cut (past its column, or past a first line), each
// text once with the scenarios that got it: at most kMaxFullErrors texts of
// kMaxFullError characters.
static std::string ErrorsInFull(const Verdict& v) {
  constexpr size_t kMaxFullErrors = 5;
  constexpr size_t kMaxFullError = 1000;
  std::vector<std::pair<std::string, std::vector<std::string>>> cut;  // text, scenarios
  for (const auto& s : v.scenarios) {
    if (s.error.size() <= kErrorColumn && s.error.find('\n') == std::string::npos) continue;
    auto same = std::find_if(cut.begin(), cut.end(), [&](const auto& c) { return c.first == s.error; });
    if (same == cut.end()) {
      cut.push_back({s.error, {s.name}});
    } else {
      same->second.push_back(s.name);
    }
  }
  if (cut.empty()) return "";
  std::string out = "errors in full (the table cuts them):\n";
  for (size_t i = 0; i < cut.size() && i < kMaxFullErrors; ++i) {
    const auto& [text, names] = cut[i];
    std::string who = names[0];
    if (names.size() > 1) absl::StrAppend(&who, " and ", names.size() - 1, " more");
    std::string shown = text.size() > kMaxFullError ? text.substr(0, kMaxFullError) + " ..." : text;
    absl::StrAppend(&out, "  ", who, ": ", absl::StrReplaceAll(shown, {{"\n", "\n    "}}), "\n");
  }
  if (cut.size() > kMaxFullErrors) {
    absl::StrAppend(&out, "  and ", cut.size() - kMaxFullErrors, " other texts (--json has every one)\n");
  }
  return out;
}

std::string FormatVerdict(const Verdict& v) {
  std::string out = absl::StrFormat("task %s  target %s  device %s\n", v.task, v.target,
                                    v.device.name.empty() ? "-" : v.device.name);
  if (v.compile.ok) {
    std::string how = v.compile.cached ? "cached" : absl::StrFormat("%.1f s", v.compile.seconds);
    if (v.target == "host")
      absl::StrAppendFormat(&out, "compile: %s\n", how);
    else
      absl::StrAppendFormat(&out, "compile: %s, %d registers, %d B smem, %d B stack, %d B spills\n", how,
                            v.compile.registers, v.compile.smem_bytes, v.compile.stack_bytes,
                            v.compile.spill_bytes);
  }
  absl::StrAppendFormat(&out, "%-34s %-16s %-22s %-11s %-8s %-12s %s\n", "scenario", "status", "time",
                        "baseline", "speedup", "rate", "error");
  for (const auto& s : v.scenarios) {
    std::string time = s.time ? absl::StrFormat("%s ± %.2f%%", Ms(s.time->median),
                                                s.time->mean > 0 ? 100 * s.time->stderr_ms / s.time->mean : 0)
                              : "-";
    std::string base = s.baseline ? Ms(s.baseline->median) : "-";
    std::string speed = s.speedup ? absl::StrFormat("%.2fx", *s.speedup) : "-";
    // The rate that bounds the kernel: GB/s below 20 FLOP per byte.
    bool memory_bound = s.gbps && (!s.tflops || *s.tflops * 1e3 < 20 * *s.gbps);
    std::string rate = memory_bound ? absl::StrFormat("%.1f GB/s", *s.gbps)
                       : s.tflops   ? absl::StrFormat("%.1f TFLOP/s", *s.tflops)
                                    : "-";
    std::string error = s.error;
    if (size_t nl = error.find('\n'); nl != std::string::npos) error = error.substr(0, nl) + " ...";
    if (!s.flag.empty()) error = "FLAG: " + s.flag + (error.empty() ? "" : "; " + error);
    absl::StrAppendFormat(&out, "%-34s %-16s %-22s %-11s %-8s %-12s %s\n", Fit(s.name, 34),
                          StatusName(s.status), time, base, speed, rate, Fit(error, kErrorColumn));
  }
  int ok = 0;
  for (const auto& s : v.scenarios) ok += s.status == ScenarioStatus::kOk;
  absl::StrAppendFormat(&out, "%d/%d correct; geomean speedup %s; goal %.2fx %s\n", ok, v.scenarios.size(),
                        v.geomean_speedup ? absl::StrFormat("%.3fx", *v.geomean_speedup) : "n/a",
                        v.goal_speedup, v.goal_met ? "met" : "not met");
  absl::StrAppend(&out, ErrorsInFull(v));
  // Where the judge's time went, summed over the scenarios, largest first.
  std::map<std::string, double> phases;
  double judged_s = 0;
  for (const auto& s : v.scenarios) {
    for (const auto& [name, seconds] : s.phase_seconds) {
      phases[name] += seconds;
      judged_s += seconds;
    }
  }
  if (judged_s > 0) {
    std::vector<std::pair<std::string, double>> order(phases.begin(), phases.end());
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::string> parts;
    for (const auto& [name, seconds] : order) {
      parts.push_back(absl::StrFormat("%s %.1f s", name, seconds));
    }
    absl::StrAppendFormat(&out, "judge: %.1f s in scenarios (%s)\n", judged_s,
                          absl::StrJoin(parts, ", "));
  }
  if (!v.error.empty() && v.scenarios.size() > 0 && v.scenarios[0].error == v.error)
    absl::StrAppend(&out, v.error, "\n");
  if (!v.compile.ok && !v.compile.log.empty()) absl::StrAppend(&out, "compile log:\n", v.compile.log);
  return out;
}

int EvalCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args,
                  WithRemoteFlags({"task", "target", "scenarios", "seed", "json", "timing", "max_samples",
                                   "max_seconds", "scenario_timeout", "gpu", "cache_dir", "local", "progress",
                                   "skip_policy", "unconfined", "wait_limit"}),
                  kEvalUsage, &positional, &help))
    return help ? kExitOk : kExitUsage;
  auto usage_error = [](const std::string& what) {
    fprintf(stderr, "kseek eval: %s\n", what.c_str());
    return kExitUsage;
  };
  if (positional.size() != 1) return usage_error(positional.empty() ? "no KERNEL given (see --help)"
                                                                    : "exactly one KERNEL expected");
  std::string task_dir = absl::GetFlag(FLAGS_task);
  if (task_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file("task.json", ec))
      return usage_error("--task is required (this folder holds no task.json)");
    task_dir = ".";
  }
  auto task = LoadTask(task_dir);
  if (!task.ok()) return usage_error(std::string(task.status().message()));

  EvalRequest req;
  std::string target_name = absl::GetFlag(FLAGS_target);
  std::string target_source = "--target";
  if (target_name.empty()) {
    // The config in effect may name one (a session workspace's does).
    auto settings = LoadRemoteSettings();
    if (settings.ok() && !settings->target.empty()) {
      target_name = settings->target;
      target_source = absl::StrCat("\"target\" of ", settings->config_file);
    }
  }
  if (target_name.empty()) {
    req.target = task->targets.front();
  } else {
    auto t = ParseTarget(target_name);
    if (!t.ok()) return usage_error(absl::StrCat(target_source, ": ", t.status().message()));
    req.target = *t;
  }
  if (!task->Supports(req.target))
    return usage_error(absl::StrCat("task '", task->name, "' does not support target ", TargetName(req.target)));
  if (!absl::GetFlag(FLAGS_scenarios).empty()) {
    auto s = SelectScenarios(*task, req.target, absl::GetFlag(FLAGS_scenarios));
    if (!s.ok()) return usage_error(std::string(s.status().message()));
    req.scenarios = std::move(*s);
  }
  const std::string& kernel = positional[0];
  absl::StatusOr<std::string> source = ReadFile(kernel);
  if (!source.ok()) return usage_error(std::string(source.status().message()));
  req.kernel_source = *std::move(source);
  req.kernel_name = std::filesystem::path(kernel).filename().string();
  if (absl::GetFlag(FLAGS_seed) != 0) req.seed = absl::GetFlag(FLAGS_seed);
  req.timing = TimingFromFlags();
  if (req.timing.max_samples < 1) return usage_error("--max_samples must be at least 1");
  if (absl::GetFlag(FLAGS_scenario_timeout) > 0) req.scenario_timeout_s = absl::GetFlag(FLAGS_scenario_timeout);
  req.gpu = absl::GetFlag(FLAGS_gpu);
  req.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  req.skip_policy = absl::GetFlag(FLAGS_skip_policy);
  if (absl::GetFlag(FLAGS_unconfined)) {
    req.sandbox.seccomp_kernels = false;
    req.sandbox.kernel_host_user.clear();
  }

  bool json = absl::GetFlag(FLAGS_json);
  auto mode = ProgressMode(json);
  if (!mode.ok()) return usage_error(std::string(mode.status().message()));
  std::string settings_error;
  bool remote_mode = UseCoordinator(&settings_error);
  if (!settings_error.empty()) return usage_error(settings_error);
  if (remote_mode && (req.skip_policy || absl::GetFlag(FLAGS_unconfined))) {
    return usage_error("--skip-policy and --unconfined work only with --local: a coordinator "
                       "always checks the policy and confines kernels");
  }
  if (remote_mode) {
    if (req.gpu != 0 || !req.cache_dir.empty())
      return usage_error("--gpu and --cache-dir apply to local mode only (add --local)");
    if (*mode == ProgressLine::kLines)
      return usage_error("--progress lines applies to local mode only (add --local)");
    auto request = RemoteRequest(task_dir, req, absl::GetFlag(FLAGS_scenarios));
    if (!request.ok()) return usage_error(std::string(request.status().message()));
    std::unique_ptr<Remote> remote = ConnectOrReport("eval");
    if (remote == nullptr) return kExitUsage;
    RemoteOutcome outcome;
    if (absl::GetFlag(FLAGS_wait_limit) < absl::ZeroDuration()) return usage_error("--wait-limit must not be negative");
    if (int rc = SubmitAndWait(*remote, "eval", *request, *mode == ProgressLine::kBar, &outcome,
                               absl::GetFlag(FLAGS_wait_limit));
        rc != kExitOk)
      return rc;
    if (!outcome.verdict)
      return usage_error(absl::StrCat("evaluation ", outcome.evaluation_id, " failed: ", outcome.failed));
    if (json) {
      nlohmann::json j = ToJson(*outcome.verdict);
      j["evaluation_id"] = outcome.evaluation_id;
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << FormatVerdict(*outcome.verdict);
    }
    return ExitFor(*outcome.verdict);
  }
  ProgressLine line(*mode);
  auto verdict = Evaluate(*task, req, [&](const EvalProgress& p) { line.Update(p); });
  line.Clear();
  if (!verdict.ok()) return usage_error(std::string(verdict.status().message()));
  if (json)
    std::cout << ToJson(*verdict).dump(2) << "\n";
  else
    std::cout << FormatVerdict(*verdict);
  return ExitFor(*verdict);
}

int CompileCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args, {"target", "task", "json", "cache_dir"}, kCompileUsage, &positional, &help))
    return help ? kExitOk : kExitUsage;
  if (positional.size() != 1) {
    fprintf(stderr, "kseek compile: exactly one KERNEL expected\n");
    return kExitUsage;
  }
  auto target = ParseTarget(absl::GetFlag(FLAGS_target));
  if (!target.ok()) {
    fprintf(stderr, "kseek compile: --target: %s\n", std::string(target.status().message()).c_str());
    return kExitUsage;
  }
  CompileRequest req;
  req.target = *target;
  absl::StatusOr<std::string> source = ReadFile(positional[0]);
  if (!source.ok()) {
    fprintf(stderr, "kseek compile: %s\n", std::string(source.status().message()).c_str());
    return kExitUsage;
  }
  req.source = *std::move(source);
  req.source_name = std::filesystem::path(positional[0]).filename().string();
  req.cache_dir = absl::GetFlag(FLAGS_cache_dir).empty() ? DefaultCacheDir() : absl::GetFlag(FLAGS_cache_dir);
  if (!absl::GetFlag(FLAGS_task).empty()) req.include_dirs.push_back(absl::GetFlag(FLAGS_task));
  auto out = Compile(req);
  if (!out.ok()) {
    fprintf(stderr, "kseek compile: %s\n", std::string(out.status().message()).c_str());
    return kExitUsage;
  }
  const CompileInfo& i = out->info;
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json j = {{"ok", i.ok},           {"library", out->library},  {"cached", i.cached},
                        {"registers", i.registers}, {"smem_bytes", i.smem_bytes}, {"spill_bytes", i.spill_bytes},
                        {"stack_bytes", i.stack_bytes}, {"command", i.command}, {"log", i.log}};
    std::cout << j.dump(2) << "\n";
  } else if (i.ok) {
    std::cout << out->library << "\n"
              << absl::StrFormat("%d registers, %d B smem, %d B stack, %d B spills%s\n", i.registers, i.smem_bytes,
                                 i.stack_bytes, i.spill_bytes, i.cached ? " (cached)" : "");
  } else {
    std::cout << i.log;
  }
  return i.ok ? kExitOk : kExitFailed;
}

int EvalShippedCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args,
                  WithRemoteFlags({"kernels", "targets", "json", "max_seconds", "max_samples", "cache_dir", "gpu",
                                   "local"}),
                  kShippedUsage, &positional, &help))
    return help ? kExitOk : kExitUsage;
  std::vector<Target> wanted;
  if (absl::GetFlag(FLAGS_targets).empty()) {
    wanted = {Target::kHost, Target::kSm90a, Target::kSm100a};
  } else {
    for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_targets), ',', absl::SkipEmpty())) {
      auto t = ParseTarget(std::string(name));
      if (!t.ok()) {
        fprintf(stderr, "kseek eval-shipped: --targets: %s\n", std::string(t.status().message()).c_str());
        return kExitUsage;
      }
      wanted.push_back(*t);
    }
  }
  std::vector<std::string> task_dirs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(absl::GetFlag(FLAGS_kernels), ec))
    if (std::filesystem::exists(entry.path() / "task.json")) task_dirs.push_back(entry.path().string());
  if (ec || task_dirs.empty()) {
    fprintf(stderr, "kseek eval-shipped: no task folders under %s\n", absl::GetFlag(FLAGS_kernels).c_str());
    return kExitUsage;
  }
  std::sort(task_dirs.begin(), task_dirs.end());
  bool json = absl::GetFlag(FLAGS_json);

  // Through a coordinator, the targets it can run are those with a healthy
  // worker; the others are skipped as a missing GPU is in local mode.
  std::string settings_error;
  bool remote_mode = UseCoordinator(&settings_error);
  if (!settings_error.empty()) {
    fprintf(stderr, "kseek eval-shipped: %s\n", settings_error.c_str());
    return kExitUsage;
  }
  std::unique_ptr<Remote> remote;
  std::set<std::string> served_targets;
  if (remote_mode) {
    remote = ConnectOrReport("eval-shipped");
    if (remote == nullptr) return kExitUsage;
    grpc::ClientContext context;
    remote->Prepare(&context);
    kernelseek::v1::ListWorkersResponse workers;
    grpc::Status status = remote->coordinator().ListWorkers(&context, {}, &workers);
    if (!status.ok()) return ReportRpcError("eval-shipped", *remote, status);
    for (const auto& w : workers.workers())
      if (w.healthy() && !w.info().draining()) served_targets.insert(w.info().target());
  }

  nlohmann::json all = nlohmann::json::array();
  bool all_ok = true;
  for (const auto& dir : task_dirs) {
    auto task = LoadTask(dir);
    if (!task.ok()) {
      fprintf(stderr, "kseek eval-shipped: %s\n", std::string(task.status().message()).c_str());
      return kExitUsage;
    }
    for (Target target : wanted) {
      if (!task->Supports(target)) continue;
      auto it = task->sources.find(TargetFamily(target));
      if (it == task->sources.end()) continue;
      for (const auto& kernel : it->second.kernels) {
        if (!it->second.KernelRunsOn(kernel, target)) continue;
        EvalRequest req;
        req.target = target;
        req.kernel_name = std::filesystem::path(kernel).filename().string();
        absl::StatusOr<std::string> source = ReadFile(kernel);
        if (!source.ok()) {
          fprintf(stderr, "kseek eval-shipped: %s\n", std::string(source.status().message()).c_str());
          all_ok = false;
          continue;
        }
        req.kernel_source = *std::move(source);
        req.timing = TimingFromFlags();
        req.gpu = absl::GetFlag(FLAGS_gpu);
        req.cache_dir = absl::GetFlag(FLAGS_cache_dir);
        if (!json)
          std::cout << "== " << task->name << " / " << TargetName(target) << " / " << req.kernel_name << "\n"
                    << std::flush;
        absl::StatusOr<Verdict> verdict;
        std::string evaluation_id;
        if (remote_mode) {
          if (req.gpu != 0 || !req.cache_dir.empty()) {
            fprintf(stderr, "kseek eval-shipped: --gpu and --cache-dir apply to local mode only (add --local)\n");
            return kExitUsage;
          }
          if (served_targets.count(TargetName(target)) == 0) {
            verdict = absl::UnavailableError(
                absl::StrCat("no healthy worker of target ", TargetName(target), " at ", remote->address()));
          } else {
            auto request = RemoteRequest(dir, req, "");
            if (!request.ok()) {
              fprintf(stderr, "kseek eval-shipped: %s\n", std::string(request.status().message()).c_str());
              return kExitUsage;
            }
            RemoteOutcome outcome;
            if (int rc = SubmitAndWait(*remote, "eval-shipped", *request, !json && StderrIsTerminal(), &outcome);
                rc != kExitOk)
              return rc;
            evaluation_id = outcome.evaluation_id;
            if (!outcome.verdict) {
              // Could not be carried out: unlike a missing worker, a failure.
              all_ok = false;
              std::string why = absl::StrCat("evaluation ", evaluation_id, " failed: ", outcome.failed);
              if (!json) std::cout << "failed: " << why << "\n\n";
              all.push_back({{"task", task->name}, {"target", TargetName(target)}, {"kernel", req.kernel_name},
                             {"evaluation_id", evaluation_id}, {"failed", outcome.failed}});
              continue;
            }
            verdict = std::move(*outcome.verdict);
          }
        } else {
          ProgressLine line(!json && StderrIsTerminal() ? ProgressLine::kBar : ProgressLine::kNone);
          verdict = Evaluate(*task, req, [&](const EvalProgress& p) { line.Update(p); });
        }
        if (!verdict.ok()) {
          // A GPU target this machine cannot run is skipped, visibly.
          std::string why(verdict.status().message());
          if (!json) std::cout << "skipped: " << why << "\n\n";
          all.push_back({{"task", task->name}, {"target", TargetName(target)}, {"kernel", req.kernel_name},
                         {"skipped", why}});
          continue;
        }
        all_ok &= verdict->all_correct;
        if (json) {
          nlohmann::json j = ToJson(*verdict);
          j["kernel"] = req.kernel_name;
          if (!evaluation_id.empty()) j["evaluation_id"] = evaluation_id;
          all.push_back(j);
        } else {
          std::cout << FormatVerdict(*verdict) << "\n";
        }
      }
    }
  }
  if (json) std::cout << all.dump(2) << "\n";
  return all_ok ? kExitOk : kExitFailed;
}

}  // namespace kseek::cli
