// Correctness and timing of one scenario in kseek-runner
// (runner_scenario.h).
#include "runner_scenario.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runner_data.h"

namespace kseek {

absl::StatusOr<Kernel> LoadKernel(const std::string& path, const std::string& role) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load the ", role, " library ", path, ": ",
        err != nullptr ? err : "unknown error"));
  }
  Kernel k;
  k.launch = reinterpret_cast<kseek_launch_fn>(dlsym(handle, "kseek_launch"));
  if (k.launch == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the ", role, " library ", path, " does not export kseek_launch"));
  }
  k.error_message =
      reinterpret_cast<kseek_error_message_fn>(dlsym(handle, "kseek_error_message"));
  return k;
}

namespace {

// Poison for outputs: 0xFF bytes are NaN in every floating-point type.
constexpr uint8_t kPoison = 0xFF;
// A candidate whose host-minus-event gap exceeds the baseline's by more
// than max(kMinEscapeMs, kEscapeFraction x its event time) hid work from
// the events.
constexpr double kMinEscapeMs = 0.050;
constexpr double kEscapeFraction = 0.25;
constexpr size_t kMaxKernelMessage = 500;
// Sub-streams of a scenario's seed (inputs use 2t and 2t + 1 for tensor t).
constexpr uint64_t kOffsetStream = 0x0ff5e7;
constexpr uint64_t kGuardStream = 0x6a4d;
constexpr uint64_t kProbeStream = 0x960be;

using Bytes = std::vector<unsigned char>;

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
  StepResult AllocateSet(std::vector<GuardedBuffer>* set);
  StepResult AllocateTiming();
  // The candidate on `inputs` in candidate set `set`, then the reference on
  // a device copy of the candidate's inputs once they are found unchanged;
  // checks the guards of every candidate set and the inputs, and compares
  // the outputs.
  StepResult Check(int set, const std::vector<Bytes>& inputs,
                   std::vector<OutputError>* outputs);
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

  int Call(const Kernel& k, const std::vector<GuardedBuffer>& set);
  // Calls, waits for the device, checks the return code.
  StepResult CallChecked(const Kernel& k, const std::vector<GuardedBuffer>& set,
                         const std::string& who);
  std::string KernelMessage(const Kernel& k, int rc, const std::string& who) const;
  StepResult DeviceError(const absl::Status& st, const std::string& during) const;
  bool IsInput(size_t t) const { return plans_[t].spec->role == TensorRole::kIn; }
  std::string Who(const Kernel& k) const;

  const ScenarioJob& job_;
  Device* device_;
  const int index_;
  const Scenario& scenario_;
  const uint64_t seed_;  // the scenario's: every random stream derives from it
  Rng rng_;              // pool offsets
  std::vector<TensorPlan> plans_;
  std::vector<kseek_param> params_;
  std::vector<Bytes> pristine_;                   // per tensor; inputs only
  // Host buffers reused by the steps, so that large tensors are allocated
  // once per scenario: inputs of a probe, staging for the pools, inputs of
  // the re-check (per tensor; inputs only); an input read back; outputs
  // (per tensor; outputs only).
  std::vector<Bytes> work_inputs_;
  Bytes read_back_;
  std::vector<Bytes> candidate_out_;
  std::vector<Bytes> reference_out_;
  Bytes guard_pattern_;                           // kGuardBytes
  std::vector<GuardedBuffer> candidate_sets_[2];  // [1] only when timing
  std::vector<GuardedBuffer> reference_set_;
  std::vector<DeviceBuffer> pools_;  // per tensor; inputs only, 2x elements
};

std::string ScenarioRun::Who(const Kernel& k) const {
  if (&k == job_.candidate) return "kseek_launch";
  if (&k == job_.reference) return "the reference's kseek_launch";
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

StepResult ScenarioRun::AllocateTiming() {
  if (StepResult f = AllocateSet(&candidate_sets_[1])) return f;
  // A pool holds the scenario's inputs followed by as many fresh values;
  // every sample copies a window at a random offset in [1, count].
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
    Bytes& extra = work_inputs_[t];
    extra.resize(plan.bytes);
    FillRandom(plan.dtype, plan.spec->init, MixSeed(seed_, 2 * t + 1), plan.count,
               extra.data());
    absl::Status st = device_->Upload(pool->data(), pristine_[t].data(), plan.bytes);
    if (st.ok()) {
      st = device_->Upload(static_cast<unsigned char*>(pool->data()) + plan.bytes,
                           extra.data(), plan.bytes);
    }
    if (!st.ok()) return DeviceError(st, "filling an input pool");
    pools_.push_back(std::move(*pool));
  }
  return std::nullopt;
}

