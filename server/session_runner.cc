// The goal loop of one session (see session_runner.h).
#include "server/session_runner.h"

#include <signal.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/log.h"
#include "base/time.h"
#include "proto/request.h"
#include "question_bank/src/decision_points.h"
#include "question_bank/src/scheduler.h"
#include "question_bank/src/self_ask.h"
#include "server/agent/confinement.h"
#include "server/auth.h"
#include "server/session_manager.h"
#include "server/session_trace.h"
#include "server/session_workspace.h"

namespace kseek::server {

namespace v1 = ::kernelseek::v1;
namespace qb = ::kseek::question_bank;

namespace {


// A confined Codex agent's CODEX_HOME: the operator's Codex configuration
// and login (the coordinator's $CODEX_HOME, else ~/.codex), copied into
// the agent's home, where Codex also keeps its conversations.
absl::Status SeedCodexHome(const SessionManager::AgentHome& home) {
  const char* codex_home = std::getenv("CODEX_HOME");
  const char* user_home = std::getenv("HOME");
  std::filesystem::path from = codex_home != nullptr ? std::filesystem::path(codex_home)
                               : user_home != nullptr
                                   ? std::filesystem::path(user_home) / ".codex"
                                   : std::filesystem::path();
  const std::filesystem::path to = std::filesystem::path(home.home) / ".codex";
  std::error_code ec;
  // What the agent left there is replaced, never written through (a
  // symbolic link it planted stays a link to nowhere it chose).
  if (std::filesystem::is_symlink(to, ec)) std::filesystem::remove(to, ec);
  std::filesystem::create_directories(to, ec);
  for (const char* name : {"config.toml", "auth.json"}) {
    if (from.empty() || !std::filesystem::is_regular_file(from / name, ec)) continue;
    std::filesystem::remove(to / name, ec);
    std::filesystem::copy_file(from / name, to / name,
                               std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) {
      return absl::InternalError(absl::StrCat("copying ", (from / name).string(), " for the agent: ",
                                              ec.message()));
    }
  }
  return absl::OkStatus();
}

void LogSession(const std::string& session_id, const std::string& text) {
  Logf("session %s: %s", session_id, text);
}

std::string Speedup(std::optional<double> v) {
  return v ? absl::StrFormat("%.3fx", *v) : std::string("n/a");
}

// Errors after which another turn cannot help.
bool IsFatalAgentError(agent::AgentErrorKind kind) {
  return kind == agent::AgentErrorKind::kNotInstalled || kind == agent::AgentErrorKind::kAuth ||
         kind == agent::AgentErrorKind::kStart;
}

}  // namespace

SessionRunner::SessionRunner(SessionManager* manager, std::string session_id)
    : manager_(manager), id_(std::move(session_id)) {}

SessionRunner::~SessionRunner() { Stop(); }

void SessionRunner::Start() {
  thread_ = std::thread([this] { Run(); });
}

void SessionRunner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    if (process_ != nullptr) process_->Interrupt("the coordinator is stopping");
  }
  if (thread_.joinable()) thread_.join();
}

void SessionRunner::Ended(const std::string& reason) {
  absl::MutexLock lock(&mu_);
  ended_ = true;
  if (process_ != nullptr) process_->Interrupt(reason);
}

void SessionRunner::InterruptTurn(const std::string& reason) {
  absl::MutexLock lock(&mu_);
  if (process_ != nullptr) process_->Interrupt(reason);
}

void SessionRunner::WaitDone() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&done_));
}

bool SessionRunner::done() {
  absl::MutexLock lock(&mu_);
  return done_;
}

bool SessionRunner::ShouldExit() {
  absl::MutexLock lock(&mu_);
  return stop_ || ended_;
}

void SessionRunner::Run() {
  absl::Status st = Loop();
  if (!st.ok() && !ShouldExit()) {
    LogSession(id_, absl::StrCat("failed: ", st.message()));
    // A session that has ended meanwhile refuses the change; nothing to do then.
    Finish(kSessionFailed, std::string(st.message())).IgnoreError();
  }
  // An ended session's agent user goes (a cancelled one's: after Cancel
  // has traced its end).
  absl::StatusOr<SessionRecord> record = manager_->store()->GetSession(id_);
  if (record.ok() && SessionEnded(record->state)) manager_->ReleaseAgentUser(*record);
  absl::MutexLock lock(&mu_);
  done_ = true;
}

