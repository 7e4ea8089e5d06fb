// The device and compiler checks of kseek-worker (device_check.h).
#include "worker/device_check.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/child_process.h"
#include "base/cpu_model.h"
#include "harness/src/compile.h"

namespace kseek {

namespace {

// The few CUDA driver API entry points used here, declared by hand so that
// the worker has no build-time dependency on CUDA. CUresult is an int,
// CUdevice an int; attribute numbers are those of cuda.h.
using CuInitFn = int (*)(unsigned int flags);
using CuDeviceGetCountFn = int (*)(int* count);
using CuDeviceGetFn = int (*)(int* device, int ordinal);
using CuDeviceGetAttributeFn = int (*)(int* value, int attribute, int device);
using CuDeviceGetNameFn = int (*)(char* name, int length, int device);
using CuDeviceTotalMemFn = int (*)(size_t* bytes, int device);
using CuGetErrorStringFn = int (*)(int error, const char** text);

constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

// The loaded driver; null members when a symbol is missing.
struct CudaDriver {
  CuInitFn init = nullptr;
  CuDeviceGetCountFn device_count = nullptr;
  CuDeviceGetFn device_get = nullptr;
  CuDeviceGetAttributeFn attribute = nullptr;
  CuDeviceGetNameFn name = nullptr;
  CuDeviceTotalMemFn total_mem = nullptr;
  CuGetErrorStringFn error_string = nullptr;

  std::string Describe(int result) const {
    const char* text = nullptr;
    if (error_string != nullptr && error_string(result, &text) == 0 && text != nullptr) {
      return absl::StrCat(text, " (CUDA error ", result, ")");
    }
    return absl::StrCat("CUDA error ", result);
  }
};

absl::StatusOr<CudaDriver> LoadDriver() {
  // The handle is kept for the life of the process: the driver cannot be
  // unloaded safely once initialised.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA driver (", err != nullptr ? err : "libcuda.so.1 not found", ")"));
  }
  CudaDriver d;
  d.init = reinterpret_cast<CuInitFn>(dlsym(lib, "cuInit"));
  d.device_count = reinterpret_cast<CuDeviceGetCountFn>(dlsym(lib, "cuDeviceGetCount"));
  d.device_get = reinterpret_cast<CuDeviceGetFn>(dlsym(lib, "cuDeviceGet"));
  d.attribute = reinterpret_cast<CuDeviceGetAttributeFn>(dlsym(lib, "cuDeviceGetAttribute"));
  d.name = reinterpret_cast<CuDeviceGetNameFn>(dlsym(lib, "cuDeviceGetName"));
  d.total_mem = reinterpret_cast<CuDeviceTotalMemFn>(dlsym(lib, "cuDeviceTotalMem_v2"));
  d.error_string = reinterpret_cast<CuGetErrorStringFn>(dlsym(lib, "cuGetErrorString"));
  if (d.init == nullptr || d.device_count == nullptr || d.device_get == nullptr ||
      d.attribute == nullptr || d.name == nullptr || d.total_mem == nullptr) {
    return absl::FailedPreconditionError(
        "no usable CUDA driver (libcuda.so.1 lacks a driver API entry point)");
  }
  return d;
}

WorkerDevice HostDevice() {
  WorkerDevice d;
  d.name = CpuModel();
  d.sm_count = static_cast<int>(std::thread::hardware_concurrency());
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) d.memory_bytes = static_cast<int64_t>(pages) * page_size;
  return d;
}

// `name` itself when it holds a '/', else the first executable of that
// name on PATH (empty when there is none).
std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Runs `path --version` and returns its output (both streams).
absl::StatusOr<std::string> VersionText(const std::string& path) {
  const std::string program = FindProgram(path);
  absl::StatusOr<FinishedChild> run;
  if (!program.empty()) {
    ChildSpec spec;
    spec.path = program;
    spec.argv = {path, "--version"};
    run = RunToEnd(spec, absl::Seconds(60));
  }
  if (program.empty() || !run.ok() || run->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("compiler '", path, "' does not run (`", path, " --version` failed)"));
  }
  return run->output;
}

}  // namespace

