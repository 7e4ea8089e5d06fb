// What a user and their agent may not do, tried as an adversary would, on a
// real kernelseekd and host kseek-worker over loopback:
//
// - a request that brings its own program or command template, or names an
//   agent the operator did not allow, is refused (PERMISSION_DENIED), over
//   gRPC and through `kseek session start`;
// - a workspace holds task.json (without the shipped kernels), the
//   reference and baseline sources, kernel.cu and BRIEF.md, nothing else;
// - an agent (a command template run as its session's own user) that tries
//   to read the coordinator's state and tokens, to read or write another
//   session's workspace, to write outside its own, to signal another
//   session's agent, or to reach a TCP port, is denied each time, while its
//   own `kseek eval` goes through the coordinator's Unix socket with its
//   session token, and nothing it started survives its turn or its user the
//   session;
// - a coordinator that cannot confine agents says so and lets only admins
//   start sessions.
//
// The confinement cases need root and useradd (as in CI); elsewhere they
// skip and say why.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "server/session_workspace.h"
#include "tests/session_testing.h"

namespace kseek {
namespace {

namespace v1 = ::kernelseek::v1;
using testing::Cluster;
using testing::OfKind;
using testing::Softmax;

// A token for a new user of `role`, made through the Admin service.
std::string AddUser(Cluster& c, const std::string& name, const std::string& role = "user") {
  auto admin = v1::Admin::NewStub(grpc::CreateChannel(c.address(), grpc::InsecureChannelCredentials()));
  v1::AddUserRequest request;
  request.set_name(name);
  request.set_role(role);
  v1::TokenResponse token;
  grpc::Status st = admin->AddUser(c.Context().get(), request, &token);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return token.token();
}

std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->AddMetadata("authorization", "Bearer " + token);
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return ctx;
}

grpc::Status CreateAs(Cluster& c, const std::string& token, const v1::CreateSessionRequest& r,
                      v1::Session* s) {
  return c.stub().CreateSession(As(token).get(), r, s);
}

// The files of `dir`, relative, recursively.
std::set<std::string> FilesUnder(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file()) out.insert(std::filesystem::relative(it->path(), dir).string());
  }
  return out;
}

// The file's contents, "" while it does not exist.
std::string ReadIfThere(const std::string& path) {
  return std::filesystem::exists(path) ? testing::ReadFile(path) : "";
}

// Waits up to `seconds` for `done`.
bool Eventually(const std::function<bool()>& done, double seconds = 120) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// An agent that waits long, so that its session stays alive (and its
// workspace in place) while another session's agent attacks it.
const char kVictimScript[] = R"(#!/bin/bash
echo $$ > agent.pid
echo "victim secret" > secret.txt
touch started
exec -a victim-marker sleep 300
)";

// The attacker: each attempt is recorded as "case: denied" or "case:
// allowed (...)" in results.txt, its own workspace. It waits for the file
// "go" (the victim's workspace, written by the test), then tries.
const char kAttackerScript[] = R"sh(#!/bin/bash
state="$1"; port="$2"; coordinator_port="$3"; source_dir="$4"
for i in $(seq 600); do [ -s go ] && break; sleep 0.1; done
other=$(cat go)
out=results.txt
try() {
  name="$1"; shift
  if detail=$("$@" 2>&1); then echo "$name: allowed ($(echo "$detail" | head -c 80 | tr '\n' ' '))" >> $out
  else echo "$name: denied ($(echo "$detail" | head -c 120 | tr '\n' ' '))" >> $out; fi
}
echo "identity: $(id -u) $(id -un) $(id -G)" >> $out
try read_own_workspace cat kernel.cu
try write_own_workspace touch mine
try read_state_database head -c 16 "$state/kernelseek.db"
try read_admin_token cat "$state/admin.token"
try read_worker_token cat "$state/worker.token"
try list_state_dir ls "$state"
try list_workspaces ls "$state/workspaces"
try read_other_workspace cat "$other/secret.txt"
try list_other_workspace ls "$other"
try read_other_session_token cat "$other/.kernelseek/client.json"
try write_other_workspace touch "$other/pwned"
try write_state_dir touch "$state/pwned"
try write_source_tree touch "$source_dir/pwned"
try write_etc touch /etc/kseek-pwned
try signal_other_agent kill -0 $(pgrep -f victim-marker | head -1)
try tcp_other_port timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
try tcp_coordinator_port timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$coordinator_port"
setsid bash -c 'exec -a left-behind-marker sleep 300' < /dev/null > /dev/null 2>&1 &
sleep 0.5
try daemon_running pgrep -f left-behind-marker
kseek eval --max-samples 3 --max-seconds 0.1 --json kernel.cu > eval.json 2> eval.err
echo "own_evaluation: exit $?" >> $out
echo finished >> $out
)sh";

