// Sessions of kernelseekd (see session_manager.h).
#include "server/session_manager.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <regex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/log.h"
#include "base/time.h"
#include "harness/src/evaluate.h"
#include "proto/request.h"
#include "question_bank/src/self_ask.h"
#include "server/agent/adapter.h"
#include "server/agent/confinement.h"
#include "server/session_runner.h"
#include "server/session_workspace.h"

namespace kseek::server {

namespace v1 = ::kernelseek::v1;

namespace {


absl::Status Invalid(const std::string& field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

absl::Status Denied(const std::string& field, absl::string_view what) {
  return absl::PermissionDeniedError(absl::StrCat(field, ": ", what));
}

// Checks the agent (against the allowlist) and the budget of `request` and
// fills in the defaults: the agent's name and its adapter kind.
absl::Status ValidateSpec(const agent::AgentAllowlist& allowlist,
                          v1::CreateSessionRequest* request) {
  v1::AgentSpec* a = request->mutable_agent();
  const std::string choose = absl::StrCat("choose an agent of the coordinator's allowlist by name (",
                                          absl::StrJoin(allowlist.Names(), ", "), ")");
  for (const auto& [field, value] : {std::pair<const char*, const std::string*>{
                                         "agent.program", &a->program()},
                                     {"agent.start_template", &a->start_template()},
                                     {"agent.resume_template", &a->resume_template()}}) {
    if (!value->empty()) {
      return Denied(field, absl::StrCat("programs and command templates come from the "
                                        "coordinator's configuration, not from a request; ",
                                        choose));
    }
  }
  if (a->name().empty()) a->set_name(a->kind());
  if (a->name().empty()) return Invalid("agent.name", absl::StrCat("missing; ", choose));
  absl::StatusOr<agent::AllowedAgent> allowed = allowlist.Find(a->name());
  if (!allowed.ok()) return Denied("agent.name", allowed.status().message());
  a->set_kind(allowed->config.kind);
  // The model is the one choice a user has; it lands in the agent's
  // arguments (and in a command template's words), so it is a plain name.
  static const std::regex model_name("[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}");
  if (!a->model().empty() && !std::regex_match(a->model(), model_name)) {
    return Invalid("agent.model",
                   "not a model name (letters, digits and ._:/@+-, starting with a letter or "
                   "digit, at most 128 characters)");
  }
  agent::AgentConfig config = allowed->config;
  if (!a->model().empty()) config.model = a->model();
  absl::StatusOr<std::unique_ptr<agent::AgentAdapter>> adapter = agent::MakeAdapter(config);
  if (!adapter.ok()) return Invalid("agent", adapter.status().message());

  v1::SessionBudget* b = request->mutable_budget();
  if (b->max_turns() < 0) return Invalid("budget.max_turns", "must not be negative");
  if (b->max_evaluations() < 0) return Invalid("budget.max_evaluations", "must not be negative");
  if (!(b->max_minutes() >= 0)) return Invalid("budget.max_minutes", "must not be negative");
  if (!(b->max_usd() >= 0)) return Invalid("budget.max_usd", "must not be negative");
  if (b->max_turns() == 0) b->set_max_turns(kDefaultMaxTurns);
  if (b->max_evaluations() == 0) b->set_max_evaluations(kDefaultMaxEvaluations);
  if (b->max_minutes() == 0) b->set_max_minutes(kDefaultMaxMinutes);
  if (request->has_goal_speedup() && !(request->goal_speedup() > 0)) {
    return Invalid("goal_speedup", "must be positive");
  }
  const v1::TimingOptions& t = request->verification_timing();
  if (t.max_samples() < 0) return Invalid("verification_timing.max_samples", "must not be negative");
  if (!(t.max_seconds() >= 0)) {
    return Invalid("verification_timing.max_seconds", "must not be negative");
  }
  return absl::OkStatus();
}

}  // namespace

SessionManager::SessionManager(Store* store, Dispatcher* dispatcher, SessionOptions options)
    : store_(store), dispatcher_(dispatcher), options_(std::move(options)) {
  // From now on, so that the evaluations resumed before Start() are traced.
  {
    absl::MutexLock lock(&mu_);
    observing_ = true;
  }
  dispatcher_->SetSessionProgressObserver(
      [this](const SessionProgress& p) { OnEvaluationProgress(p); });
}

SessionManager::~SessionManager() { Stop(); }

std::string SessionManager::coordinator_address() {
  absl::MutexLock lock(&mu_);
  return coordinator_address_;
}

absl::StatusOr<agent::AllowedAgent> SessionManager::AgentOf(
    const kernelseek::v1::AgentSpec& spec) const {
  // Sessions stored before agents had names carry the kind only.
  absl::StatusOr<agent::AllowedAgent> allowed =
      options_.agents.Find(spec.name().empty() ? spec.kind() : spec.name());
  if (!allowed.ok()) return allowed.status();
  if (!spec.model().empty()) allowed->config.model = spec.model();
  return allowed;
}

std::string SessionManager::AgentHomeOf(const std::string& session_id) const {
  return absl::StrCat(options_.workspaces_dir, "/.homes/", session_id);
}

absl::StatusOr<std::optional<SessionManager::AgentHome>> SessionManager::PrepareAgentUser(
    const SessionRecord& session) {
  if (!options_.confine_agents) return std::optional<AgentHome>();
  absl::StatusOr<agent::AgentUser> user = agent::EnsureAgentUser(session.id);
  if (!user.ok()) return user.status();
  // Whatever a previous start left running under it ends now.
  agent::KillAllProcessesOf(user->uid);
  AgentHome home{*user, AgentHomeOf(session.id)};
  const std::string homes = options_.workspaces_dir + "/.homes";
  std::error_code ec;
  std::filesystem::create_directories(home.home + "/tmp", ec);
  if (ec) return absl::InternalError(absl::StrCat(home.home, ": cannot create: ", ec.message()));
  // Searchable, not listable: an agent finds its own home only.
  if (chmod(homes.c_str(), 0711) != 0) {
    return absl::InternalError(absl::StrCat(homes, ": cannot chmod: ", std::strerror(errno)));
  }
  return std::optional<AgentHome>(std::move(home));
}

absl::Status SessionManager::GiveToAgent(const SessionRecord& session, const AgentHome& home) {
  for (const std::string& dir : {session.workspace, home.home}) {
    absl::Status st = agent::ChownTree(dir, home.user.uid, home.user.gid, 0700);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

void SessionManager::ReleaseAgentUser(const SessionRecord& session) {
  if (!options_.confine_agents) return;
  // Nothing of the user runs while its files are given back; by the time
  // the user is gone, they are the coordinator's.
  absl::StatusOr<agent::AgentUser> user = agent::FindAgentUser(session.id);
  if (!user.ok()) return;
  agent::KillAllProcessesOf(user->uid);
  absl::Status st;
  for (const std::string& dir : {session.workspace, AgentHomeOf(session.id)}) {
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) continue;
    absl::Status given = agent::ChownTree(dir, getuid(), getgid(), 0700);
    if (st.ok()) st = given;
  }
  if (st.ok()) st = agent::RemoveAgentUser(session.id);
  if (!st.ok()) {
    Logf("session %s: releasing its agent's user: %s", session.id, st.message());
  }
}

std::string SessionManager::Brief(const std::string& task,
                                  const v1::CreateSessionRequest& spec,
                                  double goal_speedup) const {
  std::string kseek =
      options_.kseek_dir.empty() ? std::string("kseek") : options_.kseek_dir + "/kseek";
  return BriefText(task, spec, goal_speedup, question_bank::RenderBankForAgent(bank()), kseek);
}

absl::Status SessionManager::Start(const std::string& coordinator_address) {
  absl::StatusOr<std::vector<SessionRecord>> active = store_->ActiveSessions();
  if (!active.ok()) return active.status();
  absl::MutexLock lock(&mu_);
  coordinator_address_ = coordinator_address;
  started_ = true;
  for (const SessionRecord& r : *active) StartRunnerLocked(r.id);
  Logf("%d sessions resumed", active->size());
  linker_ = std::thread([this] { LinkLoop(); });
  return absl::OkStatus();
}

void SessionManager::Stop() {
  std::map<std::string, std::shared_ptr<SessionRunner>> runners;
  bool observing;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    observing = observing_;
    observing_ = false;
    runners.swap(runners_);
  }
  if (observing) dispatcher_->SetSessionProgressObserver(nullptr);
  // Stopped in parallel: each may wait for its agent to exit.
  std::vector<std::thread> stops;
  for (auto& [id, runner] : runners) {
    SessionRunner* r = runner.get();
    stops.emplace_back([r] { r->Stop(); });
  }
  for (std::thread& t : stops) t.join();
  if (linker_.joinable()) linker_.join();
  absl::MutexLock lock(&watch_mu_);
  for (auto& [id, w] : watchers_) {
    for (auto& [handle, wake] : w.wakes) wake();
  }
}

void SessionManager::StartRunnerLocked(const std::string& session_id) {
  // Runners whose sessions have ended are done: let them go.
  for (auto it = runners_.begin(); it != runners_.end();) {
    it = it->second->done() ? runners_.erase(it) : std::next(it);
  }
  auto runner = std::make_unique<SessionRunner>(this, session_id);
  runner->Start();
  runners_[session_id] = std::move(runner);
}

absl::StatusOr<SessionRecord> SessionManager::Create(const Caller& caller,
                                                     const v1::CreateSessionRequest& request) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || !started_) {
      return absl::UnavailableError("the coordinator is not running sessions now; retry");
    }
  }
  if (!options_.confine_agents && caller.role != Role::kAdmin) {
    return absl::PermissionDeniedError(absl::StrCat(
        "agents cannot be confined on this coordinator's machine (", options_.unconfined_reason,
        "): only admins may start sessions"));
  }
  v1::CreateSessionRequest spec = request;
  absl::Status st = ValidateSpec(options_.agents, &spec);
  if (!st.ok()) return st;
  // The session keeps only what its agent may see (no shipped kernels);
  // its verifications use the same files.
  absl::StatusOr<v1::TaskFiles> kept = WorkspaceTask(spec.task());
  if (!kept.ok()) return kept.status();
  *spec.mutable_task() = *std::move(kept);
  // The task, target and kernel are checked as an evaluation of the
  // starting kernel would be.
  v1::EvaluationRequest probe;
  *probe.mutable_task() = spec.task();
  probe.set_target(spec.target());
  probe.set_kernel_source(spec.kernel_source());
  probe.set_kernel_name(kWorkspaceKernel);
  absl::StatusOr<std::unique_ptr<UnpackedRequest>> unpacked = UnpackedRequest::Create(probe);
  if (!unpacked.ok()) return unpacked.status();

  // Like a submission, a session is new work: none while the disk is nearly
  // full (RESOURCE_EXHAUSTED), and nothing of it is written.
  st = store_->CheckRoomForNewWork();
  if (!st.ok()) return st;

  SessionRecord r;
  r.id = absl::StrCat("ss_", RandomHex(6));
  r.user = caller.user;
  r.task = (*unpacked)->task().name;
  r.target = spec.target();
  r.goal_speedup =
      spec.has_goal_speedup() ? spec.goal_speedup() : (*unpacked)->task().goal_speedup;
  spec.set_goal_speedup(r.goal_speedup);
  r.workspace = absl::StrCat(options_.workspaces_dir, "/", r.id);
  r.created_ms = NowMs();
  r.updated_ms = r.created_ms;
  spec.SerializeToString(&r.spec);
  st = PrepareWorkspace(r.workspace, spec, Brief(r.task, spec, r.goal_speedup));
  if (!st.ok()) return st;
  st = store_->InsertSession(
      r, {StateEvent(kSessionCreated, absl::StrCat("created by ", caller.user))});
  if (!st.ok()) return st;
  {
    // Stopping since the check above: the next start resumes the session.
    absl::MutexLock lock(&mu_);
    if (!stopping_) StartRunnerLocked(r.id);
  }
  return store_->GetSession(r.id);
}

