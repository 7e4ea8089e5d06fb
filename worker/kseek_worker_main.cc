// kseek-worker: serves the Worker gRPC service for one target (sm_90a,
// sm_100a or host) and one GPU, and keeps itself registered with a
// coordinator. Prints "listening on HOST:PORT" as the first line of stdout;
// everything else goes to stderr. SIGTERM (or SIGINT) drains: no new attempt is
// taken, the health check says NOT_SERVING, the attempt in hand finishes, then
// the process exits 0.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/child_process.h"
#include "base/file.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "base/tls.h"
#include "harness/src/evaluate.h"
#include "harness/src/sandbox.h"
#include "worker/device_check.h"
#include "worker/registration.h"
#include "worker/worker_service.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0",
          "address the Worker service listens on (port 0: any free port)");
ABSL_FLAG(std::string, advertise, "",
          "address the coordinator dials (default: the listen address with its port)");
ABSL_FLAG(std::string, coordinator, "",
          "coordinator address to register with (empty: serve without registering)");
ABSL_FLAG(std::string, target, "host", "sm_90a, sm_100a or host");
ABSL_FLAG(int, gpu, 0, "CUDA device ordinal (GPU targets)");
ABSL_FLAG(std::string, token_file, "", "file holding the worker's bearer token");
ABSL_FLAG(std::string, job_credential_file, "",
          "file holding a job credential Evaluate accepts besides the registration's (a "
          "worker the coordinator does not register; without --coordinator and this, every "
          "Evaluate is refused)");
ABSL_FLAG(std::string, tls_ca, "", "CA certificate (PEM) for TLS to the coordinator");
ABSL_FLAG(std::string, tls_cert, "", "server certificate (PEM) for this service's TLS");
ABSL_FLAG(std::string, tls_key, "", "server private key (PEM) for this service's TLS");
ABSL_FLAG(std::string, cache_dir, "",
          "compile cache (default: $KSEEK_CACHE_DIR or ~/.cache/kernelseek/compile)");
ABSL_FLAG(int, compile_jobs, 2, "compiles of a job that run at once");
ABSL_FLAG(bool, allow_unconfined, false,
          "serve even where this machine cannot sandbox kernels (no seccomp filters): their code "
          "then runs with this worker's rights");
ABSL_FLAG(std::string, work_dir, "", "folder for the attempts' private scratch folders (default: temp dir)");

namespace kseek {
namespace {

// Address space a host-target runner child may map (RLIMIT_AS). GPU targets
// get none: the CUDA driver reserves far more virtual memory than it uses.
constexpr uint64_t kHostAddressSpaceBytes = uint64_t{16} << 30;

// "HOST:PORT" with the port replaced by `port`.
std::string WithPort(const std::string& address, int port) {
  const size_t colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  return absl::StrCat(host, ":", port);
}

// The address to advertise when none is given: the listen address, with
// this machine's name for a wildcard host.
std::string DefaultAdvertise(const std::string& listen, int port) {
  std::string address = WithPort(listen, port);
  const std::string host = address.substr(0, address.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::") {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) == 0 && name[0] != '\0') {
      return absl::StrCat(name, ":", port);
    }
  }
  return address;
}

// The documented flag spelling uses '-' (--token-file), Abseil's names use
// '_': the names (not the values) of "--" arguments are rewritten.
std::vector<std::string> NormalizeFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string& a = args[i];
    if (a == "--") break;
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) continue;
    const size_t end = std::min(a.find('='), a.size());
    std::replace(a.begin() + 2, a.begin() + end, '-', '_');
  }
  return args;
}

// WorkerInfo.confinement: what confines the kernels this worker runs, or
// what is missing. Whether the kernel hosts can run as nobody is tried as
// the judge tries it (only where this worker runs as root).
std::string Confinement(const WorkerOptions& options, const std::string& seccomp_why) {
  std::vector<std::string> parts;
  if (!options.sandbox.seccomp_kernels) {
    parts.push_back(absl::StrCat("UNCONFINED: no seccomp filter (", seccomp_why, ")"));
  } else {
    parts.push_back("seccomp filter");
  }
  parts.push_back(options.sandbox.isolate_network ? "network namespace" : "host network");
  std::string user = "kernel hosts as this worker's user";
  if (geteuid() == 0) {
    kseek::ChildSpec probe;
    probe.path = options.runner_path;
    probe.argv = {options.runner_path, "--kernel-host", "--probe"};
    probe.uid = 65534;
    probe.gid = 65534;
    absl::StatusOr<kseek::FinishedChild> run = kseek::RunToEnd(probe, absl::Seconds(30));
    user = run.ok() && run->exit_code == 0 ? "kernel hosts as nobody"
                                           : "kernel hosts as root without capabilities";
  }
  parts.push_back(user);
  std::string text = absl::StrJoin(parts, ", ");
  if (text.size() > 256) text.resize(256);
  return text;
}