TEST(WorkspaceTask, KeepsTheReferenceBaselineAndWhatTheyIncludeOnly) {
  v1::TaskFiles task;
  auto& f = *task.mutable_files();
  f["task.json"] = R"({"name": "t", "sources": {
      "cuda": {"reference": "ref.cu", "baseline": "base.cu", "kernels": ["fast.cu", "faster.cu"]},
      "host": {"reference": "ref_host.cc", "kernels": ["fast_host.cc"]}}})";
  f["ref.cu"] = "#include \"common/util.h\"\n#include <cuda.h>\n#include \"kernelseek/abi.h\"\n";
  f["base.cu"] = "  #  include \"base.cuh\"\n";
  f["ref_host.cc"] = "int x;\n";
  f["common/util.h"] = "#include \"more.inc\"\n";
  f["common/more.inc"] = "// more\n";
  f["base.cuh"] = "// base\n";
  f["fast.cu"] = "#include \"fast_tiles.cuh\"\n";
  f["fast_tiles.cuh"] = "// the answer\n";
  f["faster.cu"] = "";
  f["fast_host.cc"] = "";
  f["README.md"] = "how fast.cu works\n";
  absl::StatusOr<v1::TaskFiles> kept = server::WorkspaceTask(task);
  ASSERT_TRUE(kept.ok()) << kept.status();
  std::set<std::string> names;
  for (const auto& [name, text] : kept->files()) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"task.json", "ref.cu", "base.cu", "ref_host.cc",
                                          "common/util.h", "common/more.inc", "base.cuh"}));
  nlohmann::json doc = nlohmann::json::parse(kept->files().at("task.json"));
  EXPECT_FALSE(doc["sources"]["cuda"].contains("kernels"));
  EXPECT_FALSE(doc["sources"]["host"].contains("kernels"));
  EXPECT_EQ(doc["sources"]["cuda"]["reference"], "ref.cu");
  EXPECT_EQ(kept->files().at("common/util.h"), f["common/util.h"]);

  // A named source that is not there is an error naming it.
  f.erase("base.cu");
  absl::StatusOr<v1::TaskFiles> broken = server::WorkspaceTask(task);
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(broken.status().message().find("task.files[base.cu]"), std::string::npos)
      << broken.status();
}

class SessionTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteFile(c_.dir() + "/victim.sh", kVictimScript);
    testing::WriteFile(c_.dir() + "/attacker.sh", kAttackerScript);
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ASSERT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(listen(listener_, 4), 0);
    ASSERT_EQ(getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    other_port_ = ntohs(addr.sin_port);
    c_.AllowAgent("victim", {{"kind", "command"},
                             {"start_template", absl::StrCat("bash ", c_.dir(), "/victim.sh")}});
    c_.AllowAgent("attacker",
                  {{"kind", "command"},
                   {"start_template",
                    absl::StrCat("bash ", c_.dir(), "/attacker.sh ", c_.dir(), "/state ",
                                 other_port_, " ", c_.port(), " ", testing::SourceDir())}});
  }
  void TearDown() override { close(listener_); }

  // An agent that replaces kernel.cu by `command` (run in its workspace)
  // and ends its turn.
  void AllowPlanter(const std::string& name, const std::string& command) {
    testing::WriteFile(c_.dir() + "/" + name + ".sh", "#!/bin/bash\n" + command + "\n");
    c_.AllowAgent(name, {{"kind", "command"},
                         {"start_template", absl::StrCat("bash ", c_.dir(), "/", name, ".sh")}});
  }

  Cluster c_;
  int listener_ = -1;
  int other_port_ = 0;
};