absl::Status SessionRunner::Finish(const std::string& state, const std::string& reason) {
  SessionChange change;
  change.state = state;
  change.reason = reason;
  change.verifying_evaluation_id = "";
  absl::StatusOr<std::vector<StoredEvent>> st =
      manager_->Append(id_, {StateEvent(state, reason)}, change);
  if (st.ok()) LogSession(id_, absl::StrCat(state, ": ", reason));
  return st.status();
}

absl::Status SessionRunner::Loop() {
  Store* store = manager_->store();
  absl::StatusOr<SessionRecord> record = store->GetSession(id_);
  if (!record.ok()) return record.status();
  if (SessionEnded(record->state)) return absl::OkStatus();
  if (!spec_.ParseFromString(record->spec)) {
    return absl::DataLossError(absl::StrCat("session ", id_, ": the stored request is corrupt"));
  }
  absl::StatusOr<agent::AllowedAgent> allowed = manager_->AgentOf(spec_.agent());
  if (!allowed.ok()) return allowed.status();
  absl::StatusOr<std::unique_ptr<agent::AgentAdapter>> adapter =
      agent::MakeAdapter(allowed->config);
  if (!adapter.ok()) return adapter.status();
  adapter_ = *std::move(adapter);
  brief_ = manager_->Brief(record->task, spec_, record->goal_speedup);

  // A fresh agent token for each start of the runner: the environment of
  // every turn carries it, and so does the workspace's client.json.
  std::string token = NewToken();
  absl::Status st = store->AddSessionToken(HashToken(token), id_, NowMs());
  if (!st.ok()) return st;
  const bool confined = manager_->options().confine_agents;
  const bool no_network = confined && allowed->isolate_network;
  if (no_network && manager_->options().agent_socket.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "agent ", allowed->name, " has no network, and the coordinator has no Unix socket for it"));
  }
  const std::string address =
      no_network ? manager_->options().agent_socket : manager_->coordinator_address();
  // Confined: no process of the agent's user runs from here until its
  // folders are given to it again.
  absl::StatusOr<std::optional<SessionManager::AgentHome>> home =
      manager_->PrepareAgentUser(*record);
  if (!home.ok()) return home.status();
  st = WriteWorkspaceClientConfig(record->workspace, address, token, record->target);
  if (!st.ok()) return st;
  env_ = allowed->env;
  // The coordinator traces each line of the agent's output as it reads it;
  // a Python agent (or a Python tool it runs) writes its lines to the pipe
  // as it prints them only when unbuffered. The allowlist entry may say
  // otherwise.
  env_.emplace("PYTHONUNBUFFERED", "1");
  if (home->has_value()) {
    const SessionManager::AgentHome& h = **home;
    env_["HOME"] = h.home;
    env_["USER"] = h.user.name;
    env_["LOGNAME"] = h.user.name;
    env_["TMPDIR"] = h.home + "/tmp";
    if (allowed->config.kind == "codex") {
      st = SeedCodexHome(h);
      if (!st.ok()) return st;
      env_["CODEX_HOME"] = h.home + "/.codex";
    }
    st = manager_->GiveToAgent(*record, h);
    if (!st.ok()) return st;
    confinement_ = agent::AgentConfinement{h.user.uid, h.user.gid, agent::AgentRlimits(),
                                           allowed->isolate_network};
    LogSession(id_, absl::StrCat("agent runs as ", h.user.name, " (uid ", h.user.uid, "), network ",
                          allowed->isolate_network ? "none (the coordinator's Unix socket only)"
                                                   : "of the host"));
  }
  env_["KSEEK_COORDINATOR"] = address;
  env_["KSEEK_TOKEN"] = token;
  env_["KSEEK_SESSION"] = id_;
  if (!manager_->options().kseek_dir.empty()) {
    const char* path = std::getenv("PATH");
    env_["PATH"] = absl::StrCat(manager_->options().kseek_dir, ":", path != nullptr ? path : "");
  }

  st = Recover(*record);
  if (!st.ok()) return st;

  while (true) {
    if (ShouldExit()) return absl::OkStatus();
    record = store->GetSession(id_);
    if (!record.ok()) return record.status();
    if (SessionEnded(record->state)) return absl::OkStatus();
    absl::StatusOr<std::vector<StoredEvent>> events = store->ReadSessionEvents(id_, 0, INT_MAX);
    if (!events.ok()) return events.status();
    int64_t last_turn_end = -1, last_verification = -1;
    for (const StoredEvent& e : *events) {
      if (e.kind == "turn_end") last_turn_end = e.index;
      if (e.kind == "verification") last_verification = e.index;
    }
    if (record->state == kSessionVerifying || last_turn_end > last_verification) {
      absl::StatusOr<bool> met = Verify();
      if (!met.ok()) return met.status();
      if (*met || ShouldExit()) return absl::OkStatus();
      continue;
    }
    if (std::optional<std::string> spent = BudgetSpent(*record, false)) {
      return Finish(kSessionBudgetSpent, *spent);
    }
    absl::StatusOr<std::string> prompt =
        record->turns == 0 ? absl::StatusOr<std::string>(brief_) : NextPrompt();
    if (!prompt.ok()) return prompt.status();
    st = RunTurn(*prompt);
    if (!st.ok()) return st;
  }
}