absl::StatusOr<int64_t> SessionManager::PostMessage(const std::string& session_id,
                                                    const std::string& text, bool now) {
  if (text.empty()) return Invalid("text", "empty");
  absl::StatusOr<SessionRecord> r = store_->GetSession(session_id);
  if (!r.ok()) return r.status();
  if (SessionEnded(r->state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("session ", session_id, " has ended (", r->state, ")"));
  }
  absl::StatusOr<std::vector<StoredEvent>> stored =
      Append(session_id, {HumanMessageEvent(text, now)});
  if (!stored.ok()) return stored.status();
  if (now) {
    absl::MutexLock lock(&mu_);
    auto it = runners_.find(session_id);
    if (it != runners_.end()) it->second->InterruptTurn("a human message asks for the turn to stop");
  }
  return stored->front().index;
}

absl::Status SessionManager::Cancel(const std::string& session_id, const std::string& by) {
  absl::StatusOr<SessionRecord> r = store_->GetSession(session_id);
  if (!r.ok()) return r.status();
  if (SessionEnded(r->state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("session ", session_id, " has ended (", r->state, ")"));
  }
  std::string reason = absl::StrCat("cancelled by ", by);
  // The agent is stopped and its runner waited for first, so that the
  // killed turn's last events (its turn_end) precede the final state.
  std::shared_ptr<SessionRunner> runner;
  {
    absl::MutexLock lock(&mu_);
    auto it = runners_.find(session_id);
    if (it != runners_.end()) runner = it->second;
  }
  if (runner != nullptr) {
    runner->Ended(reason);
    runner->WaitDone();
  }
  SessionChange change;
  change.state = kSessionCancelled;
  change.reason = reason;
  change.verifying_evaluation_id = "";
  absl::Status st = Append(session_id, {StateEvent(kSessionCancelled, reason)}, change).status();
  if (st.ok()) ReleaseAgentUser(*r);
  return st;
}

