// The sessions part of the store: a version 1 database upgraded in place,
// dense event indices, counters kept from the events, ended sessions that
// never change state again (nor take progress events), agent tokens that die
// with their session, agent evaluations entered in a trace exactly once, and
// the closed sets of states and event kinds, the same in the code, in
// session.proto and in server/README.md.
#include <sqlite3.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/store.h"
#include "tests/test_util.h"

namespace kseek::server {
namespace {

std::unique_ptr<Store> OpenStore(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

SessionRecord Session(const std::string& id) {
  SessionRecord r;
  r.id = id;
  r.user = "alice";
  r.task = "softmax";
  r.target = "host";
  r.spec = "spec";
  r.goal_speedup = 1.5;
  r.workspace = "/tmp/ws/" + id;
  r.created_ms = 1000;
  return r;
}

nlohmann::json Event(const std::string& kind, nlohmann::json fields = nlohmann::json::object()) {
  fields["kind"] = kind;
  fields["time_ms"] = 2000;
  return fields;
}

TEST(SessionStore, UpgradesAVersionOneDatabaseKeepingItsEvaluations) {
  const std::string path = testing::TempDir("session-store") + "/kernelseek.db";
  {
    // The version 1 schema, as the previous kernelseekd wrote it.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const char* v1 =
        "CREATE TABLE users (name TEXT PRIMARY KEY, role TEXT NOT NULL, revoked INTEGER NOT NULL "
        "DEFAULT 0, created_ms INTEGER NOT NULL);"
        "CREATE TABLE tokens (hash TEXT PRIMARY KEY, user TEXT NOT NULL REFERENCES users(name), "
        "created_ms INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);"
        "CREATE TABLE workers (id TEXT PRIMARY KEY, info BLOB NOT NULL, healthy INTEGER NOT NULL, "
        "last_heartbeat_ms INTEGER NOT NULL, registered_ms INTEGER NOT NULL);"
        "CREATE TABLE evaluations (id TEXT PRIMARY KEY, user TEXT NOT NULL, target TEXT NOT NULL, "
        "task TEXT NOT NULL, kernel_name TEXT NOT NULL, request BLOB NOT NULL, state TEXT NOT NULL, "
        "attempts INTEGER NOT NULL DEFAULT 0, worker_id TEXT NOT NULL DEFAULT '', created_ms "
        "INTEGER NOT NULL, started_ms INTEGER NOT NULL DEFAULT 0, finished_ms INTEGER NOT NULL "
        "DEFAULT 0, verdict BLOB, error TEXT NOT NULL DEFAULT '', scenarios_done INTEGER NOT NULL "
        "DEFAULT 0, scenarios_total INTEGER NOT NULL DEFAULT 0);"
        "INSERT INTO evaluations(id, user, target, task, kernel_name, request, state, created_ms) "
        "VALUES('ev_old', 'alice', 'host', 'softmax', 'k.cc', x'00', 'done', 5);"
        "PRAGMA user_version=1;";
    ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  std::unique_ptr<Store> store = OpenStore(path);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<EvaluationRecord> old = store->GetEvaluation("ev_old");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->state, "done");
  EXPECT_EQ(old->session_id, "");
  EXPECT_TRUE(store->InsertSession(Session("ss_1"), {Event("state", {{"state", "created"}})}).ok());
}

TEST(SessionStore, EventsAreDenseAndCountersFollowThem) {
  std::unique_ptr<Store> store = OpenStore(testing::TempDir("session-store") + "/k.db");
  ASSERT_TRUE(store->InsertSession(Session("ss_a"), {Event("state", {{"state", "created"}})}).ok());
  ASSERT_TRUE(store->InsertSession(Session("ss_b"), {Event("state", {{"state", "created"}})}).ok());
  auto appended = store->AppendSessionEvents(
      "ss_a", {Event("turn_start", {{"turn", 1}}), Event("cost", {{"usd", 0.25}}),
               Event("agent_session", {{"agent_session_id", "conv-7"}}),
               Event("evaluation", {{"evaluation_id", "ev_1"}}),
               Event("best", {{"geomean_speedup", 1.7}, {"evaluation_id", "ev_1"}})});
  ASSERT_TRUE(appended.ok()) << appended.status();
  EXPECT_EQ(appended->front().index, 1);
  EXPECT_EQ(appended->back().index, 5);
  ASSERT_TRUE(store->AppendSessionEvents("ss_b", {Event("turn_start")}).ok());

  absl::StatusOr<SessionRecord> a = store->GetSession("ss_a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->events, 6);
  EXPECT_EQ(a->turns, 1);
  EXPECT_EQ(a->evaluations, 1);
  EXPECT_DOUBLE_EQ(a->cost_usd, 0.25);
  EXPECT_TRUE(a->has_best);
  EXPECT_DOUBLE_EQ(a->best_speedup, 1.7);
  EXPECT_EQ(a->best_evaluation_id, "ev_1");
  EXPECT_EQ(a->agent_session_id, "conv-7");

  auto events = store->ReadSessionEvents("ss_a", 0, 100);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 6u);
  for (size_t i = 0; i < events->size(); ++i) {
    EXPECT_EQ((*events)[i].index, static_cast<int64_t>(i));
    nlohmann::json j = nlohmann::json::parse((*events)[i].json);
    EXPECT_EQ(j["index"], static_cast<int64_t>(i));
    EXPECT_EQ(j["session_id"], "ss_a");
  }
  auto from = store->ReadSessionEvents("ss_a", 4, 100);
  ASSERT_TRUE(from.ok());
  EXPECT_EQ(from->size(), 2u);
  EXPECT_EQ(store->GetSession("ss_b")->events, 2);
  EXPECT_TRUE(absl::IsNotFound(store->AppendSessionEvents("ss_none", {Event("state")}).status()));
}

TEST(SessionStore, AnEndedSessionNeverChangesStateAndItsTokensDie) {
  std::unique_ptr<Store> store = OpenStore(testing::TempDir("session-store") + "/k.db");
  ASSERT_TRUE(store->AddUser("alice", "user", "alice-hash", 1).ok());
  ASSERT_TRUE(store->InsertSession(Session("ss_a"), {Event("state")}).ok());
  ASSERT_TRUE(store->AddSessionToken("agent-hash", "ss_a", 1).ok());
  absl::StatusOr<SessionRecord> by_token = store->LookupSessionToken("agent-hash");
  ASSERT_TRUE(by_token.ok()) << by_token.status();
  EXPECT_EQ(by_token->id, "ss_a");
  EXPECT_EQ(by_token->user, "alice");

  SessionChange cancel;
  cancel.state = kSessionCancelled;
  ASSERT_TRUE(store->AppendSessionEvents("ss_a", {Event("state")}, cancel).ok());
  SessionChange succeed;
  succeed.state = kSessionSucceeded;
  auto refused = store->AppendSessionEvents("ss_a", {Event("state")}, succeed);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_EQ(store->GetSession("ss_a")->state, kSessionCancelled);
  EXPECT_EQ(store->GetSession("ss_a")->events, 2);  // the refused event was not written
  // Events without a change of state are still recorded (e.g. the stopped
  // agent's last turn_end), unless they must not follow the final state (an
  // evaluation's progress).
  EXPECT_TRUE(store->AppendSessionEvents("ss_a", {Event("turn_end")}).ok());
  SessionChange progress;
  progress.unless_ended = true;
  auto late = store->AppendSessionEvents("ss_a", {Event("scenario")}, progress);
  EXPECT_TRUE(absl::IsFailedPrecondition(late.status())) << late.status();
  EXPECT_EQ(store->GetSession("ss_a")->events, 3);
  EXPECT_TRUE(absl::IsNotFound(store->LookupSessionToken("agent-hash").status()));
  auto active = store->ActiveSessions();
  ASSERT_TRUE(active.ok());
  EXPECT_TRUE(active->empty());
}

TEST(SessionStore, AnAgentEvaluationIsEnteredOnce) {
  std::unique_ptr<Store> store = OpenStore(testing::TempDir("session-store") + "/k.db");
  ASSERT_TRUE(store->InsertSession(Session("ss_a"), {Event("state")}).ok());
  EvaluationRecord e;
  e.id = "ev_agent";
  e.user = "alice";
  e.target = "host";
  e.task = "softmax";
  e.kernel_name = "kernel.cu";
  e.request = "r";
  e.created_ms = 10;
  e.session_id = "ss_a";
  e.session_by = "agent";
  ASSERT_TRUE(store->InsertEvaluation(e).ok());
  EvaluationRecord mine = e;
  mine.id = "ev_verification";
  mine.session_by = "verification";
  ASSERT_TRUE(store->InsertEvaluation(mine).ok());
  EXPECT_TRUE(store->UnloggedAgentEvaluations()->empty());  // not finished yet
  ASSERT_TRUE(*store->FinishFailed("ev_agent", "boom", 20));
  ASSERT_TRUE(*store->FinishFailed("ev_verification", "boom", 20));
  auto unlogged = store->UnloggedAgentEvaluations();
  ASSERT_TRUE(unlogged.ok());
  ASSERT_EQ(unlogged->size(), 1u);
  EXPECT_EQ((*unlogged)[0].id, "ev_agent");
  EXPECT_EQ((*unlogged)[0].session_id, "ss_a");
  ASSERT_TRUE(store->AppendSessionEvents("ss_a", {Event("evaluation")}, {}, "ev_agent").ok());
  EXPECT_TRUE(store->UnloggedAgentEvaluations()->empty());
}

TEST(SessionStore, RefusesAnEventKindOrStateOutsideTheirSets) {
  std::unique_ptr<Store> store = OpenStore(testing::TempDir("session-store") + "/k.db");
  ASSERT_TRUE(store->InsertSession(Session("ss_a"), {Event("state")}).ok());
  auto unknown = store->AppendSessionEvents("ss_a", {Event("progress")});
  EXPECT_TRUE(absl::IsInternal(unknown.status())) << unknown.status();
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "\"progress\" is not a trace event kind"))
      << unknown.status();
  SessionChange paused;
  paused.state = "paused";
  auto state = store->AppendSessionEvents("ss_a", {Event("state")}, paused);
  EXPECT_TRUE(absl::StrContains(state.status().message(), "\"paused\" is not a session state"))
      << state.status();
  EXPECT_EQ(store->GetSession("ss_a")->events, 1);
  EXPECT_EQ(store->GetSession("ss_a")->state, kSessionCreated);
}

// The words of the "Values: a, b, c." list in the comment right above
// `declaration` in `proto` (a .proto file's text).
std::vector<std::string> DocumentedValues(const std::string& proto, const std::string& declaration) {
  const size_t at = proto.find(declaration);
  if (at == std::string::npos) return {};
  // The comment lines just above the declaration.
  std::vector<std::string> above;
  size_t end = proto.rfind('\n', at);
  while (end != std::string::npos && end > 0) {
    const size_t begin = proto.rfind('\n', end - 1);
    const std::string line(absl::StripAsciiWhitespace(
        proto.substr(begin == std::string::npos ? 0 : begin + 1, end - begin - 1)));
    if (!absl::StartsWith(line, "//")) break;
    above.insert(above.begin(), std::string(absl::StripAsciiWhitespace(line.substr(2))));
    if (begin == std::string::npos) break;
    end = begin;
  }
  const std::string comment = absl::StrJoin(above, " ");
  const size_t values = comment.find("Values:");
  if (values == std::string::npos) return {};
  const size_t stop = comment.find('.', values);
  std::vector<std::string> out;
  for (absl::string_view word : absl::StrSplit(
           comment.substr(values + 7, stop - values - 7), absl::ByAnyChar(", "), absl::SkipEmpty())) {
    out.emplace_back(word);
  }
  return out;
}

// The kinds in the first column of the table under "### The session trace"
// in server/README.md.
std::vector<std::string> ReadmeTraceKinds() {
  const std::string readme = testing::ReadFile(testing::SourceDir() + "/server/README.md");
  const size_t section = readme.find("### The session trace");
  std::vector<std::string> kinds;
  if (section == std::string::npos) return kinds;
  bool in_table = false;
  for (absl::string_view line : absl::StrSplit(readme.substr(section), '\n')) {
    if (absl::StartsWith(line, "| `")) {
      in_table = true;
      const size_t close = line.find('`', 3);
      kinds.emplace_back(line.substr(3, close - 3));
    } else if (in_table) {
      break;
    }
  }
  return kinds;
}

TEST(SessionStore, StatesAndEventKindsAreTheSetsTheProtoAndTheReadmeDocument) {
  const std::string proto =
      testing::ReadFile(testing::SourceDir() + "/proto/kernelseek/v1/session.proto");
  const std::vector<std::string> states(std::begin(kSessionStates), std::end(kSessionStates));
  const std::vector<std::string> kinds(std::begin(kSessionEventKinds), std::end(kSessionEventKinds));
  EXPECT_EQ(DocumentedValues(proto, "string state = 8;"), states);
  EXPECT_EQ(DocumentedValues(proto, "string kind = 4;"), kinds);
  EXPECT_EQ(ReadmeTraceKinds(), kinds);
  for (const std::string& s : states) EXPECT_TRUE(IsSessionState(s)) << s;
  EXPECT_FALSE(IsSessionState("done"));
  for (const std::string& k : kinds) EXPECT_TRUE(IsSessionEventKind(k)) << k;
}

}  // namespace
}  // namespace kseek::server
