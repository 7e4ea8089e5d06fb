// The parent side of the runner (runner.h): writes a job file, starts a
// kseek-runner child with a private result pipe, reads its messages, enforces
// the time limits and starts a fresh child after a crash or a hang. Also the
// job-file and device JSON shared with the child (runner_protocol.h).
#include "harness/src/runner.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/child_process.h"
#include "base/json_reader.h"
#include "base/status_macros.h"
#include "harness/src/runner_protocol.h"

namespace kseek {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Job file and device JSON (runner_protocol.h).

json JobFileToJson(const JobFile& job) {
  json scenarios = json::array();
  for (const JobScenario& s : job.scenarios) {
    json params = json::object();
    for (const auto& [name, value] : s.scenario.params) params[name] = value;
    scenarios.push_back(
        {{"index", s.index}, {"name", s.scenario.name}, {"params", params}});
  }
  const TimingOptions& t = job.timing;
  return json{{"task_dir", job.task_dir},
              {"target", TargetName(job.target)},
              {"reference", job.reference_lib},
              {"baseline", job.baseline_lib},
              {"candidate", job.candidate_lib},
              {"scenarios", scenarios},
              {"seed", job.seed},
              {"timing",
               {{"enabled", t.enabled},
                {"warmup", t.warmup},
                {"min_samples", t.min_samples},
                {"max_samples", t.max_samples},
                {"target_rse", t.target_rse},
                {"max_seconds", t.max_seconds}}},
              {"gpu", job.gpu},
              {"work_dir", job.work_dir},
              {"seccomp", job.seccomp},
              {"isolate_network", job.isolate_network},
              {"host_user", job.host_user},
              {"token", job.token}};
}

absl::StatusOr<JobFile> JobFileFromJson(const json& j,
                                        const std::string& origin) {
  JobFile job;
  const JsonReader r(j, origin);
  std::string target;
  KSEEK_RETURN_IF_ERROR(r.Read("task_dir", &job.task_dir));
  KSEEK_RETURN_IF_ERROR(r.Read("target", &target));
  absl::StatusOr<Target> parsed = ParseTarget(target);
  if (!parsed.ok()) return r.FieldError("target", parsed.status().message());
  job.target = *parsed;
  KSEEK_RETURN_IF_ERROR(r.Read("reference", &job.reference_lib));
  KSEEK_RETURN_IF_ERROR(r.Read("baseline", &job.baseline_lib));
  KSEEK_RETURN_IF_ERROR(r.Read("candidate", &job.candidate_lib));
  KSEEK_RETURN_IF_ERROR(r.Read("seed", &job.seed));
  KSEEK_RETURN_IF_ERROR(r.Read("gpu", &job.gpu));
  KSEEK_RETURN_IF_ERROR(r.Read("token", &job.token));
  KSEEK_RETURN_IF_ERROR(r.Read("work_dir", &job.work_dir));
  KSEEK_RETURN_IF_ERROR(r.Read("seccomp", &job.seccomp));
  KSEEK_RETURN_IF_ERROR(r.Read("isolate_network", &job.isolate_network));
  KSEEK_RETURN_IF_ERROR(r.Read("host_user", &job.host_user));

  KSEEK_ASSIGN_OR_RETURN(const JsonReader timing, r.Object("timing"));
  TimingOptions& t = job.timing;
  KSEEK_RETURN_IF_ERROR(timing.Read("enabled", &t.enabled));
  KSEEK_RETURN_IF_ERROR(timing.Read("warmup", &t.warmup));
  KSEEK_RETURN_IF_ERROR(timing.Read("min_samples", &t.min_samples));
  KSEEK_RETURN_IF_ERROR(timing.Read("max_samples", &t.max_samples));
  KSEEK_RETURN_IF_ERROR(timing.Read("target_rse", &t.target_rse));
  KSEEK_RETURN_IF_ERROR(timing.Read("max_seconds", &t.max_seconds));

  KSEEK_ASSIGN_OR_RETURN(const JsonReader scenarios, r.Array("scenarios"));
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const JsonReader one = scenarios.Element(i);
    JobScenario s;
    KSEEK_RETURN_IF_ERROR(one.Read("index", &s.index));
    KSEEK_RETURN_IF_ERROR(one.Read("name", &s.scenario.name));
    KSEEK_ASSIGN_OR_RETURN(const JsonReader params, one.Object("params"));
    for (const auto& [name, unused] : params.value().items()) {
      KSEEK_ASSIGN_OR_RETURN(s.scenario.params[name], params.Int(name));
    }
    job.scenarios.push_back(std::move(s));
  }
  return job;
}

