// The CUDA device of kseek-runner (runner_device.h): the driver API loaded
// from libcuda.so.1 with dlopen and resolved with dlsym, so the runner has
// no link-time CUDA dependency. <cuda.h> supplies the types when the build
// found it (KSEEK_HAVE_CUDA_H); without it GPU targets are refused.
//
// Kernels run on the legacy default stream: it waits for earlier work on
// every blocking stream, so the end event also covers work a kernel put on
// other blocking streams. Work on non-blocking streams escapes the events
// but not cuCtxSynchronize; the runner compares the two clocks to catch it.
#include "harness/src/runner_device.h"

#include "absl/strings/str_cat.h"

#if KSEEK_HAVE_CUDA_H

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#if KSEEK_HAVE_JUDGE_KERNELS
// The fat binary of judge_kernels.cu (judge_kernels_image.cc, generated).
extern "C" const unsigned char kJudgeKernelsImage[];
#endif

namespace kseek {

namespace {

constexpr size_t kMinFlushBytes = size_t{64} << 20;

// The driver entry points the runner uses.
struct CudaApi {
  CUresult (*Init)(unsigned int) = nullptr;
  CUresult (*DriverGetVersion)(int*) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*DeviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*DeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*CtxSynchronize)() = nullptr;
  CUresult (*CtxResetPersistingL2Cache)() = nullptr;
  CUresult (*MemGetInfo)(size_t*, size_t*) = nullptr;
  CUresult (*MemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*MemFree)(CUdeviceptr) = nullptr;
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*MemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*EventCreate)(CUevent*, unsigned int) = nullptr;
  CUresult (*EventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*EventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*EventDestroy)(CUevent) = nullptr;
  CUresult (*GetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*GetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*IpcGetMemHandle)(CUipcMemHandle*, CUdeviceptr) = nullptr;
  CUresult (*IpcOpenMemHandle)(CUdeviceptr*, CUipcMemHandle, unsigned int) = nullptr;
  CUresult (*IpcCloseMemHandle)(CUdeviceptr) = nullptr;
  CUresult (*ModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*LaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                           unsigned int, unsigned int, unsigned int, CUstream, void**,
                           void**) = nullptr;
};

// Resolves `name` (or, when absent, `fallback`) from `lib` into `*fn`.
template <typename Fn>
absl::Status Resolve(void* lib, const char* name, const char* fallback, Fn* fn) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr && fallback != nullptr) sym = dlsym(lib, fallback);
  if (sym == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("libcuda.so.1 does not export ", name,
                     " (the NVIDIA driver is too old)"));
  }
  *fn = reinterpret_cast<Fn>(sym);
  return absl::OkStatus();
}

