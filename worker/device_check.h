// What a kseek-worker checks before it serves: that its GPU exists and has
// the compute capability of its target (sm_90a: 9.0, sm_100a: 10.0), and
// that the target's compiler is there. The CUDA driver is loaded at run time
// (dlopen of libcuda.so.1), so the worker builds and runs the host target on
// machines without CUDA. Plain functions; thread-safe.
#ifndef KERNELSEEK_WORKER_DEVICE_CHECK_H_
#define KERNELSEEK_WORKER_DEVICE_CHECK_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "harness/src/task.h"

namespace kseek {

// The device a worker serves, as reported in WorkerInfo.
struct WorkerDevice {
  std::string name;          // "NVIDIA H100 80GB HBM3", or the CPU's model
  int cc_major = 0;          // 0 for the host
  int cc_minor = 0;
  int sm_count = 0;          // multiprocessors, or CPU threads for the host
  int64_t memory_bytes = 0;  // device memory, or physical memory for the host
};

// Whether a device of compute capability major.minor runs `target`'s code.
bool CapabilityMatches(Target target, int cc_major, int cc_minor);

// Queries GPU `gpu` through the CUDA driver. FAILED_PRECONDITION "no CUDA
// driver (...)" when libcuda cannot be loaded, or naming the ordinal when
// the device does not exist.
absl::StatusOr<WorkerDevice> QueryCudaDevice(int gpu);

// The device for `target`: the host's CPU for `host`, else GPU `gpu`, which
// must exist and match the target. The error names the target, the GPU
// ordinal, and the device and its capability (or what is missing).
absl::StatusOr<WorkerDevice> CheckDevice(Target target, int gpu);

// The compiler of `target` (nvcc for GPU targets, c++ for host), found as
// the compile driver finds it; returns its path and the line of its
// `--version` that names the release. FAILED_PRECONDITION
// naming the compiler when it is missing or does not run.
absl::StatusOr<std::string> CheckCompiler(Target target);

}  // namespace kseek

#endif  // KERNELSEEK_WORKER_DEVICE_CHECK_H_
