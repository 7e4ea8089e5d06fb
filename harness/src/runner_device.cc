// The host device of kseek-runner, device buffers and guarded tensor
// buffers (runner_device.h).
#include "harness/src/runner_device.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cpu_model.h"

namespace kseek {

absl::StatusOr<DeviceBuffer> AllocBuffer(Device* device, size_t bytes) {
  absl::StatusOr<void*> p = device->Alloc(std::max<size_t>(bytes, 1));
  if (!p.ok()) return p.status();
  return DeviceBuffer(device, *p);
}

absl::Status Device::RandomFill(void* dst, kseek_dtype dtype, const Distribution& dist,
                                uint64_t seed, size_t count) {
  std::vector<unsigned char> host(count * kseek_dtype_size(dtype));
  FillRandom(dtype, dist, seed, count, host.data());
  return Upload(dst, host.data(), host.size());
}

absl::StatusOr<size_t> Device::FirstDifference(const void* a, const void* b, size_t bytes) {
  std::vector<unsigned char> x(bytes), y(bytes);
  absl::Status st = Download(x.data(), a, bytes);
  if (st.ok()) st = Download(y.data(), b, bytes);
  if (!st.ok()) return st;
  return static_cast<size_t>(std::mismatch(x.begin(), x.end(), y.begin()).first - x.begin());
}

absl::StatusOr<Comparison> Device::CompareTensors(const std::string& name, kseek_dtype dtype,
                                                  const void* candidate, const void* reference,
                                                  size_t count, const Tolerance& tol) {
  const size_t bytes = count * kseek_dtype_size(dtype);
  std::vector<unsigned char> c(bytes), r(bytes);
  absl::Status st = Download(c.data(), candidate, bytes);
  if (st.ok()) st = Download(r.data(), reference, bytes);
  if (!st.ok()) return st;
  return CompareOutput(name, dtype, c.data(), r.data(), count, tol);
}

absl::StatusOr<GuardedBuffer> AllocGuarded(Device* device, size_t bytes,
                                           const std::vector<unsigned char>& pattern) {
  if (bytes > SIZE_MAX - 2 * kGuardBytes) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", bytes, " bytes"));
  }
  absl::StatusOr<DeviceBuffer> b = AllocBuffer(device, bytes + 2 * kGuardBytes);
  if (!b.ok()) return b.status();
  GuardedBuffer g(device, std::move(*b), bytes);
  auto* base = static_cast<unsigned char*>(g.buffer_.data());
  absl::Status st = device->Upload(base, pattern.data(), kGuardBytes);
  if (st.ok()) st = device->Upload(base + kGuardBytes + bytes, pattern.data(), kGuardBytes);
  if (!st.ok()) return st;
  return g;
}

absl::StatusOr<GuardDamage> GuardedBuffer::ReadGuards(
    const std::vector<unsigned char>& pattern) const {
  std::vector<unsigned char> guard(kGuardBytes);
  const auto* base = static_cast<const unsigned char*>(buffer_.data());
  GuardDamage damage;
  // Before the data: byte i lies kGuardBytes - i bytes before it.
  absl::Status st = device_->Download(guard.data(), base, kGuardBytes);
  if (!st.ok()) return st;
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (guard[i] == pattern[i]) continue;
    if (damage.before++ == 0) damage.before_span = kGuardBytes - i;
  }
  // After the data: byte i lies i + 1 bytes past its end.
  st = device_->Download(guard.data(), base + kGuardBytes + bytes_, kGuardBytes);
  if (!st.ok()) return st;
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (guard[i] == pattern[i]) continue;
    ++damage.after;
    damage.after_span = i + 1;
  }
  return damage;
}

namespace {

constexpr size_t kHostAlignment = 4096;
constexpr size_t kDefaultLastLevelCache = size_t{64} << 20;
constexpr size_t kMaxHostFlushBytes = size_t{1} << 30;

int64_t SysconfOr(int name, int64_t fallback) {
  long v = sysconf(name);
  return v > 0 ? v : fallback;
}

class HostDevice : public Device {
 public:
  HostDevice() {
    info_.name = CpuModel();
    info_.sm_count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    info_.memory_bytes = SysconfOr(_SC_PHYS_PAGES, 0) * SysconfOr(_SC_PAGESIZE, 4096);
    info_.l2_bytes = SysconfOr(_SC_LEVEL2_CACHE_SIZE, 0);
    const size_t llc = static_cast<size_t>(SysconfOr(
        _SC_LEVEL3_CACHE_SIZE, static_cast<int64_t>(kDefaultLastLevelCache)));
    flush_bytes_ = std::min(2 * llc, kMaxHostFlushBytes);
  }
  ~HostDevice() override {
    std::free(flush_);
    for (const auto& [p, a] : allocations_) {
      munmap(p, a.bytes);
      close(a.fd);
    }
  }