json DeviceInfoToJson(const DeviceInfo& d) {
  return json{{"name", d.name},
              {"cc_major", d.cc_major},
              {"cc_minor", d.cc_minor},
              {"sm_count", d.sm_count},
              {"memory_bytes", d.memory_bytes},
              {"l2_bytes", d.l2_bytes},
              {"sm_clock_mhz", d.sm_clock_mhz},
              {"mem_bandwidth_gbps", d.mem_bandwidth_gbps},
              {"driver", d.driver}};
}

absl::StatusOr<DeviceInfo> DeviceInfoFromJson(const json& j) {
  DeviceInfo d;
  const JsonReader r(j, "runner hello message", "device");
  KSEEK_RETURN_IF_ERROR(r.Read("name", &d.name));
  KSEEK_RETURN_IF_ERROR(r.Read("cc_major", &d.cc_major));
  KSEEK_RETURN_IF_ERROR(r.Read("cc_minor", &d.cc_minor));
  KSEEK_RETURN_IF_ERROR(r.Read("sm_count", &d.sm_count));
  KSEEK_RETURN_IF_ERROR(r.Read("memory_bytes", &d.memory_bytes));
  KSEEK_RETURN_IF_ERROR(r.Read("l2_bytes", &d.l2_bytes));
  KSEEK_RETURN_IF_ERROR(r.Read("sm_clock_mhz", &d.sm_clock_mhz));
  KSEEK_RETURN_IF_ERROR(r.Read("mem_bandwidth_gbps", &d.mem_bandwidth_gbps));
  KSEEK_RETURN_IF_ERROR(r.Read("driver", &d.driver));
  return d;
}

// ---------------------------------------------------------------------------
// Child processes.

namespace {

// How long a child may go without a message while no scenario is running
// (start-up, CUDA initialisation, freeing between scenarios): the larger of
// this and the scenario limit.
constexpr absl::Duration kMinIdleLimit = absl::Seconds(60);
// How long a child that said `done` (or closed its pipe) gets to exit.
constexpr absl::Duration kExitGrace = absl::Seconds(5);
// Longest message line accepted; longer is a broken channel.
constexpr size_t kMaxLineBytes = size_t{16} << 20;
// How much of each child's log RunResult.log keeps (the end of it).
constexpr size_t kMaxLogBytes = size_t{1} << 20;
// Lines of the child's log quoted in a crash message.
constexpr int kTailLines = 12;
constexpr size_t kMaxTailBytes = 3000;

std::string Seconds(double s) { return absl::StrFormat("%g", s); }

std::string RandomToken() {
  std::random_device rd;
  std::string token;
  for (int i = 0; i < 4; ++i) absl::StrAppend(&token, absl::Hex(rd(), absl::kZeroPad8));
  return token;
}

// A random descriptor number for the result pipe in the child, so that a
// kernel cannot simply write to a well-known descriptor.
int PickResultFd() {
  rlimit lim{};
  rlim_t high = 1024;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    high = std::min<rlim_t>(high, lim.rlim_cur);
  }
  const int hi = static_cast<int>(high) - 1;
  const int lo = hi > 200 ? 100 : 10;
  std::random_device rd;
  std::uniform_int_distribution<int> pick(lo, std::max(lo, hi));
  return pick(rd);
}

