// kernelseekd: the KernelSeek coordinator. Serves the Coordinator and Admin
// services (plus gRPC health checking and reflection), keeps its state in
// STATE_DIR/kernelseek.db, dispatches evaluations to registered workers, and
// runs sessions (agents in workspaces under --workspaces).
//
// The first line on stdout is "listening on HOST:PORT" (with the port
// chosen when --listen asks for port 0); logs go to stderr. SIGTERM or
// SIGINT stops it cleanly.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/file.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "base/tls.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "question_bank/src/bank.h"
#include "server/agent/confinement.h"
#include "server/auth.h"
#include "server/coordinator_service.h"
#include "server/dispatcher.h"
#include "server/event_hub.h"
#include "server/malformed_request.h"
#include "server/reflection_v1.h"
#include "server/session_manager.h"
#include "server/store.h"
#include "server/task_catalog.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7450", "address to serve on (port 0: any free port)");
ABSL_FLAG(std::string, state_dir, ".kernelseek",
          "folder for the database and the bootstrap token files (created 0700)");
ABSL_FLAG(int, heartbeat_interval_ms, 1000, "how often workers are told to heartbeat");
ABSL_FLAG(int, heartbeat_timeout_ms, 5000,
          "a worker silent for longer is unhealthy and its attempt is re-queued");
ABSL_FLAG(int, max_attempts, 5, "attempts before an evaluation whose workers keep being lost fails");
ABSL_FLAG(int, min_free_mb, 64,
          "new work is refused (RESOURCE_EXHAUSTED) while the state folder's disk has less free");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain for serving TLS (with --tls-key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for serving TLS (with --tls-cert)");
ABSL_FLAG(std::string, tls_ca, "", "PEM root certificates for dialling workers over TLS");
ABSL_FLAG(std::string, bank, "",
          "the question bank file (default: the source tree's question_bank/bank.json)");
ABSL_FLAG(std::string, tasks, "",
          "folder of task folders served by name (default: the source tree's kernels/, if present)");
ABSL_FLAG(std::string, workspaces, "",
          "folder of the sessions' workspaces (default: STATE_DIR/workspaces)");
ABSL_FLAG(std::string, agents, "",
          "the agent allowlist, JSON (server/agent/allowlist.h; default: claude and codex on "
          "PATH); sessions run only these");
ABSL_FLAG(std::string, confine_agents, "auto",
          "auto, on or off: run each session's agent as an unprivileged user of its own "
          "(needs root, useradd and userdel); auto confines where the machine can, on refuses "
          "to start where it cannot; without confinement only admins may start sessions");
ABSL_FLAG(std::string, kseek, "",
          "the kseek binary agents run; its folder goes first on their PATH (default: a kseek "
          "beside kernelseekd, if there is one)");

namespace kseek::server {
namespace {

// The folder of the kseek binary agents should find first on PATH.
std::string KseekDir() {
  std::string flag = absl::GetFlag(FLAGS_kseek);
  std::error_code ec;
  if (!flag.empty()) {
    return std::filesystem::absolute(flag, ec).parent_path().string();
  }
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  std::filesystem::path beside = self.parent_path() / "kseek";
  return std::filesystem::exists(beside, ec) ? self.parent_path().string() : "";
}

// Refuses a state folder that was in use (its token files exist) but whose
// store is missing or empty: starting afresh there would silently drop
// every user, evaluation and session.
absl::Status CheckStoreNotLost(const std::string& state_dir, const std::string& db) {
  std::error_code ec;
  bool in_use = false;
  std::string witness;
  for (const char* file : {kAdminTokenFile, kWorkerTokenFile}) {
    std::string path = absl::StrCat(state_dir, "/", file);
    if (std::filesystem::exists(path, ec)) {
      in_use = true;
      witness = path;
      break;
    }
  }
  if (!in_use) return absl::OkStatus();
  if (!std::filesystem::exists(db, ec)) {
    return absl::DataLossError(absl::StrCat(db, " is missing, but ", witness,
                                            " shows that this state folder was in use; ",
                                            RestoreAdvice(db)));
  }
  if (std::filesystem::file_size(db, ec) == 0 && !ec) {
    return absl::DataLossError(absl::StrCat(db, " is empty (0 bytes), but ", witness,
                                            " shows that this state folder was in use; ",
                                            RestoreAdvice(db)));
  }
  return absl::OkStatus();
}

int Fail(const absl::Status& status) {
  Log(status.message());
  return 1;
}

// The dispatcher's settings from the flags: heartbeats, attempts, and TLS
// to the workers (--tls-ca).
absl::StatusOr<DispatcherOptions> DispatcherOptionsFromFlags() {
  if (absl::GetFlag(FLAGS_heartbeat_interval_ms) <= 0 ||
      absl::GetFlag(FLAGS_heartbeat_timeout_ms) <= absl::GetFlag(FLAGS_heartbeat_interval_ms)) {
    return absl::InvalidArgumentError(
        "--heartbeat-timeout-ms must exceed --heartbeat-interval-ms, which must be positive");
  }
  if (absl::GetFlag(FLAGS_max_attempts) < 1) {
    return absl::InvalidArgumentError("--max-attempts must be at least 1");
  }
  DispatcherOptions dispatch;
  dispatch.heartbeat_interval = absl::Milliseconds(absl::GetFlag(FLAGS_heartbeat_interval_ms));
  dispatch.heartbeat_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_heartbeat_timeout_ms));
  dispatch.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  if (!absl::GetFlag(FLAGS_tls_ca).empty()) {
    absl::StatusOr<std::string> ca = ReadNamedFile("--tls-ca", absl::GetFlag(FLAGS_tls_ca));
    if (!ca.ok()) return ca.status();
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = *ca;
    dispatch.worker_credentials = grpc::SslCredentials(options);
  }
  return dispatch;
}

// The store of `state_dir`, made and checked: the folder prepared, a lost
// database refused, integrity checked, the first users bootstrapped.
absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& state_dir) {
  KSEEK_RETURN_IF_ERROR(PrepareStateDir(state_dir));
  if (absl::GetFlag(FLAGS_min_free_mb) < 0) {
    return absl::InvalidArgumentError("--min-free-mb must not be negative");
  }
  const std::string db = state_dir + "/kernelseek.db";
  KSEEK_RETURN_IF_ERROR(CheckStoreNotLost(state_dir, db));
  StoreOptions store_options;
  store_options.min_free_bytes = int64_t{absl::GetFlag(FLAGS_min_free_mb)} << 20;
  KSEEK_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(db, store_options));
  KSEEK_RETURN_IF_ERROR(store->CheckIntegrity());
  KSEEK_RETURN_IF_ERROR(Bootstrap(store.get(), state_dir));
  return store;
}

