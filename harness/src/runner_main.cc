// kseek-runner: the judge of one job. It loads the reference, starts the
// candidate and the baseline in kernel hosts of their own (kernel_host.h),
// evaluates the scenarios (correctness, timing) and reports one JSON
// message per line on the result descriptor the parent gave it.
//
//   kseek-runner --job FILE --result-fd N
//   kseek-runner --kernel-host ...   (a kernel host, started by the judge)
//
// Started by RunScenarios (runner.cc); not meant to be run by hand. Nothing
// is written to stdout by the runner itself (kernels may print there; it
// goes to the parent's log). The protocol is in harness/README.md.
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/json_reader.h"
#include "harness/src/kernel_host.h"
#include "harness/src/runner_device.h"
#include "harness/src/runner_protocol.h"
#include "harness/src/runner_scenario.h"
#include "harness/src/task.h"
#include "nlohmann/json.hpp"

extern char** environ;

namespace kseek {
namespace {

using nlohmann::json;

// The result descriptor: one message per line, each with the job's token.
class Channel {
 public:
  Channel(int fd, std::string token) : fd_(fd), token_(std::move(token)) {}

  void Send(json message) {
    message["token"] = token_;
    // Kernel messages may hold bytes that are not UTF-8: replace them.
    std::string line =
        message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    size_t done = 0;
    while (done < line.size()) {
      ssize_t n = write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        // The parent is gone: nobody is left to report to.
        std::fprintf(stderr, "kseek-runner: result channel closed: %s\n",
                     std::strerror(errno));
        _exit(kRunnerExitFatal);
      }
      done += static_cast<size_t>(n);
    }
  }

  [[noreturn]] void Fatal(const std::string& error) {
    std::fprintf(stderr, "kseek-runner: %s\n", error.c_str());
    Send(json{{"type", "fatal"}, {"error", error}});
    std::fflush(stderr);
    _exit(kRunnerExitFatal);
  }

 private:
  const int fd_;
  const std::string token_;
};

absl::StatusOr<JobFile> ReadJob(const std::string& path) {
  absl::StatusOr<json> j = ReadJsonFile(path);
  if (!j.ok()) return j.status();
  return JobFileFromJson(*j, path);
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "kseek-runner: %s\nusage: kseek-runner --job FILE --result-fd N\n"
               "(started by the harness; see harness/README.md)\n",
               why);
  return kRunnerExitUsage;
}

