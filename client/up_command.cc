// `kseek up` and `kseek down`: the embedded default. `up` starts a
// coordinator (kernelseekd) with its state in ./.kernelseek, a host worker
// and a worker per local Hopper/Blackwell GPU, all on loopback, and writes
// .kernelseek/client.json so that kseek in this folder goes through them;
// `down` stops a detached one (service_commands.h).
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/child_process.h"
#include "base/file.h"
#include "client/cli.h"
#include "client/remote.h"
#include "client/service_commands.h"
#include "nlohmann/json.hpp"

ABSL_DECLARE_FLAG(bool, json);
ABSL_FLAG(std::string, state_dir, ".kernelseek", "the coordinator's state folder (up, down)");
ABSL_FLAG(int, port, 0, "coordinator port on 127.0.0.1 (0: any free port) (up)");
ABSL_FLAG(bool, detach, false, "leave the processes running and return (up)");
ABSL_FLAG(std::string, gpus, "auto", "GPU workers: auto (every sm_90a/sm_100a GPU), none, or ordinals 0,1 (up)");

namespace kseek::cli {

namespace fs = std::filesystem;
namespace v1 = ::kernelseek::v1;

namespace {

const char kUpUsage[] =
    "usage: kseek up [--state-dir DIR] [--port N] [--detach] [--gpus auto|none|0,1,...] [--json]\n"
    "\n"
    "Starts the evaluation service on this machine, on 127.0.0.1: a coordinator\n"
    "(kernelseekd, state in DIR, default .kernelseek), a host worker, and a worker per\n"
    "local GPU of compute capability 9.0 (sm_90a) or 10.0 (sm_100a). Writes\n"
    "DIR/client.json (address and admin token), so `kseek eval` run in the folder above\n"
    "DIR goes through the coordinator. Logs go to DIR/logs/. In the foreground, Ctrl-C\n"
    "stops everything; with --detach it returns and `kseek down` stops it. --json prints\n"
    "where everything listens as one JSON object instead of the lines.\n";

const char kDownUsage[] =
    "usage: kseek down [--state-dir DIR]\n"
    "\n"
    "Stops what `kseek up` started (the pids in DIR/up.json): the workers first (each\n"
    "finishes the attempt in hand), then the coordinator; removes DIR/up.json and\n"
    "DIR/client.json.\n";

// How long workers get to finish the attempt in hand before SIGKILL.
constexpr auto kWorkerStopTimeout = std::chrono::seconds(120);
constexpr auto kCoordinatorStopTimeout = std::chrono::seconds(15);
constexpr auto kStartTimeout = std::chrono::seconds(30);

struct Process {
  std::string name;  // "coordinator", "worker host", "worker sm_90a gpu 0"
  std::string exe;
  pid_t pid = 0;
  std::string log;
  std::string address;  // from its "listening on" line
};

struct LocalGpu {
  int ordinal;
  std::string target;  // sm_90a or sm_100a; empty when neither
  std::string name;
  int cc_major, cc_minor;
};

std::string SelfDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

std::string LogTail(const std::string& path) {
  std::string text = ReadFile(path).value_or("");
  if (text.size() > 1500) text = "..." + text.substr(text.size() - 1500);
  return text;
}

// The CUDA driver is reached through dlopen, so kseek needs no CUDA
// library at link time and runs where there is none.
std::vector<LocalGpu> FindLocalGpus(std::string* why) {
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  using GetFn = int (*)(int*, int);
  using AttrFn = int (*)(int*, int, int);
  using NameFn = int (*)(char*, int, int);
  constexpr int kCcMajor = 75, kCcMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*
  std::vector<LocalGpu> gpus;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    *why = "no CUDA driver (libcuda.so.1 cannot be loaded)";
    return gpus;
  }
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<GetFn>(dlsym(lib, "cuDeviceGet"));
  auto attr = reinterpret_cast<AttrFn>(dlsym(lib, "cuDeviceGetAttribute"));
  auto name = reinterpret_cast<NameFn>(dlsym(lib, "cuDeviceGetName"));
  int n = 0;
  if (init == nullptr || count == nullptr || get == nullptr || attr == nullptr || name == nullptr) {
    *why = "libcuda.so.1 lacks the device query functions";
  } else if (int rc = init(0); rc != 0) {
    *why = absl::StrCat("cuInit failed with error ", rc);
  } else if (rc = count(&n); rc != 0) {
    *why = absl::StrCat("cuDeviceGetCount failed with error ", rc);
  }
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    LocalGpu g{i, "", "", 0, 0};
    char buf[256] = {};
    if (get(&dev, i) != 0 || attr(&g.cc_major, kCcMajor, dev) != 0 || attr(&g.cc_minor, kCcMinor, dev) != 0) continue;
    if (name(buf, sizeof buf, dev) == 0) g.name = buf;
    if (g.cc_major == 9 && g.cc_minor == 0) g.target = "sm_90a";
    if (g.cc_major == 10 && g.cc_minor == 0) g.target = "sm_100a";
    gpus.push_back(g);
  }
  if (n == 0 && why->empty()) *why = "the driver reports no devices";
  return gpus;
}

