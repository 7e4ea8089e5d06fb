// Helpers for the agent tests (tests/agent_*_test.cc): collecting a run's
// events, finding the agent CLIs, and the stand-in model server
// (tests/agent_standin/standin_model.py, a stand-in for a language model's
// answers that the real CLIs talk to).
#ifndef KERNELSEEK_TESTS_AGENT_TESTING_H_
#define KERNELSEEK_TESTS_AGENT_TESTING_H_

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/agent/agent_process.h"
#include "server/agent/event.h"
#include "tests/test_util.h"

namespace kseek::testing {

// The events of one run, kept in order; safe to read while the run goes on.
class EventLog {
 public:
  void Add(const agent::AgentEvent& e) {
    absl::MutexLock lock(&mu_);
    events_.push_back(e);
  }
  agent::AgentEventSink Sink() {
    return [this](const agent::AgentEvent& e) { Add(e); };
  }
  std::vector<agent::AgentEvent> All() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::vector<agent::AgentEvent> OfKind(agent::AgentEventKind kind) {
    std::vector<agent::AgentEvent> out;
    for (const agent::AgentEvent& e : All()) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }
  // The one error event of `error` kind; fails the test if there is none.
  agent::AgentEvent ErrorOf(agent::AgentErrorKind error) {
    for (const agent::AgentEvent& e : OfKind(agent::AgentEventKind::kError)) {
      if (e.error == error) return e;
    }
    ADD_FAILURE() << "no error event of kind " << agent::ErrorKindName(error) << " in "
                  << Dump();
    return agent::AgentEvent();
  }
  // Checks that the run delivered exactly one turn_end, as its last event,
  // and returns it.
  agent::AgentEvent TurnEnd() {
    const std::vector<agent::AgentEvent> all = All();
    EXPECT_EQ(OfKind(agent::AgentEventKind::kTurnEnd).size(), 1u) << Dump();
    if (all.empty() || all.back().kind != agent::AgentEventKind::kTurnEnd) {
      ADD_FAILURE() << "the last event is not turn_end: " << Dump();
      return agent::AgentEvent();
    }
    return all.back();
  }
  std::string Dump() {
    std::string out;
    for (const agent::AgentEvent& e : All()) absl::StrAppend(&out, "\n  ", e.ToJson().dump());
    return out;
  }

 private:
  absl::Mutex mu_;
  std::vector<agent::AgentEvent> events_ ABSL_GUARDED_BY(mu_);
};

// The full path of `program` on $PATH, or "".
inline std::string FindOnPath(const std::string& program) {
  const char* path = getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "", ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", program);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// The agent CLIs come from npm (scripts/setup.sh). Without node and npm the
// test is skipped; with them, a missing CLI is a failure.
#define KSEEK_REQUIRE_AGENT_CLI(program)                                            \
  do {                                                                              \
    if (::kseek::testing::FindOnPath("node").empty() ||                             \
        ::kseek::testing::FindOnPath("npm").empty()) {                              \
      GTEST_SKIP() << "skipped: node/npm not installed (the agent CLIs need them)"; \
    }                                                                               \
    ASSERT_FALSE(::kseek::testing::FindOnPath(program).empty())                     \
        << program << " is not on PATH; scripts/setup.sh installs it";              \
    ASSERT_FALSE(::kseek::testing::FindOnPath("python3").empty())                   \
        << "python3 (for the stand-in model) is not on PATH";                       \
  } while (0)

// The JSON objects of a JSONL text's complete lines: a last line without
// its newline is still being written and is left out.
inline std::vector<nlohmann::json> CompleteJsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (size_t from = 0, end; (end = text.find('\n', from)) != std::string::npos; from = end + 1) {
    if (end > from) out.push_back(nlohmann::json::parse(text.substr(from, end - from)));
  }
  return out;
}

// The stand-in model server, running until destroyed.
class StandinModel {
 public:
  // Starts it with a script from tests/agent_data/ and NAME=VALUE variables.
  StandinModel(const std::string& script_name, const std::vector<std::string>& vars,
               const std::vector<std::string>& extra_args = {}) {
    dir_ = TempDir("kseek-standin");
    log_ = dir_ + "/requests.jsonl";
    std::vector<std::string> argv = {FindOnPath("python3"),
                                     SourceDir() + "/tests/agent_standin/standin_model.py",
                                     "--script", SourceDir() + "/tests/agent_data/" + script_name,
                                     "--log", log_, "--port", "0"};
    for (const std::string& v : vars) argv.insert(argv.end(), {"--var", v});
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    daemon_ = std::make_unique<Daemon>(argv, dir_ + "/stderr.log");
    address_ = daemon_->WaitListening(30);
  }
  // "127.0.0.1:PORT", or "" if it did not start.
  const std::string& address() const { return address_; }
  std::string url() const { return "http://" + address_; }
  std::string stderr_log() const { return ReadFile(dir_ + "/stderr.log"); }
  // Every request it got so far: the log's complete lines (a last line
  // without its newline is still being written, possibly in several
  // writes, and is left for the next call).
  std::vector<nlohmann::json> Requests() const {
    std::ifstream in(log_, std::ios::binary);
    return CompleteJsonLines(
        std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  }
  // The requests of the main conversation ("kind": "main").
  std::vector<nlohmann::json> MainRequests() const {
    std::vector<nlohmann::json> out;
    for (nlohmann::json& r : Requests()) {
      if (r.value("kind", "") == "main") out.push_back(std::move(r));
    }
    return out;
  }

 private:
  std::string dir_;
  std::string log_;
  std::unique_ptr<Daemon> daemon_;
  std::string address_;
};

// A test workspace: kernel.cu as the stand-in scripts expect it.
inline std::string MakeWorkspace(const std::string& parent) {
  const std::string ws = parent + "/workspace";
  mkdir(ws.c_str(), 0755);
  WriteFile(ws + "/kernel.cu",
            "__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\nint block = 128;\n");
  return ws;
}

}  // namespace kseek::testing

#endif  // KERNELSEEK_TESTS_AGENT_TESTING_H_