int Main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--kernel-host") return ServeKernel(argc - 2, argv + 2);
  // A closed result pipe must be an error from write, not a silent death.
  signal(SIGPIPE, SIG_IGN);
  char self_buf[4096];
  const ssize_t self_len = readlink("/proc/self/exe", self_buf, sizeof(self_buf) - 1);
  const std::string self = self_len > 0 ? std::string(self_buf, self_len) : std::string(argv[0]);
  std::string job_path;
  int result_fd = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--job" && i + 1 < argc) {
      job_path = argv[++i];
    } else if (arg == "--result-fd" && i + 1 < argc) {
      if (!absl::SimpleAtoi(argv[++i], &result_fd) || result_fd < 3) {
        return Usage("--result-fd needs a descriptor number above 2");
      }
    } else {
      return Usage(absl::StrCat("unexpected argument '", arg, "'").c_str());
    }
  }
  if (job_path.empty() || result_fd < 0) return Usage("--job and --result-fd are required");

  absl::StatusOr<JobFile> job = ReadJob(job_path);
  if (!job.ok()) {
    std::fprintf(stderr, "kseek-runner: %s\n", std::string(job.status().message()).c_str());
    return kRunnerExitFatal;
  }
  // The file holds the secret seed and the token; kernels must not find it.
  unlink(job_path.c_str());
  Channel channel(result_fd, job->token);

  absl::StatusOr<TaskSpec> task = LoadTask(job->task_dir);
  if (!task.ok()) channel.Fatal(std::string(task.status().message()));
  absl::StatusOr<std::unique_ptr<Device>> device =
      job->target == Target::kHost ? OpenHostDevice() : OpenCudaDevice(job->target, job->gpu);
  if (!device.ok()) channel.Fatal(std::string(device.status().message()));
  absl::StatusOr<Kernel> reference = LoadKernel(job->reference_lib, "reference");
  if (!reference.ok()) channel.Fatal(std::string(reference.status().message()));
  // No process of the same user may read this one's memory or attach to it
  // (the kernel hosts may run as the same user).
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  std::optional<uid_t> host_uid;
  std::optional<gid_t> host_gid;
  if (geteuid() == 0 && !job->host_user.empty()) {
    passwd* pw = getpwnam(job->host_user.c_str());
    std::string why = pw == nullptr ? absl::StrCat("no user ", job->host_user) : "";
    if (pw != nullptr && KernelHostRunsAs(self, pw->pw_uid, pw->pw_gid, &why)) {
      host_uid = pw->pw_uid;
      host_gid = pw->pw_gid;
      // A private temp folder the hosts' user owns, inside the job's folder
      // (which that user may cross but not list).
      const std::string tmp = job->work_dir + "/host-tmp";
      if (chmod(job->work_dir.c_str(), 0711) == 0 && (mkdir(tmp.c_str(), 0700) == 0 || errno == EEXIST) &&
          chown(tmp.c_str(), *host_uid, *host_gid) == 0) {
        for (std::string& e : env) {
          if (e.rfind("TMPDIR=", 0) == 0) e = "TMPDIR=" + tmp;
        }
        if (std::none_of(env.begin(), env.end(),
                         [](const std::string& e) { return e.rfind("TMPDIR=", 0) == 0; })) {
          env.push_back("TMPDIR=" + tmp);
        }
      }
    } else {
      std::fprintf(stderr, "kseek-runner: kernel hosts run as root without capabilities: %s\n",
                   why.c_str());
    }
  }

  // The candidate and the baseline run in kernel hosts, apart from this
  // process and from each other.
  int started = 0;
  auto host_options = [&](const std::string& role, const std::string& library) {
    KernelHostOptions o;
    o.runner_path = self;
    o.library = library;
    o.role = role;
    o.target = job->target;
    o.gpu = job->gpu;
    o.seccomp = job->seccomp;
    o.isolate_network = job->isolate_network;
    o.log_path = absl::StrCat(job->work_dir, "/", role, "-", getpid(), "-", ++started, ".log");
    o.env = env;
    o.uid = host_uid;
    o.gid = host_gid;
    return o;
  };
  std::unique_ptr<KernelHost> baseline;
  auto start_baseline = [&] {
    absl::StatusOr<std::unique_ptr<KernelHost>> b =
        KernelHost::Start(host_options("baseline", job->baseline_lib));
    if (!b.ok()) channel.Fatal(std::string(b.status().message()));
    baseline = std::move(*b);
  };
  if (!job->baseline_lib.empty()) start_baseline();
  channel.Send(json{{"type", "hello"}, {"device", DeviceInfoToJson((*device)->info())}});

  // The candidate's host starts inside the first scenario (its library's
  // static initialisers are candidate code and may crash or hang), and
  // again after it died.
  std::unique_ptr<KernelHost> candidate;
  std::string candidate_error;
  for (const JobScenario& js : job->scenarios) {
    channel.Send(json{{"type", "scenario_start"}, {"index", js.index}});
    if (baseline != nullptr && baseline->dead()) start_baseline();
    if ((candidate == nullptr || candidate->dead()) && candidate_error.empty()) {
      candidate.reset();
      absl::StatusOr<std::unique_ptr<KernelHost>> k =
          KernelHost::Start(host_options("candidate", job->candidate_lib));
      if (k.ok()) {
        candidate = std::move(*k);
      } else {
        candidate_error = std::string(k.status().message());
      }
    }
    ScenarioResult result;
    if (candidate != nullptr) {
      ScenarioJob sj;
      sj.task = &*task;
      sj.device = device->get();
      sj.reference = &*reference;
      sj.baseline = baseline.get();
      sj.candidate = candidate.get();
      sj.seed = job->seed;
      sj.timing = job->timing;
      result = RunScenario(sj, js.index, js.scenario);
      if (candidate->dead() && result.status == ScenarioStatus::kCrash) {
        result.runner_signal = candidate->term_signal();
      }
    } else {
      result.index = js.index;
      result.name = js.scenario.name;
      result.status = ScenarioStatus::kCrash;
      result.error = candidate_error;
    }
    channel.Send(json{{"type", "scenario"}, {"index", js.index}, {"result", ToJson(result)}});
    if ((*device)->broken()) {
      // A context with a sticky error is unusable: a fresh runner goes on.
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(kRunnerExitDeviceLost);
    }
  }
  channel.Send(json{{"type", "done"}});
  std::fflush(stdout);
  std::fflush(stderr);
  // Skip static destructors: kernel libraries may have their own.
  _exit(kRunnerExitDone);
}

}  // namespace
}  // namespace kseek

int main(int argc, char** argv) { return kseek::Main(argc, argv); }