absl::Status SessionRunner::Recover(const SessionRecord& record) {
  std::vector<nlohmann::json> events;
  SessionChange change;
  if (record.state == kSessionCreated) {
    events.push_back(StateEvent(kSessionRunning, "the agent starts"));
    change.state = kSessionRunning;
    change.reason = "the agent starts";
    return manager_->Append(id_, std::move(events), change).status();
  }
  absl::StatusOr<std::vector<StoredEvent>> trace =
      manager_->store()->ReadSessionEvents(id_, 0, INT_MAX);
  if (!trace.ok()) return trace.status();
  int open_turn = 0;
  for (const StoredEvent& e : *trace) {
    nlohmann::json j = nlohmann::json::parse(e.json, nullptr, false);
    if (e.kind == "turn_start") open_turn = j.value("turn", 0);
    if (e.kind == "turn_end") open_turn = 0;
  }
  if (record.agent_pgid > 0) {
    // The agent of the turn cut off by the restart, orphaned: end it.
    ::kill(-static_cast<pid_t>(record.agent_pgid), SIGKILL);
    change.agent_pgid = 0;
  }
  std::string reason = "the coordinator restarted; the session resumes";
  if (open_turn > 0) {
    nlohmann::json error = AgentTraceEvent(
        agent::AgentEvent::Error(agent::AgentErrorKind::kInterrupted, false,
                                 "the coordinator restarted during the turn"),
        open_turn);
    events.push_back(std::move(error));
    events.push_back(TurnEndEvent(open_turn, "", true));
  }
  events.push_back(StateEvent(record.state, reason));
  change.reason = reason;
  LogSession(id_, reason);
  return manager_->Append(id_, std::move(events), change).status();
}

std::optional<std::string> SessionRunner::BudgetSpent(const SessionRecord& r,
                                                      bool during_turn) const {
  const v1::SessionBudget& b = spec_.budget();
  if (!during_turn && r.turns >= b.max_turns()) {
    return absl::StrCat("max turns reached (", b.max_turns(), ")");
  }
  if (r.evaluations >= b.max_evaluations()) {
    return absl::StrCat("max evaluations reached (", r.evaluations, " of ", b.max_evaluations(),
                        ")");
  }
  double minutes = static_cast<double>(NowMs() - r.created_ms) / 60000.0;
  if (minutes >= b.max_minutes()) {
    return absl::StrFormat("wall time spent (%.1f of %g minutes)", minutes, b.max_minutes());
  }
  if (b.max_usd() > 0 && r.cost_usd >= b.max_usd()) {
    return absl::StrFormat("cost spent (%.2f of %.2f USD)", r.cost_usd, b.max_usd());
  }
  return std::nullopt;
}

