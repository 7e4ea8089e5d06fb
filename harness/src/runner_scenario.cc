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
        rng_(MixSeed(MixSeed(job.seed, static_cast<uint64_t>(index)), 0x0ff5e7)) {}

  ScenarioResult Run();

 private:
  StepResult Plan();
  StepResult AllocateSet(std::vector<DeviceBuffer>* set);
  StepResult AllocateTiming();
  // The candidate on `inputs` in candidate set `set`, then the reference on
  // a copy of them; compares the outputs.
  StepResult Check(int set, const std::vector<Bytes>& inputs,
                   std::vector<OutputError>* outputs);
  StepResult Time(ScenarioResult* r);
  // Fresh inputs from the pools at random offsets into candidate set `set`,
  // outputs poisoned, scratch zeroed, optionally caches flushed; waits.
  StepResult Prepare(int set, bool flush, std::vector<size_t>* offsets);

  int Call(const Kernel& k, const std::vector<DeviceBuffer>& set);
  // Calls, waits for the device, checks the return code.
  StepResult CallChecked(const Kernel& k, const std::vector<DeviceBuffer>& set,
                         const std::string& who);
  std::string KernelMessage(const Kernel& k, int rc, const std::string& who) const;
  StepResult DeviceError(const absl::Status& st, const std::string& during) const;
  bool IsInput(size_t t) const { return plans_[t].spec->role == TensorRole::kIn; }
  std::string Who(const Kernel& k) const;

  const ScenarioJob& job_;
  Device* device_;
  const int index_;
  const Scenario& scenario_;
  Rng rng_;  // pool offsets
  std::vector<TensorPlan> plans_;
  std::vector<kseek_param> params_;
  std::vector<Bytes> pristine_;                 // per tensor; inputs only
  std::vector<DeviceBuffer> candidate_sets_[2]; // [1] only when timing
  std::vector<DeviceBuffer> reference_set_;
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

StepResult ScenarioRun::AllocateSet(std::vector<DeviceBuffer>* set) {
  for (const TensorPlan& plan : plans_) {
    absl::StatusOr<DeviceBuffer> b = AllocBuffer(device_, plan.bytes);
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
    Bytes extra(plan.bytes);
    FillRandom(plan.dtype, plan.spec->init,
               MixSeed(MixSeed(job_.seed, static_cast<uint64_t>(index_)), 2 * t + 1),
               plan.count, extra.data());
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

int ScenarioRun::Call(const Kernel& k, const std::vector<DeviceBuffer>& set) {
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
                                    const std::vector<DeviceBuffer>& set,
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
  // Buffers of the reference are filled only after the candidate ran, so a
  // candidate never finds a reference result in memory.
  auto load = [&](const std::vector<DeviceBuffer>& buffers) -> absl::Status {
    for (size_t t = 0; t < plans_.size(); ++t) {
      absl::Status st;
      switch (plans_[t].spec->role) {
        case TensorRole::kIn:
          st = device_->Upload(buffers[t].data(), inputs[t].data(), plans_[t].bytes);
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
  auto download_outputs = [&](const std::vector<DeviceBuffer>& buffers,
                              std::vector<Bytes>* out) -> absl::Status {
    out->assign(plans_.size(), Bytes());
    for (size_t t = 0; t < plans_.size(); ++t) {
      if (plans_[t].spec->role != TensorRole::kOut) continue;
      (*out)[t].resize(plans_[t].bytes);
      absl::Status st = device_->Download((*out)[t].data(), buffers[t].data(), plans_[t].bytes);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  };

  const std::vector<DeviceBuffer>& cand = candidate_sets_[set];
  absl::Status st = load(cand);
  if (!st.ok()) return DeviceError(st, "preparing the candidate's tensors");
  if (StepResult f = CallChecked(*job_.candidate, cand, Who(*job_.candidate))) return f;

  Bytes after;
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (!IsInput(t)) continue;
    after.resize(plans_[t].bytes);
    st = device_->Download(after.data(), cand[t].data(), plans_[t].bytes);
    if (!st.ok()) return DeviceError(st, "reading back an input");
    if (std::memcmp(after.data(), inputs[t].data(), plans_[t].bytes) != 0) {
      size_t byte = 0;
      while (after[byte] == inputs[t][byte]) ++byte;
      return Incorrect(absl::StrCat("input tensor ", plans_[t].spec->name,
                                    " was modified (first at element ",
                                    byte / kseek_dtype_size(plans_[t].dtype), ")"));
    }
  }
  std::vector<Bytes> cand_out;
  st = download_outputs(cand, &cand_out);
  if (!st.ok()) return DeviceError(st, "reading the candidate's outputs");

  st = load(reference_set_);
  if (!st.ok()) return DeviceError(st, "preparing the reference's tensors");
  if (StepResult f = CallChecked(*job_.reference, reference_set_, Who(*job_.reference))) return f;
  std::vector<Bytes> ref_out;
  st = download_outputs(reference_set_, &ref_out);
  if (!st.ok()) return DeviceError(st, "reading the reference's outputs");

  std::vector<std::string> errors;
  for (size_t t = 0; t < plans_.size(); ++t) {
    const TensorPlan& plan = plans_[t];
    if (plan.spec->role != TensorRole::kOut) continue;
    Tolerance tol;
    auto it = plan.spec->tolerance.find(DtypeName(plan.dtype));
    if (it == plan.spec->tolerance.end()) it = plan.spec->tolerance.find("*");
    if (it != plan.spec->tolerance.end()) tol = it->second;
    Comparison c = CompareOutput(plan.spec->name, plan.dtype, cand_out[t].data(),
                                 ref_out[t].data(), plan.count, tol);
    outputs->push_back(c.result);
    if (!c.error.empty()) errors.push_back(c.error);
  }
  if (!errors.empty()) return Incorrect(absl::StrJoin(errors, "; "));
  return std::nullopt;
}

StepResult ScenarioRun::Prepare(int set, bool flush, std::vector<size_t>* offsets) {
  const std::vector<DeviceBuffer>& buffers = candidate_sets_[set];
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
  std::vector<Bytes> inputs(plans_.size());
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
  if (StepResult f = Plan()) return fail(*f);
  if (StepResult f = AllocateSet(&candidate_sets_[0])) return fail(*f);
  if (StepResult f = AllocateSet(&reference_set_)) return fail(*f);

  pristine_.assign(plans_.size(), Bytes());
  for (size_t t = 0; t < plans_.size(); ++t) {
    if (!IsInput(t)) continue;
    pristine_[t].resize(plans_[t].bytes);
    FillRandom(plans_[t].dtype, plans_[t].spec->init,
               MixSeed(MixSeed(job_.seed, static_cast<uint64_t>(index_)), 2 * t),
               plans_[t].count, pristine_[t].data());
  }

  StepResult checked = Check(0, pristine_, &r.outputs);
  for (const OutputError& o : r.outputs) {
    r.rel_l2 = std::max(r.rel_l2, o.rel_l2);
    r.max_abs = std::max(r.max_abs, o.max_abs);
  }
  if (checked) return fail(*checked);
  if (!job_.timing.enabled) return r;
  if (StepResult f = Time(&r)) {
    for (const OutputError& o : r.outputs) {
      r.rel_l2 = std::max(r.rel_l2, o.rel_l2);
      r.max_abs = std::max(r.max_abs, o.max_abs);
    }
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
