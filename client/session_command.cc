// `kseek session start|ls|show|watch|ask|cancel|best|trace|report`: sessions
// at the coordinator (service_commands.h).
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/file.h"
#include "client/cli.h"
#include "client/remote.h"
#include "client/report.h"
#include "client/service_commands.h"
#include "harness/src/task.h"
#include "nlohmann/json.hpp"
#include "proto/request.h"

ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(std::string, task);
ABSL_DECLARE_FLAG(std::string, target);
ABSL_DECLARE_FLAG(int, limit);
ABSL_DECLARE_FLAG(std::string, state);
ABSL_DECLARE_FLAG(int, max_samples);
ABSL_DECLARE_FLAG(double, max_seconds);
ABSL_FLAG(std::string, agent, "",
          "the session's agent, by its name in the coordinator's allowlist: claude, codex, or a "
          "command agent its operator configured (session start)");
ABSL_FLAG(std::string, model, "", "the agent's model (session start; default: the CLI's)");
ABSL_FLAG(double, goal, 0, "the goal speedup (session start; default: the task's)");
ABSL_FLAG(int, max_turns, 0, "most agent turns (session start; default 20)");
ABSL_FLAG(int, max_evals, 0, "most evaluations, the agent's and the verifications (session start; default 100)");
ABSL_FLAG(double, max_minutes, 0, "most wall-time minutes (session start; default 240)");
ABSL_FLAG(double, max_usd, 0, "most model cost in USD (session start; default: no limit)");
ABSL_FLAG(bool, self_ask, false,
          "self-ask mode: the agent gets the bank in its brief and records the questions it "
          "applied; no bank question is asked (session start)");
ABSL_FLAG(int64_t, from, 0, "the first event index to show (session watch)");
ABSL_FLAG(bool, now, false, "interrupt the agent's turn at once (session ask)");
ABSL_FLAG(std::string, out, "", "the file to write (session best, session report; -o too)");

namespace kseek::cli {

namespace v1 = ::kernelseek::v1;

namespace {

// The agent as the allowlist names it (sessions from before names: the kind).
std::string AgentName(const v1::AgentSpec& agent) {
  return agent.name().empty() ? agent.kind() : agent.name();
}

const char kSessionUsage[] =
    "usage: kseek session COMMAND [flags] [args]\n"
    "\n"
    "  start --task DIR [--target T] --agent NAME [--model M] [--goal X] [--max-turns N]\n"
    "        [--max-evals N] [--max-minutes N] [--max-usd X] [--max-samples N]\n"
    "        [--max-seconds S] [--self-ask] [--json] KERNEL\n"
    "                     start a session on KERNEL; prints its id (--max-samples and\n"
    "                     --max-seconds time the coordinator's verifications)\n"
    "  ls [--json] [--limit N] [--state S]   your sessions, newest first\n"
    "  show [--json] ID                      one session's state, budget and best speedup\n"
    "  watch [--from N] [--json] ID          a line per event (JSONL with --json) and the best\n"
    "                                        speedup so far, until the session ends: the\n"
    "                                        agent's output line by line, each scenario of\n"
    "                                        an evaluation as it finishes\n"
    "  ask [--now] ID TEXT                   a message for the agent at the next decision\n"
    "                                        point (--now: interrupt its turn)\n"
    "  cancel ID                             end the session and stop its agent\n"
    "  best [-o FILE] ID                     the best correct kernel (stdout or FILE)\n"
    "  trace [--json] ID                     the whole trace as JSONL (--json: one JSON array)\n"
    "  report [-o FILE] ID                   a self-contained HTML report (default ID.html)\n"
    "\n"
    "Exit status: 0 done (watch: the session succeeded), 1 watch: it ended otherwise,\n"
    "2 bad usage, an unknown session or an unreachable coordinator.\n";

std::vector<std::string> Allowed(std::vector<std::string> names) {
  names.insert(names.end(), kRemoteFlags.begin(), kRemoteFlags.end());
  return names;
}

int Usage(const std::string& sub, const std::string& what) {
  fprintf(stderr, "kseek session %s: %s\n", sub.c_str(), what.c_str());
  return kExitUsage;
}

nlohmann::json SessionJson(const v1::Session& s) {
  nlohmann::json j = {{"session_id", s.session_id()},
                      {"user", s.user()},
                      {"task", s.task()},
                      {"target", s.target()},
                      {"agent", AgentName(s.agent())},
                      {"model", s.agent().model()},
                      {"goal_speedup", s.goal_speedup()},
                      {"state", s.state()},
                      {"reason", s.reason()},
                      {"created_ms", s.created_ms()},
                      {"updated_ms", s.updated_ms()},
                      {"turns", s.turns()},
                      {"evaluations", s.evaluations()},
                      {"cost_usd", s.cost_usd()},
                      {"best_speedup", s.has_best_speedup() ? nlohmann::json(s.best_speedup())
                                                            : nlohmann::json(nullptr)},
                      {"best_evaluation_id", s.best_evaluation_id()},
                      {"events", s.events()},
                      {"workspace", s.workspace()},
                      {"self_ask", s.self_ask()},
                      {"budget",
                       {{"max_turns", s.budget().max_turns()},
                        {"max_evaluations", s.budget().max_evaluations()},
                        {"max_minutes", s.budget().max_minutes()},
                        {"max_usd", s.budget().max_usd()}}}};
  return j;
}

std::string Best(const v1::Session& s) {
  return s.has_best_speedup() ? absl::StrFormat("%.3fx", s.best_speedup()) : "-";
}

std::string FirstLine(const std::string& text, size_t width = 100) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > width) line = line.substr(0, width - 1) + "~";
  return line;
}