absl::StatusOr<EvaluationRecord> SessionRunner::VerificationRecord(const SessionRecord& record,
                                                                   const std::string& id) {
  v1::EvaluationRequest request;
  *request.mutable_task() = spec_.task();
  request.set_target(spec_.target());
  absl::StatusOr<std::string> source = ReadWorkspaceKernel(record.workspace, kMaxKernelSourceBytes);
  if (!source.ok()) return source.status();
  request.set_kernel_source(*std::move(source));
  request.set_kernel_name(kWorkspaceKernel);
  *request.mutable_timing() = spec_.verification_timing();
  absl::StatusOr<std::unique_ptr<UnpackedRequest>> unpacked = UnpackedRequest::Create(request);
  if (!unpacked.ok()) return unpacked.status();
  EvaluationRecord r;
  r.id = id;
  r.user = record.user;
  r.target = spec_.target();
  r.task = (*unpacked)->task().name;
  r.kernel_name = kWorkspaceKernel;
  r.scenarios_total = static_cast<int>((*unpacked)->eval().scenarios.size());
  r.created_ms = NowMs();
  r.session_id = id_;
  r.session_by = "verification";
  request.SerializeToString(&r.request);
  return r;
}

absl::StatusOr<bool> SessionRunner::Verify() {
  Store* store = manager_->store();
  absl::StatusOr<SessionRecord> record = store->GetSession(id_);
  if (!record.ok()) return record.status();
  std::string eval_id = record->verifying_evaluation_id;
  // The agent's evaluations of the turn go into the trace before its
  // verification.
  manager_->LinkAgentEvaluations();
  if (eval_id.empty()) {
    eval_id = absl::StrCat("ev_", RandomHex(6));
    std::string reason = absl::StrCat("the turn ended: the coordinator evaluates kernel.cu (",
                                      eval_id, ")");
    SessionChange change;
    change.state = kSessionVerifying;
    change.reason = reason;
    change.verifying_evaluation_id = eval_id;
    absl::Status st =
        manager_->Append(id_, {StateEvent(kSessionVerifying, reason)}, change).status();
    if (!st.ok()) return st;
  }
  // Submitted only when the store lacks it, so that a restart neither runs
  // it twice nor loses it.
  absl::StatusOr<EvaluationRecord> eval = store->GetEvaluation(eval_id);
  if (absl::IsNotFound(eval.status())) {
    absl::StatusOr<EvaluationRecord> fresh = VerificationRecord(*record, eval_id);
    if (!fresh.ok()) {
      // The workspace's kernel cannot even be submitted (e.g. missing or too
      // large): the verification fails with that reason.
      std::string reason = absl::StrCat("kernel.cu cannot be evaluated: ", fresh.status().message());
      status_line_ = reason;
      SessionChange change;
      change.state = kSessionRunning;
      change.reason = reason;
      change.verifying_evaluation_id = "";
      absl::Status recorded =
          manager_
              ->Append(id_,
                       {VerificationEvent(eval_id, false, std::nullopt, record->goal_speedup,
                                          reason),
                        StateEvent(kSessionRunning, reason)},
                       change)
              .status();
      if (!recorded.ok()) return recorded;
      return false;
    }
    absl::Status st = manager_->dispatcher()->Submit(*fresh);
    if (!st.ok() && !absl::IsAlreadyExists(st)) return st;
  } else if (!eval.ok()) {
    return eval.status();
  }
  while (true) {
    eval = store->GetEvaluation(eval_id);
    if (!eval.ok()) return eval.status();
    if (eval->state == kStateDone || eval->state == kStateFailed) break;
    if (ShouldExit()) return false;
    absl::SleepFor(manager_->options().poll);
  }
  EvaluationSummary summary = SummarizeEvaluation(*eval);
  const double goal = record->goal_speedup;
  bool met = summary.all_correct && summary.geomean && *summary.geomean >= goal;
  std::string reason;
  if (eval->state == kStateFailed) {
    reason = absl::StrCat("the evaluation failed: ", summary.error);
  } else if (!summary.compiled) {
    reason = absl::StrCat("kernel.cu did not compile or broke the task's policy",
                          summary.error.empty() ? "" : ": ", summary.error);
  } else {
    reason = absl::StrFormat("%d/%d scenarios correct, geometric-mean speedup %s, goal %.2fx: %s",
                             summary.correct, summary.total, Speedup(summary.geomean), goal,
                             met ? "met" : "not met");
  }
  status_line_ = absl::StrCat("The coordinator's evaluation of kernel.cu: ", reason, ".");
  const std::string state = met ? kSessionSucceeded : kSessionRunning;
  SessionChange change;
  change.state = state;
  change.reason = reason;
  change.verifying_evaluation_id = "";
  absl::StatusOr<std::vector<StoredEvent>> appended = manager_->AppendEvaluation(
      id_, summary, "verification", /*full_set=*/true,
      {VerificationEvent(eval_id, met, summary.geomean, goal, reason), StateEvent(state, reason)},
      change, "");
  if (!appended.ok()) return appended.status();
  LogSession(id_, absl::StrCat("verification ", eval_id, ": ", reason));
  return met;
}

