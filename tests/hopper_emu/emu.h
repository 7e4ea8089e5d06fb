// Minimal CPU emulation of the CUDA features hopper.cu uses: fibers per
// thread, warp collectives (shfl, ldmatrix, stmatrix, mma), block barriers, cp.async
// with groups (eager or lazy completion), poisoned shared memory, and
// thread-block clusters (the blocks of one cluster run as fibers under one
// scheduler: g_block is the running thread's block).
#pragma once
#include <setjmp.h>
#include <ucontext.h>
#include <cassert>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>
#include <algorithm>
#include <random>
#include <map>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__
#define __CUDA_ARCH_FEAT_SM90_ALL 1

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint3e { unsigned x, y, z; };
struct uint2 { unsigned x, y; };
struct uint4 { unsigned x, y, z, w; };
struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
inline uint2 make_uint2(unsigned a, unsigned b) { return {a, b}; }
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
inline float2 make_float2(float a, float b) { return {a, b}; }
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }

// 16-bit types.
struct __nv_bfloat16 { uint16_t bits; };
struct __half { uint16_t bits; };
struct __nv_bfloat162 { __nv_bfloat16 x, y; };
struct __half2 { __half x, y; };

inline uint16_t FloatToBf16(float f) {
  uint32_t u; memcpy(&u, &f, 4);
  if (std::isnan(f)) return 0x7fc0;
  uint32_t lsb = (u >> 16) & 1;
  u += 0x7fff + lsb;
  return uint16_t(u >> 16);
}
inline float Bf16ToFloat(uint16_t b) { uint32_t u = uint32_t(b) << 16; float f; memcpy(&f, &u, 4); return f; }
inline uint16_t FloatToHalf(float f) {
  // Round to nearest even through double arithmetic on the exact value.
  if (std::isnan(f)) return 0x7e00;
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  double a = std::fabs(double(f));
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < std::ldexp(1.0, -14)) {  // subnormal: units of 2^-24
    double units = std::nearbyint(a * std::ldexp(1.0, 24));  // ties to even (default mode)
    return sign | uint16_t(units);
  }
  int e; double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5,1)
  double mant = std::nearbyint(m * 2048.0);  // 11 bits incl. implicit
  if (mant >= 2048.0) { mant /= 2; e += 1; }
  int exp = e - 1 + 15;
  if (exp >= 31) return sign | 0x7c00;
  return sign | uint16_t(exp << 10) | uint16_t(int(mant) - 1024);
}
inline float HalfToFloat(uint16_t h) {
  int exp = (h >> 10) & 31, mant = h & 1023;
  double v;
  if (exp == 0) v = std::ldexp(double(mant), -24);
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp(double(mant + 1024), exp - 25);
  return float((h & 0x8000) ? -v : v);
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {{FloatToBf16(a)}, {FloatToBf16(b)}}; }
inline __half2 __floats2half2_rn(float a, float b) { return {{FloatToHalf(a)}, {FloatToHalf(b)}}; }

// CUDA runtime API subset.
typedef int cudaError_t;
typedef void* cudaStream_t;
constexpr cudaError_t cudaSuccess = 0;
enum { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75 };

// Driver types for tensor maps (the emulated encoder stores the fields).
typedef uint64_t cuuint64_t;
typedef uint32_t cuuint32_t;
typedef int CUresult;
constexpr CUresult CUDA_SUCCESS = 0;
struct alignas(64) CUtensorMap { uint64_t opaque[16]; };
typedef int CUtensorMapDataType;
typedef int CUtensorMapInterleave;
typedef int CUtensorMapSwizzle;
typedef int CUtensorMapL2promotion;
typedef int CUtensorMapFloatOOBfill;
enum { CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9 };
enum { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 };
enum { CU_TENSOR_MAP_SWIZZLE_128B = 3 };
enum {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B
};
enum { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 };
enum cudaDriverEntryPointQueryResult { cudaDriverEntryPointSuccess = 0, cudaDriverEntryPointSymbolNotFound = 1 };
enum { cudaEnableDefault = 0 };
cudaError_t cudaGetDriverEntryPointByVersion(const char* sym, void** fn, unsigned, unsigned long long, cudaDriverEntryPointQueryResult* r);