std::string Number(const nlohmann::json& v) {
  return v.is_number() ? absl::StrFormat("%.3fx", v.get<double>()) : "n/a";
}

// One line for a trace event, without the index and time.
std::string Describe(nlohmann::json e) {
  std::string kind = e.value("kind", "");
  if (kind == "state") return absl::StrCat("state ", e.value("state", ""), ": ", e.value("reason", ""));
  if (kind == "turn_start") {
    return absl::StrCat("turn ", e.value("turn", 0), e.value("resumed", false) ? " (resumed)" : "",
                        ": ", FirstLine(e.value("prompt", ""), 90));
  }
  if (kind == "turn_end") {
    return absl::StrCat("turn ", e.value("turn", 0), " ended", e.value("is_error", false) ? " with an error" : "",
                        ": ", FirstLine(e.value("result", ""), 90));
  }
  if (kind == "agent_message") return absl::StrCat("agent: ", FirstLine(e.value("text", "")));
  if (kind == "tool_call") return absl::StrCat("tool ", e.value("name", ""), ": ", FirstLine(e.value("input", ""), 90));
  if (kind == "tool_result") {
    return absl::StrCat("tool result ", e.value("ok", true) ? "ok" : "failed", ": ",
                        FirstLine(e.value("summary", ""), 80));
  }
  if (kind == "agent_error") return absl::StrCat("agent error: ", FirstLine(e.value("message", "")));
  if (kind == "cost") {
    return absl::StrFormat("cost %.4f USD (%d input, %d output tokens)", e.value("usd", 0.0),
                           e.value("input_tokens", int64_t{0}), e.value("output_tokens", int64_t{0}));
  }
  if (kind == "agent_session") return absl::StrCat("agent session ", e.value("agent_session_id", ""));
  if (kind == "evaluation") {
    std::string what;
    if (!e.value("compiled", false)) {
      what = "did not compile";
    } else {
      what = absl::StrFormat("%d/%d correct, geomean %s", e.value("correct", 0), e.value("total", 0),
                             Number(e["geomean_speedup"]));
    }
    return absl::StrCat("evaluation ", e.value("evaluation_id", ""), " by ", e.value("by", ""), ": ", what);
  }
  if (kind == "evaluation_started") {
    int attempt = e.value("attempt", 1);
    return absl::StrCat("evaluation ", e.value("evaluation_id", ""), " by ", e.value("by", ""),
                        " started on ", e.value("worker_id", ""),
                        attempt > 1 ? absl::StrCat(" (attempt ", attempt, ")") : "", ": ",
                        e.value("scenarios", 0), " scenarios");
  }
  if (kind == "scenario") {
    std::string what = absl::StrCat("  scenario ", e.value("done", 0), "/", e.value("total", 0), " of ",
                                    e.value("evaluation_id", ""), ": ", e.value("name", ""), " ",
                                    e.value("status", ""));
    if (e["speedup"].is_number()) absl::StrAppend(&what, " ", Number(e["speedup"]));
    if (!e.value("error", "").empty()) absl::StrAppend(&what, ": ", FirstLine(e.value("error", ""), 60));
    return what;
  }
  if (kind == "verification") {
    return absl::StrCat("verification: goal ", e.value("goal_met", false) ? "MET" : "not met", " (",
                        e.value("reason", ""), ")");
  }
  if (kind == "decision_point") {
    std::vector<std::string> points;
    for (const auto& p : e["points"]) points.push_back(p.is_string() ? p.get<std::string>() : "");
    return absl::StrCat("decision point: ", absl::StrJoin(points, ", "));
  }
  if (kind == "question") {
    std::string from = e.value("source", "");
    if (!e.value("category", "").empty()) absl::StrAppend(&from, " ", e.value("category", ""));
    return absl::StrCat("question [", from, "]: ", e.value("text", ""));
  }
  if (kind == "human_message") {
    return absl::StrCat("human message", e.value("now", false) ? " (now)" : "", ": ", FirstLine(e.value("text", "")));
  }
  if (kind == "best") {
    return absl::StrCat("new best ", Number(e["geomean_speedup"]), " (", e.value("evaluation_id", ""), ")");
  }
  return kind;
}