absl::StatusOr<std::string> SessionRunner::NextPrompt() {
  absl::StatusOr<std::vector<StoredEvent>> events =
      manager_->store()->ReadSessionEvents(id_, 0, INT_MAX);
  if (!events.ok()) return events.status();
  TraceView view = ReadTrace(*events);
  const SessionOptions& options = manager_->options();
  qb::SchedulerInput input;
  input.decision_points =
      qb::DetectDecisionPoints(view.history, options.decision, view.last_question_time, true);
  for (size_t i = static_cast<size_t>(view.human_questions); i < view.human_messages.size(); ++i) {
    input.pending_human_messages.push_back({"", view.human_messages[i]});
  }
  input.asked_this_session = view.asked_ids;

  nlohmann::json point = DecisionPointEvent(input.decision_points);
  if (!input.pending_human_messages.empty()) {
    point["points"].push_back("human_message");
    point["reasons"].push_back(absl::StrCat(input.pending_human_messages.size(),
                                            " human message(s) waiting"));
  }
  std::vector<nlohmann::json> out = {std::move(point)};

  absl::StatusOr<std::map<std::string, qb::QuestionStats>> stats = manager_->QuestionStats();
  if (!stats.ok()) return stats.status();
  qb::SchedulerOptions scheduler = options.scheduler;
  scheduler.seed ^= std::hash<std::string>()(id_);
  // In self-ask mode the agent holds the bank: only humans are asked.
  static const qb::Bank* const kNoBank = new qb::Bank(*qb::Bank::FromQuestions({}, "self-ask"));
  const qb::Bank& bank = spec_.self_ask() ? *kNoBank : manager_->bank();
  qb::ScheduledQuestion q = qb::ChooseNextQuestion(input, bank, *stats, scheduler);
  std::string text;
  switch (q.source) {
    case qb::ScheduledQuestion::Source::kHuman:
      out.push_back(QuestionEvent("human", "", q.text, "", q.reason));
      text = q.text;
      break;
    case qb::ScheduledQuestion::Source::kBank: {
      const qb::Question* bank_q = manager_->bank().Find(q.question_id);
      std::string category = bank_q != nullptr ? std::string(qb::CategoryName(bank_q->category)) : "";
      out.push_back(QuestionEvent("bank", q.question_id, q.text, category, q.reason));
      text = q.text;
      break;
    }
    case qb::ScheduledQuestion::Source::kNone:
      text = spec_.self_ask()
                 ? "The goal is not met yet. Ask yourself the questions in BRIEF.md, and carry on."
                 : "The goal is not met yet. Carry on.";
      break;
  }
  absl::Status st = manager_->Append(id_, std::move(out)).status();
  if (!st.ok()) return st;
  std::string prompt = status_line_.empty() ? text : absl::StrCat(text, "\n\n", status_line_);
  // An agent that cannot resume starts afresh each turn: give it the brief
  // again, after the question.
  if (!adapter_->CanResume()) absl::StrAppend(&prompt, "\n\n", brief_);
  return prompt;
}