TEST_F(SessionTrustTest, AgentsComeFromTheAllowlistOnly) {
  c_.StartCoordinator();
  const std::string eve = AddUser(c_, "eve");
  v1::Session s;
  for (const auto& [field, set] :
       std::vector<std::pair<std::string, std::function<void(v1::AgentSpec*)>>>{
           {"agent.start_template",
            [](v1::AgentSpec* a) { a->set_start_template("/bin/sh -c 'id > /tmp/owned'"); }},
           {"agent.resume_template", [](v1::AgentSpec* a) { a->set_resume_template("/bin/sh"); }},
           {"agent.program", [](v1::AgentSpec* a) { a->set_program("/bin/sh"); }}}) {
    v1::CreateSessionRequest r = c_.Request(1);
    r.mutable_agent()->set_name("victim");
    set(r.mutable_agent());
    grpc::Status st = CreateAs(c_, eve, r, &s);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED) << field;
    EXPECT_TRUE(absl::StartsWith(st.error_message(), field)) << st.error_message();
    // Not even an admin brings a program of their own.
    EXPECT_EQ(c_.stub().CreateSession(c_.Context().get(), r, &s).error_code(),
              grpc::StatusCode::PERMISSION_DENIED)
        << field;
  }
  // The old way to ask for a command agent, and a name nobody allowed.
  for (const std::string& name : {std::string("command"), std::string("typist")}) {
    v1::CreateSessionRequest r = c_.Request(1);
    r.mutable_agent()->set_kind(name);
    grpc::Status st = CreateAs(c_, eve, r, &s);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED) << name;
    EXPECT_NE(st.error_message().find("not in this coordinator's allowlist (attacker, victim"),
              std::string::npos)
        << st.error_message();
  }
  // The model, the one choice left, is a name: nothing a template's shell
  // or a CLI's option parser could take for more.
  for (const std::string& model : {std::string("m; id > /tmp/owned"), std::string("--help"),
                                   std::string("$(id)"), std::string(200, 'm')}) {
    v1::CreateSessionRequest r = c_.Request(1);
    r.mutable_agent()->set_name("victim");
    r.mutable_agent()->set_model(model);
    grpc::Status st = CreateAs(c_, eve, r, &s);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << model;
    EXPECT_TRUE(absl::StartsWith(st.error_message(), "agent.model")) << st.error_message();
  }
  // The CLI says the same and exits 2; it has no flag for a command line.
  testing::ProcessResult cli =
      c_.Kseek({"session", "start", "--task", Softmax(), "--target", "host", "--agent", "typist",
                Softmax() + "/baseline_host.cc"});
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE(cli.err.find("\"typist\" is not in this coordinator's allowlist"), std::string::npos)
      << cli.err;
  cli = c_.Kseek({"session", "start", "--task", Softmax(), "--target", "host", "--agent", "victim",
                  "--command", "/bin/sh", Softmax() + "/baseline_host.cc"});
  EXPECT_EQ(cli.exit_code, 2) << cli.err;
}

TEST_F(SessionTrustTest, WorkspaceHoldsOnlyWhatTheAgentMaySee) {
  c_.StartCoordinator();
  v1::Session s = c_.Create([&] {
    v1::CreateSessionRequest r = c_.Request(1);
    r.mutable_agent()->set_name("victim");
    return r;
  }());
  ASSERT_FALSE(s.session_id().empty());
  const std::string ws = c_.Workspace(s.session_id());
  ASSERT_TRUE(testing::WaitFile(ws + "/started", 60)) << c_.Log();
  std::set<std::string> files = FilesUnder(ws);
  // What the agent itself wrote is not the coordinator's doing.
  for (const char* own : {"agent.pid", "secret.txt", "started"}) files.erase(own);
  EXPECT_EQ(files, (std::set<std::string>{"task.json", "reference.cu", "baseline.cu",
                                          "reference_host.cc", "baseline_host.cc", "kernel.cu",
                                          "BRIEF.md", ".kernelseek/client.json"}));
  // The softmax folder ships fast.cu, fast_host.cc and a README: none came.
  ASSERT_TRUE(std::filesystem::exists(Softmax() + "/fast_host.cc"));
  nlohmann::json task = nlohmann::json::parse(testing::ReadFile(ws + "/task.json"));
  for (const auto& [family, sources] : task["sources"].items()) {
    EXPECT_FALSE(sources.contains("kernels")) << family;
    EXPECT_TRUE(sources.contains("reference")) << family;
  }
  EXPECT_EQ(testing::ReadFile(ws + "/reference_host.cc"),
            testing::ReadFile(Softmax() + "/reference_host.cc"));
  v1::CancelSessionResponse cancelled;
  v1::SessionRef ref;
  ref.set_session_id(s.session_id());
  EXPECT_TRUE(c_.stub().CancelSession(c_.Context().get(), ref, &cancelled).ok());
}