std::string Clock(int64_t ms) {
  time_t secs = static_cast<time_t>(ms / 1000);
  struct tm tm;
  localtime_r(&secs, &tm);
  char buf[16];
  strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

absl::StatusOr<v1::Session> GetSession(Remote& remote, const std::string& id, grpc::Status* status) {
  v1::SessionRef ref;
  ref.set_session_id(id);
  v1::Session s;
  grpc::ClientContext context;
  remote.Prepare(&context);
  *status = remote.coordinator().GetSession(&context, ref, &s);
  if (!status->ok()) return absl::UnknownError(status->error_message());
  return s;
}

// All events of a session's trace.
bool ReadTrace(Remote& remote, const std::string& id, std::vector<v1::SessionEvent>* out,
               grpc::Status* status) {
  v1::SessionRef ref;
  ref.set_session_id(id);
  grpc::ClientContext context;
  remote.Prepare(&context, std::chrono::milliseconds(120000));
  auto reader = remote.coordinator().ExportTrace(&context, ref);
  v1::SessionEvent e;
  while (reader->Read(&e)) out->push_back(e);
  *status = reader->Finish();
  return status->ok();
}

int Start(const std::vector<std::string>& positional) {
  if (positional.size() != 1) return Usage("start", "exactly one KERNEL expected");
  const std::string task_dir = absl::GetFlag(FLAGS_task);
  if (task_dir.empty()) return Usage("start", "--task is required");
  auto task = LoadTask(task_dir);
  if (!task.ok()) return Usage("start", std::string(task.status().message()));
  Target target = task->targets.front();
  if (!absl::GetFlag(FLAGS_target).empty()) {
    auto t = ParseTarget(absl::GetFlag(FLAGS_target));
    if (!t.ok()) return Usage("start", absl::StrCat("--target: ", t.status().message()));
    target = *t;
  }
  if (absl::GetFlag(FLAGS_agent).empty()) {
    return Usage("start", "--agent is required (a name of the coordinator's allowlist: claude, codex, ...)");
  }
  v1::CreateSessionRequest request;
  auto files = PackTask(task_dir, target);
  if (!files.ok()) return Usage("start", std::string(files.status().message()));
  *request.mutable_task() = *std::move(files);
  request.set_target(TargetName(target));
  absl::StatusOr<std::string> source = ReadFile(positional[0]);
  if (!source.ok()) return Usage("start", std::string(source.status().message()));
  request.set_kernel_source(*std::move(source));
  v1::AgentSpec* agent = request.mutable_agent();
  agent->set_name(absl::GetFlag(FLAGS_agent));
  agent->set_model(absl::GetFlag(FLAGS_model));
  if (absl::GetFlag(FLAGS_goal) != 0) request.set_goal_speedup(absl::GetFlag(FLAGS_goal));
  v1::SessionBudget* budget = request.mutable_budget();
  budget->set_max_turns(absl::GetFlag(FLAGS_max_turns));
  budget->set_max_evaluations(absl::GetFlag(FLAGS_max_evals));
  budget->set_max_minutes(absl::GetFlag(FLAGS_max_minutes));
  budget->set_max_usd(absl::GetFlag(FLAGS_max_usd));
  request.mutable_verification_timing()->set_max_samples(absl::GetFlag(FLAGS_max_samples));
  request.mutable_verification_timing()->set_max_seconds(absl::GetFlag(FLAGS_max_seconds));
  request.set_self_ask(absl::GetFlag(FLAGS_self_ask));

  std::unique_ptr<Remote> remote = ConnectOrReport("session start");
  if (remote == nullptr) return kExitUsage;
  v1::Session s;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().CreateSession(&context, request, &s);
  if (!status.ok()) return ReportRpcError("session start", *remote, status);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << SessionJson(s).dump(2) << "\n";
  } else {
    std::cout << s.session_id() << "\n";
    fprintf(stderr, "session %s: task %s on %s, agent %s, goal %.2fx; workspace %s\n",
            s.session_id().c_str(), s.task().c_str(), s.target().c_str(), AgentName(s.agent()).c_str(),
            s.goal_speedup(), s.workspace().c_str());
  }
  return kExitOk;
}