namespace emu {

// What the emulated tensor-map encoder (emu_host.h) stores in a CUtensorMap,
// and the TMA copies read back.
struct EmuMap {
  const unsigned char* base; uint64_t dims[4]; uint64_t strides[4]; uint32_t box[4]; int rank;
};
static_assert(sizeof(EmuMap) <= sizeof(CUtensorMap), "fits in a CUtensorMap");

extern int g_sms;
extern int g_cc_major;
extern bool g_lazy_async;
extern std::mt19937 g_async_rng;
extern bool g_lazy_copies;
extern int g_launches;
extern int g_clustered_launches;  // launches with clusters of more than one block
extern std::vector<std::pair<const char*, size_t>> g_readable;  // cp.async sources
extern bool g_failed;
extern uint64_t g_progress;
void Fail(const char* what);
// Fail with a printf-formatted message.
inline void Failf(const char* format, ...) {
  static char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  Fail(message);
}

struct CopyReq { uint32_t dst; const void* src; bool valid; };
// A TMA box: load (dst in shared memory, completing bar) or store (dst: the
// shared-memory source). `from`: for a multicast load's copy, the cluster
// rank of the block that issued it (-1: an ordinary load).
struct TmaOp { uint32_t dst; const void* map; uint32_t bar; int c[4]; int from = -1; };
struct Block;
struct Cluster;

// A thread is a fiber: makecontext gives it its stack and first entry;
// after that it and the scheduler switch with _setjmp/_longjmp, which
// (unlike swapcontext) leave the signal mask alone and so make no system
// call per switch.
struct Thread {
  ucontext_t ctx;     // first entry
  jmp_buf resume;     // where it yielded
  bool started = false;
  Block* block = nullptr;  // its block (g_block while it runs)
  std::vector<char> stack;
  dim3 tid;
  int lane, warp;
  bool done = false;
  std::vector<CopyReq> open_group;
  std::vector<std::vector<CopyReq>> groups;  // committed, oldest first
  // Its TMA stores (one bulk group each), oldest first: done at issue
  // (eager) or when a wait retires them (lazy), reading shared memory then.
  std::vector<TmaOp> bulk;
  // It has written shared memory with stmatrix since its last
  // fence.proxy.async: a TMA store from its warp would not see the data.
  bool unfenced = false;
  // Collective I/O.
  int kind = 0;
  uint32_t in[12];
  uint32_t out[4];
  unsigned gen_seen = 0;
  unsigned bar_seen = 0;
  // Warpgroup collectives (WGMMA): this thread's accumulator and A registers.
  float* wg_d = nullptr;
  uint32_t wg_a[4];
  // setmaxnreg: this thread's register count, and whether it waits in .inc.
  int regs = 0;
  bool regs_wait = false;
  // The mbarrier (shared offset) it waits on, or -1: named in a deadlock.
  long waiting_on = -1;
};

// One issued WGMMA: the accumulator pointers of the warpgroup's 128 threads
// and their A registers (RS form), executed at issue (eager) or at the wait
// that retires its group (lazy).
struct WgmmaOp {
  int n; bool rs, half, b_k_major; int accumulate; uint64_t da, db;
  float* d[128]; uint32_t a[128][4];
};
struct MBar { int count = 0, pending = 0; long tx = 0; unsigned phase = 0; bool init = false; };
struct NamedBar { int arrived = 0; unsigned gen = 0; };

struct Block {
  std::vector<unsigned char> smem;
  std::vector<Thread> threads;
  std::vector<int> warp_arrived;
  std::vector<unsigned> warp_gen;
  int bar_arrived = 0;
  unsigned bar_gen = 0;
  dim3 idx;
  // Warpgroups: collective arrival, open (uncommitted) and committed groups.
  std::vector<int> wg_arrived;
  std::vector<unsigned> wg_gen;
  std::vector<std::vector<WgmmaOp>> wg_open;
  std::vector<std::vector<std::vector<WgmmaOp>>> wg_groups;
  std::vector<WgmmaOp> wg_pending_issue;  // per warpgroup, being gathered
  std::vector<int> wg_kind;
  std::vector<uint64_t> wg_arg;
  std::map<uint32_t, MBar> mbars;
  std::vector<TmaOp> tma_pending;
  NamedBar named[16];
  long reg_pool = 0;  // registers returned by setmaxnreg.dec, not yet taken
  // Its cluster (every launch has one: of one block without the cluster
  // attribute) and its rank there; its threads not yet ended, and whether
  // all have (its shared memory is gone: no peer may target it).
  Cluster* cluster = nullptr;
  unsigned rank = 0;
  int live = 0;
  bool exited = false;
};

// The blocks of one cluster, by rank, and its barrier (barrier.cluster).
struct Cluster {
  std::vector<Block*> blocks;
  int sync_arrived = 0;
  unsigned sync_gen = 0;
};

extern Block* g_block;
extern Thread* g_cur;
extern jmp_buf g_sched;  // the scheduler, where a yielding thread returns
extern dim3 g_grid, g_blockdim;

inline void Yield() {
  if (!_setjmp(g_cur->resume)) _longjmp(g_sched, 1);
}

void DoCopy(const CopyReq& r);
void PerformWarpOp(int warp);

// A warp collective: inputs already in g_cur->in; kind identifies the op.
inline void WarpCollective(int kind) {
  Thread* t = g_cur;
  t->kind = kind;
  Block* b = g_block;
  unsigned gen = b->warp_gen[t->warp];
  if (++b->warp_arrived[t->warp] == 32) {
    PerformWarpOp(t->warp);
    b->warp_arrived[t->warp] = 0;
    b->warp_gen[t->warp]++;
  } else {
    while (b->warp_gen[t->warp] == gen) Yield();
  }
}

inline void SyncThreads() {
  Block* b = g_block;
  unsigned gen = b->bar_gen;
  int live = 0;
  for (auto& th : b->threads) live += !th.done;
  if (++b->bar_arrived == live) {
    b->bar_arrived = 0;
    b->bar_gen++;
    g_progress++;
  } else {
    while (b->bar_gen == gen) Yield();
  }
}

enum Kind { kShfl = 1, kLdm, kLdmT, kMmaBf16, kMmaF16, kSyncWarp, kStm };

inline uint32_t ShflBits(uint32_t v, int src) {
  g_cur->in[0] = v; g_cur->in[1] = uint32_t(src);
  WarpCollective(kShfl);
  return g_cur->out[0];
}

void CpAsync(uint32_t dst, const void* src, bool valid);
// WGMMA (warpgroup collectives), mbarriers, TMA, named barriers.
// rs: A from registers (a), B MN-major unless b_k_major; otherwise A and B
// K-major in shared memory (da, db).
void WgmmaIssue(float* d, int n, bool rs, bool half, int accumulate, uint64_t da, uint64_t db, const uint32_t* a,
                bool b_k_major = false);
void WgmmaCommitEmu();
void WgmmaWaitEmu(int pending);
void MbarInit(uint32_t bar, int count);
void MbarExpect(uint32_t bar, uint32_t bytes);
void MbarArrive(uint32_t bar);
void MbarWait(uint32_t bar, uint32_t parity);
// The phase with this parity has completed (no waiting, no TMA completed).
bool MbarTest(uint32_t bar, uint32_t parity);
void TmaLoad(uint32_t dst, const void* map, uint32_t bar, int c0, int c1, int c2, int c3);
void TmaStore(const void* map, uint32_t src, int c0, int c1, int c2, int c3);
void BulkWait(int pending);
void FenceProxyAsync();
void NamedSync(int id, int threads);
void NamedArrive(int id, int threads);
void SetMaxRegisters(int regs, bool inc);
void Commit();
void WaitGroups(int pending);
void RunGrid(dim3 grid, dim3 block, size_t smem, const std::function<void()>& body);
// Clusters (tests/hopper_emu only): barrier.cluster, %cluster_ctarank, mapa
// (a shared::cluster address: see emu_main.cc), a remote mbarrier arrive,
// a 32-bit store into another block's shared memory,
// a multicast TMA load, and a grid of clusters of cluster.x blocks.
void ClusterSync();
uint32_t ClusterRank();
uint32_t ClusterAddress(uint32_t local, uint32_t rank);
void MbarArriveCluster(uint32_t bar);
void StoreCluster32(uint32_t addr, uint32_t v);
void TmaLoadMulticast(uint32_t dst, const void* map, uint32_t bar, uint16_t mask, int c0, int c1, int c2,
                      int c3);
void RunClusteredGrid(dim3 grid, dim3 block, size_t smem, dim3 cluster, const std::function<void()>& body);

template <typename K, typename... A>
void LaunchKernel(K kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t, A... args) {
  std::function<void()> body = [&]() { kernel(args...); };
  RunGrid(grid, block, smem, body);
}
template <typename K, typename... A>
void LaunchClustered(K kernel, dim3 grid, dim3 block, size_t smem, dim3 cluster, A... args) {
  std::function<void()> body = [&]() { kernel(args...); };
  RunClusteredGrid(grid, block, smem, cluster, body);
}

}  // namespace emu