TEST_F(SessionTrustTest, ConfinedAgentIsDeniedEverythingButItsWorkspaceAndItsSession) {
  c_.StartCoordinator();
  c_.StartWorker();
  if (c_.Log().find("agents are NOT confined") != std::string::npos) {
    GTEST_SKIP() << "skipped: this machine cannot confine agents: " << c_.Log();
  }
  ASSERT_NE(c_.Log().find("agents are confined"), std::string::npos) << c_.Log();
  const std::string eve = AddUser(c_, "eve");
  const std::string mallory = AddUser(c_, "mallory");

  v1::CreateSessionRequest r = c_.Request(1);
  r.mutable_agent()->set_name("victim");
  v1::Session victim;
  ASSERT_TRUE(CreateAs(c_, eve, r, &victim).ok()) << c_.Log();
  const std::string victim_ws = c_.Workspace(victim.session_id());
  ASSERT_TRUE(testing::WaitFile(victim_ws + "/started", 60)) << c_.Log();

  r.mutable_agent()->set_name("attacker");
  v1::Session attacker;
  ASSERT_TRUE(CreateAs(c_, mallory, r, &attacker).ok()) << c_.Log();
  const std::string ws = c_.Workspace(attacker.session_id());
  testing::WriteFile(ws + "/go", victim_ws);
  ASSERT_TRUE(Eventually([&] {
    return ReadIfThere(ws + "/results.txt").find("finished") != std::string::npos;
  })) << ReadIfThere(ws + "/results.txt") << c_.Log();

  std::map<std::string, std::string> results;
  for (absl::string_view line : absl::StrSplit(testing::ReadFile(ws + "/results.txt"), '\n')) {
    std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits(": ", 1));
    if (!kv.first.empty()) results[kv.first] = kv.second;
  }
  const std::string all = testing::ReadFile(ws + "/results.txt");
  std::fprintf(stderr, "the attacking agent's attempts:\n%s", all.c_str());
  // It ran as its session's own user, not root, in no group of ours.
  struct passwd* pw = getpwnam(("ks-" + attacker.session_id().substr(3)).c_str());
  ASSERT_NE(pw, nullptr) << all;
  EXPECT_TRUE(absl::StartsWith(results["identity"], absl::StrCat(pw->pw_uid, " ks-"))) << all;
  EXPECT_NE(pw->pw_uid, 0u);
  // Its own workspace is its to read and write.
  EXPECT_TRUE(absl::StartsWith(results["read_own_workspace"], "allowed")) << all;
  EXPECT_TRUE(absl::StartsWith(results["write_own_workspace"], "allowed")) << all;
  for (const char* denied :
       {"read_state_database", "read_admin_token", "read_worker_token", "list_state_dir",
        "list_workspaces", "read_other_workspace", "list_other_workspace",
        "read_other_session_token", "write_other_workspace", "write_state_dir",
        "write_source_tree", "write_etc", "signal_other_agent", "tcp_other_port",
        "tcp_coordinator_port"}) {
    EXPECT_TRUE(absl::StartsWith(results[denied], "denied")) << denied << "\n" << all;
  }
  // Denied by the kernel, not by a missing target.
  EXPECT_NE(results["signal_other_agent"].find("not permitted"), std::string::npos) << all;
  EXPECT_NE(results["tcp_other_port"].find("unreachable"), std::string::npos) << all;
  EXPECT_NE(results["read_admin_token"].find("Permission denied"), std::string::npos) << all;
  EXPECT_NE(results["read_other_workspace"].find("Permission denied"), std::string::npos) << all;
  // The same attempts succeed for the test (root, the host's network): the
  // denials are the agent's.
  EXPECT_FALSE(testing::ReadFile(c_.dir() + "/state/admin.token").empty());
  EXPECT_EQ(testing::ReadFile(victim_ws + "/secret.txt"), "victim secret\n");
  for (const std::string& planted : {victim_ws + "/pwned", c_.dir() + "/state/pwned",
                                     testing::SourceDir() + "/pwned", std::string("/etc/kseek-pwned")}) {
    EXPECT_FALSE(std::filesystem::exists(planted)) << planted;
  }
  {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(other_port_));
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    close(fd);
  }

  // Its own evaluation went through the coordinator with its session token
  // and is in its trace, with the hash of what it evaluated.
  EXPECT_EQ(results["own_evaluation"], "exit 0") << testing::ReadFile(ws + "/eval.err");
  v1::Session ended = c_.WaitEnded(attacker.session_id(), 240);
  std::vector<nlohmann::json> trace = c_.Trace(attacker.session_id());
  std::vector<nlohmann::json> evals = OfKind(trace, "evaluation");
  ASSERT_GE(evals.size(), 1u);
  EXPECT_EQ(evals[0]["by"], "agent");
  testing::ProcessResult sha =
      testing::RunProcess({"sha256sum", Softmax() + "/baseline_host.cc"});
  ASSERT_EQ(sha.exit_code, 0);
  EXPECT_EQ(evals[0]["kernel_sha256"], sha.out.substr(0, 64));

  // Nothing it started survived: not the daemon that left its group, and
  // once the session ended, not its user either; its files are the
  // coordinator's again.
  EXPECT_TRUE(absl::StartsWith(results["daemon_running"], "allowed")) << all;
  testing::ProcessResult left = testing::RunProcess({"pgrep", "-f", "left-behind-marker"});
  EXPECT_NE(left.exit_code, 0) << left.out;
  EXPECT_TRUE(Eventually([&] {
    return getpwnam(("ks-" + attacker.session_id().substr(3)).c_str()) == nullptr;
  }, 30));
  struct stat st;
  ASSERT_EQ(stat(ws.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, getuid());

  // The victim's agent is untouched by all this, and ends with its session.
  EXPECT_EQ(testing::RunProcess({"pgrep", "-f", "victim-marker"}).exit_code, 0);
  v1::SessionRef ref;
  ref.set_session_id(victim.session_id());
  v1::CancelSessionResponse cancelled;
  EXPECT_TRUE(c_.stub().CancelSession(c_.Context().get(), ref, &cancelled).ok());
  EXPECT_TRUE(Eventually([] {
    return testing::RunProcess({"pgrep", "-f", "victim-marker"}).exit_code != 0;
  }, 30));
  EXPECT_EQ(getpwnam(("ks-" + victim.session_id().substr(3)).c_str()), nullptr);
  (void)ended;
}

