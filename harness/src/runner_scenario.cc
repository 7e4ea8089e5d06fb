// Correctness and timing of one scenario in kseek-runner
// (runner_scenario.h).
#include "harness/src/runner_scenario.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/src/runner_data.h"

namespace kseek {

absl::StatusOr<Kernel> LoadKernel(const std::string& path, const std::string& role,
                                  const std::string& name_in) {
  const std::string& name = name_in.empty() ? path : name_in;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load the ", role, " library ", name, ": ",
        err != nullptr ? err : "unknown error"));
  }
  Kernel k;
  k.launch = reinterpret_cast<kseek_launch_fn>(dlsym(handle, "kseek_launch"));
  if (k.launch == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the ", role, " library ", name, " does not export kseek_launch"));
  }
  k.error_message =
      reinterpret_cast<kseek_error_message_fn>(dlsym(handle, "kseek_error_message"));
  return k;
}

namespace {

// Poison for outputs: 0xFF bytes are NaN in every floating-point type.
constexpr uint8_t kPoison = 0xFF;
// The candidate's times are cross-checked against clocks outside its
// process: the judge's wall clock around each call (GPU) or the kernel
// host's CPU time (host). Its median excess over the baseline's process
// (the same code, honest) may be at most max(floor, kExcessFraction x its
// reported median), the floor being what the noise of the outside clock
// needs: on the H200 machine the judge's wall clock around a call (about
// 0.24 ms of messages and context switches between three CUDA contexts)
// differed by up to 0.06 ms between two honest processes; a process's CPU
// time on a loaded 2-core host by up to 0.08 ms per call (cache and
// page-fault costs are charged to it). Work or time hidden below the floor
// goes unseen. Without a baseline, kNoBaselineExcessMs more. On the host
// the baseline's excess is its process's CPU time around the call less
// its CPU time in the call (as it says; it is trusted), not less its wall
// time: under load its longer calls (about 10 ms) were preempted, their
// wall time above their CPU time, and their excess negative (-3.7 to -3.9
// ms with three busy processes on the 2-core host), counted as 0, so an
// honest candidate's short calls stood against the floor with all of
// their own overhead (0.07-0.24 ms a call) and failed in a whole
// test-suite run (0.27 and 0.32 ms over).
constexpr double kMinExcessGpuMs = 0.100;
constexpr double kMinExcessHostMs = 0.250;
constexpr double kExcessFraction = 0.10;
constexpr double kNoBaselineExcessMs = 0.100;
constexpr size_t kMaxKernelMessage = 500;
// Buffer sets: set 0 for the checks before timing, kTimingSets more; the
// candidate's timed calls pick one of these kTimingSets + 1 at random. One
// made after timing for the re-check (kFreshSet), and the baseline's own
// (kBaselineSet: it is trusted, and never touches the candidate's sets).
// Each set is shared with one kernel host only.
constexpr int kTimingSets = 2;
constexpr int kFreshSet = kTimingSets + 1;
constexpr int kBaselineSet = kTimingSets + 2;
constexpr int kSets = kTimingSets + 3;
// Each timed call of the candidate is checked with this probability,
// decided after it returned; at least one and at most kMaxTimedChecks per
// scenario (each costs a reference call).
constexpr double kTimedCheckProbability = 0.1;
// Calls of each kernel in the second measurement of a failed cross-check.
constexpr int kConfirmSamples = 10;
constexpr int kMaxTimedChecks = 2;
// Sub-streams of a scenario's seed (inputs use 2t and 2t + 1 for tensor t).
constexpr uint64_t kOffsetStream = 0x0ff5e7;
constexpr uint64_t kGuardStream = 0x6a4d;
constexpr uint64_t kProbeStream = 0x960be;

using Bytes = std::vector<unsigned char>;
// Where the inputs a candidate call was given live on the judge's device:
// per tensor, null for tensors that are not inputs.
using Sources = std::vector<const void*>;

// Where a scenario's time goes, for ScenarioResult::phase_seconds: the
// phase in force accumulates the wall time until the next change.
enum Phase {
  kPhaseOther,      // planning, messages, what no phase below holds
  kPhaseInputs,     // drawing inputs and copying them into a buffer set
  kPhaseShare,      // allocating buffer sets and mapping them into a kernel host
  kPhaseCandidate,  // the candidate's untimed calls (checks, probes, re-check)
  kPhaseReference,  // the reference's calls, its inputs and outputs
  kPhaseCompare,    // guards, input checks, output copies and comparisons
  kPhaseTiming,     // the candidate's warm-up and timed calls with their preparation
  kPhaseBaseline,   // the baseline's warm-up and timed calls with their preparation
  kPhases,
};
constexpr const char* kPhaseNames[kPhases] = {"other",   "inputs", "share",  "candidate",
                                              "reference", "compare", "timing", "baseline"};

class PhaseClock {
 public:
  PhaseClock() : since_(std::chrono::steady_clock::now()) {}
  Phase current() const { return current_; }
  void Enter(Phase p) {
    const auto now = std::chrono::steady_clock::now();
    seconds_[current_] += std::chrono::duration<double>(now - since_).count();
    since_ = now;
    current_ = p;
  }
  // The phases that took any time, up to now.
  std::map<std::string, double> Totals() {
    Enter(current_);
    std::map<std::string, double> out;
    for (int p = 0; p < kPhases; ++p) {
      if (seconds_[p] > 0) out[kPhaseNames[p]] = seconds_[p];
    }
    return out;
  }