#define threadIdx (emu::g_cur->tid)
#define blockIdx (emu::g_block->idx)
#define gridDim (emu::g_grid)
inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
template <class TT> inline TT atomicAdd(TT* p, TT v) { TT o = *p; *p += v; return o; }
// One fiber runs at a time and memory is the host's: a fence orders
// nothing that is not already ordered, and the cache hint is a plain load.
inline void __threadfence() {}
template <class TT> inline TT __ldcg(const TT* p) { return *p; }
#define blockDim (emu::g_blockdim)
inline void __syncthreads() { emu::SyncThreads(); }
inline void __syncwarp() { emu::WarpCollective(emu::kSyncWarp); }
// Shuffles of any 32-bit value, moved as its bits (an int or unsigned is
// not converted to float on the way, as CUDA's overloads do not either).
template <typename V>
inline V __shfl_sync(unsigned, V x, int src) {
  static_assert(sizeof(V) == 4, "32-bit shuffles only");
  uint32_t b; memcpy(&b, &x, 4);
  b = emu::ShflBits(b, src & 31);
  V r; memcpy(&r, &b, 4); return r;
}
template <typename V>
inline V __shfl_xor_sync(unsigned mask, V x, int m) {
  return __shfl_sync(mask, x, emu::g_cur->lane ^ m);
}
// Whether pred is nonzero in any lane: an OR over the warp by shuffles.
inline int __any_sync(unsigned mask, int pred) {
  uint32_t v = pred != 0;
  for (int m = 1; m < 32; m <<= 1) v |= __shfl_xor_sync(mask, v, m);
  return int(v);
}
inline size_t __cvta_generic_to_shared(const void* p) {
  return size_t((const unsigned char*)p - emu::g_block->smem.data());
}