// Starts `exe args` in a session of its own (so a terminal's Ctrl-C
// reaches only kseek, which stops it in order), stdout and stderr to `log`.
absl::StatusOr<pid_t> Spawn(const std::string& exe, const std::vector<std::string>& args, const std::string& log) {
  ChildSpec spec;
  spec.path = exe;
  spec.argv = {exe};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.new_session = true;
  spec.stdout_to = ChildOutput::kFile;
  spec.stderr_to = ChildOutput::kFile;
  spec.output_file = log;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(spec);
  if (!child.ok()) return child.status();
  // Watched and stopped by pid from here (Exited, Stop), also by a later
  // `kseek down`.
  return (*child)->Release();
}

bool Exited(pid_t pid, bool is_child) {
  if (is_child) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    return r == pid || (r < 0 && errno == ECHILD);
  }
  return kill(pid, 0) != 0 && errno == ESRCH;
}

// Waits for the "listening on ADDR" line in the process's log.
absl::StatusOr<std::string> WaitListening(const Process& p) {
  auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::string text = ReadFile(p.log).value_or("");
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (absl::ConsumePrefix(&line, "listening on ")) return std::string(absl::StripAsciiWhitespace(line));
    }
    if (Exited(p.pid, true))
      return absl::UnavailableError(absl::StrCat(p.name, " exited before listening; its log (", p.log, "):\n",
                                                 LogTail(p.log)));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError(
      absl::StrCat(p.name, " printed no \"listening on\" line in ", kStartTimeout.count(), " s; see ", p.log));
}