 private:
  std::chrono::steady_clock::time_point since_;
  Phase current_ = kPhaseOther;
  double seconds_[kPhases] = {};
};

// Enters a phase for the scope, then returns to the one before.
class ScopedPhase {
 public:
  ScopedPhase(PhaseClock* clock, Phase p) : clock_(clock), before_(clock->current()) {
    clock_->Enter(p);
  }
  ~ScopedPhase() { clock_->Enter(before_); }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseClock* clock_;
  Phase before_;
};

// Why a step failed: the scenario's status and the message.
struct Failure {
  ScenarioStatus status;
  std::string error;
};
using StepResult = std::optional<Failure>;  // nullopt: the step succeeded

StepResult Crash(std::string error) {
  return Failure{ScenarioStatus::kCrash, std::move(error)};
}
StepResult Incorrect(std::string error) {
  return Failure{ScenarioStatus::kIncorrect, std::move(error)};
}

// "1 byte", "2 bytes".
std::string Count(size_t n, const char* noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

// "1 byte after its end was changed", "2 bytes after its end were changed".
std::string Changed(size_t n, const char* where) {
  return absl::StrCat(Count(n, "byte"), " ", where, n == 1 ? " was" : " were", " changed");
}

double Median(std::vector<double> v) { return Summarize(std::move(v)).median; }

double RelativeStderr(const std::vector<double>& samples) {
  TimeStats t = Summarize(samples);
  return t.mean > 0 ? t.stderr_ms / t.mean : 0;
}

// One tensor of the scenario, resolved.
struct TensorPlan {
  const TensorSpec* spec = nullptr;
  kseek_dtype dtype = KSEEK_F32;
  std::vector<int64_t> shape;
  size_t count = 0;
  size_t bytes = 0;
};

class ScenarioRun {
 public:
  ScenarioRun(const ScenarioJob& job, int index, const Scenario& scenario)
      : job_(job),
        device_(job.device),
        index_(index),
        scenario_(scenario),
        seed_(MixSeed(job.seed, static_cast<uint64_t>(index))),
        rng_(MixSeed(seed_, kOffsetStream)) {}

  ScenarioResult Run();

 private:
  // Which half of every input tensor a partial-change probe redraws.
  enum class Half { kFirst, kSecond };

  StepResult Plan();
  // Allocates candidate set `set` and shares it with the kernel hosts.
  // Allocates set `set` and shares it with `host` only.
  StepResult AllocateHostSet(int set, KernelHost* host);
  StepResult AllocateSet(std::vector<GuardedBuffer>* set);
  StepResult AllocateTiming();
  // The candidate on `inputs` in candidate set `set`, then Verify.
  StepResult Check(int set, const Sources& inputs,
                   std::vector<OutputError>* outputs);
  // After the candidate ran in set `set` on `inputs`: checks the guards of
  // every candidate set and the inputs, runs the reference on a device copy
  // of the inputs once they are found unchanged, and compares the outputs.
  StepResult Verify(int set, const Sources& inputs,
                    std::vector<OutputError>* outputs);
  // Verify for the timed call that ran in `set` on the pool windows at
  // `offsets`.
  StepResult VerifyTimed(int set, const std::vector<size_t>& offsets, int sample);
  // The pool windows at `offsets`.
  Sources Windows(const std::vector<size_t>& offsets) const;
  // Input tensor t's pool window at element `offset`.
  const unsigned char* PoolWindow(size_t t, size_t offset) const {
    return static_cast<const unsigned char*>(pools_[t].data()) +
           offset * kseek_dtype_size(plans_[t].dtype);
  }
  // (*buffers)[t], a device buffer of tensor t's size kept for the
  // scenario, allocated on first use.
  absl::StatusOr<void*> ScenarioBuffer(std::vector<DeviceBuffer>* buffers, size_t t);
  // Whether the candidate stored outside a tensor of any candidate set.
  StepResult CheckGuards();
  // Check on the scenario's inputs with `half` of every input tensor
  // redrawn: a kernel that keys a cache of outputs on part of its inputs
  // replays a wrong output here.
  StepResult Probe(Half half, std::vector<OutputError>* outputs);
  StepResult Time(ScenarioResult* r);
  // Fresh inputs from the pools at random offsets into candidate set `set`,
  // outputs poisoned, scratch zeroed, optionally caches flushed; waits.
  StepResult Prepare(int set, bool flush, std::vector<size_t>* offsets);

  // The reference, in this process, on the reference set.
  int CallReference();
  StepResult CallReferenceChecked();
  // A kernel host's call on candidate set `set`; `clock` (timed calls)
  // gets the judge's measurements around it.
  struct OutsideClock {
    double wall_ms = 0;  // "go" to the reply (and, GPU, a round trip through the device after it)
    // Host target: the CPU time the host process spent from "go" (it is
    // blocked then, so the kernel's account of it is exact) to the next
    // time it blocked after its reply (found with a ping).
    double cpu_ms = 0;
  };
  // `before` runs between arming and making the call (a timed sample's
  // preparation: inputs, poison, flush).
  StepResult CallHost(KernelHost* host, int set, bool timed, HostCall* call,
                      OutsideClock* clock, const std::function<StepResult()>& before = nullptr);
  std::string KernelMessage(int rc, const std::string& message, const std::string& who) const;
  StepResult DeviceError(const absl::Status& st, const std::string& during) const;
  bool IsInput(size_t t) const { return plans_[t].spec->role == TensorRole::kIn; }
  std::string Who(const KernelHost* k) const;
  // The cross-check of the reported times (kMinExcessGpuMs ...).
  // `check` gets the excesses and what was allowed.
  StepResult CrossCheckTimes(const std::vector<double> reported[2],
                             const std::vector<double> outside[2], bool baseline,
                             ScenarioResult::CrossCheck* check);

  const ScenarioJob& job_;
  Device* device_;
  const int index_;
  const Scenario& scenario_;
  const uint64_t seed_;  // the scenario's: every random stream derives from it
  Rng rng_;              // pool offsets
  std::vector<TensorPlan> plans_;
  std::vector<kseek_param> params_;
  // The scenario's inputs, and those of a probe; per tensor, inputs only.
  // On the judge's device: no tensor crosses the bus during a scenario.
  std::vector<DeviceBuffer> pristine_;
  std::vector<DeviceBuffer> probe_;
  // The candidate's outputs of the call being verified; outputs only.
  std::vector<DeviceBuffer> snapshot_;
  Bytes guard_pattern_;                           // kGuardBytes
  // Indexed as kFreshSet, kBaselineSet, ...; every set but the baseline's
  // is the candidate's.
  std::vector<GuardedBuffer> candidate_sets_[kSets];
  std::vector<int> shared_ids_[kSets];  // per tensor: the host's buffer ids
  KernelHost* set_host_[kSets] = {};
  std::vector<GuardedBuffer> reference_set_;
  std::vector<DeviceBuffer> pools_;  // per tensor; inputs only, 2x elements
  std::vector<std::pair<std::string, int64_t>> host_params_;
  std::string timed_failure_;       // set when a kernel host failed in a timed call
  PhaseClock phases_;

 public:
  ~ScenarioRun();
};

// Buffer ids for the kernel hosts, unique in this process.
int NextSharedId() {
  static int next = 0;
  return ++next;
}

ScenarioRun::~ScenarioRun() {
  for (int set = 0; set < kSets; ++set) {
    for (int id : shared_ids_[set]) {
      if (set_host_[set] != nullptr && !set_host_[set]->dead()) (void)set_host_[set]->Unmap(id);
    }
  }
}

std::string ScenarioRun::Who(const KernelHost* k) const {
  if (k == job_.candidate) return "kseek_launch";
  return "the baseline's kseek_launch";
}

StepResult ScenarioRun::DeviceError(const absl::Status& st,
                                    const std::string& during) const {
  return Crash(absl::StrCat(device_->broken() ? "device error " : "", during, ": ",
                            st.message()));
}

StepResult ScenarioRun::Plan() {
  const TaskSpec& task = *job_.task;
  for (const ParamSpec& p : task.params) {
    auto it = scenario_.params.find(p.name);
    if (it == scenario_.params.end()) {
      return Crash(absl::StrCat("scenario '", scenario_.name, "' lacks parameter '",
                                p.name, "'"));
    }
    params_.push_back(kseek_param{p.name.c_str(), it->second});
    host_params_.emplace_back(p.name, it->second);
  }
  for (const TensorSpec& spec : task.tensors) {
    TensorPlan plan;
    plan.spec = &spec;
    plan.dtype = TensorDtype(spec, scenario_);
    absl::StatusOr<std::vector<int64_t>> shape = TensorShape(spec, scenario_);
    if (!shape.ok()) {
      return Crash(absl::StrCat("tensor ", spec.name, ": ", shape.status().message()));
    }
    plan.shape = *shape;
    if (plan.shape.size() > KSEEK_MAX_DIMS) {
      return Crash(absl::StrCat("tensor ", spec.name, " has ", plan.shape.size(),
                                " dimensions; the ABI allows ", KSEEK_MAX_DIMS));
    }
    const size_t esize = kseek_dtype_size(plan.dtype);
    if (esize == 0) {
      return Crash(absl::StrCat("tensor ", spec.name, " has an unknown dtype"));
    }
    size_t count = 1;
    for (int64_t d : plan.shape) {
      if (d < 0) {
        return Crash(absl::StrCat("tensor ", spec.name, " has a negative dimension ", d));
      }
      if (d > 0 && count > (SIZE_MAX / esize) / static_cast<size_t>(d)) {
        return Crash(absl::StrCat("tensor ", spec.name, " is too large"));
      }
      count *= static_cast<size_t>(d);
    }
    plan.count = count;
    plan.bytes = count * esize;
    plans_.push_back(std::move(plan));
  }
  return std::nullopt;
}

StepResult ScenarioRun::AllocateSet(std::vector<GuardedBuffer>* set) {
  for (const TensorPlan& plan : plans_) {
    absl::StatusOr<GuardedBuffer> b = AllocGuarded(device_, plan.bytes, guard_pattern_);
    if (!b.ok()) return DeviceError(b.status(), absl::StrCat("allocating tensor ", plan.spec->name));
    set->push_back(std::move(*b));
  }
  return std::nullopt;
}

StepResult ScenarioRun::AllocateHostSet(int set, KernelHost* host) {
  ScopedPhase phase(&phases_, kPhaseShare);
  if (StepResult f = AllocateSet(&candidate_sets_[set])) return f;
  set_host_[set] = host;
  for (const GuardedBuffer& b : candidate_sets_[set]) {
    const int id = NextSharedId();
    shared_ids_[set].push_back(id);
    absl::StatusOr<SharedAllocation> a = device_->Share(b.base(), b.allocation_bytes());
    if (!a.ok()) return DeviceError(a.status(), "sharing a tensor with a kernel host");
    absl::Status st = host->Map(id, *a);
    if (a->fd >= 0) close(a->fd);
    if (!st.ok()) {
      return Crash(host->dead() ? absl::StrCat(st.message(), " while its buffers were shared")
                                : std::string(st.message()));
    }
  }
  return std::nullopt;
}

StepResult ScenarioRun::AllocateTiming() {
  for (int set = 1; set <= kTimingSets; ++set) {
    if (StepResult f = AllocateHostSet(set, job_.candidate)) return f;
  }
  if (job_.baseline != nullptr) {
    if (StepResult f = AllocateHostSet(kBaselineSet, job_.baseline)) return f;
  }
  // A pool holds the scenario's inputs followed by as many fresh values;
  // every sample copies a window at a random offset in [1, count].
  ScopedPhase phase(&phases_, kPhaseInputs);
  for (size_t t = 0; t < plans_.size(); ++t) {
    const TensorPlan& plan = plans_[t];
    if (!IsInput(t)) {
      pools_.emplace_back();
      continue;
    }
    absl::StatusOr<DeviceBuffer> pool = AllocBuffer(device_, 2 * plan.bytes);
    if (!pool.ok()) {
      return DeviceError(pool.status(), absl::StrCat("allocating the input pool of ", plan.spec->name));
    }
    absl::Status st = device_->Copy(pool->data(), pristine_[t].data(), plan.bytes);
    if (st.ok()) {
      st = device_->RandomFill(static_cast<unsigned char*>(pool->data()) + plan.bytes,
                               plan.dtype, plan.spec->init, MixSeed(seed_, 2 * t + 1),
                               plan.count);
    }
    if (st.ok()) st = device_->Synchronize();
    if (!st.ok()) return DeviceError(st, "filling an input pool");
    pools_.push_back(std::move(*pool));
  }
  return std::nullopt;
}

int ScenarioRun::CallReference() {
  // Rebuilt for every call: a kernel may scribble on what it was given.
  std::vector<kseek_tensor> tensors(plans_.size());
  for (size_t t = 0; t < plans_.size(); ++t) {
    const TensorPlan& plan = plans_[t];
    tensors[t] = ContiguousTensor(plan.spec->name.c_str(), reference_set_[t].data(), plan.dtype,
                                  plan.shape);
  }
  std::vector<kseek_param> params = params_;
  kseek_launch_args args{};
  args.abi_version = KSEEK_ABI_VERSION;
  args.num_params = static_cast<int32_t>(params.size());
  args.params = params.data();
  args.num_tensors = static_cast<int32_t>(tensors.size());
  args.tensors = tensors.data();
  args.stream = device_->stream();
  return job_.reference->launch(&args);
}

std::string ScenarioRun::KernelMessage(int rc, const std::string& message,
                                       const std::string& who) const {
  std::string text = absl::StrCat(who, " returned ", rc);
  if (!message.empty()) absl::StrAppend(&text, ": ", message.substr(0, kMaxKernelMessage));
  return text;
}

StepResult ScenarioRun::CallReferenceChecked() {
  ScopedPhase phase(&phases_, kPhaseReference);
  const int rc = CallReference();
  absl::Status st = device_->Synchronize();
  const std::string who = "the reference's kseek_launch";
  if (!st.ok()) return DeviceError(st, absl::StrCat("after ", who));
  if (rc != 0) {
    const char* msg =
        job_.reference->error_message != nullptr ? job_.reference->error_message() : nullptr;
    return Crash(KernelMessage(rc, msg != nullptr ? msg : "", who));
  }
  return std::nullopt;
}

StepResult ScenarioRun::CallHost(KernelHost* host, int set, bool timed, HostCall* call,
                                 OutsideClock* clock,
                                 const std::function<StepResult()>& before) {
  std::vector<HostTensor> tensors(plans_.size());
  for (size_t t = 0; t < plans_.size(); ++t) {
    HostTensor& x = tensors[t];
    x.id = shared_ids_[set][t];
    x.offset = kGuardBytes;
    x.name = plans_[t].spec->name;
    x.dtype = plans_[t].dtype;
    x.shape = plans_[t].shape;
  }
  absl::Status armed = host->Arm(host_params_, tensors, timed);
  if (!armed.ok()) {
    return Crash(absl::StrCat(armed.message(), " during the scenario"));
  }
  if (before) {
    if (StepResult f = before()) return f;
  }
  const uint64_t output_before = host->LogBytes();
  clockid_t cpu_clock;
  const bool have_cpu = clock != nullptr && clock_getcpuclockid(host->pid(), &cpu_clock) == 0;
  const double cpu0 = have_cpu ? ClockMs(cpu_clock) : 0;
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<HostCall> c = host->Go();
  if (c.ok() && clock != nullptr && device_->has_device_clock()) {
    // A round trip through the device from this process: work the host's
    // context left running past its reply delays it, or is caught
    // unfinished by a checked call.
    unsigned char byte = 0;
    absl::Status st = device_->Download(&byte, candidate_sets_[set][0].data(), 1);
    if (!st.ok()) return DeviceError(st, "after a timed call");
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (clock != nullptr) clock->wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (c.ok() && have_cpu && !device_->has_device_clock()) {
    absl::Status st = host->Ping();
    if (!st.ok()) return Crash(absl::StrCat(st.message(), " during the scenario"));
    clock->cpu_ms = ClockMs(cpu_clock) - cpu0;
  }
  if (!c.ok()) {
    if (c.status().code() == absl::StatusCode::kInternal) {  // a device error in the host
      return Crash(absl::StrCat(c.status().message(), " (after ", Who(host), ")"));
    }
    Failure f{ScenarioStatus::kCrash, absl::StrCat(c.status().message(), " during the scenario")};
    if (absl::StrContains(f.error, "exited with status 0")) {
      f.error = absl::StrCat(f.error, " (the kernel ended the process)");
    }
    return f;
  }
  if (c->rc != 0) {
    // What its process printed during the call goes with the message: the
    // kernel's own lines, or the sandbox's "system call N refused" when a
    // runtime call failed on a refusal.
    std::string text = KernelMessage(c->rc, c->message, Who(host));
    const std::string printed = host->LogSince(output_before, kMaxKernelMessage);
    if (!printed.empty()) absl::StrAppend(&text, "; its process printed: ", printed);
    return Crash(text);
  }
  *call = *c;
  return std::nullopt;
}

StepResult ScenarioRun::Check(int set, const Sources& inputs,
                              std::vector<OutputError>* outputs) {
  // Inputs copied from `inputs`, outputs poisoned, scratch zeroed.
  const std::vector<GuardedBuffer>& cand = candidate_sets_[set];
  absl::Status st;
  ScopedPhase phase(&phases_, kPhaseInputs);
  for (size_t t = 0; t < plans_.size() && st.ok(); ++t) {
    switch (plans_[t].spec->role) {
      case TensorRole::kIn:
        st = device_->Copy(cand[t].data(), inputs[t], plans_[t].bytes);
        break;
      case TensorRole::kOut:
        st = device_->Fill(cand[t].data(), kPoison, plans_[t].bytes);
        break;
      case TensorRole::kScratch:
        st = device_->Fill(cand[t].data(), 0, plans_[t].bytes);
        break;
    }
  }
  if (st.ok()) st = device_->Synchronize();
  if (!st.ok()) return DeviceError(st, "preparing the candidate's tensors");
  HostCall call;
  phases_.Enter(kPhaseCandidate);
  if (StepResult f = CallHost(job_.candidate, set, /*timed=*/false, &call, nullptr)) return f;
  return Verify(set, inputs, outputs);
}

StepResult ScenarioRun::Verify(int set, const Sources& inputs,
                               std::vector<OutputError>* outputs) {
  outputs->clear();
  // Outputs are poisoned and scratch zeroed; inputs are copied on the
  // device from the same tensors of `from`.
  auto load = [&](const std::vector<GuardedBuffer>& buffers,
                  const std::vector<GuardedBuffer>& from) -> absl::Status {
    for (size_t t = 0; t < plans_.size(); ++t) {
      absl::Status st;
      switch (plans_[t].spec->role) {
        case TensorRole::kIn:
          st = device_->Copy(buffers[t].data(), from[t].data(), plans_[t].bytes);
          break;
        case TensorRole::kOut:
          st = device_->Fill(buffers[t].data(), kPoison, plans_[t].bytes);
          break;
        case TensorRole::kScratch:
          st = device_->Fill(buffers[t].data(), 0, plans_[t].bytes);
          break;
      }
      if (!st.ok()) return st;
    }
    return device_->Synchronize();
  };
  const std::vector<GuardedBuffer>& cand = candidate_sets_[set];
  ScopedPhase phase(&phases_, kPhaseCompare);
  if (StepResult f = CheckGuards()) return f;

  absl::Status st;
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (!IsInput(t)) continue;
    absl::StatusOr<size_t> byte = device_->FirstDifference(cand[t].data(), inputs[t], plans_[t].bytes);
    if (!byte.ok()) return DeviceError(byte.status(), "checking an input");
    if (*byte < plans_[t].bytes) {
      return Incorrect(absl::StrCat("input tensor ", plans_[t].spec->name,
                                    " was modified (first at element ",
                                    *byte / kseek_dtype_size(plans_[t].dtype), ")"));
    }
  }
  // The outputs as they are now, copied where the candidate cannot reach:
  // work it left running cannot finish them while the reference runs.
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (plans_[t].spec->role != TensorRole::kOut) continue;
    absl::StatusOr<void*> copy = ScenarioBuffer(&snapshot_, t);
    if (!copy.ok()) return DeviceError(copy.status(), "allocating a copy of an output");
    st = device_->Copy(*copy, cand[t].data(), plans_[t].bytes);
    if (!st.ok()) break;
  }
  if (st.ok()) st = device_->Synchronize();
  if (!st.ok()) return DeviceError(st, "copying the candidate's outputs");

  // Buffers of the reference are filled only after the candidate ran, so a
  // candidate never finds a reference result in memory. Its inputs are
  // copied on the device from the candidate's, just found equal to `inputs`
  // byte for byte.
  phases_.Enter(kPhaseReference);
  st = load(reference_set_, cand);
  if (!st.ok()) return DeviceError(st, "preparing the reference's tensors");
  if (StepResult f = CallReferenceChecked()) return f;
  phases_.Enter(kPhaseCompare);

  std::vector<std::string> errors;
  for (size_t t = 0; t < plans_.size(); ++t) {
    const TensorPlan& plan = plans_[t];
    if (plan.spec->role != TensorRole::kOut) continue;
    Tolerance tol;
    auto it = plan.spec->tolerance.find(DtypeName(plan.dtype));
    if (it == plan.spec->tolerance.end()) it = plan.spec->tolerance.find("*");
    if (it != plan.spec->tolerance.end()) tol = it->second;
    absl::StatusOr<Comparison> c = device_->CompareTensors(
        plan.spec->name, plan.dtype, snapshot_[t].data(), reference_set_[t].data(), plan.count, tol);
    if (!c.ok()) return DeviceError(c.status(), "comparing an output");
    outputs->push_back(c->result);
    if (!c->error.empty()) errors.push_back(c->error);
  }
  if (!errors.empty()) return Incorrect(absl::StrJoin(errors, "; "));
  return std::nullopt;
}

StepResult ScenarioRun::CheckGuards() {
  std::vector<std::string> errors;
  for (size_t t = 0; t < plans_.size(); ++t) {
    GuardDamage worst;
    for (int k = 0; k < kSets; ++k) {
      const std::vector<GuardedBuffer>& set = candidate_sets_[k];
      if (set.empty() || k == kBaselineSet) continue;
      absl::StatusOr<GuardDamage> d = set[t].ReadGuards(guard_pattern_);
      if (!d.ok()) return DeviceError(d.status(), "reading the guards of a tensor");
      if (d->before + d->after > worst.before + worst.after) worst = *d;
    }
    const std::string& name = plans_[t].spec->name;
    if (worst.before > 0) {
      errors.push_back(absl::StrCat("wrote outside tensor ", name, ": ",
                                    Changed(worst.before, "before its start"), " (farthest: ",
                                    Count(worst.before_span, "byte"), " before it)"));
    }
    if (worst.after > 0) {
      errors.push_back(absl::StrCat("wrote outside tensor ", name, ": ",
                                    Changed(worst.after, "after its end"), " (farthest: ",
                                    Count(worst.after_span, "byte"), " past it)"));
    }
  }
  if (!errors.empty()) return Incorrect(absl::StrJoin(errors, "; "));
  return std::nullopt;
}

StepResult ScenarioRun::Probe(Half half, std::vector<OutputError>* outputs) {
  std::optional<ScopedPhase> phase(std::in_place, &phases_, kPhaseInputs);
  Sources inputs(plans_.size(), nullptr);
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (!IsInput(t)) continue;
    const TensorPlan& plan = plans_[t];
    absl::StatusOr<void*> probe = ScenarioBuffer(&probe_, t);
    if (!probe.ok()) return DeviceError(probe.status(), "allocating the inputs of a probe");
    const size_t esize = kseek_dtype_size(plan.dtype);
    const size_t mid = plan.count / 2;
    // Elements [begin, end) are redrawn, the others copied from pristine_.
    const size_t begin = half == Half::kFirst ? 0 : mid;
    const size_t end = half == Half::kFirst ? mid : plan.count;
    auto* dst = static_cast<unsigned char*>(*probe);
    absl::Status st = device_->Copy(dst, pristine_[t].data(), plan.bytes);
    const uint64_t stream = 2 * t + (half == Half::kFirst ? 0 : 1);
    if (st.ok()) {
      st = device_->RandomFill(dst + begin * esize, plan.dtype, plan.spec->init,
                               MixSeed(MixSeed(seed_, kProbeStream), stream), end - begin);
    }
    if (st.ok()) st = device_->Synchronize();
    if (!st.ok()) return DeviceError(st, "drawing the inputs of a probe");
    inputs[t] = dst;
  }
  phase.reset();
  StepResult f = Check(0, inputs, outputs);
  if (f) {
    const char* changed = half == Half::kFirst ? "first" : "second";
    f->error = f->status == ScenarioStatus::kIncorrect
                   ? absl::StrCat("wrong when only the ", changed,
                                  " half of the inputs changed: ", f->error)
                   : absl::StrCat("on the call where only the ", changed,
                                  " half of the inputs changed: ", f->error);
  }
  return f;
}