// cudaLaunchKernelEx as far as hopper.cu uses it: the combine launched as a
// programmatic dependent (KSEEK_FA_PDL; the emulation runs grids one after
// another, so that launch is an ordinary one here) and the attention kernel
// in clusters (KSEEK_FA_CLUSTER: run cluster by cluster, RunClusteredGrid).
// CUDA's names and values.
enum cudaLaunchAttributeID {
  cudaLaunchAttributeClusterDimension = 4,
  cudaLaunchAttributeProgrammaticStreamSerialization = 6
};
union cudaLaunchAttributeValue {
  struct { unsigned x, y, z; } clusterDim;
  int programmaticStreamSerializationAllowed;
};
struct cudaLaunchAttribute { cudaLaunchAttributeID id; cudaLaunchAttributeValue val; };
// CUDA's fields in CUDA's order (hopper.cu initialises them by position:
// gridDim and blockDim are macros here).
struct cudaLaunchConfig_t {
  dim3 grid, block;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned numAttrs;
};
// The cluster dimension a launch configuration gives, or 0 x 0 x 0.
inline dim3 ClusterDimOf(const cudaLaunchConfig_t* c) {
  for (unsigned i = 0; i < c->numAttrs; ++i)
    if (c->attrs[i].id == cudaLaunchAttributeClusterDimension) {
      const auto& d = c->attrs[i].val.clusterDim;
      return dim3(d.x, d.y, d.z);
    }
  return dim3(0, 0, 0);
}
template <typename... P, typename... A>
cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t* c, void (*kernel)(P...), A... args) {
  const dim3 cluster = ClusterDimOf(c);
  if (uint64_t(cluster.x) * cluster.y * cluster.z > 1)
    emu::LaunchClustered(kernel, c->grid, c->block, c->dynamicSmemBytes, cluster, args...);
  else
    emu::LaunchKernel(kernel, c->grid, c->block, c->dynamicSmemBytes, c->stream, args...);
  return cudaSuccess;
}
// Clusters of the configuration's size that fit at once: one block per SM
// (the attention kernels' shared memory), so the emulated SMs over the
// cluster's size; an error without a cluster dimension, as CUDA's.
template <typename F>
cudaError_t cudaOccupancyMaxActiveClusters(int* n, F, const cudaLaunchConfig_t* c) {
  const dim3 cluster = ClusterDimOf(c);
  const unsigned size = cluster.x * cluster.y * cluster.z;
  if (size == 0) return 1;
  *n = c->dynamicSmemBytes <= 227 * 1024 ? emu::g_sms / int(size) : 0;
  return cudaSuccess;
}
inline cudaError_t cudaFuncSetAttribute(const void*, int, int v) { return v <= 227 * 1024 ? cudaSuccess : 1; }
template <typename F> cudaError_t cudaFuncSetAttribute(F f, int a, int v) { return cudaFuncSetAttribute((const void*)f, a, v); }
template <typename F> cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, F, int, size_t smem) {
  *n = smem <= 64 * 1024 ? 2 : 1;  // the register-bound design
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int* v, int a, int) { *v = a == cudaDevAttrComputeCapabilityMajor ? emu::g_cc_major : emu::g_sms; return cudaSuccess; }
inline cudaError_t cudaGetLastError() { return emu::g_failed ? 1 : cudaSuccess; }

