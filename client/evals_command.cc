// `kseek evals`, `kseek show EVAL`, `kseek workers` and `kseek cancel
// EVAL`: what a coordinator holds, as tables or JSON, and ending an
// evaluation (service_commands.h).
#include <cstdio>
#include <iostream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli.h"
#include "client/eval_command.h"
#include "client/remote.h"
#include "client/service_commands.h"
#include "nlohmann/json.hpp"
#include "proto/convert.h"

ABSL_DECLARE_FLAG(bool, json);
ABSL_FLAG(int, limit, 50, "most evaluations to list (evals)");
ABSL_FLAG(std::string, state, "", "only evaluations in this state: queued, running, done or failed (evals)");

namespace kseek::cli {

namespace v1 = ::kernelseek::v1;

namespace {

const char kEvalsUsage[] =
    "usage: kseek evals [--json] [--limit N] [--state queued|running|done|failed]\n"
    "                   [--coordinator ADDR] [--token-file FILE] [--tls-ca FILE]\n"
    "\n"
    "Lists your evaluations at the coordinator (all of them for an admin), newest first.\n";

const char kShowUsage[] =
    "usage: kseek show [--json] [--coordinator ADDR] [--token-file FILE] [--tls-ca FILE] EVAL\n"
    "\n"
    "Shows one evaluation: its state, and the verdict table once it is done.\n"
    "Exit status: 0 shown (and, when done, all correct), 1 done and not all correct or\n"
    "failed, 2 bad usage, unknown evaluation or an unreachable coordinator.\n";

const char kCancelUsage[] =
    "usage: kseek cancel [--json] [--coordinator ADDR] [--token-file FILE] [--tls-ca FILE] EVAL\n"
    "\n"
    "Cancels a queued or running evaluation: it ends as failed (\"cancelled by USER\"), a\n"
    "queued one at once, a running one once its worker has stopped the attempt (a verdict that\n"
    "arrives first is kept). Exit status: 0 cancelled, 2 bad usage, unknown or finished\n"
    "evaluation, or an unreachable coordinator.\n";

const char kTasksUsage[] =
    "usage: kseek tasks [--json] [--coordinator ADDR] [--token-file FILE] [--tls-ca FILE]\n"
    "\n"
    "Lists the tasks the coordinator serves by name (an EvaluationRequest's task_name):\n"
    "their targets and scenario counts, and the default goal.\n";

const char kWorkersUsage[] =
    "usage: kseek workers [--json] [--coordinator ADDR] [--token-file FILE] [--tls-ca FILE]\n"
    "\n"
    "Lists the workers registered with the coordinator: target, device, health, the evaluation in hand.\n";

std::vector<std::string> Allowed(std::vector<std::string> names) {
  names.insert(names.end(), kRemoteFlags.begin(), kRemoteFlags.end());
  return names;
}

nlohmann::json EvaluationJson(const v1::Evaluation& e) {
  nlohmann::json j = {{"evaluation_id", e.evaluation_id()},
                      {"user", e.user()},
                      {"target", e.target()},
                      {"task", e.task()},
                      {"kernel_name", e.kernel_name()},
                      {"state", e.state()},
                      {"attempts", e.attempts()},
                      {"created_ms", e.created_ms()},
                      {"started_ms", e.started_ms()},
                      {"finished_ms", e.finished_ms()},
                      {"scenarios_done", e.scenarios_done()},
                      {"scenarios_total", e.scenarios_total()}};
  if (e.state() == "queued") j["queue_position"] = e.queue_position();
  if (!e.worker_id().empty()) j["worker_id"] = e.worker_id();
  if (!e.error().empty()) j["error"] = e.error();
  return j;
}

// The list carries the verdict without its scenarios: a summary.
nlohmann::json SummaryJson(const v1::Evaluation& e) {
  nlohmann::json j = EvaluationJson(e);
  if (e.has_verdict()) {
    j["all_correct"] = e.verdict().all_correct();
    j["goal_met"] = e.verdict().goal_met();
    if (e.verdict().has_geomean_speedup()) j["geomean_speedup"] = e.verdict().geomean_speedup();
  }
  return j;
}

nlohmann::json FullJson(const v1::Evaluation& e) {
  nlohmann::json j = EvaluationJson(e);
  if (e.has_verdict()) j["verdict"] = ToJson(FromProto(e.verdict()));
  return j;
}

// "position 2", "3/8 scenarios", "failed: ...": the state's detail.
std::string Progress(const v1::Evaluation& e) {
  if (e.state() == "queued") return absl::StrCat("position ", e.queue_position());
  if (e.state() == "running") return absl::StrCat(e.scenarios_done(), "/", e.scenarios_total(), " scenarios");
  if (e.state() == "done" && e.has_verdict()) {
    std::string out = e.verdict().all_correct() ? "all correct" : "NOT all correct";
    if (e.verdict().has_geomean_speedup())
      absl::StrAppend(&out, absl::StrFormat(", geomean %.3fx", e.verdict().geomean_speedup()));
    return out;
  }
  if (e.state() == "failed") return e.error();
  return "";
}

std::string Elide(std::string s, size_t width) {
  if (s.size() > width) s = s.substr(0, width - 1) + "~";
  return s;
}

}  // namespace

int EvalsCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args, Allowed({"json", "limit", "state"}), kEvalsUsage, &positional, &help))
    return help ? kExitOk : kExitUsage;
  if (!positional.empty()) {
    fprintf(stderr, "kseek evals: unexpected argument '%s'\n", positional[0].c_str());
    return kExitUsage;
  }
  if (absl::GetFlag(FLAGS_limit) < 1) {
    fprintf(stderr, "kseek evals: --limit must be at least 1\n");
    return kExitUsage;
  }
  std::unique_ptr<Remote> remote = ConnectOrReport("evals");
  if (remote == nullptr) return kExitUsage;
  v1::ListEvaluationsRequest request;
  request.set_limit(absl::GetFlag(FLAGS_limit));
  request.set_state(absl::GetFlag(FLAGS_state));
  v1::ListEvaluationsResponse response;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().ListEvaluations(&context, request, &response);
  if (!status.ok()) return ReportRpcError("evals", *remote, status);
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& e : response.evaluations()) all.push_back(SummaryJson(e));
    std::cout << all.dump(2) << "\n";
    return kExitOk;
  }
  if (response.evaluations().empty()) {
    std::cout << "no evaluations\n";
    return kExitOk;
  }
  std::cout << absl::StrFormat("%-16s %-8s %-12s %-8s %-22s %-20s %-19s %s\n", "evaluation", "state", "user",
                               "target", "task", "kernel", "created", "progress");
  for (const auto& e : response.evaluations())
    std::cout << absl::StrFormat("%-16s %-8s %-12s %-8s %-22s %-20s %-19s %s\n", e.evaluation_id(), e.state(),
                                 Elide(e.user(), 12), e.target(), Elide(e.task(), 22), Elide(e.kernel_name(), 20),
                                 FormatTimeMs(e.created_ms()), Elide(Progress(e), 60));
  return kExitOk;
}

int ShowCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args, Allowed({"json"}), kShowUsage, &positional, &help)) return help ? kExitOk : kExitUsage;
  if (positional.size() != 1) {
    fprintf(stderr, "kseek show: exactly one EVAL (an evaluation id) expected\n");
    return kExitUsage;
  }
  std::unique_ptr<Remote> remote = ConnectOrReport("show");
  if (remote == nullptr) return kExitUsage;
  v1::EvaluationRef ref;
  ref.set_evaluation_id(positional[0]);
  v1::Evaluation e;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().GetEvaluation(&context, ref, &e);
  if (!status.ok()) return ReportRpcError("show", *remote, status);
  int rc = kExitOk;
  if (e.state() == "failed") rc = kExitFailed;
  if (e.state() == "done" && e.has_verdict() && !e.verdict().all_correct()) rc = kExitFailed;
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << FullJson(e).dump(2) << "\n";
    return rc;
  }
  std::cout << absl::StrFormat("evaluation %s  state %s  user %s\n", e.evaluation_id(), e.state(), e.user())
            << absl::StrFormat("task %s  target %s  kernel %s\n", e.task(), e.target(), e.kernel_name())
            << absl::StrFormat("created %s  started %s  finished %s  attempts %d%s\n", FormatTimeMs(e.created_ms()),
                               FormatTimeMs(e.started_ms()), FormatTimeMs(e.finished_ms()), e.attempts(),
                               e.worker_id().empty() ? "" : absl::StrCat("  worker ", e.worker_id()));
  if (e.state() == "queued")
    std::cout << absl::StrFormat("queued: position %d for %s\n", e.queue_position(), e.target());
  else if (e.state() == "running")
    std::cout << absl::StrFormat("running: %d/%d scenarios done\n", e.scenarios_done(), e.scenarios_total());
  else if (e.state() == "failed")
    std::cout << "failed: " << e.error() << "\n";
  if (e.has_verdict()) std::cout << "\n" << FormatVerdict(FromProto(e.verdict()));
  return rc;
}

int CancelCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args, Allowed({"json"}), kCancelUsage, &positional, &help)) return help ? kExitOk : kExitUsage;
  if (positional.size() != 1) {
    fprintf(stderr, "kseek cancel: exactly one EVAL (an evaluation id) expected\n");
    return kExitUsage;
  }
  std::unique_ptr<Remote> remote = ConnectOrReport("cancel");
  if (remote == nullptr) return kExitUsage;
  v1::EvaluationRef ref;
  ref.set_evaluation_id(positional[0]);
  v1::CancelEvaluationResponse response;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().CancelEvaluation(&context, ref, &response);
  if (!status.ok()) return ReportRpcError("cancel", *remote, status);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << nlohmann::json{{"evaluation_id", positional[0]}, {"was_running", response.was_running()}}.dump(2)
              << "\n";
  } else if (response.was_running()) {
    std::cout << "cancelling " << positional[0] << ": its worker is stopping the attempt\n";
  } else {
    std::cout << "cancelled " << positional[0] << "\n";
  }
  return kExitOk;
}

int TasksCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args, Allowed({"json"}), kTasksUsage, &positional, &help)) return help ? kExitOk : kExitUsage;
  if (!positional.empty()) {
    fprintf(stderr, "kseek tasks: takes no arguments\n");
    return kExitUsage;
  }
  std::unique_ptr<Remote> remote = ConnectOrReport("tasks");
  if (remote == nullptr) return kExitUsage;
  v1::ListTasksResponse response;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().ListTasks(&context, {}, &response);
  if (!status.ok()) return ReportRpcError("tasks", *remote, status);
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json all = nlohmann::json::array();
    for (const v1::TaskSummary& t : response.tasks()) {
      nlohmann::json scenarios = nlohmann::json::object();
      for (const v1::TaskScenarios& s : t.scenarios()) scenarios[s.target()] = s.scenarios();
      all.push_back({{"name", t.name()},
                     {"description", t.description()},
                     {"targets", std::vector<std::string>(t.targets().begin(), t.targets().end())},
                     {"scenarios", scenarios},
                     {"goal_speedup", t.goal_speedup()}});
    }
    std::cout << all.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << absl::StrFormat("%-24s %-6s %s\n", "task", "goal", "scenarios per target");
  for (const v1::TaskSummary& t : response.tasks()) {
    std::string per_target;
    for (const v1::TaskScenarios& s : t.scenarios())
      absl::StrAppend(&per_target, per_target.empty() ? "" : ", ", s.target(), " ", s.scenarios());
    std::cout << absl::StrFormat("%-24s %-6s %s\n", t.name(), absl::StrFormat("%.2fx", t.goal_speedup()), per_target);
  }
  return kExitOk;
}

int WorkersCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args, Allowed({"json"}), kWorkersUsage, &positional, &help)) return help ? kExitOk : kExitUsage;
  if (!positional.empty()) {
    fprintf(stderr, "kseek workers: unexpected argument '%s'\n", positional[0].c_str());
    return kExitUsage;
  }
  std::unique_ptr<Remote> remote = ConnectOrReport("workers");
  if (remote == nullptr) return kExitUsage;
  v1::ListWorkersResponse response;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().ListWorkers(&context, {}, &response);
  if (!status.ok()) return ReportRpcError("workers", *remote, status);
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& w : response.workers()) {
      const v1::WorkerInfo& i = w.info();
      all.push_back({{"worker_id", i.worker_id()},
                     {"target", i.target()},
                     {"device_name", i.device_name()},
                     {"gpu", i.gpu()},
                     {"confinement", i.confinement()},
                     {"sm_count", i.sm_count()},
                     {"memory_bytes", i.memory_bytes()},
                     {"compiler_version", i.compiler_version()},
                     {"address", i.address()},
                     {"draining", i.draining()},
                     {"queue_length", i.queue_length()},
                     {"healthy", w.healthy()},
                     {"current_evaluation", w.current_evaluation()},
                     {"last_heartbeat_ms", w.last_heartbeat_ms()},
                     {"registered_ms", w.registered_ms()}});
    }
    std::cout << all.dump(2) << "\n";
    return kExitOk;
  }
  if (response.workers().empty()) {
    std::cout << "no workers registered\n";
    return kExitOk;
  }
  std::cout << absl::StrFormat("%-16s %-8s %-28s %-22s %-10s %-16s %-20s %s\n", "worker", "target", "device",
                               "address", "health", "evaluation", "last heartbeat", "kernels");
  for (const auto& w : response.workers()) {
    const v1::WorkerInfo& i = w.info();
    std::string health = !w.healthy() ? "lost" : i.draining() ? "draining" : "healthy";
    std::string device = i.device_name().empty() ? "-" : i.device_name();
    if (i.target() != "host") device = absl::StrCat(device, " (gpu ", i.gpu(), ")");
    std::cout << absl::StrFormat("%-16s %-8s %-28s %-22s %-10s %-16s %-20s %s\n", Elide(i.worker_id(), 16),
                                 i.target(), Elide(device, 28), i.address(), health,
                                 w.current_evaluation().empty() ? "idle" : w.current_evaluation(),
                                 FormatTimeMs(w.last_heartbeat_ms()),
                                 i.confinement().empty() ? "-" : i.confinement());
  }
  return kExitOk;
}

}  // namespace kseek::cli