StepResult ScenarioRun::Prepare(int set, bool flush, std::vector<size_t>* offsets) {
  const std::vector<GuardedBuffer>& buffers = candidate_sets_[set];
  offsets->assign(plans_.size(), 0);
  for (size_t t = 0; t < plans_.size(); ++t) {
    const TensorPlan& plan = plans_[t];
    absl::Status st;
    switch (plan.spec->role) {
      case TensorRole::kIn: {
        const size_t offset = plan.count > 0 ? 1 + rng_.Below(plan.count) : 0;
        (*offsets)[t] = offset;
        st = device_->Copy(buffers[t].data(), PoolWindow(t, offset), plan.bytes);
        break;
      }
      case TensorRole::kOut:
        st = device_->Fill(buffers[t].data(), kPoison, plan.bytes);
        break;
      case TensorRole::kScratch:
        st = device_->Fill(buffers[t].data(), 0, plan.bytes);
        break;
    }
    if (!st.ok()) return DeviceError(st, "preparing a timing sample");
  }
  absl::Status st = flush ? device_->FlushCaches() : absl::OkStatus();
  if (st.ok()) st = device_->Synchronize();
  if (!st.ok()) return DeviceError(st, "preparing a timing sample");
  return std::nullopt;
}

Sources ScenarioRun::Windows(const std::vector<size_t>& offsets) const {
  Sources inputs(plans_.size(), nullptr);
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (IsInput(t)) inputs[t] = PoolWindow(t, offsets[t]);
  }
  return inputs;
}