int ScenarioRun::Call(const Kernel& k, const std::vector<GuardedBuffer>& set) {
  // Rebuilt for every call: a kernel may scribble on what it was given.
  std::vector<kseek_tensor> tensors(plans_.size());
  for (size_t t = 0; t < plans_.size(); ++t) {
    const TensorPlan& plan = plans_[t];
    kseek_tensor& x = tensors[t];
    std::memset(&x, 0, sizeof(x));
    x.name = plan.spec->name.c_str();
    x.data = set[t].data();
    x.dtype = plan.dtype;
    x.ndim = static_cast<int32_t>(plan.shape.size());
    int64_t stride = 1;
    for (int d = x.ndim - 1; d >= 0; --d) {
      x.shape[d] = plan.shape[d];
      x.strides[d] = stride;
      stride *= plan.shape[d];
    }
  }
  std::vector<kseek_param> params = params_;
  kseek_launch_args args{};
  args.abi_version = KSEEK_ABI_VERSION;
  args.num_params = static_cast<int32_t>(params.size());
  args.params = params.data();
  args.num_tensors = static_cast<int32_t>(tensors.size());
  args.tensors = tensors.data();
  args.stream = device_->stream();
  return k.launch(&args);
}

std::string ScenarioRun::KernelMessage(const Kernel& k, int rc,
                                       const std::string& who) const {
  std::string text = absl::StrCat(who, " returned ", rc);
  const char* msg = k.error_message != nullptr ? k.error_message() : nullptr;
  if (msg != nullptr && *msg != '\0') {
    absl::StrAppend(&text, ": ", std::string(msg).substr(0, kMaxKernelMessage));
  }
  return text;
}

StepResult ScenarioRun::CallChecked(const Kernel& k,
                                    const std::vector<GuardedBuffer>& set,
                                    const std::string& who) {
  const int rc = Call(k, set);
  absl::Status st = device_->Synchronize();
  if (!st.ok()) return DeviceError(st, absl::StrCat("after ", who));
  if (rc != 0) return Crash(KernelMessage(k, rc, who));
  return std::nullopt;
}