int List() {
  std::unique_ptr<Remote> remote = ConnectOrReport("session ls");
  if (remote == nullptr) return kExitUsage;
  v1::ListSessionsRequest request;
  request.set_limit(absl::GetFlag(FLAGS_limit));
  request.set_state(absl::GetFlag(FLAGS_state));
  v1::ListSessionsResponse response;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().ListSessions(&context, request, &response);
  if (!status.ok()) return ReportRpcError("session ls", *remote, status);
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json list = nlohmann::json::array();
    for (const v1::Session& s : response.sessions()) list.push_back(SessionJson(s));
    std::cout << list.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << absl::StrFormat("%-16s %-13s %-14s %-8s %-8s %5s %5s %8s %s\n", "session", "state", "task",
                               "target", "agent", "turns", "evals", "best", "created");
  for (const v1::Session& s : response.sessions()) {
    std::cout << absl::StrFormat("%-16s %-13s %-14s %-8s %-8s %5d %5d %8s %s\n", s.session_id(), s.state(),
                                 s.task(), s.target(), AgentName(s.agent()), s.turns(), s.evaluations(), Best(s),
                                 FormatTimeMs(s.created_ms()));
  }
  return kExitOk;
}

int Show(const std::string& id) {
  std::unique_ptr<Remote> remote = ConnectOrReport("session show");
  if (remote == nullptr) return kExitUsage;
  grpc::Status status;
  auto s = GetSession(*remote, id, &status);
  if (!s.ok()) return ReportRpcError("session show", *remote, status);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << SessionJson(*s).dump(2) << "\n";
    return kExitOk;
  }
  const v1::SessionBudget& b = s->budget();
  std::cout << absl::StrFormat("session %s  state %s  user %s\n", s->session_id(), s->state(), s->user())
            << absl::StrFormat("reason: %s\n", s->reason())
            << absl::StrFormat("task %s  target %s  agent %s%s  goal %.2fx\n", s->task(), s->target(),
                               AgentName(s->agent()), s->agent().model().empty() ? "" : " (" + s->agent().model() + ")",
                               s->goal_speedup())
            << absl::StrFormat("turns %d/%d  evaluations %d/%d  cost %.4f USD%s  wall limit %g min\n", s->turns(),
                               b.max_turns(), s->evaluations(), b.max_evaluations(), s->cost_usd(),
                               b.max_usd() > 0 ? absl::StrFormat(" of %.2f", b.max_usd()) : "", b.max_minutes())
            << absl::StrFormat("best %s%s\n", Best(*s),
                               s->best_evaluation_id().empty() ? "" : " (" + s->best_evaluation_id() + ")")
            << absl::StrFormat("created %s  updated %s  events %d\n", FormatTimeMs(s->created_ms()),
                               FormatTimeMs(s->updated_ms()), s->events())
            << absl::StrFormat("workspace %s\n", s->workspace());
  return kExitOk;
}