absl::StatusOr<void*> ScenarioRun::ScenarioBuffer(std::vector<DeviceBuffer>* buffers, size_t t) {
  buffers->resize(plans_.size());
  DeviceBuffer& b = (*buffers)[t];
  if (b.data() == nullptr) {
    absl::StatusOr<DeviceBuffer> made = AllocBuffer(device_, plans_[t].bytes);
    if (!made.ok()) return made.status();
    b = std::move(*made);
  }
  return b.data();
}

StepResult ScenarioRun::VerifyTimed(int set, const std::vector<size_t>& offsets, int sample) {
  std::vector<OutputError> outputs;
  StepResult f = Verify(set, Windows(offsets), &outputs);
  if (f) f->error = absl::StrCat("wrong on a timed call (sample ", sample, "): ", f->error);
  return f;
}

StepResult ScenarioRun::CrossCheckTimes(const std::vector<double> reported[2],
                                        const std::vector<double> outside[2], bool baseline,
                                        ScenarioResult::CrossCheck* check) {
  // Per sample: what the clock outside the process saw beyond what the
  // process reported. The baseline's process runs the same code honestly,
  // so its excess is the cost of the call itself.
  // Over the same number of samples (the first ones) for both, so that
  // neither has more of the colder early calls.
  const size_t n = baseline ? std::min(reported[0].size(), reported[1].size()) : reported[0].size();
  auto excess = [&](int i) {
    std::vector<double> e(n);
    for (size_t j = 0; j < e.size(); ++j) e[j] = outside[i][j] - reported[i][j];
    return Median(e);
  };
  const double reported_ms = Median(reported[0]);
  const double outside_ms = Median(outside[0]);
  const double floor_ms = device_->has_device_clock() ? kMinExcessGpuMs : kMinExcessHostMs;
  const double allowed = std::max(floor_ms, kExcessFraction * reported_ms) +
                         (baseline ? 0.0 : kNoBaselineExcessMs);
  // A process preempted during its call reports more than its CPU time
  // (host target): a negative excess is no cost of the call, and is not
  // taken off the candidate's.
  check->candidate_excess_ms = excess(0);
  check->baseline_excess_ms = baseline ? excess(1) : 0.0;
  check->allowed_ms = allowed;
  const double over = check->candidate_excess_ms - std::max(0.0, check->baseline_excess_ms);
  if (over <= allowed) return std::nullopt;
  if (device_->has_device_clock()) {
    return Incorrect(absl::StrFormat(
        "work escaped the timing stream, or the reported time is wrong: the candidate's process "
        "reported %.4g ms per call, the judge's clock saw %.4g ms (%.4g ms more than the "
        "baseline's process needs around a call)",
        reported_ms, outside_ms, over));
  }
  return Incorrect(absl::StrFormat(
      "the reported time is wrong: the candidate's process reported %.4g ms per call but used "
      "%.4g ms of CPU time (%.4g ms more than the baseline's process uses around a call)",
      reported_ms, outside_ms, over));
}