  const DeviceInfo& info() const override { return info_; }
  void* stream() const override { return nullptr; }
  bool has_device_clock() const override { return false; }
  bool broken() const override { return false; }

  // Every allocation is a memfd mapping, so that a kernel host can map the
  // same pages (Share/Map).
  absl::StatusOr<void*> Alloc(size_t bytes) override {
    const size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    const int fd = memfd_create("kseek-tensor", MFD_CLOEXEC);
    if (fd < 0) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", bytes, " bytes of host memory: memfd_create: ",
                       strerror(errno)));
    }
    void* p = MAP_FAILED;
    if (ftruncate(fd, static_cast<off_t>(rounded)) == 0) {
      p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    if (p == MAP_FAILED) {
      const int err = errno;
      close(fd);
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", bytes, " bytes of host memory: ", strerror(err)));
    }
    allocations_[p] = Allocation{fd, rounded};
    return p;
  }
  void Free(void* p) override {
    auto it = allocations_.find(p);
    if (it == allocations_.end()) return;
    munmap(p, it->second.bytes);
    close(it->second.fd);
    allocations_.erase(it);
  }
  absl::StatusOr<SharedAllocation> Share(void* base, size_t bytes) override {
    auto it = allocations_.find(base);
    if (it == allocations_.end()) {
      return absl::InvalidArgumentError("Share: not an allocation of this device");
    }
    SharedAllocation a;
    a.bytes = it->second.bytes;
    a.fd = fcntl(it->second.fd, F_DUPFD_CLOEXEC, 3);
    if (a.fd < 0) return absl::InternalError(absl::StrCat("dup: ", strerror(errno)));
    return a;
  }
  absl::StatusOr<void*> Map(const SharedAllocation& shared) override {
    if (shared.fd < 0) return absl::InvalidArgumentError("no descriptor came with the buffer");
    // Populated now: page faults on first touch would count in the timed calls.
    void* p = mmap(nullptr, shared.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                   shared.fd, 0);
    if (p == MAP_FAILED) return absl::InternalError(absl::StrCat("mmap: ", strerror(errno)));
    return p;
  }
  void Unmap(void* p, size_t bytes) override {
    const size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    munmap(p, rounded);
  }
  absl::Status Upload(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  absl::Status Download(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  absl::Status Copy(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  absl::Status Fill(void* dst, uint8_t value, size_t bytes) override {
    std::memset(dst, value, bytes);
    return absl::OkStatus();
  }
  absl::Status FlushCaches() override {
    if (flush_ == nullptr) {  // made on first use: untimed runs never need it
      flush_ = static_cast<unsigned char*>(std::aligned_alloc(kHostAlignment, flush_bytes_));
      if (flush_ == nullptr) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "cannot allocate the cache flush buffer of ", flush_bytes_, " bytes"));
      }
    }
    std::memset(flush_, ++flush_value_, flush_bytes_);
    // Keep the stores: the compiler must assume the buffer is read.
    asm volatile("" : : "r"(flush_) : "memory");
    return absl::OkStatus();
  }
  absl::Status Synchronize() override { return absl::OkStatus(); }
  // The tensors are this process's memory: no copies.
  absl::Status RandomFill(void* dst, kseek_dtype dtype, const Distribution& dist, uint64_t seed,
                          size_t count) override {
    FillRandom(dtype, dist, seed, count, dst);
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> FirstDifference(const void* a, const void* b, size_t bytes) override {
    const auto* x = static_cast<const unsigned char*>(a);
    const auto* y = static_cast<const unsigned char*>(b);
    return static_cast<size_t>(std::mismatch(x, x + bytes, y).first - x);
  }
  absl::StatusOr<Comparison> CompareTensors(const std::string& name, kseek_dtype dtype,
                                            const void* candidate, const void* reference,
                                            size_t count, const Tolerance& tol) override {
    return CompareOutput(name, dtype, candidate, reference, count, tol);
  }
  absl::StatusOr<Sample> TimedCall(const std::function<int()>& call) override {
    Sample s;
    const auto t0 = std::chrono::steady_clock::now();
    s.rc = call();
    const auto t1 = std::chrono::steady_clock::now();
    s.host_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    s.device_ms = s.host_ms;
    return s;
  }

 private:
  struct Allocation {
    int fd = -1;
    size_t bytes = 0;
  };
  DeviceInfo info_;
  std::map<void*, Allocation> allocations_;
  unsigned char* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  unsigned char flush_value_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Device>> OpenHostDevice() {
  return std::unique_ptr<Device>(std::make_unique<HostDevice>());
}

}  // namespace kseek