// The coordinator reads kernel.cu with more rights than the agent: what the
// agent puts there is read only when it is a regular file of its own.
TEST_F(SessionTrustTest, KernelPlantedAsALinkOrFifoIsNotReadThroughIt) {
  const std::string token_file = c_.dir() + "/state/admin.token";
  AllowPlanter("symlinker", "ln -sf " + token_file + " kernel.cu");
  AllowPlanter("fifo", "rm kernel.cu; mkfifo kernel.cu");
  c_.StartCoordinator();
  const std::string token = c_.Token();
  for (const auto& [name, why] : {std::pair<std::string, std::string>{"symlinker", "symbolic link"},
                                  {"fifo", "not a regular file"}}) {
    v1::CreateSessionRequest r = c_.Request(1);
    r.mutable_agent()->set_name(name);
    v1::Session s = c_.Create(r);
    ASSERT_FALSE(s.session_id().empty());
    v1::Session end = c_.WaitEnded(s.session_id(), 120);
    std::vector<nlohmann::json> trace = c_.Trace(s.session_id());
    const std::string dump = nlohmann::json(trace).dump();
    std::vector<nlohmann::json> verifications = OfKind(trace, "verification");
    ASSERT_EQ(verifications.size(), 1u) << dump;
    EXPECT_FALSE(verifications[0]["goal_met"].get<bool>());
    EXPECT_NE(verifications[0]["reason"].get<std::string>().find(why), std::string::npos) << dump;
    // Nothing was submitted, and the token is nowhere in what users see.
    EXPECT_TRUE(OfKind(trace, "evaluation").empty()) << dump;
    EXPECT_EQ(dump.find(token), std::string::npos);
    EXPECT_EQ(end.state(), "budget_spent") << end.reason();
  }
}

TEST_F(SessionTrustTest, WithoutConfinementOnlyAdminsStartSessions) {
  c_.StartCoordinator({"--confine-agents", "off"});
  EXPECT_NE(c_.Log().find("agents are NOT confined (--confine-agents=off)"), std::string::npos)
      << c_.Log();
  const std::string eve = AddUser(c_, "eve");
  v1::CreateSessionRequest r = c_.Request(1);
  r.mutable_agent()->set_name("victim");
  v1::Session s;
  grpc::Status st = CreateAs(c_, eve, r, &s);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(st.error_message().find("only admins may start sessions"), std::string::npos)
      << st.error_message();
  // An admin may, knowing the agent runs as the coordinator's user.
  EXPECT_TRUE(c_.stub().CreateSession(c_.Context().get(), r, &s).ok());
  ASSERT_TRUE(testing::WaitFile(c_.Workspace(s.session_id()) + "/started", 60)) << c_.Log();
  v1::SessionRef ref;
  ref.set_session_id(s.session_id());
  v1::CancelSessionResponse cancelled;
  EXPECT_TRUE(c_.stub().CancelSession(c_.Context().get(), ref, &cancelled).ok());
}

}  // namespace
}  // namespace kseek
