// kseek-runner: the child process that loads the kernels of one job and
// evaluates its scenarios (correctness, timing), reporting one JSON message
// per line on the result descriptor the parent gave it.
//
//   kseek-runner --job FILE --result-fd N
//
// Started by RunScenarios (runner.cc); not meant to be run by hand. Nothing
// is written to stdout by the runner itself (kernels may print there; it
// goes to the parent's log). The protocol is in harness/README.md.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "runner_device.h"
#include "runner_protocol.h"
#include "runner_scenario.h"
#include "task.h"

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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read job file ", path, ": ",
                                            std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat("job file ", path, " is not JSON"));
  }
  return JobFileFromJson(j, path);
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "kseek-runner: %s\nusage: kseek-runner --job FILE --result-fd N\n"
               "(started by the harness; see harness/README.md)\n",
               why);
  return kRunnerExitUsage;
}

int Main(int argc, char** argv) {
  // A closed result pipe must be an error from write, not a silent death.
  signal(SIGPIPE, SIG_IGN);
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
  std::optional<Kernel> baseline;
  if (!job->baseline_lib.empty()) {
    absl::StatusOr<Kernel> b = LoadKernel(job->baseline_lib, "baseline");
    if (!b.ok()) channel.Fatal(std::string(b.status().message()));
    baseline = *b;
  }
  channel.Send(json{{"type", "hello"}, {"device", DeviceInfoToJson((*device)->info())}});

  // The candidate is loaded inside the first scenario: its static
  // initialisers are candidate code and may crash.
  std::optional<Kernel> candidate;
  std::string candidate_error;
  for (const JobScenario& js : job->scenarios) {
    channel.Send(json{{"type", "scenario_start"}, {"index", js.index}});
    if (!candidate && candidate_error.empty()) {
      absl::StatusOr<Kernel> k = LoadKernel(job->candidate_lib, "candidate");
      if (k.ok()) {
        candidate = *k;
      } else {
        candidate_error = std::string(k.status().message());
      }
    }
    ScenarioResult result;
    if (candidate) {
      ScenarioJob sj;
      sj.task = &*task;
      sj.device = device->get();
      sj.reference = &*reference;
      sj.baseline = baseline ? &*baseline : nullptr;
      sj.candidate = &*candidate;
      sj.seed = job->seed;
      sj.timing = job->timing;
      result = RunScenario(sj, js.index, js.scenario);
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