absl::Status WritePrivateFile(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot write ", path, ": ", strerror(errno)));
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      close(fd);
      return absl::InternalError(
          absl::StrCat("cannot write ", path, ": ", strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot write ", path, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

// The last `max_bytes` of a file (empty when it cannot be read).
std::string ReadTail(const std::string& path, size_t max_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st {};
  std::string text;
  if (fstat(fd, &st) == 0) {
    off_t start = st.st_size > static_cast<off_t>(max_bytes)
                      ? st.st_size - static_cast<off_t>(max_bytes)
                      : 0;
    if (lseek(fd, start, SEEK_SET) == start) {
      char buf[65536];
      ssize_t n;
      while ((n = read(fd, buf, sizeof(buf))) > 0 && text.size() < max_bytes) {
        text.append(buf, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  return text;
}

// The last `n` non-empty lines of `text`, at most kMaxTailBytes.
std::string LastLines(const std::string& text, int n) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  size_t first = lines.size() > static_cast<size_t>(n) ? lines.size() - n : 0;
  std::string out;
  for (size_t i = first; i < lines.size(); ++i) absl::StrAppend(&out, lines[i], "\n");
  if (out.size() > kMaxTailBytes) out = "..." + out.substr(out.size() - kMaxTailBytes);
  return out;
}

// A started runner child and our (read, non-blocking) end of its result
// pipe.
struct RunnerChild {
  std::unique_ptr<ChildProcess> process;
  int result_fd = -1;
};

// Starts `runner --job JOB --result-fd N` in its own process group with
// stdin from /dev/null, stdout and stderr to `log_path`, and no other
// descriptor than the write end of the result pipe (number N). With the
// sandbox enabled, the child gets `sandbox_env` as its whole environment,
// the sandbox's limits, a network namespace where the kernel allows it, is
// killed when this thread ends, and ignores the stop signals: stopping is
// the service's decision (a stop signal sent to every process of a batch
// job, Slurm's scancel, must not end the kernel a draining worker finishes;
// the service still ends children with SIGKILL).
absl::StatusOr<RunnerChild> StartChild(const std::string& runner, const std::string& job_path,
                                       const std::string& log_path, const SandboxOptions& sandbox,
                                       const std::vector<std::string>& sandbox_env) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  const int result_fd = PickResultFd();
  ChildSpec spec;
  spec.path = runner;
  spec.argv = {runner, "--job", job_path, "--result-fd", std::to_string(result_fd)};
  spec.stdout_to = ChildOutput::kFile;
  spec.stderr_to = ChildOutput::kFile;
  spec.output_file = log_path;
  spec.pass_fds = {{pipe_fds[1], result_fd}};
  if (sandbox.enabled) {
    spec.env = sandbox_env;
    spec.die_with_parent = true;
    spec.ignore_signals = {SIGTERM, SIGINT, SIGHUP};
    spec.rlimits = {{RLIMIT_CORE, 0},
                    {RLIMIT_FSIZE, sandbox.max_file_bytes},
                    {RLIMIT_NOFILE, sandbox.max_open_files}};
    if (sandbox.max_address_space_bytes > 0) {
      spec.rlimits.push_back({RLIMIT_AS, sandbox.max_address_space_bytes});
    }
    // Without the privilege this fails and the child keeps the network;
    // the service reports that once at start-up (CanIsolateNetwork).
    if (sandbox.isolate_network) spec.unshare_flags = CLONE_NEWNET;
  }
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(spec);
  close(pipe_fds[1]);
  if (!child.ok()) {
    close(pipe_fds[0]);
    return child.status();
  }
  fcntl(pipe_fds[0], F_SETFL, fcntl(pipe_fds[0], F_GETFL) | O_NONBLOCK);
  return RunnerChild{std::move(*child), pipe_fds[0]};
}

}  // namespace

std::string LastLinesOfFile(const std::string& path) {
  return LastLines(ReadTail(path, size_t{1} << 16), kTailLines);
}

std::vector<std::string> SandboxEnvironment(const SandboxOptions& sandbox,
                                            const char* const* parent_env,
                                            const std::string& temp_dir) {
  std::vector<std::string> env;
  for (const char* const* e = parent_env; e != nullptr && *e != nullptr; ++e) {
    absl::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == absl::string_view::npos) continue;
    const absl::string_view name = entry.substr(0, eq);
    if (name == "TMPDIR") continue;
    if (std::find(sandbox.keep_env.begin(), sandbox.keep_env.end(), name) !=
        sandbox.keep_env.end()) {
      env.emplace_back(entry);
    }
  }
  env.push_back(absl::StrCat("TMPDIR=", temp_dir));
  return env;
}

bool CanIsolateNetwork(std::string* why) {
  pid_t pid = fork();
  if (pid == 0) _exit(unshare(CLONE_NEWNET) == 0 ? 0 : (errno & 0x7f) + 1);
  if (pid < 0) {
    *why = absl::StrCat("fork: ", strerror(errno));
    return false;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  *why = WIFEXITED(status)
             ? absl::StrCat("unshare(CLONE_NEWNET): ", strerror(WEXITSTATUS(status) - 1))
             : "the probe child died";
  return false;
}

namespace {

// ---------------------------------------------------------------------------
// The job: children one after another until every scenario has a result.

class JobRunner {
 public:
  JobRunner(const RunJob& job, const ScenarioCallback& on_scenario)
      : job_(job), on_scenario_(on_scenario) {}

  absl::StatusOr<RunResult> Run();

 private:
  // What one child did.
  struct ChildOutcome {
    bool ready = false;   // it said hello
    int finished = 0;     // scenarios that got a result while it ran
    std::string failure;  // why it ended early, when it ended without `done`
  };

  // How a child's message loop ended.
  enum class Ending {
    kNone,
    kDone,             // it said `done`
    kClosed,           // the pipe reached end of file
    kExited,           // it exited (a descendant may hold the pipe)
    kBadMessage,       // a line that is not a valid message
    kScenarioTimeout,  // the running scenario passed its limit
    kJobTimeout,       // the job passed its limit
    kIdleTimeout,      // no message for too long outside a scenario
  };

  absl::StatusOr<ChildOutcome> RunChild(int generation);
  // Handles one line; returns an error describing a bad message.
  absl::Status HandleLine(const std::string& line, const std::string& token,
                          ChildOutcome* out, int* in_flight, Ending* ending);

  ScenarioResult Blank(int index) const;
  // Records a result (its index names the scenario) and reports it.
  void Finish(ScenarioResult r);
  void FinishWith(int index, ScenarioStatus status, const std::string& error,
                  int runner_signal = 0);
  void FinishRemaining(ScenarioStatus status, const std::string& error);
  bool IsRemaining(int index) const;

  absl::Duration ScenarioLimit() const {
    return absl::Seconds(job_.task->scenario_timeout_s);
  }
  absl::Duration IdleLimit() const {
    return std::max(kMinIdleLimit, ScenarioLimit());
  }
  std::string JobLimitText() const {
    return absl::StrCat("job time limit of ", Seconds(job_.task->job_timeout_s),
                        " s reached");
  }

  const RunJob& job_;
  const ScenarioCallback& on_scenario_;
  RunResult result_;
  std::deque<int> remaining_;  // indices without a result, in order
  absl::Time job_deadline_;
  absl::Time scenario_deadline_;
  absl::Time idle_deadline_;
  bool ever_ready_ = false;
  std::vector<std::string> sandbox_env_;  // when the sandbox is enabled
};

ScenarioResult JobRunner::Blank(int index) const {
  ScenarioResult r;
  r.index = index;
  r.name = job_.scenarios[index].name;
  r.params = ScenarioParamsJson(*job_.task, job_.scenarios[index]);
  return r;
}

bool JobRunner::IsRemaining(int index) const {
  return std::find(remaining_.begin(), remaining_.end(), index) !=
         remaining_.end();
}

void JobRunner::Finish(ScenarioResult r) {
  const int index = r.index;
  auto it = std::find(remaining_.begin(), remaining_.end(), index);
  if (it == remaining_.end()) return;
  remaining_.erase(it);
  // The name and parameters are the job's, whatever the child said.
  r.name = job_.scenarios[index].name;
  r.params = ScenarioParamsJson(*job_.task, job_.scenarios[index]);
  result_.scenarios[index] = std::move(r);
  if (on_scenario_) on_scenario_(result_.scenarios[index]);
}

void JobRunner::FinishWith(int index, ScenarioStatus status,
                           const std::string& error, int runner_signal) {
  ScenarioResult r = Blank(index);
  r.status = status;
  r.error = error;
  r.runner_signal = runner_signal;
  Finish(std::move(r));
}

void JobRunner::FinishRemaining(ScenarioStatus status,
                                const std::string& error) {
  const std::deque<int> left = remaining_;
  for (int index : left) FinishWith(index, status, error);
}

absl::StatusOr<RunResult> JobRunner::Run() {
  if (job_.task == nullptr) {
    return absl::InvalidArgumentError("RunJob.task is not set");
  }
  if (access(job_.runner_path.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("runner binary '", job_.runner_path,
                                            "' cannot be executed: ",
                                            strerror(errno)));
  }
  struct stat st {};
  if (stat(job_.work_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("RunJob.work_dir '", job_.work_dir, "' is not a folder"));
  }
  if (job_.sandbox.enabled) {
    // The children's private TMPDIR, removed with the work_dir.
    const std::string temp_dir = job_.work_dir + "/tmp";
    if (mkdir(temp_dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::InternalError(
          absl::StrCat("cannot create ", temp_dir, ": ", strerror(errno)));
    }
    sandbox_env_ = SandboxEnvironment(job_.sandbox, environ, temp_dir);
  }
  const int n = static_cast<int>(job_.scenarios.size());
  result_.scenarios.reserve(n);
  for (int i = 0; i < n; ++i) {
    result_.scenarios.push_back(Blank(i));
    remaining_.push_back(i);
  }
  job_deadline_ = absl::Now() + absl::Seconds(job_.task->job_timeout_s);

  int fruitless = 0;  // children in a row that finished no scenario
  for (int generation = 1; !remaining_.empty(); ++generation) {
    if (absl::Now() >= job_deadline_) {
      FinishRemaining(ScenarioStatus::kTimeout, JobLimitText());
      break;
    }
    absl::StatusOr<ChildOutcome> out = RunChild(generation);
    if (!out.ok()) return out.status();
    ever_ready_ |= out->ready;
    if (out->finished > 0 || remaining_.empty()) {
      fruitless = 0;
      continue;
    }
    if (++fruitless < 2) continue;
    if (!ever_ready_) {
      return absl::FailedPreconditionError(
          absl::StrCat("kseek-runner could not start: ", out->failure));
    }
    FinishRemaining(ScenarioStatus::kCrash,
                    absl::StrCat("the runner could not be restarted: ", out->failure));
  }
  return std::move(result_);
}

absl::Status JobRunner::HandleLine(const std::string& line,
                                   const std::string& token, ChildOutcome* out,
                                   int* in_flight, Ending* ending) {
  json m = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || !m.is_object()) {
    return absl::DataLossError(
        absl::StrCat("not a JSON object: ", line.substr(0, 200)));
  }
  try {
    if (!m.contains("token") || !m["token"].is_string() ||
        m["token"].get<std::string>() != token) {
      return absl::DataLossError(
          absl::StrCat("a message without the job's token: ", line.substr(0, 200)));
    }
    const std::string type = m.at("type").get<std::string>();
    const absl::Time now = absl::Now();
    if (type == "hello") {
      if (out->ready) return absl::DataLossError("a second hello");
      absl::StatusOr<DeviceInfo> device = DeviceInfoFromJson(m.at("device"));
      if (!device.ok()) return device.status();
      result_.device = *device;
      out->ready = true;
      idle_deadline_ = now + IdleLimit();
      return absl::OkStatus();
    }
    if (type == "fatal") {
      out->failure = m.at("error").get<std::string>();
      return absl::OkStatus();
    }
    if (type == "scenario_start") {
      const int index = m.at("index").get<int>();
      if (!out->ready || *in_flight >= 0 || !IsRemaining(index)) {
        return absl::DataLossError(
            absl::StrCat("an unexpected start of scenario ", index));
      }
      *in_flight = index;
      scenario_deadline_ = now + ScenarioLimit();
      return absl::OkStatus();
    }
    if (type == "scenario") {
      const int index = m.at("index").get<int>();
      if (index != *in_flight) {
        return absl::DataLossError(
            absl::StrCat("a result for scenario ", index, " that is not running"));
      }
      absl::StatusOr<ScenarioResult> r = ScenarioResultFromJson(m.at("result"));
      if (!r.ok()) return r.status();
      r->index = index;
      Finish(std::move(*r));
      ++out->finished;
      *in_flight = -1;
      idle_deadline_ = now + IdleLimit();
      return absl::OkStatus();
    }
    if (type == "done") {
      *ending = Ending::kDone;
      return absl::OkStatus();
    }
    return absl::DataLossError(absl::StrCat("unknown message type '", type, "'"));
  } catch (const json::exception& e) {
    return absl::DataLossError(
        absl::StrCat("malformed message (", e.what(), "): ", line.substr(0, 200)));
  }
}

absl::StatusOr<JobRunner::ChildOutcome> JobRunner::RunChild(int generation) {
  ChildOutcome out;
  JobFile file;
  file.task_dir = job_.task->dir;
  file.target = job_.target;
  file.reference_lib = job_.reference_lib;
  file.baseline_lib = job_.baseline_lib;
  file.candidate_lib = job_.candidate_lib;
  for (int index : remaining_) {
    file.scenarios.push_back(JobScenario{index, job_.scenarios[index]});
  }
  file.seed = job_.seed;
  file.timing = job_.timing;
  file.gpu = job_.gpu;
  file.work_dir = job_.work_dir;
  file.seccomp = job_.sandbox.seccomp_kernels;
  file.isolate_network = job_.sandbox.enabled && job_.sandbox.isolate_network;
  file.host_user = job_.sandbox.kernel_host_user;
  file.token = RandomToken();
  const std::vector<int> assigned(remaining_.begin(), remaining_.end());

  const std::string job_path =
      absl::StrCat(job_.work_dir, "/runner-job-", generation, ".json");
  const std::string log_path =
      absl::StrCat(job_.work_dir, "/runner-", generation, ".log");
  absl::Status written = WritePrivateFile(job_path, JobFileToJson(file).dump());
  if (!written.ok()) return written;
  absl::StatusOr<RunnerChild> child = StartChild(job_.runner_path, job_path, log_path,
                                                  job_.sandbox, sandbox_env_);
  if (!child.ok()) return child.status();

  int in_flight = -1;
  Ending ending = Ending::kNone;
  std::string bad_message;
  std::string buffer;
  idle_deadline_ = absl::Now() + IdleLimit();

  // Reads what is available and handles every complete line; returns false
  // at end of file.
  auto consume = [&]() -> bool {
    char chunk[65536];
    bool open = true;
    while (true) {
      ssize_t n = read(child->result_fd, chunk, sizeof(chunk));
      if (n > 0) {
        buffer.append(chunk, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) open = false;
      break;
    }
    size_t start = 0;
    size_t end;
    while (ending == Ending::kNone &&
           (end = buffer.find('\n', start)) != std::string::npos) {
      absl::Status st = HandleLine(buffer.substr(start, end - start),
                                   file.token, &out, &in_flight, &ending);
      start = end + 1;
      if (!st.ok()) {
        ending = Ending::kBadMessage;
        bad_message = std::string(st.message());
      }
    }
    buffer.erase(0, start);
    if (ending == Ending::kNone && buffer.size() > kMaxLineBytes) {
      ending = Ending::kBadMessage;
      bad_message = "a message line longer than 16 MiB";
    }
    return open;
  };

  while (ending == Ending::kNone) {
    const absl::Time now = absl::Now();
    if (now >= job_deadline_) {
      ending = Ending::kJobTimeout;
      break;
    }
    const absl::Time limit = in_flight >= 0 ? scenario_deadline_ : idle_deadline_;
    if (now >= limit) {
      ending = in_flight >= 0 ? Ending::kScenarioTimeout : Ending::kIdleTimeout;
      break;
    }
    const PumpResult pumped = child->process->Pump(std::min(job_deadline_, limit),
                                                   {child->result_fd});
    if (pumped.woken) {
      if (!consume() && ending == Ending::kNone) ending = Ending::kClosed;
      continue;
    }
    // The child exited, while a descendant may hold the pipe.
    if (pumped.exited) {
      consume();
      if (ending == Ending::kNone) ending = Ending::kExited;
    }
  }

  ChildProcess& process = *child->process;
  if (!process.reaped()) {
    const bool orderly = ending == Ending::kDone || ending == Ending::kClosed;
    if (!orderly) process.Kill();
    process.Wait(absl::Now() + kExitGrace);
  }
  close(child->result_fd);

  const std::string log = ReadTail(log_path, kMaxLogBytes);
  if (!log.empty()) {
    absl::StrAppend(&result_.log, "--- kseek-runner #", generation, " (pid ",
                    process.pid(), ") ---\n", log);
    if (log.back() != '\n') result_.log += '\n';
  }
  std::string tail = LastLines(log, kTailLines);
  if (!tail.empty()) tail = "; its last output:\n" + tail;
  const std::string death = process.ExitDescription();
  const int before = static_cast<int>(remaining_.size());

  switch (ending) {
    case Ending::kNone:
    case Ending::kDone:
      break;
    case Ending::kScenarioTimeout:
      FinishWith(in_flight, ScenarioStatus::kTimeout,
                 absl::StrCat("scenario time limit of ",
                              Seconds(job_.task->scenario_timeout_s), " s reached"));
      break;
    case Ending::kJobTimeout:
      FinishRemaining(ScenarioStatus::kTimeout, JobLimitText());
      break;
    case Ending::kIdleTimeout:
      out.failure = absl::StrCat(
          out.ready ? "the runner sent nothing for " : "the runner did not start within ",
          Seconds(absl::ToDoubleSeconds(IdleLimit())), " s", tail);
      break;
    case Ending::kBadMessage:
      if (in_flight >= 0) {
        FinishWith(in_flight, ScenarioStatus::kCrash,
                   absl::StrCat("the runner's result channel broke during the "
                                "scenario: ", bad_message));
      } else {
        out.failure = absl::StrCat("the runner sent a bad message: ", bad_message);
      }
      break;
    case Ending::kClosed:
    case Ending::kExited:
      if (in_flight >= 0) {
        int code = -1;
        const bool clean_exit = process.ExitedNormally(&code) && code == 0;
        FinishWith(in_flight, ScenarioStatus::kCrash,
                   absl::StrCat("the runner ", death, " during the scenario",
                                clean_exit ? " (the kernel ended the process)" : "",
                                tail),
                   process.TermSignal());
      } else if (out.failure.empty()) {
        out.failure = absl::StrCat("the runner ", death,
                                   out.ready ? " between scenarios" : " before it was ready",
                                   tail);
      }
      break;
  }
  if (ending == Ending::kDone) {
    for (int index : assigned) {
      if (IsRemaining(index)) {
        FinishWith(index, ScenarioStatus::kCrash,
                   "the runner finished without reporting this scenario");
      }
    }
  }
  out.finished = before - static_cast<int>(remaining_.size()) + out.finished;
  return out;
}

}  // namespace

absl::StatusOr<RunResult> RunScenarios(const RunJob& job,
                                       const ScenarioCallback& on_scenario) {
  JobRunner runner(job, on_scenario);
  return runner.Run();
}

}  // namespace kseek
