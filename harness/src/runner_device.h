// Where kseek-runner keeps tensors and runs kernels: the host CPU or one
// CUDA device reached through the driver API (libcuda.so.1, loaded at run
// time; no link-time CUDA dependency).
//
// A Device owns its allocations' lifetime only through Alloc/Free; callers
// pair them (DeviceBuffer does; GuardedBuffer adds guard regions around a
// tensor to catch stores past its ends). Copies and fills named "queued" are
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
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernelseek/abi.h"
#include "harness/src/runner_data.h"
#include "harness/src/task.h"
#include "harness/src/verdict.h"

namespace kseek {

// One timed call.
struct Sample {
  int rc = 0;            // what kseek_launch returned
  double device_ms = 0;  // device events around the call (host: = host_ms)
  double host_ms = 0;    // host clock from before the start event to after
                         // the device was idle again
};

// An allocation made shareable with another process (Device::Share), and
// what that process maps (Device::Map).
struct SharedAllocation {
  size_t bytes = 0;
  int fd = -1;          // host: a memfd the receiver maps (the sender closes its copy)
  std::string handle;   // CUDA: the IPC memory handle's bytes
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

  // The judge's tensor work, on the device where it can (CUDA: kernels of
  // judge_kernels.cu; the host device: runner_data.h on the memory itself),
  // otherwise through host copies, so that no tensor need cross the bus.
  // Queued: `count` elements of `dtype` at `dst` drawn from `dist`, a pure
  // function of `seed` on each kind of device (the host device's values are
  // runner_data.h's FillRandom; CUDA's come from a counter-based generator,
  // so the two differ).
  virtual absl::Status RandomFill(void* dst, kseek_dtype dtype, const Distribution& dist,
                                  uint64_t seed, size_t count);
  // Synchronous: the index of the first byte where `a` and `b` differ, or
  // `bytes` when they are equal.
  virtual absl::StatusOr<size_t> FirstDifference(const void* a, const void* b, size_t bytes);
  // Synchronous: runner_data.h's CompareOutput on two tensors of this
  // device.
  virtual absl::StatusOr<Comparison> CompareTensors(const std::string& name, kseek_dtype dtype,
                                                    const void* candidate, const void* reference,
                                                    size_t count, const Tolerance& tol);

  // Makes allocation `base` (from Alloc, `bytes` long) mappable by another
  // process of the same device (host: a memfd; CUDA: an IPC handle).
  virtual absl::StatusOr<SharedAllocation> Share(void* base, size_t bytes) = 0;
  // Maps what another process shared; Unmap releases it.
  virtual absl::StatusOr<void*> Map(const SharedAllocation& shared) = 0;
  virtual void Unmap(void* p, size_t bytes) = 0;
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

// Size of the guard regions before and after every tensor a kernel
// receives. A multiple of 256, so the data keeps the alignment of the
// allocation (host: 4096 bytes; CUDA: at least 256 bytes).
inline constexpr size_t kGuardBytes = 4096;

// Changed bytes found in the guards of one GuardedBuffer.
struct GuardDamage {
  size_t before = 0;       // changed bytes in the guard before the data
  size_t after = 0;        // changed bytes in the guard after the data
  // How far the farthest changed byte lies before the data's first byte
  // (after its last byte): 1 for the adjacent byte.
  size_t before_span = 0;
  size_t after_span = 0;
};

// One tensor of a Device laid out as [guard | data | guard]: the guards hold
// a pattern chosen by the owner, written once when allocated, so that a
// kernel storing past either end of its tensor changes them. The device
// faults on none of these stores (they stay inside the allocation); only
// ReadGuards sees them.
class GuardedBuffer {
 public:
  void* data() const {
    return static_cast<unsigned char*>(buffer_.data()) + kGuardBytes;
  }
  // The whole allocation: [guard | data | guard].
  void* base() const { return buffer_.data(); }
  size_t allocation_bytes() const { return bytes_ + 2 * kGuardBytes; }
  size_t bytes() const { return bytes_; }

  // Compares both guards with `pattern` (kGuardBytes bytes, the one given
  // to AllocGuarded). Synchronous: queued work must have been synchronised.
  absl::StatusOr<GuardDamage> ReadGuards(const std::vector<unsigned char>& pattern) const;

 private:
  friend absl::StatusOr<GuardedBuffer> AllocGuarded(Device*, size_t,
                                                    const std::vector<unsigned char>&);
  GuardedBuffer(Device* device, DeviceBuffer buffer, size_t bytes)
      : device_(device), buffer_(std::move(buffer)), bytes_(bytes) {}

  Device* device_ = nullptr;
  DeviceBuffer buffer_;
  size_t bytes_ = 0;
};

// Allocates `bytes` of data between two guards and writes `pattern`
// (kGuardBytes bytes) into both.
absl::StatusOr<GuardedBuffer> AllocGuarded(Device* device, size_t bytes,
                                           const std::vector<unsigned char>& pattern);

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