int Fail(const absl::Status& status) {
  Log(status.message());
  return 2;
}

// The runner children's sandbox on this machine: the seccomp filter (or
// --allow-unconfined), a network namespace where one can be made, the
// host target's address-space limit; options->confinement says it in words.
absl::Status ChooseConfinement(WorkerOptions* options) {
  options->sandbox.enabled = true;
  if (options->target == Target::kHost) {
    options->sandbox.max_address_space_bytes = kHostAddressSpaceBytes;
  }
  std::string seccomp_why;
  if (!CanUseSeccomp(&seccomp_why)) {
    if (!absl::GetFlag(FLAGS_allow_unconfined)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "this machine cannot sandbox kernels (seccomp filter: ", seccomp_why,
          "); --allow-unconfined serves anyway, with kernels running with this worker's rights"));
    }
    Log(absl::StrCat("kernels run unconfined (--allow-unconfined): no seccomp filter (",
                     seccomp_why, ")"));
    options->sandbox.seccomp_kernels = false;
  }
  std::string why;
  options->sandbox.isolate_network = CanIsolateNetwork(&why);
  if (!options->sandbox.isolate_network) {
    Log(absl::StrCat("runner children keep network access: no network namespace (", why, ")"));
  }
  options->confinement = Confinement(*options, seccomp_why);
  Log(absl::StrCat("kernels: ", options->confinement));
  return absl::OkStatus();
}

// TLS of this service (--tls-cert and --tls-key), else plaintext.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFromFlags() {
  KSEEK_ASSIGN_OR_RETURN(
      const std::optional<TlsServerPem> tls,
      ReadTlsServerPem(absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key)));
  if (!tls) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({tls->key, tls->cert});
  return grpc::SslServerCredentials(ssl);
}

// Where and how to register (--coordinator, --token-file, --tls-ca); the
// credential accepted without a registration (--job-credential-file) goes
// into `options`.
absl::StatusOr<RegistrationOptions> RegistrationFromFlags(WorkerOptions* options) {
  RegistrationOptions reg;
  reg.coordinator = absl::GetFlag(FLAGS_coordinator);
  if (const std::string file = absl::GetFlag(FLAGS_token_file); !file.empty()) {
    KSEEK_ASSIGN_OR_RETURN(reg.token, ReadTokenFile("--token-file", file));
    reg.token_file = file;
  }
  if (const std::string file = absl::GetFlag(FLAGS_job_credential_file); !file.empty()) {
    KSEEK_ASSIGN_OR_RETURN(options->static_job_credential,
                           ReadTokenFile("--job-credential-file", file));
  }
  if (const std::string file = absl::GetFlag(FLAGS_tls_ca); !file.empty()) {
    KSEEK_ASSIGN_OR_RETURN(reg.tls_ca_pem, ReadNamedFile("--tls-ca", file));
  }
  return reg;
}