int Run() {
  const std::string state_dir = absl::GetFlag(FLAGS_state_dir);
  absl::StatusOr<std::optional<TlsServerPem>> tls =
      ReadTlsServerPem(absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key));
  if (!tls.ok()) return Fail(tls.status());
  absl::StatusOr<DispatcherOptions> dispatch = DispatcherOptionsFromFlags();
  if (!dispatch.ok()) return Fail(dispatch.status());
  std::shared_ptr<grpc::ServerCredentials> server_creds = grpc::InsecureServerCredentials();
  if (tls->has_value()) {
    grpc::SslServerCredentialsOptions options;
    options.pem_key_cert_pairs.push_back({(*tls)->key, (*tls)->cert});
    server_creds = grpc::SslServerCredentials(options);
  }
  absl::StatusOr<std::unique_ptr<Store>> store = OpenStore(state_dir);
  if (!store.ok()) return Fail(store.status());

  SessionOptions session_options;
  std::string bank_path = absl::GetFlag(FLAGS_bank);
  if (bank_path.empty()) bank_path = KSEEK_DEFAULT_BANK;
  absl::StatusOr<question_bank::Bank> bank = question_bank::Bank::Load(bank_path);
  if (!bank.ok()) {
    // Only a bank asked for by name must load; without one, sessions get
    // no bank questions.
    if (!absl::GetFlag(FLAGS_bank).empty()) {
      return Fail(absl::Status(bank.status().code(),
                               absl::StrCat("--bank: ", bank.status().message())));
    }
    Logf("no question bank (%s)", bank.status().message());
    bank = question_bank::Bank::FromQuestions({}, "no bank");
    bank_path.clear();
  }
  session_options.bank = *std::move(bank);
  session_options.bank_source = bank_path;
  std::error_code ec;
  std::string workspaces = absl::GetFlag(FLAGS_workspaces);
  if (workspaces.empty()) workspaces = state_dir + "/workspaces";
  workspaces = std::filesystem::absolute(workspaces, ec).string();
  std::filesystem::create_directories(workspaces, ec);
  if (ec) {
    return Fail(absl::InternalError(
        absl::StrCat("--workspaces: cannot create ", workspaces, ": ", ec.message())));
  }
  session_options.workspaces_dir = workspaces;
  session_options.kseek_dir = KseekDir();
  const std::string confine = absl::GetFlag(FLAGS_confine_agents);
  if (confine != "auto" && confine != "on" && confine != "off") {
    return Fail(absl::InvalidArgumentError("--confine-agents: auto, on or off"));
  }
  if (confine == "off") {
    session_options.unconfined_reason = "--confine-agents=off";
  } else {
    // Agents reach their workspaces (and the coordinator's socket) through
    // these folders: searchable by anyone, listable by the coordinator only.
    // Every file in them is 0600 (umask 077).
    const std::string state_abs = std::filesystem::absolute(state_dir, ec).string();
    for (const std::string& dir : {state_abs, workspaces}) {
      if (absl::StartsWith(workspaces, dir)) chmod(dir.c_str(), 0711);
    }
    agent::ConfinementSupport support =
        agent::ProbeConfinement(workspaces, session_options.kseek_dir);
    session_options.confine_agents = support.available;
    session_options.unconfined_reason = support.reason;
    if (!support.available) {
      for (const std::string& dir : {state_abs, workspaces}) {
        if (absl::StartsWith(workspaces, dir)) chmod(dir.c_str(), 0700);
      }
      if (confine == "on") {
        return Fail(absl::FailedPreconditionError(
            absl::StrCat("--confine-agents=on: agents cannot be confined here: ", support.reason)));
      }
    }
  }
  if (session_options.confine_agents) {
    Log("agents are confined: each session's agent runs as a user of its own, its workspace the "
        "only folder it may write");
  } else {
    Logf("agents are NOT confined (%s): they would run as this user, so only admins may start "
         "sessions",
         session_options.unconfined_reason);
  }
  // Agents without network reach the coordinator through a Unix socket.
  const std::string socket_path = workspaces + "/.coordinator.sock";
  if (socket_path.size() < sizeof(sockaddr_un{}.sun_path)) {
    unlink(socket_path.c_str());
    session_options.agent_socket = "unix:" + socket_path;
  } else {
    Logf("%s is too long for a Unix socket: agents without network cannot run", socket_path);
  }
  if (const std::string agents = absl::GetFlag(FLAGS_agents); !agents.empty()) {
    absl::StatusOr<agent::AgentAllowlist> allowlist = agent::AgentAllowlist::Load(agents);
    if (!allowlist.ok()) {
      return Fail(absl::Status(allowlist.status().code(),
                               absl::StrCat("--agents: ", allowlist.status().message())));
    }
    session_options.agents = *std::move(allowlist);
  }
  Logf("agents %s (%s)", absl::StrJoin(session_options.agents.Names(), ", "),
       session_options.agents.source());

  EventHub hub;
  Dispatcher dispatcher(store->get(), &hub, *std::move(dispatch));
  absl::Status st = dispatcher.Start();
  if (!st.ok()) return Fail(st);
  Authenticator auth(store->get());
  const std::string session_options_socket = session_options.agent_socket;
  SessionManager sessions(store->get(), &dispatcher, std::move(session_options));
  // Only a folder named by the flag must load; without the default one
  // the catalog is empty.
  TaskCatalog tasks;
  {
    std::string tasks_dir = absl::GetFlag(FLAGS_tasks);
    absl::StatusOr<TaskCatalog> loaded = TaskCatalog::Load(tasks_dir.empty() ? KSEEK_DEFAULT_TASKS : tasks_dir);
    if (loaded.ok()) {
      tasks = *std::move(loaded);
    } else if (!tasks_dir.empty()) {
      dispatcher.Stop();
      return Fail(absl::Status(loaded.status().code(), absl::StrCat("--tasks: ", loaded.status().message())));
    } else {
      Logf("no task catalog (%s)", loaded.status().message());
    }
  }
  ServiceContext services{store->get(), &hub, &dispatcher, &auth, &sessions, &tasks};
  CoordinatorService coordinator(services);
  AdminService admin(services);

  CaptureProtobufErrors();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  const std::string listen = absl::GetFlag(FLAGS_listen);
  int port = 0;
  builder.AddListeningPort(listen, server_creds, &port);
  // Local only, and every call still needs its token.
  const std::string agent_socket = session_options_socket;
  if (!agent_socket.empty()) {
    builder.AddListeningPort(agent_socket, grpc::InsecureServerCredentials());
  }
  builder.SetMaxReceiveMessageSize(64 << 20);
  // Reflection v1 beside gRPC's v1alpha plugin.
  ReflectionV1 reflection_v1({kernelseek::v1::Coordinator::service_full_name(),
                              kernelseek::v1::Admin::service_full_name(), "grpc.health.v1.Health",
                              "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"});
  builder.RegisterService(&reflection_v1);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(MalformedRequestInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.RegisterService(&coordinator);
  builder.RegisterService(&admin);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    dispatcher.Stop();
    return Fail(absl::UnavailableError(absl::StrCat("--listen: cannot serve on ", listen)));
  }
  // Agents of other users connect to the socket (write permission).
  if (!agent_socket.empty() &&
      chmod(agent_socket.substr(std::string("unix:").size()).c_str(), 0666) != 0) {
    Logf("%s: %s", agent_socket, strerror(errno));
  }
  // The health check answers for the server ("") and for each service by
  // name.
  if (grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService()) {
    health->SetServingStatus(kernelseek::v1::Coordinator::service_full_name(), true);
    health->SetServingStatus(kernelseek::v1::Admin::service_full_name(), true);
  }
  std::string host = listen.substr(0, listen.rfind(':'));
  // Agents run on this machine: they dial the loopback when every address
  // is served.
  std::string agent_host = host == "0.0.0.0" || host == "[::]" ? "127.0.0.1" : host;
  st = sessions.Start(absl::StrCat(agent_host, ":", port));
  if (!st.ok()) {
    dispatcher.Stop();
    return Fail(st);
  }
  std::printf("listening on %s:%d\n", host.c_str(), port);
  std::fflush(stdout);
  Logf("serving on %s:%d, state in %s", host, port, state_dir);

  // Signals were blocked in every thread before any was created; wait for
  // one here.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  int sig = 0;
  sigwait(&signals, &sig);
  Logf("%s: shutting down", strsignal(sig));

  sessions.Stop();
  dispatcher.Stop();
  // Streams to watchers never end by themselves: give calls in flight a
  // moment, then cancel them.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  server->Wait();
  return 0;
}

}  // namespace
}  // namespace kseek::server

int main(int argc, char** argv) {
  absl::FlagsUsageConfig usage;
  usage.version_string = [] { return std::string("kernelseekd " KSEEK_VERSION " (protocol kernelseek.v1)\n"); };
  absl::SetFlagsUsageConfig(usage);
  absl::SetProgramUsageMessage(
      "the KernelSeek coordinator\n"
      "usage: kernelseekd [--listen HOST:PORT] [--state-dir DIR] [--tls-cert F --tls-key F]\n"
      "                   [--bank FILE] [--workspaces DIR] [--agents FILE] [--kseek PATH]");
  // Flags are documented with dashes (--state-dir); Abseil names them with
  // underscores. Accept both.
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    std::string& a = args[i];
    if (!absl::StartsWith(a, "--")) continue;
    size_t end = std::min(a.find('='), a.size());
    std::replace(a.begin() + 2, a.begin() + end, '-', '_');
  }
  std::vector<char*> argp;
  for (std::string& a : args) argp.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(argp.size()), argp.data());
  // Threads inherit the mask: block the stop signals so that only sigwait
  // in the main thread sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // The database and token files are for this user only.
  umask(077);
  return kseek::server::Run();
}