// Scratch memory (hopper.cu's CallScratch, blackwell.cu's SplitScratch).
// The pool's allocations and cudaMalloc's come filled with the word
// 0x7FC07FC0 (a NaN as a float, as an int far past any queue's items), so
// that a kernel reading scratch it never wrote, or a work queue never
// cleared, shows; emu::g_pool_live counts the pool's allocations not yet
// freed (the test driver wants none left after a call). With
// emu::g_capturing every stream reports an active graph capture, and, as
// CUDA does under a capture in global mode, cudaMalloc and
// cudaMemPoolCreate fail unless the thread's capture mode is relaxed.
// Streams are ids: a stream's handle plus one.
namespace emu {
inline int g_pool_live = 0;
inline bool g_capturing = false;
inline int g_streams = 0;  // --streams=N: calls go round N streams
inline int g_frees = 0;    // cudaFree calls
// The item trace's clock and timer (KSEEK_FA_TRACE): one count that every
// stamp advances, so a round's stamps rise in the order they were taken.
inline unsigned long long g_trace_ticks = 0;
inline thread_local int g_capture_mode = 0;  // a cudaStreamCaptureMode
// An unsafe call under a capture: what CUDA refuses unless relaxed.
inline bool CaptureForbids() { return g_capturing && g_capture_mode != 2; }
inline void* PoisonedAllocation(size_t bytes) {
  const size_t rounded = (bytes + 255) / 256 * 256;
  void* p = aligned_alloc(256, rounded);
  if (p != nullptr)
    for (size_t i = 0; i < rounded / 4; ++i) static_cast<uint32_t*>(p)[i] = 0x7FC07FC0u;
  return p;
}
}  // namespace emu
typedef void* cudaMemPool_t;
enum cudaMemAllocationType { cudaMemAllocationTypePinned = 1 };
enum cudaMemLocationType { cudaMemLocationTypeDevice = 1 };
struct cudaMemLocation { cudaMemLocationType type; int id; };
struct cudaMemPoolProps { cudaMemAllocationType allocType; int handleTypes; cudaMemLocation location; };
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2
};
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
inline cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  const int previous = emu::g_capture_mode;
  emu::g_capture_mode = *mode;
  *mode = cudaStreamCaptureMode(previous);
  return cudaSuccess;
}
inline cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus* status) {
  *status = emu::g_capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
inline cudaError_t cudaStreamGetId(cudaStream_t stream, unsigned long long* id) {
  *id = (unsigned long long)(uintptr_t)stream + 1;
  return cudaSuccess;
}
inline cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
  static int pools;
  if (emu::CaptureForbids()) return 900;  // cudaErrorStreamCaptureUnsupported
  if (props->allocType != cudaMemAllocationTypePinned || props->location.type != cudaMemLocationTypeDevice) return 1;
  *pool = &pools;
  return cudaSuccess;
}
inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) { return cudaSuccess; }
inline cudaError_t cudaMallocFromPoolAsync(void** p, size_t bytes, cudaMemPool_t pool, cudaStream_t) {
  if (pool == nullptr || (*p = emu::PoisonedAllocation(bytes)) == nullptr) return 2;
  ++emu::g_pool_live;
  return cudaSuccess;
}
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) {
  free(p);
  --emu::g_pool_live;
  return cudaSuccess;
}
inline cudaError_t cudaMalloc(void** p, size_t bytes) {
  if (emu::CaptureForbids()) return 900;  // cudaErrorStreamCaptureUnsupported
  return (*p = emu::PoisonedAllocation(bytes)) ? cudaSuccess : 2;
}
inline cudaError_t cudaFree(void* p) {
  if (emu::CaptureForbids()) return 900;
  ++emu::g_frees;
  free(p);
  return cudaSuccess;
}
// Work completes at launch here: nothing to wait for.
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return emu::CaptureForbids() ? 900 : cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return emu::CaptureForbids() ? 900 : cudaSuccess; }
constexpr cudaError_t cudaErrorStreamCaptureInvalidated = 901;
inline const char* cudaGetErrorString(cudaError_t e) {
  return e == 900 ? "emulated: operation not permitted when stream is capturing"
         : e == 2 ? "emulated: out of memory" : "emulated: error";
}
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t) {
  memset(p, value, bytes);
  return cudaSuccess;
}
// A __device__ variable is host memory here (the item trace's array,
// KSEEK_FA_TRACE).
template <typename T>
inline cudaError_t cudaGetSymbolAddress(void** p, T& symbol) {
  *p = (void*)&symbol;
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, size_t bytes) {
  memset(p, value, bytes);
  return cudaSuccess;
}
template <typename T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t bytes) {
  memcpy(dst, (const void*)&symbol, bytes);
  return cudaSuccess;
}
