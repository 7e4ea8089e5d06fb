// A self-checking probe of the tcgen05 building blocks blackwell.cu uses,
// for the first Blackwell device: tensor-memory allocation, tcgen05.mma
// .cta_group::1 .kind::f16 (M = 128, bf16 in, fp32 accumulators in tensor
// memory) with the kernel's shared-memory and instruction descriptors over
// 128-byte-swizzled tiles, tcgen05.commit to an mbarrier, and tcgen05.ld
// 32x32b by each warp of its lane quarter. A standalone program, not a
// task candidate; NOT YET RUN (no sm_100 device has been lent):
//
//   nvcc -gencode=arch=compute_100a,code=sm_100a -O2 -o /tmp/tcgen05_probe \
//       kernels/flash_attention_fwd/blackwell_tcgen05_probe.cu && /tmp/tcgen05_probe
//
// It prints one line per check and then PASS or FAIL; the exit status is 0
// only when every check passes. Built for another target, the kernel is
// empty and the program says so. scripts/device/full_run.sh phase
// blackwell runs it before the kernel's evaluation.
//
// The conventions under test are the ones tests/blackwell_emu assumes (and
// hopper_wgmma_probe.cu confirmed for WGMMA): a [rows][cols] bf16 matrix in
// shared memory is stored as column blocks of 64 elements, block b holding
// rows x 128 bytes, row r at r * 128 with its 16-byte chunk c at chunk
// c ^ (r % 8), every block 1024-byte aligned. Checks (the inputs are small
// integers, so every fp32 sum is exact and the results must match exactly):
//   1. S = Q K^T as blackwell.cu issues it at head_dim 128: A = Q [128][128]
//      and B = K [128 keys][128] both K-major, N = 128, K = 16 per
//      instruction, the start address moving 32 bytes inside the swizzled
//      row per step and to the next column block after four; LBO 16
//      (unused), SBO 1024.
//   2. O = P V as at head_dim 256: A = P [128][64 keys] K-major, B = V
//      [64 keys][256] MN-major (transpose B), N = 256, per step the start
//      moving 16 key rows (2048 bytes); LBO = 64 x 128 = 8192 (between the
//      64-column blocks), SBO = 1024 (between 8-key groups).
//   3. Only when 2 fails: the same with LBO and SBO exchanged, to tell
//      which convention the hardware follows.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vector>

namespace {

constexpr int kThreads = 128;  // four warps: one lane quarter of tensor memory each
constexpr int kRows = 128;     // M

// ---------------------------------------------------------------------------
// PTX wrappers (sm_100a only), as in blackwell.cu.
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)

constexpr int kTmemColumns = 256;  // D of up to 256 fp32 columns

__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ uint64_t SmemDescriptor(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t((lbo & 0x3FFFF) >> 4) << 16) |
         (uint64_t((sbo & 0x3FFFF) >> 4) << 32) | (uint64_t(1) << 46) | (uint64_t(2) << 61);
}
__device__ __forceinline__ uint32_t InstrDescriptorBf16(int m, int n, bool transpose_b) {
  return (1u << 4) | (1u << 7) | (1u << 10) | (uint32_t(transpose_b) << 16) |
         (uint32_t(n >> 3) << 17) | (uint32_t(m >> 4) << 24);
}
__device__ __forceinline__ void Mma(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc,
                                    uint32_t idesc, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
      : "memory");
}
__device__ __forceinline__ void MmaCommit(uint32_t bar) {
  asm volatile(
      "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar)
      : "memory");
}
__device__ __forceinline__ void TmemLoad4(uint32_t taddr, float (&v)[4]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
               : "r"(taddr));
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void Wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  }
}

// Byte offset of element (row, col) of a swizzled [rows][cols] tile.
__device__ __forceinline__ uint32_t Swizzled(int rows, int row, int col) {
  const int block = col / 64, chunk = (col % 64) / 8;
  return block * rows * 128 + row * 128 + ((chunk ^ (row % 8)) << 4) + (col % 8) * 2;
}

#endif  // __CUDA_ARCH_FEAT_SM100_ALL