StepResult ScenarioRun::Time(ScenarioResult* r) {
  if (StepResult f = AllocateTiming()) return f;
  const TimingOptions& opt = job_.timing;
  std::vector<KernelHost*> kernels = {job_.candidate};
  if (job_.baseline != nullptr) kernels.push_back(job_.baseline);
  std::vector<size_t> offsets;
  HostCall call;

  // Warm-up rounds cover every timing set, so that no set is first touched
  // by a timed call.
  for (int w = 0; w < std::max(opt.warmup, kTimingSets + 1); ++w) {
    for (KernelHost* k : kernels) {
      const int set = k == job_.baseline ? kBaselineSet : w % (kTimingSets + 1);
      ScopedPhase phase(&phases_, k == job_.baseline ? kPhaseBaseline : kPhaseTiming);
      if (StepResult f = Prepare(set, /*flush=*/false, &offsets)) return f;
      if (StepResult f = CallHost(k, set, /*timed=*/false, &call, nullptr)) return f;
    }
  }

  // Every sample gets fresh inputs (pool windows at random offsets) in a
  // set picked at random, so neither pointers nor contents repeat in a way
  // a kernel could predict. Each kernel is sampled until it is precise or
  // out of budget; the baseline needs fewer samples (it is trusted and
  // usually slow).
  std::vector<double> device_ms[2], outside_ms[2];
  std::vector<int> sets_used;
  const int min_samples[2] = {opt.min_samples, std::max(5, (opt.min_samples + 1) / 2)};
  double spent_s[2] = {0, 0};
  int last_set = 0;
  std::vector<size_t> last_offsets;
  int checks = 0;
  int candidate_samples = 0;
  bool last_checked = false;
  // One timed call of kernels[i], its times appended to reported[i] and
  // outside[i].
  auto sample = [&](size_t i, std::vector<double>* reported,
                    std::vector<double>* outside) -> StepResult {
    const int set = i == 1 ? kBaselineSet : static_cast<int>(rng_.Below(kTimingSets + 1));
    OutsideClock clock;
    const auto start = std::chrono::steady_clock::now();
    {
      ScopedPhase phase(&phases_, i == 0 ? kPhaseTiming : kPhaseBaseline);
      if (StepResult f = CallHost(kernels[i], set, /*timed=*/true, &call, &clock,
                                  [&] { return Prepare(set, /*flush=*/true, &offsets); })) {
        return f;
      }
    }
    spent_s[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    reported[i].push_back(call.device_ms);
    // What the clock outside the process saw: the judge's wall clock
    // (GPU), or the CPU time the process spent on the call (host). On the
    // host the baseline's process (trusted) also says its CPU time over
    // the call, which takes the place of its wall time there: its excess
    // is then the cost of a call around the kernel even when the call was
    // preempted (its wall time longer than its CPU time).
    double seen = device_->has_device_clock() ? clock.wall_ms : clock.cpu_ms;
    if (i == 1 && !device_->has_device_clock() && call.cpu_ms > 0) {
      seen = clock.cpu_ms - call.cpu_ms + call.device_ms;
    }
    outside[i].push_back(seen);
    if (i != 0) return std::nullopt;
    ++candidate_samples;
    last_set = set;
    last_offsets = offsets;
    last_checked = false;
    // Whether this call is checked is decided only now that it returned.
    if (checks < kMaxTimedChecks && rng_.Uniform() < kTimedCheckProbability) {
      ++checks;
      last_checked = true;
      return VerifyTimed(set, offsets, candidate_samples);
    }
    return std::nullopt;
  };
  for (int n = 1;; ++n) {
    bool sampled = false;
    for (size_t i = 0; i < kernels.size(); ++i) {
      const int taken = static_cast<int>(device_ms[i].size());
      const bool needed = taken < std::min(min_samples[i], opt.max_samples) ||
                          (taken < opt.max_samples && spent_s[i] < opt.max_seconds &&
                           RelativeStderr(device_ms[i]) > opt.target_rse);
      if (!needed) continue;
      sampled = true;
      if (StepResult f = sample(i, device_ms, outside_ms)) return f;
    }
    if (!sampled) break;
  }

  r->time = Summarize(device_ms[0]);
  if (job_.baseline != nullptr) r->baseline = Summarize(device_ms[1]);
  // A cross-check that fails is measured again on kConfirmSamples more
  // calls of each kernel, and fails only if it fails there too: work
  // hidden from the timing shows in every call, while the noise of the
  // outside clock (a context switch, the GPU switching between the
  // processes' contexts) comes and goes.
  ScenarioResult::CrossCheck first;
  if (CrossCheckTimes(device_ms, outside_ms, job_.baseline != nullptr, &first)) {
    std::vector<double> again_ms[2], again_outside_ms[2];
    ScenarioResult::CrossCheck again;
    for (int k = 0; k < kConfirmSamples; ++k) {
      for (size_t i = 0; i < kernels.size(); ++i) {
        if (StepResult f = sample(i, again_ms, again_outside_ms)) return f;
      }
    }
    again.measurements = 2;
    StepResult failed =
        CrossCheckTimes(again_ms, again_outside_ms, job_.baseline != nullptr, &again);
    r->cross_check = again;
    if (failed) {
      failed->error = absl::StrFormat(
          "%s; measured twice (%.4g ms more the first time)", failed->error,
          first.candidate_excess_ms - std::max(0.0, first.baseline_excess_ms));
      return failed;
    }
  } else {
    r->cross_check = first;
  }
  if (checks == 0 && !last_checked && !last_offsets.empty()) {
    if (StepResult f = VerifyTimed(last_set, last_offsets, candidate_samples)) return f;
  }

  // The candidate once more, in buffers it has never seen, on fresh inputs.
  const int fresh = kFreshSet;
  if (StepResult f = AllocateHostSet(fresh, job_.candidate)) return f;
  phases_.Enter(kPhaseCandidate);
  if (StepResult f = Prepare(fresh, /*flush=*/false, &offsets)) return f;
  if (StepResult f = CallHost(job_.candidate, fresh, /*timed=*/false, &call, nullptr)) return f;
  phases_.Enter(kPhaseOther);
  std::vector<OutputError> outputs;
  if (StepResult f = Verify(fresh, Windows(offsets), &outputs)) {
    if (!outputs.empty()) r->outputs = outputs;
    f->error = absl::StrCat("wrong after timing: ", f->error);
    return f;
  }
  if (r->baseline && r->time->median > 0) r->speedup = r->baseline->median / r->time->median;
  return std::nullopt;
}

ScenarioResult ScenarioRun::Run() {
  ScenarioResult r;
  r.index = index_;
  r.name = scenario_.name;
  auto fail = [&](const Failure& f) {
    r.status = f.status;
    r.error = f.error;
    r.time.reset();
    r.speedup.reset();
    r.phase_seconds = phases_.Totals();
    return r;
  };
  auto fold_errors = [&] {
    for (const OutputError& o : r.outputs) {
      r.rel_l2 = std::max(r.rel_l2, o.rel_l2);
      r.max_abs = std::max(r.max_abs, o.max_abs);
    }
  };
  if (StepResult f = Plan()) return fail(*f);
  guard_pattern_.resize(kGuardBytes);
  Rng guard_rng(MixSeed(seed_, kGuardStream));
  for (unsigned char& b : guard_pattern_) b = static_cast<unsigned char>(guard_rng.Next() >> 56);
  if (StepResult f = AllocateHostSet(0, job_.candidate)) return fail(*f);
  if (StepResult f = AllocateSet(&reference_set_)) return fail(*f);

  phases_.Enter(kPhaseInputs);
  Sources pristine(plans_.size(), nullptr);
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (!IsInput(t)) continue;
    absl::StatusOr<void*> b = ScenarioBuffer(&pristine_, t);
    absl::Status st = b.status();
    if (st.ok()) {
      st = device_->RandomFill(*b, plans_[t].dtype, plans_[t].spec->init, MixSeed(seed_, 2 * t),
                               plans_[t].count);
    }
    if (st.ok()) st = device_->Synchronize();
    if (!st.ok()) return fail(*DeviceError(st, "drawing the scenario's inputs"));
    pristine[t] = *b;
  }
  phases_.Enter(kPhaseOther);

  StepResult checked = Check(0, pristine, &r.outputs);
  fold_errors();
  if (checked) return fail(*checked);
  for (Half half : {Half::kSecond, Half::kFirst}) {
    std::vector<OutputError> outputs;
    if (StepResult f = Probe(half, &outputs)) {
      if (!outputs.empty()) r.outputs = outputs;
      fold_errors();
      return fail(*f);
    }
  }
  if (!job_.timing.enabled) {
    r.phase_seconds = phases_.Totals();
    return r;
  }
  if (StepResult f = Time(&r)) {
    fold_errors();
    return fail(*f);
  }
  r.phase_seconds = phases_.Totals();
  return r;
}

}  // namespace

ScenarioResult RunScenario(const ScenarioJob& job, int index, const Scenario& scenario) {
  ScenarioRun run(job, index, scenario);
  return run.Run();
}

}  // namespace kseek