// Follows the trace from --from, reconnecting when the coordinator goes
// away (a restart), until the session has ended.
int Watch(const std::string& id) {
  std::unique_ptr<Remote> remote = ConnectOrReport("session watch");
  if (remote == nullptr) return kExitUsage;
  const bool json = absl::GetFlag(FLAGS_json);
  int64_t next = absl::GetFlag(FLAGS_from);
  std::optional<double> best;
  constexpr int kReconnectSeconds = 120;
  int idle = 0;
  while (true) {
    v1::WatchSessionRequest request;
    request.set_session_id(id);
    request.set_from_index(next);
    grpc::ClientContext context;
    remote->Prepare(&context, std::chrono::milliseconds(0));
    auto reader = remote->coordinator().WatchSession(&context, request);
    v1::SessionEvent e;
    while (reader->Read(&e)) {
      idle = 0;
      next = e.index() + 1;
      nlohmann::json j = nlohmann::json::parse(e.json(), nullptr, false);
      if (j.value("kind", "") == "best" && j["geomean_speedup"].is_number()) {
        best = j["geomean_speedup"].get<double>();
      }
      if (json) {
        std::cout << e.json() << "\n";
      } else {
        std::cout << absl::StrFormat("#%-4d %s  %-70s  best %s\n", e.index(), Clock(e.time_ms()), Describe(j),
                                     best ? absl::StrFormat("%.3fx", *best) : "-");
      }
      std::cout.flush();
    }
    grpc::Status status = reader->Finish();
    if (status.ok()) break;
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE || ++idle > kReconnectSeconds) {
      return ReportRpcError("session watch", *remote, status);
    }
    sleep(1);
  }
  grpc::Status status;
  auto s = GetSession(*remote, id, &status);
  if (!s.ok()) return ReportRpcError("session watch", *remote, status);
  if (!json) std::cout << absl::StrFormat("session %s %s: %s\n", id, s->state(), s->reason());
  return s->state() == "succeeded" ? kExitOk : kExitFailed;
}

int Ask(const std::vector<std::string>& positional) {
  if (positional.size() < 2) return Usage("ask", "ID and TEXT expected");
  std::unique_ptr<Remote> remote = ConnectOrReport("session ask");
  if (remote == nullptr) return kExitUsage;
  v1::PostMessageRequest request;
  request.set_session_id(positional[0]);
  request.set_text(absl::StrJoin(positional.begin() + 1, positional.end(), " "));
  request.set_now(absl::GetFlag(FLAGS_now));
  v1::PostMessageResponse response;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().PostMessage(&context, request, &response);
  if (!status.ok()) return ReportRpcError("session ask", *remote, status);
  fprintf(stderr, "message stored as event #%lld%s\n", static_cast<long long>(response.index()),
          request.now() ? "; the agent's turn is interrupted" : "; it is asked at the next decision point");
  return kExitOk;
}

int Cancel(const std::string& id) {
  std::unique_ptr<Remote> remote = ConnectOrReport("session cancel");
  if (remote == nullptr) return kExitUsage;
  v1::SessionRef ref;
  ref.set_session_id(id);
  v1::CancelSessionResponse response;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().CancelSession(&context, ref, &response);
  if (!status.ok()) return ReportRpcError("session cancel", *remote, status);
  std::cout << absl::StrFormat("session %s %s\n", id, response.state());
  return kExitOk;
}

int BestKernel(const std::string& id) {
  std::unique_ptr<Remote> remote = ConnectOrReport("session best");
  if (remote == nullptr) return kExitUsage;
  v1::SessionRef ref;
  ref.set_session_id(id);
  v1::BestKernel best;
  grpc::ClientContext context;
  remote->Prepare(&context);
  grpc::Status status = remote->coordinator().GetBestKernel(&context, ref, &best);
  if (!status.ok()) return ReportRpcError("session best", *remote, status);
  if (!best.found()) {
    fprintf(stderr, "kseek session best: session %s has no correct kernel yet\n", id.c_str());
    return kExitFailed;
  }
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) {
    std::cout << best.kernel_source();
  } else {
    std::ofstream file(out, std::ios::binary);
    file << best.kernel_source();
    file.close();
    if (!file) return Usage("best", out + ": cannot write");
  }
  fprintf(stderr, "best kernel of %s: %.3fx (%s)\n", id.c_str(), best.geomean_speedup(),
          best.evaluation_id().c_str());
  return kExitOk;
}

int Trace(const std::string& id) {
  std::unique_ptr<Remote> remote = ConnectOrReport("session trace");
  if (remote == nullptr) return kExitUsage;
  std::vector<v1::SessionEvent> events;
  grpc::Status status;
  if (!ReadTrace(*remote, id, &events, &status)) return ReportRpcError("session trace", *remote, status);
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json all = nlohmann::json::array();
    for (const v1::SessionEvent& e : events) all.push_back(nlohmann::json::parse(e.json(), nullptr, false));
    std::cout << all.dump(2) << "\n";
    return kExitOk;
  }
  for (const v1::SessionEvent& e : events) std::cout << e.json() << "\n";
  return kExitOk;
}