StepResult ScenarioRun::Check(int set, const std::vector<Bytes>& inputs,
                              std::vector<OutputError>* outputs) {
  outputs->clear();
  // Inputs come from the host (`from` null) or from the same tensors of
  // `from`; outputs are poisoned and scratch zeroed.
  auto load = [&](const std::vector<GuardedBuffer>& buffers,
                  const std::vector<GuardedBuffer>* from) -> absl::Status {
    for (size_t t = 0; t < plans_.size(); ++t) {
      absl::Status st;
      switch (plans_[t].spec->role) {
        case TensorRole::kIn:
          st = from == nullptr
                   ? device_->Upload(buffers[t].data(), inputs[t].data(), plans_[t].bytes)
                   : device_->Copy(buffers[t].data(), (*from)[t].data(), plans_[t].bytes);
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
  auto download_outputs = [&](const std::vector<GuardedBuffer>& buffers,
                              std::vector<Bytes>* out) -> absl::Status {
    out->resize(plans_.size());
    for (size_t t = 0; t < plans_.size(); ++t) {
      if (plans_[t].spec->role != TensorRole::kOut) continue;
      (*out)[t].resize(plans_[t].bytes);
      absl::Status st = device_->Download((*out)[t].data(), buffers[t].data(), plans_[t].bytes);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  };

  const std::vector<GuardedBuffer>& cand = candidate_sets_[set];
  absl::Status st = load(cand, nullptr);
  if (!st.ok()) return DeviceError(st, "preparing the candidate's tensors");
  if (StepResult f = CallChecked(*job_.candidate, cand, Who(*job_.candidate))) return f;
  if (StepResult f = CheckGuards()) return f;

  for (size_t t = 0; t < plans_.size(); ++t) {
    if (!IsInput(t)) continue;
    read_back_.resize(plans_[t].bytes);
    st = device_->Download(read_back_.data(), cand[t].data(), plans_[t].bytes);
    if (!st.ok()) return DeviceError(st, "reading back an input");
    if (std::memcmp(read_back_.data(), inputs[t].data(), plans_[t].bytes) != 0) {
      size_t byte = 0;
      while (read_back_[byte] == inputs[t][byte]) ++byte;
      return Incorrect(absl::StrCat("input tensor ", plans_[t].spec->name,
                                    " was modified (first at element ",
                                    byte / kseek_dtype_size(plans_[t].dtype), ")"));
    }
  }
  st = download_outputs(cand, &candidate_out_);
  if (!st.ok()) return DeviceError(st, "reading the candidate's outputs");

  // Buffers of the reference are filled only after the candidate ran, so a
  // candidate never finds a reference result in memory. Its inputs are
  // copied on the device from the candidate's, just found equal to `inputs`
  // byte for byte.
  st = load(reference_set_, &cand);
  if (!st.ok()) return DeviceError(st, "preparing the reference's tensors");
  if (StepResult f = CallChecked(*job_.reference, reference_set_, Who(*job_.reference))) return f;
  st = download_outputs(reference_set_, &reference_out_);
  if (!st.ok()) return DeviceError(st, "reading the reference's outputs");

  std::vector<std::string> errors;
  for (size_t t = 0; t < plans_.size(); ++t) {
    const TensorPlan& plan = plans_[t];
    if (plan.spec->role != TensorRole::kOut) continue;
    Tolerance tol;
    auto it = plan.spec->tolerance.find(DtypeName(plan.dtype));
    if (it == plan.spec->tolerance.end()) it = plan.spec->tolerance.find("*");
    if (it != plan.spec->tolerance.end()) tol = it->second;
    Comparison c = CompareOutput(plan.spec->name, plan.dtype, candidate_out_[t].data(),
                                 reference_out_[t].data(), plan.count, tol);
    outputs->push_back(c.result);
    if (!c.error.empty()) errors.push_back(c.error);
  }
  if (!errors.empty()) return Incorrect(absl::StrJoin(errors, "; "));
  return std::nullopt;
}

StepResult ScenarioRun::CheckGuards() {
  std::vector<std::string> errors;
  for (size_t t = 0; t < plans_.size(); ++t) {
    GuardDamage worst;
    for (const std::vector<GuardedBuffer>& set : candidate_sets_) {
      if (set.empty()) continue;
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
  std::vector<Bytes>& inputs = work_inputs_;
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (!IsInput(t)) continue;
    const TensorPlan& plan = plans_[t];
    const size_t esize = kseek_dtype_size(plan.dtype);
    const size_t mid = plan.count / 2;
    // Elements [begin, end) are redrawn, the others copied from pristine_.
    const size_t begin = half == Half::kFirst ? 0 : mid;
    const size_t end = half == Half::kFirst ? mid : plan.count;
    const size_t kept = (half == Half::kFirst ? mid : 0) * esize;
    const size_t kept_bytes = plan.bytes - (end - begin) * esize;
    inputs[t].resize(plan.bytes);
    std::copy_n(pristine_[t].begin() + kept, kept_bytes, inputs[t].begin() + kept);
    const uint64_t stream = 2 * t + (half == Half::kFirst ? 0 : 1);
    FillRandom(plan.dtype, plan.spec->init, MixSeed(MixSeed(seed_, kProbeStream), stream),
               end - begin, inputs[t].data() + begin * esize);
  }
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
        const auto* src = static_cast<const unsigned char*>(pools_[t].data()) +
                          offset * kseek_dtype_size(plan.dtype);
        st = device_->Copy(buffers[t].data(), src, plan.bytes);
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

StepResult ScenarioRun::Time(ScenarioResult* r) {
  if (StepResult f = AllocateTiming()) return f;
  const TimingOptions& opt = job_.timing;
  std::vector<const Kernel*> kernels = {job_.candidate};
  if (job_.baseline != nullptr) kernels.push_back(job_.baseline);
  std::vector<size_t> offsets;

  for (int w = 0; w < opt.warmup; ++w) {
    for (const Kernel* k : kernels) {
      if (StepResult f = Prepare(w % 2, /*flush=*/false, &offsets)) return f;
      if (StepResult f = CallChecked(*k, candidate_sets_[w % 2], Who(*k))) return f;
    }
  }

  // Samples alternate the two candidate sets, so that both the pointers and
  // the contents a kernel sees change from one sample to the next.
  std::vector<double> device_ms[2], host_ms[2];
  int last_set = 0;
  std::vector<size_t> last_offsets;
  const auto start = std::chrono::steady_clock::now();
  const double budget_s = opt.max_seconds * static_cast<double>(kernels.size());
  for (int n = 1;; ++n) {
    const int set = (n - 1) % 2;
    for (size_t i = 0; i < kernels.size(); ++i) {
      const Kernel& k = *kernels[i];
      if (StepResult f = Prepare(set, /*flush=*/true, &offsets)) return f;
      absl::StatusOr<Sample> s =
          device_->TimedCall([&] { return Call(k, candidate_sets_[set]); });
      if (!s.ok()) return DeviceError(s.status(), absl::StrCat("after ", Who(k)));
      if (s->rc != 0) return Crash(KernelMessage(k, s->rc, Who(k)));
      device_ms[i].push_back(s->device_ms);
      host_ms[i].push_back(s->host_ms);
      if (i == 0) {
        last_set = set;
        last_offsets = offsets;
      }
    }
    if (n >= opt.max_samples) break;
    if (n < opt.min_samples) continue;
    bool precise = true;
    for (size_t i = 0; i < kernels.size(); ++i) {
      precise &= RelativeStderr(device_ms[i]) <= opt.target_rse;
    }
    const double spent =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (precise || spent >= budget_s) break;
  }

  r->time = Summarize(device_ms[0]);
  if (job_.baseline != nullptr) r->baseline = Summarize(device_ms[1]);

  if (device_->has_device_clock()) {
    auto gap = [&](size_t i) {
      std::vector<double> g(device_ms[i].size());
      for (size_t j = 0; j < g.size(); ++j) g[j] = host_ms[i][j] - device_ms[i][j];
      return Median(g);
    };
    const double excess = gap(0) - (kernels.size() > 1 ? gap(1) : 0.0);
    if (excess > std::max(kMinEscapeMs, kEscapeFraction * r->time->median)) {
      return Incorrect(absl::StrFormat(
          "work escaped the timing stream (host time %.4g ms vs event time %.4g ms)",
          Median(host_ms[0]), r->time->median));
    }
  }

  // The candidate once more on the last sample's inputs, checked.
  std::vector<Bytes>& inputs = work_inputs_;
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (!IsInput(t)) continue;
    inputs[t].resize(plans_[t].bytes);
    const auto* src = static_cast<const unsigned char*>(pools_[t].data()) +
                      last_offsets[t] * kseek_dtype_size(plans_[t].dtype);
    absl::Status st = device_->Download(inputs[t].data(), src, plans_[t].bytes);
    if (!st.ok()) return DeviceError(st, "reading an input pool");
  }
  std::vector<OutputError> outputs;
  if (StepResult f = Check(last_set, inputs, &outputs)) {
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
  if (StepResult f = AllocateSet(&candidate_sets_[0])) return fail(*f);
  if (StepResult f = AllocateSet(&reference_set_)) return fail(*f);

  pristine_.assign(plans_.size(), Bytes());
  work_inputs_.assign(plans_.size(), Bytes());
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (!IsInput(t)) continue;
    pristine_[t].resize(plans_[t].bytes);
    FillRandom(plans_[t].dtype, plans_[t].spec->init, MixSeed(seed_, 2 * t), plans_[t].count,
               pristine_[t].data());
  }

  StepResult checked = Check(0, pristine_, &r.outputs);
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
  if (!job_.timing.enabled) return r;
  if (StepResult f = Time(&r)) {
    fold_errors();
    return fail(*f);
  }
  return r;
}

}  // namespace

ScenarioResult RunScenario(const ScenarioJob& job, int index, const Scenario& scenario) {
  ScenarioRun run(job, index, scenario);
  return run.Run();
}

}  // namespace kseek