// d [128][n] = a [128][k] b, with b [n][k] (K-major) or, with transpose_b,
// [k][n] (MN-major); LBO and SBO of b's descriptor as given.
__global__ void __launch_bounds__(kThreads, 1)
    ProbeMma(const __nv_bfloat16* a, const __nv_bfloat16* b, float* d, int n, int k,
             bool transpose_b, uint32_t b_lbo, uint32_t b_sbo) {
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const uint32_t raw = SharedAddress(smem_raw);
  unsigned char* smem = smem_raw + (((raw + 1023) & ~1023u) - raw);
  const int a_bytes = kRows * k * 2;
  const int b_rows = transpose_b ? k : n, b_cols = transpose_b ? n : k;
  unsigned char* sa = smem;
  unsigned char* sb = smem + a_bytes;
  unsigned char* extra = sb + b_rows * b_cols * 2;
  uint32_t* slot = reinterpret_cast<uint32_t*>(extra);
  const uint32_t bar = SharedAddress(extra + 8);
  for (int i = threadIdx.x; i < kRows * k; i += kThreads)
    *reinterpret_cast<__nv_bfloat16*>(sa + Swizzled(kRows, i / k, i % k)) = a[i];
  for (int i = threadIdx.x; i < b_rows * b_cols; i += kThreads)
    *reinterpret_cast<__nv_bfloat16*>(sb + Swizzled(b_rows, i / b_cols, i % b_cols)) = b[i];
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  const int warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(
                     SharedAddress(slot)),
                 "r"(kTmemColumns)
                 : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
  }
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(slot);
  if (threadIdx.x == 0) {
    const uint32_t idesc = InstrDescriptorBf16(kRows, n, transpose_b);
    for (int s = 0; s < k / 16; ++s) {
      const uint64_t da =
          SmemDescriptor(SharedAddress(sa) + (s / 4) * kRows * 128 + (s % 4) * 32, 16, 1024);
      const uint64_t db =
          transpose_b ? SmemDescriptor(SharedAddress(sb) + s * 16 * 128, b_lbo, b_sbo)
                      : SmemDescriptor(SharedAddress(sb) + (s / 4) * n * 128 + (s % 4) * 32, b_lbo,
                                       b_sbo);
      Mma(tmem, da, db, idesc, s > 0);
    }
    MmaCommit(bar);
  }
  __syncwarp();
  Wait(bar, 0);
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
  const int row = threadIdx.x;  // lane quarter warp % 4 = warp
  for (int c = 0; c < n; c += 4) {
    float v[4];
    TmemLoad4(tmem + (uint32_t(warp * 32) << 16) + c, v);
    for (int e = 0; e < 4; ++e) d[row * n + c + e] = v[e];
  }
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
  __syncthreads();
  if (warp == 0)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(tmem),
                 "r"(kTmemColumns)
                 : "memory");
#endif  // __CUDA_ARCH_FEAT_SM100_ALL
}

bool Ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  printf("  %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// One check: random small integers, the device's d against an exact
// reference; prints the check's line and returns whether it matched.
bool Check(const char* name, int n, int k, bool transpose_b, uint32_t lbo, uint32_t sbo) {
  const int b_count = n * k;
  std::vector<__nv_bfloat16> ha(kRows * k), hb(b_count);
  std::vector<float> fa(kRows * k), fb(b_count), hd(kRows * n, NAN);
  uint32_t state = 12345 + n + k;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return float(int((state >> 16) % 5) - 2);
  };
  for (int i = 0; i < kRows * k; ++i) ha[i] = __float2bfloat16(fa[i] = next());
  for (int i = 0; i < b_count; ++i) hb[i] = __float2bfloat16(fb[i] = next());
  __nv_bfloat16 *da = nullptr, *db = nullptr;
  float* dd = nullptr;
  const int smem = kRows * k * 2 + b_count * 2 + 64 + 1024;
  bool ok = Ok(cudaMalloc(&da, ha.size() * 2), "cudaMalloc") &&
            Ok(cudaMalloc(&db, hb.size() * 2), "cudaMalloc") &&
            Ok(cudaMalloc(&dd, hd.size() * 4), "cudaMalloc") &&
            Ok(cudaMemcpy(da, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice), "copy a") &&
            Ok(cudaMemcpy(db, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice), "copy b") &&
            Ok(cudaFuncSetAttribute(ProbeMma, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "shared memory attribute");
  if (ok) {
    ProbeMma<<<1, kThreads, smem>>>(da, db, dd, n, k, transpose_b, lbo, sbo);
    ok = Ok(cudaGetLastError(), "launch") && Ok(cudaDeviceSynchronize(), "kernel") &&
         Ok(cudaMemcpy(hd.data(), dd, hd.size() * 4, cudaMemcpyDeviceToHost), "copy d");
  }
  int wrong = 0;
  double worst = 0;
  if (ok) {
    for (int m = 0; m < kRows; ++m)
      for (int j = 0; j < n; ++j) {
        double ref = 0;
        for (int i = 0; i < k; ++i)
          ref += double(fa[m * k + i]) * (transpose_b ? fb[i * n + j] : fb[j * k + i]);
        const double err = fabs(double(hd[m * n + j]) - ref);
        if (!(err == 0)) ++wrong;
        if (err > worst || err != err) worst = err;
      }
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dd);
  ok = ok && wrong == 0;
  printf("%s: %s (%d of %d wrong, largest error %g)\n", name, ok ? "ok" : "WRONG", wrong, kRows * n,
         worst);
  return ok;
}

}  // namespace

int main() {
  int device = 0, major = 0, minor = 0;
  if (!Ok(cudaGetDevice(&device), "cudaGetDevice") ||
      !Ok(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
          "compute capability") ||
      !Ok(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
          "compute capability")) {
    printf("FAIL\n");
    return 1;
  }
  printf("device compute capability %d.%d\n", major, minor);
  if (major != 10) {
    printf("FAIL: needs a compute capability 10.x device (sm_100a)\n");
    return 1;
  }
  bool ok = Check("1. S = Q K^T, N 128, K 128, A and B K-major (LBO 16, SBO 1024)", 128, 128,
                  false, 16, 1024);
  const bool values = Check("2. O = P V, N 256, K 64, B MN-major (LBO 8192, SBO 1024)", 256, 64,
                            true, 64 * 128, 1024);
  if (!values)
    Check("3. O = P V with LBO and SBO exchanged (diagnostic only)", 256, 64, true, 1024, 64 * 128);
  ok = ok && values;
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