absl::Status ResolveAll(void* lib, CudaApi* api) {
  const absl::Status results[] = {
      Resolve(lib, "cuInit", nullptr, &api->Init),
      Resolve(lib, "cuDriverGetVersion", nullptr, &api->DriverGetVersion),
      Resolve(lib, "cuDeviceGet", nullptr, &api->DeviceGet),
      Resolve(lib, "cuDeviceGetName", nullptr, &api->DeviceGetName),
      Resolve(lib, "cuDeviceGetAttribute", nullptr, &api->DeviceGetAttribute),
      Resolve(lib, "cuDeviceTotalMem_v2", nullptr, &api->DeviceTotalMem),
      Resolve(lib, "cuDevicePrimaryCtxRetain", nullptr, &api->DevicePrimaryCtxRetain),
      Resolve(lib, "cuCtxSetCurrent", nullptr, &api->CtxSetCurrent),
      Resolve(lib, "cuCtxSynchronize", nullptr, &api->CtxSynchronize),
      Resolve(lib, "cuCtxResetPersistingL2Cache", nullptr, &api->CtxResetPersistingL2Cache),
      Resolve(lib, "cuMemGetInfo_v2", nullptr, &api->MemGetInfo),
      Resolve(lib, "cuMemAlloc_v2", nullptr, &api->MemAlloc),
      Resolve(lib, "cuMemFree_v2", nullptr, &api->MemFree),
      Resolve(lib, "cuMemcpyHtoD_v2", nullptr, &api->MemcpyHtoD),
      Resolve(lib, "cuMemcpyDtoH_v2", nullptr, &api->MemcpyDtoH),
      Resolve(lib, "cuMemcpyDtoDAsync_v2", nullptr, &api->MemcpyDtoDAsync),
      Resolve(lib, "cuMemsetD8Async", nullptr, &api->MemsetD8Async),
      Resolve(lib, "cuEventCreate", nullptr, &api->EventCreate),
      Resolve(lib, "cuEventRecord", nullptr, &api->EventRecord),
      Resolve(lib, "cuEventElapsedTime_v2", "cuEventElapsedTime", &api->EventElapsedTime),
      Resolve(lib, "cuEventDestroy_v2", "cuEventDestroy", &api->EventDestroy),
      Resolve(lib, "cuGetErrorString", nullptr, &api->GetErrorString),
      Resolve(lib, "cuGetErrorName", nullptr, &api->GetErrorName),
      Resolve(lib, "cuIpcGetMemHandle", nullptr, &api->IpcGetMemHandle),
      Resolve(lib, "cuIpcOpenMemHandle_v2", "cuIpcOpenMemHandle", &api->IpcOpenMemHandle),
      Resolve(lib, "cuIpcCloseMemHandle", nullptr, &api->IpcCloseMemHandle),
      Resolve(lib, "cuModuleLoadData", nullptr, &api->ModuleLoadData),
      Resolve(lib, "cuModuleGetFunction", nullptr, &api->ModuleGetFunction),
      Resolve(lib, "cuLaunchKernel", nullptr, &api->LaunchKernel),
  };
  for (const absl::Status& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

CUdeviceptr DevicePtr(const void* p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}

// The judge's kernels (judge_kernels.cu): threads per block, elements per
// block of a comparison, and the most blocks of a grid-stride kernel.
constexpr unsigned kJudgeThreads = 256;
constexpr uint64_t kCompareChunk = 65536;
constexpr uint64_t kMaxStrideBlocks = 4096;

class CudaDevice : public Device {
 public:
  explicit CudaDevice(const CudaApi& api) : api_(api) {}
  ~CudaDevice() override {
    if (broken_) return;  // a broken context cannot free; the process ends
    if (flush_ != 0) api_.MemFree(flush_);
    if (scratch_ != 0) api_.MemFree(scratch_);
    if (start_ != nullptr) api_.EventDestroy(start_);
    if (end_ != nullptr) api_.EventDestroy(end_);
  }

  absl::Status Open(Target target, int ordinal);

  const DeviceInfo& info() const override { return info_; }
  void* stream() const override { return nullptr; }
  bool has_device_clock() const override { return true; }
  bool broken() const override { return broken_; }

  absl::StatusOr<void*> Alloc(size_t bytes) override {
    CUdeviceptr p = 0;
    CUresult r = api_.MemAlloc(&p, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      size_t free_bytes = 0, total_bytes = 0;
      api_.MemGetInfo(&free_bytes, &total_bytes);
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", bytes, " bytes of device memory (",
                       free_bytes, " of ", total_bytes, " bytes free)"));
    }
    absl::Status st = Check(r, absl::StrCat("cuMemAlloc of ", bytes, " bytes"));
    if (!st.ok()) return st;
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }
  void Free(void* p) override {
    if (!broken_) api_.MemFree(DevicePtr(p));
  }
  absl::Status Upload(void* dst, const void* src, size_t bytes) override {
    return Check(api_.MemcpyHtoD(DevicePtr(dst), src, bytes), "cuMemcpyHtoD");
  }
  absl::Status Download(void* dst, const void* src, size_t bytes) override {
    return Check(api_.MemcpyDtoH(dst, DevicePtr(src), bytes), "cuMemcpyDtoH");
  }
  absl::Status Copy(void* dst, const void* src, size_t bytes) override {
    return Check(api_.MemcpyDtoDAsync(DevicePtr(dst), DevicePtr(src), bytes,
                                      CU_STREAM_LEGACY),
                 "cuMemcpyDtoDAsync");
  }
  absl::Status Fill(void* dst, uint8_t value, size_t bytes) override {
    return Check(api_.MemsetD8Async(DevicePtr(dst), value, bytes, CU_STREAM_LEGACY),
                 "cuMemsetD8Async");
  }
  absl::Status FlushCaches() override {
    absl::Status st = Check(
        api_.MemsetD8Async(flush_, ++flush_value_, flush_bytes_, CU_STREAM_LEGACY),
        "cuMemsetD8Async (L2 flush)");
    if (!st.ok() || !can_reset_persisting_) return st;
    const CUresult r = api_.CtxResetPersistingL2Cache();
    if (r == CUDA_ERROR_NOT_SUPPORTED) {  // e.g. some MIG or vGPU setups
      can_reset_persisting_ = false;
      return absl::OkStatus();
    }
    return Check(r, "cuCtxResetPersistingL2Cache");
  }
  absl::Status Synchronize() override {
    return Check(api_.CtxSynchronize(), "cuCtxSynchronize");
  }
  absl::StatusOr<Sample> TimedCall(const std::function<int()>& call) override {
    Sample s;
    const auto t0 = std::chrono::steady_clock::now();
    absl::Status st = Check(api_.EventRecord(start_, CU_STREAM_LEGACY), "cuEventRecord");
    if (!st.ok()) return st;
    s.rc = call();
    const CUresult recorded = api_.EventRecord(end_, CU_STREAM_LEGACY);
    const CUresult synced = api_.CtxSynchronize();
    const auto t1 = std::chrono::steady_clock::now();
    st = Check(synced, "cuCtxSynchronize");
    if (!st.ok()) return st;
    st = Check(recorded, "cuEventRecord");
    if (!st.ok()) return st;
    float ms = 0;
    st = Check(api_.EventElapsedTime(&ms, start_, end_), "cuEventElapsedTime");
    if (!st.ok()) return st;
    s.device_ms = ms;
    s.host_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    return s;
  }
  absl::Status RandomFill(void* dst, kseek_dtype dtype, const Distribution& dist, uint64_t seed,
                          size_t count) override {
    if (fill_ == nullptr) return Device::RandomFill(dst, dtype, dist, seed, count);
    if (count == 0) return absl::OkStatus();
    CUdeviceptr out = DevicePtr(dst);
    unsigned long long n = count, s = seed;
    int type = static_cast<int>(dtype), kind = dist.kind == Distribution::kUniform ? 1 : 0;
    double a = dist.a, b = dist.b;
    void* args[] = {&out, &n, &s, &type, &kind, &a, &b};
    return Queue(fill_, StrideBlocks(count), args, "the judge's random fill");
  }
  absl::StatusOr<size_t> FirstDifference(const void* a, const void* b, size_t bytes) override {
    if (first_difference_ == nullptr) return Device::FirstDifference(a, b, bytes);
    if (bytes == 0) return size_t{0};
    absl::Status st = Scratch(sizeof(uint64_t));
    if (st.ok()) {
      st = Check(api_.MemsetD8Async(scratch_, 0xFF, sizeof(uint64_t), CU_STREAM_LEGACY),
                 "cuMemsetD8Async");
    }
    CUdeviceptr x = DevicePtr(a), y = DevicePtr(b), first = scratch_;
    unsigned long long n = bytes;
    void* args[] = {&x, &y, &n, &first};
    if (st.ok()) st = Launch(first_difference_, StrideBlocks(bytes), args, "the judge's input check");
    uint64_t found = 0;
    if (st.ok()) st = Check(api_.MemcpyDtoH(&found, scratch_, sizeof(found)), "cuMemcpyDtoH");
    if (!st.ok()) return st;
    return static_cast<size_t>(std::min<uint64_t>(found, bytes));
  }
  absl::StatusOr<Comparison> CompareTensors(const std::string& name, kseek_dtype dtype,
                                            const void* candidate, const void* reference,
                                            size_t count, const Tolerance& tol) override {
    if (compare_ == nullptr) {
      return Device::CompareTensors(name, dtype, candidate, reference, count, tol);
    }
    const uint64_t blocks = (count + kCompareChunk - 1) / kCompareChunk;
    std::vector<ComparePartial> parts(blocks);
    if (blocks > 0) {
      absl::Status st = Scratch(blocks * sizeof(ComparePartial));
      CUdeviceptr c = DevicePtr(candidate), r = DevicePtr(reference), out = scratch_;
      unsigned long long n = count, chunk = kCompareChunk;
      int type = static_cast<int>(dtype);
      void* args[] = {&c, &r, &n, &type, &chunk, &out};
      if (st.ok()) st = Launch(compare_, blocks, args, "the judge's comparison");
      if (st.ok()) {
        st = Check(api_.MemcpyDtoH(parts.data(), scratch_, blocks * sizeof(ComparePartial)),
                   "cuMemcpyDtoH");
      }
      if (!st.ok()) return st;
    }
    return FinishComparison(name, count, tol, parts);
  }
  absl::StatusOr<SharedAllocation> Share(void* base, size_t bytes) override {
    CUipcMemHandle h;
    absl::Status st = Check(api_.IpcGetMemHandle(&h, DevicePtr(base)), "cuIpcGetMemHandle");
    if (!st.ok()) return st;
    SharedAllocation a;
    a.bytes = bytes;
    a.handle.assign(reinterpret_cast<const char*>(&h), sizeof(h));
    return a;
  }
  absl::StatusOr<void*> Map(const SharedAllocation& shared) override {
    CUipcMemHandle h;
    if (shared.handle.size() != sizeof(h)) {
      return absl::InvalidArgumentError("the IPC memory handle has the wrong size");
    }
    memcpy(&h, shared.handle.data(), sizeof(h));
    CUdeviceptr p = 0;
    absl::Status st = Check(api_.IpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                            "cuIpcOpenMemHandle");
    if (!st.ok()) return st;
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }
  void Unmap(void* p, size_t) override {
    if (!broken_) api_.IpcCloseMemHandle(DevicePtr(p));
  }

 private:
  std::string ErrorText(CUresult r) const {
    const char* name = nullptr;
    const char* text = nullptr;
    api_.GetErrorName(r, &name);
    api_.GetErrorString(r, &text);
    return absl::StrCat(name != nullptr ? name : absl::StrCat("CUDA error ", r),
                        ": ", text != nullptr ? text : "unknown error");
  }
  // An error other than running out of memory may be a sticky error of the
  // context; the device is not used again after one.
  absl::Status Check(CUresult r, const std::string& what) {
    if (r == CUDA_SUCCESS) return absl::OkStatus();
    if (r != CUDA_ERROR_OUT_OF_MEMORY) broken_ = true;
    return absl::InternalError(absl::StrCat(what, " failed: ", ErrorText(r)));
  }
  absl::Status Fail(CUresult r, const std::string& what) {
    return absl::FailedPreconditionError(
        absl::StrCat("runner could not initialise CUDA: ", what, " failed: ", ErrorText(r)));
  }
  uint64_t StrideBlocks(uint64_t elements) const {
    return std::max<uint64_t>(1, std::min(kMaxStrideBlocks,
                                          (elements + kJudgeThreads - 1) / kJudgeThreads));
  }
  // Queues `f` with `blocks` x kJudgeThreads threads on the legacy stream;
  // Launch also waits for it, so that its errors name it.
  absl::Status Queue(CUfunction f, uint64_t blocks, void** args, const std::string& what) {
    return Check(api_.LaunchKernel(f, static_cast<unsigned>(blocks), 1, 1, kJudgeThreads, 1, 1, 0,
                                   CU_STREAM_LEGACY, args, nullptr),
                 absl::StrCat("launching ", what));
  }
  absl::Status Launch(CUfunction f, uint64_t blocks, void** args, const std::string& what) {
    absl::Status st = Queue(f, blocks, args, what);
    if (st.ok()) st = Check(api_.CtxSynchronize(), absl::StrCat("cuCtxSynchronize after ", what));
    return st;
  }
  // At least `bytes` of device scratch at scratch_.
  absl::Status Scratch(size_t bytes) {
    if (bytes <= scratch_bytes_) return absl::OkStatus();
    if (scratch_ != 0) api_.MemFree(scratch_);
    scratch_ = 0;
    scratch_bytes_ = 0;
    absl::Status st = Check(api_.MemAlloc(&scratch_, bytes), "cuMemAlloc (the judge's scratch)");
    if (st.ok()) scratch_bytes_ = bytes;
    return st;
  }
  // Loads the judge's kernels; without them (a build without nvcc, or a
  // device the fat binary has no code for) the tensor work goes through
  // host copies (Device's defaults).
  void LoadJudgeKernels();
  int Attribute(CUdevice_attribute a) const {
    int v = 0;
    api_.DeviceGetAttribute(&v, a, device_);
    return v;
  }

  CudaApi api_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUevent start_ = nullptr;
  CUevent end_ = nullptr;
  CUdeviceptr flush_ = 0;
  size_t flush_bytes_ = 0;
  CUmodule module_ = nullptr;
  CUfunction fill_ = nullptr;
  CUfunction first_difference_ = nullptr;
  CUfunction compare_ = nullptr;
  CUdeviceptr scratch_ = 0;
  size_t scratch_bytes_ = 0;
  unsigned char flush_value_ = 0;
  bool can_reset_persisting_ = true;
  bool broken_ = false;
  DeviceInfo info_;
};

absl::Status CudaDevice::Open(Target target, int ordinal) {
  CUresult r = api_.Init(0);
  if (r != CUDA_SUCCESS) return Fail(r, "cuInit");
  r = api_.DeviceGet(&device_, ordinal);
  if (r != CUDA_SUCCESS) return Fail(r, absl::StrCat("cuDeviceGet(", ordinal, ")"));

  char name[256] = {0};
  api_.DeviceGetName(name, sizeof(name) - 1, device_);
  info_.name = name;
  info_.cc_major = Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info_.cc_minor = Attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info_.sm_count = Attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info_.l2_bytes = Attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info_.sm_clock_mhz = Attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000.0;
  const double mem_clock_hz = Attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) * 1e3;
  const double bus_bytes = Attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) / 8.0;
  info_.mem_bandwidth_gbps = 2.0 * mem_clock_hz * bus_bytes / 1e9;  // double data rate
  size_t total = 0;
  api_.DeviceTotalMem(&total, device_);
  info_.memory_bytes = static_cast<int64_t>(total);
  int version = 0;
  api_.DriverGetVersion(&version);
  info_.driver = absl::StrCat(version / 1000, ".", (version % 1000) / 10);

  const int want_major = target == Target::kSm90a ? 9 : 10;
  if (info_.cc_major != want_major || info_.cc_minor != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "target ", TargetName(target), " needs a device of compute capability ",
        want_major, ".0; CUDA device ", ordinal, " (", info_.name, ") has ",
        info_.cc_major, ".", info_.cc_minor));
  }

  r = api_.DevicePrimaryCtxRetain(&context_, device_);
  if (r != CUDA_SUCCESS) return Fail(r, "cuDevicePrimaryCtxRetain");
  r = api_.CtxSetCurrent(context_);
  if (r != CUDA_SUCCESS) return Fail(r, "cuCtxSetCurrent");
  r = api_.EventCreate(&start_, CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) return Fail(r, "cuEventCreate");
  r = api_.EventCreate(&end_, CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) return Fail(r, "cuEventCreate");
  flush_bytes_ = std::max(kMinFlushBytes, 2 * static_cast<size_t>(info_.l2_bytes));
  r = api_.MemAlloc(&flush_, flush_bytes_);
  if (r != CUDA_SUCCESS) return Fail(r, "cuMemAlloc (L2 flush buffer)");
  r = api_.MemsetD8Async(flush_, 0, flush_bytes_, CU_STREAM_LEGACY);
  if (r == CUDA_SUCCESS) r = api_.CtxSynchronize();
  if (r != CUDA_SUCCESS) return Fail(r, "clearing the L2 flush buffer");
  LoadJudgeKernels();
  return absl::OkStatus();
}

