// Where kseek-runner keeps tensors and runs kernels: the host CPU or one
// CUDA device reached through the driver API (libcuda.so.1, loaded at run
// time; no link-time CUDA dependency).
//
// A Device owns its allocations' lifetime only through Alloc/Free; callers
// pair them (DeviceBuffer does). Copies and fills named "queued" are
// ordered on the device's single stream (the legacy default stream for
// CUDA) and complete by the next Synchronize. Once a call fails with a
// device error the device is broken(): a CUDA context with a sticky error
// cannot be used again and the runner must exit. Not thread-safe: one
// thread drives a Device.
#ifndef KERNELSEEK_HARNESS_RUNNER_DEVICE_H_
#define KERNELSEEK_HARNESS_RUNNER_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "task.h"
#include "verdict.h"

namespace kseek {

// One timed call.
struct Sample {
  int rc = 0;            // what kseek_launch returned
  double device_ms = 0;  // device events around the call (host: = host_ms)
  double host_ms = 0;    // host clock from before the start event to after
                         // the device was idle again
};

class Device {
 public:
  virtual ~Device() = default;

  virtual const DeviceInfo& info() const = 0;
  // The `stream` kernels receive: NULL (the legacy default stream for CUDA).
  virtual void* stream() const = 0;
  // Whether host_ms and device_ms measure different things, so that work a
  // kernel hides from the device events shows as a gap between them.
  virtual bool has_device_clock() const = 0;
  virtual bool broken() const = 0;

  virtual absl::StatusOr<void*> Alloc(size_t bytes) = 0;
  virtual void Free(void* p) = 0;
  // Synchronous copies between host memory and the device.
  virtual absl::Status Upload(void* dst, const void* src, size_t bytes) = 0;
  virtual absl::Status Download(void* dst, const void* src, size_t bytes) = 0;
  // Queued copy within the device, and queued byte fill.
  virtual absl::Status Copy(void* dst, const void* src, size_t bytes) = 0;
  virtual absl::Status Fill(void* dst, uint8_t value, size_t bytes) = 0;
  // Queued: evicts the caches by writing a buffer of at least twice the
  // last-level cache, and resets persisting L2 lines (CUDA).
  virtual absl::Status FlushCaches() = 0;
  // Waits until all queued work of the context (every stream) is done; an
  // error is a device error and breaks the device.
  virtual absl::Status Synchronize() = 0;
  // Calls `call` between two device events on the legacy stream and waits
  // for the whole context. Queued work must have been synchronised first.
  virtual absl::StatusOr<Sample> TimedCall(const std::function<int()>& call) = 0;
};

// Owns one allocation of a Device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device* device, void* data) : device_(device), data_(data) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    Reset();
    device_ = other.device_;
    data_ = other.data_;
    other.data_ = nullptr;
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { Reset(); }

  void* data() const { return data_; }

 private:
  void Reset() {
    if (data_ != nullptr) device_->Free(data_);
    data_ = nullptr;
  }

  Device* device_ = nullptr;
  void* data_ = nullptr;
};

// Allocates `bytes` (at least one byte is allocated).
absl::StatusOr<DeviceBuffer> AllocBuffer(Device* device, size_t bytes);

// The host CPU: aligned host memory, steady-clock timing, caches flushed by
// writing twice the last-level cache (sysconf, else 64 MiB).
absl::StatusOr<std::unique_ptr<Device>> OpenHostDevice();

// CUDA device `ordinal` for `target`: retains and makes current its primary
// context and checks that its compute capability is the target's (sm_90a:
// 9.0, sm_100a: 10.0). Fails when the runner was built without CUDA
// headers, libcuda.so.1 cannot be loaded, or the device does not match.
absl::StatusOr<std::unique_ptr<Device>> OpenCudaDevice(Target target, int ordinal);

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_RUNNER_DEVICE_H_