absl::StatusOr<std::vector<StoredEvent>> SessionManager::Append(
    const std::string& session_id, std::vector<nlohmann::json> events, const SessionChange& change,
    const std::string& logged_evaluation) {
  absl::StatusOr<std::vector<StoredEvent>> stored =
      store_->AppendSessionEvents(session_id, std::move(events), change, logged_evaluation);
  if (stored.ok() && !stored->empty()) Wake(session_id);
  if (stored.ok() && change.state && SessionEnded(*change.state)) {
    // Its queued evaluations would run for nobody: withdraw them.
    std::string why = *change.state == kSessionCancelled
                          ? absl::StrCat("session ", session_id, " was cancelled")
                          : absl::StrCat("session ", session_id, " ended (", *change.state, ")");
    dispatcher_->WithdrawSession(session_id, why);
  }
  return stored;
}

absl::StatusOr<std::vector<StoredEvent>> SessionManager::AppendEvaluation(
    const std::string& session_id, const EvaluationSummary& summary, const std::string& by,
    bool full_set, std::vector<nlohmann::json> more, const SessionChange& change,
    const std::string& logged_evaluation) {
  absl::MutexLock lock(&best_mu_);
  absl::StatusOr<SessionRecord> r = store_->GetSession(session_id);
  if (!r.ok()) return r.status();
  if (SessionEnded(r->state) && !change.state) {
    // The final state is the last event of a trace: an evaluation that
    // finishes later is only marked as seen.
    return Append(session_id, {}, {}, logged_evaluation);
  }
  std::vector<nlohmann::json> events = {EvaluationTraceEvent(summary, by)};
  if (full_set && summary.all_correct && summary.geomean &&
      (!r->has_best || *summary.geomean > r->best_speedup)) {
    events.push_back(BestEvent(*summary.geomean, summary.evaluation_id));
  }
  for (nlohmann::json& e : more) events.push_back(std::move(e));
  return Append(session_id, std::move(events), change, logged_evaluation);
}