void CudaDevice::LoadJudgeKernels() {
#if KSEEK_HAVE_JUDGE_KERNELS
  CUmodule module = nullptr;
  CUfunction fill = nullptr, first_difference = nullptr, compare = nullptr;
  CUresult r = api_.ModuleLoadData(&module, kJudgeKernelsImage);
  if (r == CUDA_SUCCESS) r = api_.ModuleGetFunction(&fill, module, "kseek_fill_random");
  if (r == CUDA_SUCCESS) {
    r = api_.ModuleGetFunction(&first_difference, module, "kseek_first_difference");
  }
  if (r == CUDA_SUCCESS) r = api_.ModuleGetFunction(&compare, module, "kseek_compare");
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr,
                 "kseek-runner: the judge's CUDA kernels did not load (%s); inputs and "
                 "outputs go through host memory\n",
                 ErrorText(r).c_str());
    return;
  }
  module_ = module;
  fill_ = fill;
  first_difference_ = first_difference;
  compare_ = compare;
#endif
}

}  // namespace

absl::StatusOr<std::unique_ptr<Device>> OpenCudaDevice(Target target, int ordinal) {
  if (target == Target::kHost) {
    return absl::InvalidArgumentError("the host target has no CUDA device");
  }
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("runner could not initialise CUDA: cannot load libcuda.so.1: ",
                     err != nullptr ? err : "unknown error"));
  }
  CudaApi api;
  absl::Status st = ResolveAll(lib, &api);
  if (!st.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("runner could not initialise CUDA: ", st.message()));
  }
  auto device = std::make_unique<CudaDevice>(api);
  st = device->Open(target, ordinal);
  if (!st.ok()) return st;
  return std::unique_ptr<Device>(std::move(device));
}

}  // namespace kseek

#else  // !KSEEK_HAVE_CUDA_H

namespace kseek {

absl::StatusOr<std::unique_ptr<Device>> OpenCudaDevice(Target target, int ordinal) {
  return absl::FailedPreconditionError(
      absl::StrCat("this runner was built without CUDA support (cuda.h was not "
                   "found), so it cannot run target ",
                   TargetName(target)));
}

}  // namespace kseek

#endif  // KSEEK_HAVE_CUDA_H