// SIGTERM, then SIGKILL after `timeout`. `is_child`: reap it.
void Stop(const Process& p, bool is_child, std::chrono::seconds timeout) {
  if (Exited(p.pid, is_child)) return;
  kill(p.pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!Exited(p.pid, is_child)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      fprintf(stderr, "kseek: %s (pid %d) did not stop in %lld s; killing it\n", p.name.c_str(), p.pid,
              static_cast<long long>(timeout.count()));
      kill(p.pid, SIGKILL);
      if (is_child) waitpid(p.pid, nullptr, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Workers first (they drain), the coordinator last.
void StopAll(const std::vector<Process>& procs, bool are_children) {
  for (auto it = procs.rbegin(); it != procs.rend(); ++it)
    Stop(*it, are_children, it->name == "coordinator" ? kCoordinatorStopTimeout : kWorkerStopTimeout);
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  chmod(tmp.c_str(), 0600);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return absl::OkStatus();
}

// The processes recorded in DIR/up.json that still run the recorded
// binary (a pid reused by something else is left alone).
std::vector<Process> RecordedProcesses(const std::string& up_json, std::string* coordinator) {
  std::vector<Process> out;
  nlohmann::json j = nlohmann::json::parse(ReadFile(up_json).value_or(""), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("processes") || !j["processes"].is_array()) return out;
  *coordinator = j.value("coordinator", "");
  for (const auto& p : j["processes"]) {
    if (!p.is_object()) continue;
    Process proc;
    proc.name = p.value("name", "");
    proc.exe = p.value("exe", "");
    proc.pid = p.value("pid", 0);
    proc.log = p.value("log", "");
    if (proc.pid <= 0) continue;
    std::error_code ec;
    std::string running = fs::read_symlink(absl::StrCat("/proc/", proc.pid, "/exe"), ec).string();
    if (ec || running.compare(0, proc.exe.size(), proc.exe) != 0) continue;
    out.push_back(proc);
  }
  return out;
}

std::string UpRecord(const std::string& coordinator, const std::vector<Process>& procs) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : procs)
    list.push_back({{"name", p.name}, {"exe", p.exe}, {"pid", p.pid}, {"log", p.log}, {"address", p.address}});
  return nlohmann::json{{"coordinator", coordinator}, {"processes", list}}.dump(2) + "\n";
}

// Waits until the coordinator lists every started worker, by address, as
// healthy; fails early when a process exits.
absl::Status WaitHealthy(const std::string& coordinator, const std::string& admin_token_file,
                         const std::vector<Process>& procs) {
  RemoteSettings settings;
  settings.coordinator = coordinator;
  absl::StatusOr<std::string> token = ReadTokenFile("admin token file", admin_token_file);
  if (!token.ok()) return token.status();
  settings.token = *std::move(token);
  auto remote = Remote::Connect(settings);
  if (!remote.ok()) return remote.status();
  auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  std::string last_error = "no answer yet";
  while (std::chrono::steady_clock::now() < deadline) {
    for (const auto& p : procs)
      if (Exited(p.pid, true))
        return absl::UnavailableError(absl::StrCat(p.name, " exited; its log (", p.log, "):\n", LogTail(p.log)));
    grpc::ClientContext context;
    (*remote)->Prepare(&context, std::chrono::milliseconds(2000));
    v1::ListWorkersResponse response;
    grpc::Status status = (*remote)->coordinator().ListWorkers(&context, {}, &response);
    if (status.ok()) {
      size_t healthy = 0, wanted = 0;
      for (const auto& p : procs) {
        if (p.name == "coordinator") continue;
        ++wanted;
        for (const auto& w : response.workers())
          if (w.healthy() && w.info().address() == p.address) {
            ++healthy;
            break;
          }
      }
      if (healthy == wanted) return absl::OkStatus();
      last_error = absl::StrCat(healthy, " of ", wanted, " workers registered and healthy");
    } else {
      last_error = status.error_message();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("workers not healthy after ", kStartTimeout.count(), " s: ", last_error, "; logs in ",
                   fs::path(procs.front().log).parent_path().string()));
}

// Which GPU workers to start, from --gpus.
absl::StatusOr<std::vector<LocalGpu>> GpusToServe(const std::string& spec, std::string* note) {
  std::vector<LocalGpu> chosen;
  if (spec == "none") return chosen;
  std::string why;
  std::vector<LocalGpu> gpus = FindLocalGpus(&why);
  if (spec == "auto") {
    for (const auto& g : gpus) {
      if (!g.target.empty())
        chosen.push_back(g);
      else
        *note += absl::StrFormat("  gpu %d (%s, compute capability %d.%d) has no target; no worker\n", g.ordinal,
                                 g.name, g.cc_major, g.cc_minor);
    }
    if (gpus.empty()) *note += absl::StrCat("  no GPU workers: ", why, "\n");
    return chosen;
  }
  for (absl::string_view part : absl::StrSplit(spec, ',', absl::SkipEmpty())) {
    int ordinal = -1;
    if (!absl::SimpleAtoi(part, &ordinal) || ordinal < 0)
      return absl::InvalidArgumentError(absl::StrCat("--gpus: '", part, "' is not auto, none or a GPU ordinal"));
    const LocalGpu* found = nullptr;
    for (const auto& g : gpus)
      if (g.ordinal == ordinal) found = &g;
    if (found == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("--gpus: no GPU ", ordinal, why.empty() ? "" : " (" + why + ")"));
    if (found->target.empty())
      return absl::InvalidArgumentError(absl::StrFormat(
          "--gpus: GPU %d (%s) has compute capability %d.%d; workers serve 9.0 (sm_90a) and 10.0 (sm_100a)",
          ordinal, found->name, found->cc_major, found->cc_minor));
    chosen.push_back(*found);
  }
  return chosen;
}

int Fail(const std::string& command, const std::string& what) {
  fprintf(stderr, "kseek %s: %s\n", command.c_str(), what.c_str());
  return kExitUsage;
}

}  // namespace

int UpCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args, {"state_dir", "port", "detach", "gpus", "json"}, kUpUsage, &positional, &help))
    return help ? kExitOk : kExitUsage;
  if (!positional.empty()) return Fail("up", "unexpected argument '" + positional[0] + "'");
  int port = absl::GetFlag(FLAGS_port);
  if (port < 0 || port > 65535) return Fail("up", "--port must be 0..65535");
  std::error_code ec;
  const std::string state_dir = fs::absolute(absl::GetFlag(FLAGS_state_dir), ec).lexically_normal().string();
  const std::string logs = state_dir + "/logs";
  const std::string up_json = state_dir + "/up.json";
  const std::string client_json = state_dir + "/client.json";
  const std::string bin = SelfDir();
  const std::string daemon = bin + "/kernelseekd", worker = bin + "/kseek-worker";
  for (const auto& exe : {daemon, worker})
    if (access(exe.c_str(), X_OK) != 0) return Fail("up", exe + " not found (it is built beside kseek)");

  std::string running_at;
  if (fs::exists(up_json, ec)) {
    if (!RecordedProcesses(up_json, &running_at).empty())
      return Fail("up", absl::StrCat("already up in ", state_dir, " (coordinator ", running_at,
                                     "); `kseek down` stops it"));
    fs::remove(up_json, ec);
  }
  std::string gpu_note;
  auto gpus = GpusToServe(absl::GetFlag(FLAGS_gpus), &gpu_note);
  if (!gpus.ok()) return Fail("up", std::string(gpus.status().message()));

  fs::create_directories(logs, ec);
  if (ec) return Fail("up", absl::StrCat("cannot create ", logs, ": ", ec.message()));
  chmod(state_dir.c_str(), 0700);

  // Block the stop signals before any child exists, so none is lost;
  // children unblock them before exec.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);

  std::vector<Process> procs;
  auto abort_up = [&](const std::string& what) {
    StopAll(procs, true);
    return Fail("up", what);
  };
  Process coord{"coordinator", daemon, 0, logs + "/kernelseekd.log", ""};
  auto pid = Spawn(daemon, {"--listen", absl::StrCat("127.0.0.1:", port), "--state-dir", state_dir}, coord.log);
  if (!pid.ok()) return Fail("up", std::string(pid.status().message()));
  coord.pid = *pid;
  procs.push_back(coord);
  auto address = WaitListening(procs.back());
  if (!address.ok()) return abort_up(std::string(address.status().message()));
  procs.back().address = *address;
  const std::string worker_token = state_dir + "/worker.token", admin_token = state_dir + "/admin.token";
  if (access(worker_token.c_str(), R_OK) != 0 || access(admin_token.c_str(), R_OK) != 0)
    return abort_up(absl::StrCat("the coordinator wrote no ", worker_token, " / ", admin_token));

  struct WorkerSpec {
    std::string name, target, log;
    int gpu;
  };
  std::vector<WorkerSpec> specs = {{"worker host", "host", logs + "/worker-host.log", -1}};
  for (const auto& g : *gpus)
    specs.push_back({absl::StrCat("worker ", g.target, " gpu ", g.ordinal), g.target,
                     absl::StrCat(logs, "/worker-gpu", g.ordinal, ".log"), g.ordinal});
  for (const auto& s : specs) {
    std::vector<std::string> wargs = {"--target",      s.target,    "--listen",     "127.0.0.1:0",
                                      "--coordinator", *address,    "--token-file", worker_token};
    if (s.gpu >= 0) wargs.insert(wargs.end(), {"--gpu", std::to_string(s.gpu)});
    auto wpid = Spawn(worker, wargs, s.log);
    if (!wpid.ok()) return abort_up(std::string(wpid.status().message()));
    procs.push_back({s.name, worker, *wpid, s.log, ""});
  }
  for (size_t i = 1; i < procs.size(); ++i) {
    auto waddr = WaitListening(procs[i]);
    if (!waddr.ok()) return abort_up(std::string(waddr.status().message()));
    procs[i].address = *waddr;
  }
  if (absl::Status s = WaitHealthy(*address, admin_token, procs); !s.ok())
    return abort_up(std::string(s.message()));

  nlohmann::json client = {{"coordinator", *address}, {"token_file", admin_token}};
  if (absl::Status s = WriteFile(client_json, client.dump(2) + "\n"); !s.ok())
    return abort_up(std::string(s.message()));
  if (absl::Status s = WriteFile(up_json, UpRecord(*address, procs)); !s.ok())
    return abort_up(std::string(s.message()));

  std::string status = absl::StrFormat("kernelseek is up: coordinator %s (state in %s)\n", *address, state_dir);
  for (size_t i = 1; i < procs.size(); ++i)
    absl::StrAppendFormat(&status, "  %-24s %-22s pid %d\n", procs[i].name, procs[i].address, procs[i].pid);
  absl::StrAppend(&status, gpu_note);
  absl::StrAppendFormat(&status, "client config: %s; logs: %s/\n", client_json, logs);
  if (fs::path(state_dir).parent_path() != fs::current_path(ec))
    absl::StrAppendFormat(&status, "(kseek reads ./.kernelseek/client.json: elsewhere use --coordinator %s\n"
                                   " --token-file %s)\n", *address, admin_token);
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json workers = nlohmann::json::array();
    for (size_t i = 1; i < procs.size(); ++i)
      workers.push_back({{"name", procs[i].name}, {"address", procs[i].address}, {"pid", procs[i].pid}});
    status = nlohmann::json{{"coordinator", *address},
                            {"state_dir", state_dir},
                            {"workers", workers},
                            {"client_config", client_json},
                            {"logs", logs},
                            {"detached", absl::GetFlag(FLAGS_detach)}}
                 .dump(2) +
             "\n";
    if (!gpu_note.empty()) fprintf(stderr, "%s", gpu_note.c_str());
  }
  if (absl::GetFlag(FLAGS_detach)) {
    if (!absl::GetFlag(FLAGS_json)) absl::StrAppend(&status, "detached; `kseek down` stops it\n");
    std::cout << status << std::flush;
    return kExitOk;
  }
  if (!absl::GetFlag(FLAGS_json)) absl::StrAppend(&status, "Ctrl-C stops it\n");
  std::cout << status << std::flush;

  // Foreground: wait for a stop signal; report a process that dies.
  int rc = kExitOk;
  std::vector<bool> gone(procs.size(), false);
  while (true) {
    timespec tick{1, 0};
    int sig = sigtimedwait(&stop_signals, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) break;
    bool coordinator_gone = false;
    for (size_t i = 0; i < procs.size(); ++i) {
      if (gone[i] || !Exited(procs[i].pid, true)) continue;
      gone[i] = true;
      fprintf(stderr, "kseek up: %s (pid %d) exited; log: %s\n", procs[i].name.c_str(), procs[i].pid,
              procs[i].log.c_str());
      coordinator_gone |= i == 0;
    }
    if (coordinator_gone) {
      rc = kExitFailed;
      break;
    }
  }
  std::cout << "stopping (workers finish the attempt in hand)\n" << std::flush;
  StopAll(procs, true);
  fs::remove(up_json, ec);
  fs::remove(client_json, ec);
  std::cout << "stopped\n";
  return rc;
}

int DownCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  bool help = false;
  if (!ParseFlags(args, {"state_dir"}, kDownUsage, &positional, &help)) return help ? kExitOk : kExitUsage;
  if (!positional.empty()) return Fail("down", "unexpected argument '" + positional[0] + "'");
  const std::string state_dir = absl::GetFlag(FLAGS_state_dir);
  const std::string up_json = state_dir + "/up.json";
  std::error_code ec;
  if (!fs::exists(up_json, ec)) return Fail("down", absl::StrCat("nothing to stop: no ", up_json));
  std::string coordinator;
  std::vector<Process> procs = RecordedProcesses(up_json, &coordinator);
  // Coordinator first in the record; StopAll stops in reverse.
  StopAll(procs, false);
  fs::remove(up_json, ec);
  fs::remove(state_dir + "/client.json", ec);
  std::cout << absl::StrFormat("stopped %d process%s (coordinator %s)\n", procs.size(),
                               procs.size() == 1 ? "" : "es", coordinator.empty() ? "-" : coordinator);
  return kExitOk;
}

}  // namespace kseek::cli