absl::Status SessionRunner::RunTurn(const std::string& prompt) {
  absl::StatusOr<SessionRecord> record = manager_->store()->GetSession(id_);
  if (!record.ok()) return record.status();
  const int turn = record->turns + 1;
  agent::TurnRequest request;
  request.workspace = record->workspace;
  request.prompt = prompt;
  request.env = env_;
  if (adapter_->CanResume()) request.resume_session_id = record->agent_session_id;
  absl::StatusOr<agent::AgentInvocation> invocation = adapter_->Invocation(request);
  if (!invocation.ok()) return invocation.status();
  invocation->confinement = confinement_;
  absl::Status st =
      manager_->Append(id_, {TurnStartEvent(turn, prompt, !request.resume_session_id.empty())})
          .status();
  if (!st.ok()) return st;
  {
    absl::MutexLock lock(&mu_);
    turn_over_ = false;
    fatal_error_.clear();
    turn_text_.clear();
  }
  auto sink = [this, turn](const agent::AgentEvent& e) {
    absl::Status appended = manager_->Append(id_, {AgentTraceEvent(e, turn)}).status();
    if (!appended.ok()) LogSession(id_, absl::StrCat("cannot record an agent event: ", appended.message()));
    absl::MutexLock lock(&mu_);
    if (e.kind == agent::AgentEventKind::kError && e.fatal && IsFatalAgentError(e.error)) {
      fatal_error_ = e.text;
    }
    if (e.kind == agent::AgentEventKind::kAgentMessage) absl::StrAppend(&turn_text_, e.text, "\n");
    if (e.kind == agent::AgentEventKind::kTurnEnd) turn_over_ = true;
  };
  std::unique_ptr<agent::AgentProcess> process = agent::AgentProcess::Start(
      *invocation, adapter_->NewParser(), manager_->options().agent_limits, sink);
  {
    absl::MutexLock lock(&mu_);
    process_ = process.get();
    if (stop_ || ended_) process_->Interrupt("the session is stopping");
  }
  // A restarted coordinator ends an orphaned agent by its stored process
  // group (Recover): an agent whose group cannot be stored is not left
  // running.
  SessionChange started;
  started.agent_pgid = process->pid() > 0 ? process->pid() : 0;
  absl::Status stored = manager_->Append(id_, {}, started).status();
  if (!stored.ok()) {
    process->Interrupt("its process group cannot be stored");
    process->Wait();
    absl::MutexLock lock(&mu_);
    process_ = nullptr;
    return absl::Status(stored.code(),
                        absl::StrCat("cannot store the agent's process group, which a restart "
                                     "needs to stop it: ",
                                     stored.message()));
  }

  // Wait for the turn's end, checking the budget that can run out during it.
  bool interrupted_for_budget = false;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&turn_over_), absl::Seconds(1))) break;
    }
    if (interrupted_for_budget) continue;
    absl::StatusOr<SessionRecord> now = manager_->store()->GetSession(id_);
    if (!now.ok()) continue;
    if (std::optional<std::string> spent = BudgetSpent(*now, true)) {
      process->Interrupt(absl::StrCat("budget spent: ", *spent));
      interrupted_for_budget = true;
    }
  }
  process->Wait();
  std::string fatal, said;
  {
    absl::MutexLock lock(&mu_);
    process_ = nullptr;
    fatal = fatal_error_;
    said = turn_text_;
  }
  SessionChange finished;
  finished.agent_pgid = 0;
  std::vector<nlohmann::json> applied;
  if (spec_.self_ask()) {
    for (const std::string& id : qb::ParseAppliedQuestions(said, manager_->bank()).ids) {
      const qb::Question* q = manager_->bank().Find(id);
      applied.push_back(QuestionEvent("self", id, q->text, std::string(qb::CategoryName(q->category)),
                                      "the agent applied it (self-ask)"));
    }
  }
  absl::Status recorded = manager_->Append(id_, std::move(applied), finished).status();
  if (!recorded.ok()) return recorded;
  if (!fatal.empty() && !ShouldExit()) {
    return Finish(kSessionFailed, absl::StrCat("the agent cannot run: ", fatal));
  }
  return absl::OkStatus();
}

}  // namespace kseek::server