void SessionManager::OnEvaluationProgress(const SessionProgress& p) {
  if (p.event.has_verdict() || p.event.has_failed()) {
    // Stored already: an agent's evaluation enters the trace now, before the
    // agent's client hears the outcome (a verification is entered by its
    // runner).
    if (p.session_by == "agent") LinkAgentEvaluations();
    return;
  }
  nlohmann::json event;
  if (p.event.has_started()) {
    event = EvaluationStartedEvent(p.evaluation_id, p.session_by, p.event.started());
  } else if (p.event.has_scenario()) {
    event = ScenarioEvent(p.evaluation_id, p.attempt, p.done, p.total, p.event.scenario());
  } else {
    return;
  }
  SessionChange change;
  change.unless_ended = true;  // the final state stays the trace's last event
  absl::Status st = Append(p.session_id, {std::move(event)}, change).status();
  if (!st.ok() && !absl::IsFailedPrecondition(st)) {
    Logf("session %s: cannot trace the progress of %s: %s", p.session_id, p.evaluation_id,
         st.message());
  }
}

uint64_t SessionManager::Subscribe(const std::string& session_id, std::function<void()> wake) {
  absl::MutexLock lock(&watch_mu_);
  uint64_t handle = next_handle_++;
  watchers_[session_id].wakes[handle] = std::move(wake);
  return handle;
}