bool CapabilityMatches(Target target, int cc_major, int cc_minor) {
  switch (target) {
    case Target::kSm90a:
      return cc_major == 9 && cc_minor == 0;
    case Target::kSm100a:
      return cc_major == 10 && cc_minor == 0;
    case Target::kHost:
      return true;
  }
  return false;
}

absl::StatusOr<WorkerDevice> QueryCudaDevice(int gpu) {
  absl::StatusOr<CudaDriver> driver = LoadDriver();
  if (!driver.ok()) return driver.status();
  if (int rc = driver->init(0); rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA driver does not initialise: ", driver->Describe(rc)));
  }
  int count = 0;
  if (int rc = driver->device_count(&count); rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot count CUDA devices: ", driver->Describe(rc)));
  }
  if (gpu < 0 || gpu >= count) {
    return absl::FailedPreconditionError(
        absl::StrCat("there is no GPU ", gpu, " (", count, " CUDA device",
                     count == 1 ? "" : "s", " visible)"));
  }
  int device = 0;
  if (int rc = driver->device_get(&device, gpu); rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open GPU ", gpu, ": ", driver->Describe(rc)));
  }
  WorkerDevice d;
  char name[256] = {};
  int rc = driver->name(name, sizeof(name) - 1, device);
  if (rc == 0) rc = driver->attribute(&d.cc_major, kAttrComputeCapabilityMajor, device);
  if (rc == 0) rc = driver->attribute(&d.cc_minor, kAttrComputeCapabilityMinor, device);
  if (rc == 0) rc = driver->attribute(&d.sm_count, kAttrMultiprocessorCount, device);
  size_t bytes = 0;
  if (rc == 0) rc = driver->total_mem(&bytes, device);
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot query GPU ", gpu, ": ", driver->Describe(rc)));
  }
  d.name = name;
  d.memory_bytes = static_cast<int64_t>(bytes);
  return d;
}

absl::StatusOr<WorkerDevice> CheckDevice(Target target, int gpu) {
  if (target == Target::kHost) return HostDevice();
  const std::string need = absl::StrCat(
      "target ", TargetName(target), " needs GPU ", gpu, " with compute capability ",
      target == Target::kSm90a ? "9.0" : "10.0");
  absl::StatusOr<WorkerDevice> d = QueryCudaDevice(gpu);
  if (!d.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(need, ", but ", d.status().message()));
  }
  if (!CapabilityMatches(target, d->cc_major, d->cc_minor)) {
    return absl::FailedPreconditionError(
        absl::StrCat(need, ", but GPU ", gpu, " is ", d->name, " with compute capability ",
                     d->cc_major, ".", d->cc_minor));
  }
  return d;
}

absl::StatusOr<std::string> CheckCompiler(Target target) {
  const char* kind = target == Target::kHost ? "c++" : "nvcc";
  const std::string path = CompilerFor(target);
  if (path.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "target ", TargetName(target), " needs the compiler ", kind, ", which was not found",
        target == Target::kHost ? " (set $KSEEK_CXX or $CXX)"
                                : " (set $KSEEK_NVCC or $CUDA_HOME, or put nvcc on PATH)"));
  }
  absl::StatusOr<std::string> text = VersionText(path);
  if (!text.ok()) return text.status();
  std::vector<std::string> lines = absl::StrSplit(*text, '\n', absl::SkipWhitespace());
  if (lines.empty()) return path;
  std::string chosen = lines.front();
  for (const std::string& line : lines) {
    if (absl::StrContains(line, "release")) chosen = line;
  }
  return absl::StrCat(path, ": ", absl::StripAsciiWhitespace(chosen));
}

}  // namespace kseek