int Main(int argc, char** argv) {
  absl::FlagsUsageConfig usage;
  usage.version_string = [] { return std::string("kseek-worker " KSEEK_VERSION " (protocol kernelseek.v1)\n"); };
  absl::SetFlagsUsageConfig(usage);
  absl::SetProgramUsageMessage(
      "kseek-worker --target sm_90a|sm_100a|host [--gpu N] [--listen ADDR] "
      "[--coordinator ADDR --token-file FILE]");
  std::vector<std::string> args = NormalizeFlagNames(argc, argv);
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  if (positional.size() > 1) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", positional[1], "'")));
  }

  // Signals are taken by sigwait below; blocked before any thread starts so
  // that every thread inherits the mask.
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  absl::StatusOr<Target> target = ParseTarget(absl::GetFlag(FLAGS_target));
  if (!target.ok()) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("--target: ", target.status().message())));
  }
  const int gpu = absl::GetFlag(FLAGS_gpu);
  absl::StatusOr<WorkerDevice> device = CheckDevice(*target, gpu);
  if (!device.ok()) return Fail(device.status());
  absl::StatusOr<std::string> compiler = CheckCompiler(*target);
  if (!compiler.ok()) return Fail(compiler.status());
  if (absl::GetFlag(FLAGS_compile_jobs) < 1) {
    return Fail(absl::InvalidArgumentError("--compile-jobs: must be at least 1"));
  }

  WorkerOptions options;
  options.target = *target;
  options.gpu = gpu;
  options.device = *device;
  options.compiler_version = *compiler;
  options.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  options.work_dir = absl::GetFlag(FLAGS_work_dir);
  options.compile_jobs = absl::GetFlag(FLAGS_compile_jobs);
  options.runner_path = DefaultRunnerPath();
  if (access(options.runner_path.c_str(), X_OK) != 0) {
    return Fail(absl::FailedPreconditionError(
        absl::StrCat("the runner ", options.runner_path, " is missing or not executable")));
  }
  if (!options.work_dir.empty() && mkdir(options.work_dir.c_str(), 0700) != 0 &&
      errno != EEXIST) {
    return Fail(absl::FailedPreconditionError(
        absl::StrCat("--work-dir ", options.work_dir, ": cannot create: ", strerror(errno))));
  }
  if (absl::Status st = ChooseConfinement(&options); !st.ok()) return Fail(st);
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> server_credentials =
      ServerCredentialsFromFlags();
  if (!server_credentials.ok()) return Fail(server_credentials.status());
  absl::StatusOr<RegistrationOptions> reg = RegistrationFromFlags(&options);
  if (!reg.ok()) return Fail(reg.status());

  // The advertised address needs the bound port, and the service needs the
  // advertised address: bind first, then fill it in before serving.
  const std::string listen = absl::GetFlag(FLAGS_listen);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  int port = 0;
  auto service = std::make_unique<WorkerService>(options);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, *server_credentials, &port);
  builder.RegisterService(service.get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return Fail(absl::UnavailableError(absl::StrCat("--listen ", listen, ": cannot listen")));
  }
  // The health check answers for the server ("") and for the Worker
  // service by name; both turn NOT_SERVING once draining begins.
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  if (health != nullptr) health->SetServingStatus(kernelseek::v1::Worker::service_full_name(), true);
  const std::string bound = WithPort(listen, port);
  std::string advertise = absl::GetFlag(FLAGS_advertise);
  if (advertise.empty()) advertise = DefaultAdvertise(listen, port);
  service->SetAddress(advertise);
  std::printf("listening on %s\n", bound.c_str());
  std::fflush(stdout);
  Log(absl::StrCat("target ", TargetName(*target), " on ", device->name,
                   *target == Target::kHost ? "" : absl::StrCat(" (GPU ", gpu, ")"),
                   "; compiler ", *compiler, "; serving on ", bound, ", advertised as ",
                   advertise));

  std::unique_ptr<Registration> registration;
  if (reg->coordinator.empty()) {
    Log(options.static_job_credential.empty()
            ? "no --coordinator and no --job-credential-file: serving without registering, "
              "and every Evaluate is refused (UNAUTHENTICATED)"
            : "no --coordinator: serving without registering, for the holder of "
              "--job-credential-file");
  } else {
    registration = std::make_unique<Registration>(*reg, service.get());
    registration->Start();
  }

  int sig = 0;
  while (sigwait(&stop_signals, &sig) != 0) {
  }
  Log(absl::StrCat(sig == SIGTERM ? "SIGTERM" : "SIGINT",
                   ": draining (finishing the attempt in hand, taking no new one)"));
  service->StartDraining();
  if (health != nullptr) health->SetServingStatus(false);
  if (registration) registration->Wake();
  service->WaitIdle();
  // In-flight streams get time to deliver their last events.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(30));
  server->Wait();
  if (registration) registration->Stop();
  Log("drained; exiting");
  return 0;
}

}  // namespace
}  // namespace kseek

int main(int argc, char** argv) { return kseek::Main(argc, argv); }