void SessionManager::Unsubscribe(const std::string& session_id, uint64_t handle) {
  absl::MutexLock lock(&watch_mu_);
  auto it = watchers_.find(session_id);
  if (it == watchers_.end()) return;
  it->second.wakes.erase(handle);
  if (it->second.wakes.empty()) watchers_.erase(it);
}

void SessionManager::Wake(const std::string& session_id) {
  absl::MutexLock lock(&watch_mu_);
  auto it = watchers_.find(session_id);
  if (it == watchers_.end()) return;
  for (auto& [handle, wake] : it->second.wakes) wake();
}

absl::StatusOr<std::map<std::string, question_bank::QuestionStats>>
SessionManager::QuestionStats() {
  absl::StatusOr<std::vector<StoredEvent>> events = store_->EventsOfKinds({"evaluation", "question"});
  if (!events.ok()) return events.status();
  return QuestionStatsFromEvents(*events, options_.decision.plateau_window,
                                 options_.decision.min_gain);
}

bool SessionManager::OnFullScenarioSet(const EvaluationRecord& eval) {
  absl::StatusOr<SessionRecord> session = store_->GetSession(eval.session_id);
  if (!session.ok() || eval.target != session->target) return false;
  // The listing of finished evaluations leaves the request out.
  absl::StatusOr<EvaluationRecord> stored = store_->GetEvaluation(eval.id);
  v1::EvaluationRequest request;
  if (!stored.ok() || !request.ParseFromString(stored->request)) return false;
  if (!request.scenario_names().empty() || !request.scenarios_json().empty()) return false;
  // The task's own scenarios for the target, as the session's task has
  // them (the agent may have edited the workspace's task.json).
  v1::CreateSessionRequest spec;
  if (!spec.ParseFromString(session->spec)) return false;
  v1::EvaluationRequest full;
  *full.mutable_task() = spec.task();
  full.set_target(session->target);
  full.set_kernel_source(spec.kernel_source());
  full.set_kernel_name(kWorkspaceKernel);
  absl::StatusOr<std::unique_ptr<UnpackedRequest>> unpacked = UnpackedRequest::Create(full);
  if (!unpacked.ok()) return false;
  // No scenario named means every scenario of the task for the target.
  const EvalRequest& all = (*unpacked)->eval();
  size_t total = all.scenarios.empty() ? ScenariosFor((*unpacked)->task(), all.target).size()
                                       : all.scenarios.size();
  return eval.task == session->task && eval.scenarios_total == static_cast<int>(total);
}

void SessionManager::LinkLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.poll)) return;
    }
    LinkAgentEvaluations();
  }
}

void SessionManager::LinkAgentEvaluations() {
  absl::MutexLock lock(&link_mu_);
  absl::StatusOr<std::vector<EvaluationRecord>> evals = store_->UnloggedAgentEvaluations();
  if (!evals.ok()) {
    Log(evals.status().message());
    return;
  }
  for (const EvaluationRecord& listed : *evals) {
    // The listing leaves the request out; the summary's kernel_sha256 is
    // the hash of the source the request carried.
    absl::StatusOr<EvaluationRecord> full = store_->GetEvaluation(listed.id);
    if (!full.ok()) {
      Log(full.status().message());
      continue;
    }
    const EvaluationRecord& e = *full;
    absl::Status st = AppendEvaluation(e.session_id, SummarizeEvaluation(e), "agent",
                                       OnFullScenarioSet(e), {}, {}, e.id)
                          .status();
    if (!st.ok()) Logf("session %s: %s", e.session_id, st.message());
  }
}

}  // namespace kseek::server