int Report(const std::string& id) {
  std::unique_ptr<Remote> remote = ConnectOrReport("session report");
  if (remote == nullptr) return kExitUsage;
  grpc::Status status;
  auto s = GetSession(*remote, id, &status);
  if (!s.ok()) return ReportRpcError("session report", *remote, status);
  std::vector<v1::SessionEvent> stored;
  if (!ReadTrace(*remote, id, &stored, &status)) return ReportRpcError("session report", *remote, status);
  v1::QuestionStatsResponse stats;
  {
    grpc::ClientContext context;
    remote->Prepare(&context);
    status = remote->coordinator().GetQuestionStats(&context, v1::QuestionStatsRequest(), &stats);
    if (!status.ok()) return ReportRpcError("session report", *remote, status);
  }
  nlohmann::json summary = {{"session_id", s->session_id()}, {"task", s->task()},
                            {"target", s->target()},         {"agent", AgentName(s->agent())},
                            {"goal_speedup", s->goal_speedup()}, {"state", s->state()},
                            {"created_ms", s->created_ms()},
                            {"best_speedup", s->has_best_speedup() ? nlohmann::json(s->best_speedup())
                                                                   : nlohmann::json(nullptr)}};
  std::vector<nlohmann::json> events;
  for (const v1::SessionEvent& e : stored) events.push_back(nlohmann::json::parse(e.json(), nullptr, false));
  nlohmann::json question_stats = nlohmann::json::array();
  for (const v1::QuestionStat& q : stats.questions()) {
    question_stats.push_back({{"question_id", q.question_id()},
                              {"text", q.text()},
                              {"category", q.category()},
                              {"asked", q.asked()},
                              {"gains", q.gains()},
                              {"median_gain", q.has_median_gain() ? nlohmann::json(q.median_gain())
                                                                  : nlohmann::json(nullptr)}});
  }
  absl::StatusOr<std::string> html = report::RenderSessionReport(summary, events, question_stats);
  if (!html.ok()) return Usage("report", std::string(html.status().message()));
  std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) out = id + ".html";
  std::ofstream file(out, std::ios::binary);
  file << *html;
  file.close();
  if (!file) return Usage("report", out + ": cannot write");
  std::cout << out << "\n";
  return kExitOk;
}

}  // namespace

int SessionCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    fputs(kSessionUsage, args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  const std::string sub = args[0];
  std::vector<std::string> rest;
  for (size_t i = 1; i < args.size(); ++i) rest.push_back(args[i] == "-o" ? "--out" : args[i]);
  std::vector<std::string> flags;
  if (sub == "start") {
    flags = {"task", "target", "agent", "model", "goal", "max_turns",
             "max_evals", "max_minutes", "max_usd", "max_samples", "max_seconds", "self_ask", "json"};
  } else if (sub == "ls") {
    flags = {"json", "limit", "state"};
  } else if (sub == "show") {
    flags = {"json"};
  } else if (sub == "watch") {
    flags = {"from", "json"};
  } else if (sub == "ask") {
    flags = {"now"};
  } else if (sub == "best" || sub == "report") {
    flags = {"out"};
  } else if (sub == "trace") {
    flags = {"json"};
  } else if (sub != "cancel") {
    fprintf(stderr, "kseek session: unknown command '%s'\n\n%s", sub.c_str(), kSessionUsage);
    return kExitUsage;
  }
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(rest, Allowed(flags), kSessionUsage, &positional, &help)) return help ? kExitOk : kExitUsage;
  if (sub == "start") return Start(positional);
  if (sub == "ls") return List();
  if (sub == "ask") return Ask(positional);
  if (positional.size() != 1) return Usage(sub, "exactly one session ID expected");
  const std::string& id = positional[0];
  if (sub == "show") return Show(id);
  if (sub == "watch") return Watch(id);
  if (sub == "cancel") return Cancel(id);
  if (sub == "best") return BestKernel(id);
  if (sub == "trace") return Trace(id);
  return Report(id);
}

}  // namespace kseek::cli
