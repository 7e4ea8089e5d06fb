// A self-checking probe of the WGMMA building blocks a Hopper attention
// kernel uses: shared-memory matrix descriptors over 128-byte-swizzled
// tiles, wgmma.mma_async m64nNk16 in bf16 with fp32 accumulators (operands
// from shared memory, or A from registers), and the fence / commit / wait
// protocol. A standalone program, not a task candidate:
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -o /tmp/wgmma_probe \
//       kernels/flash_attention_fwd/hopper_wgmma_probe.cu && /tmp/wgmma_probe
//
// It prints one line per check and then PASS or FAIL; the exit status is 0
// only when every check passes. Built for another target, the kernels are
// empty and the checks fail.
//
// Shared-memory layout (both operands, the one the descriptors describe): a
// [rows][cols] bf16 matrix is stored as column blocks of 64 elements; block
// b holds rows x 128 bytes; in it, row r is 128 bytes at r * 128 and its
// 16-byte chunk c sits at chunk c ^ (r % 8). Every block starts on a
// 1024-byte boundary (one swizzle atom is 8 rows x 128 bytes).
//
// Checks (one warpgroup of 128 threads; the inputs are small integers, so
// every fp32 sum is exact and the results must match exactly):
//   1. S = Q K^T, head_dim 64: m64n64k16, Q [64][64] and K [64][64] both
//      K-major; per k16 step the descriptors' start address moves 32 bytes
//      inside the swizzled row. LBO 16 (unused for swizzled K-major), SBO
//      1024 (between 8-row groups).
//   2. The same at head_dim 128: the k16 steps 4..7 start in the second
//      column block (rows x 128 bytes further).
//   3. O = P V: m64n128k16 with P [64][64] in registers (per warp the
//      m16n8k16 A layout of rows 16w .. 16w+15) and V [64 keys][128] in
//      shared memory, MN-major (imm-trans-b = 1); per k16 step the start
//      moves 16 key rows (2048 bytes). LBO = 8192 (between the two 64-column
//      blocks), SBO = 1024 (between 8-key groups).
//   4. Only when 3 fails: the same with LBO and SBO exchanged, to tell
//      which convention the hardware follows.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vector>

namespace {

constexpr int kThreads = 128;  // one warpgroup
constexpr int kRows = 64;      // M of every wgmma here, and the key count
constexpr int kAtomBytes = 1024;

// ---------------------------------------------------------------------------
// PTX wrappers and device helpers (sm_90a only).

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ uint64_t Descriptor(uint32_t smem_addr,
                                               uint32_t lbo_bytes,
                                               uint32_t sbo_bytes) {
  constexpr uint64_t kSwizzle128B = 1;
  return uint64_t((smem_addr & 0x3FFFF) >> 4) |
         (uint64_t((lbo_bytes >> 4) & 0x3FFF) << 16) |
         (uint64_t((sbo_bytes >> 4) & 0x3FFF) << 32) | (kSwizzle128B << 62);
}

// Generic-proxy shared-memory writes become visible to wgmma (async proxy).
__device__ __forceinline__ void FenceProxyAsync() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaWaitAll() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}

// d (64 x 64, fp32) = A B^T (+ d when accumulate != 0): A and B K-major
// bf16 in shared memory, both given by descriptors.
__device__ __forceinline__ void WgmmaSS_m64n64k16(float (&d)[32],
                                                  uint64_t desc_a,
                                                  uint64_t desc_b,
                                                  int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16\n"
      "{%0, %1, %2, %3, %4, %5, %6, %7,\n"
      " %8, %9, %10, %11, %12, %13, %14, %15,\n"
      " %16, %17, %18, %19, %20, %21, %22, %23,\n"
      " %24, %25, %26, %27, %28, %29, %30, %31},\n"
      " %32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
        "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// d (64 x 128, fp32) = A B (+ d when accumulate != 0): A (64 x 16 bf16) in
// registers, B (16 x 128) MN-major in shared memory (imm-trans-b = 1).
__device__ __forceinline__ void WgmmaRS_m64n128k16(float (&d)[64],
                                                   const uint32_t (&a)[4],
                                                   uint64_t desc_b,
                                                   int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16\n"
      "{%0, %1, %2, %3, %4, %5, %6, %7,\n"
      " %8, %9, %10, %11, %12, %13, %14, %15,\n"
      " %16, %17, %18, %19, %20, %21, %22, %23,\n"
      " %24, %25, %26, %27, %28, %29, %30, %31,\n"
      " %32, %33, %34, %35, %36, %37, %38, %39,\n"
      " %40, %41, %42, %43, %44, %45, %46, %47,\n"
      " %48, %49, %50, %51, %52, %53, %54, %55,\n"
      " %56, %57, %58, %59, %60, %61, %62, %63},\n"
      " {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
        "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
        "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
        "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
        "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
}

// ---------------------------------------------------------------------------
// Device helpers.

// Byte offset of element (row, col) of a [rows][cols] matrix in the layout
// above.
__device__ __forceinline__ uint32_t SwizzledOffset(int row, int col, int rows) {
  return uint32_t((col / 64) * rows * 128 + row * 128 +
                  ((((col % 64) / 8) ^ (row % 8)) << 4) + (col % 8) * 2);
}

// Copies a row-major [rows][cols] bf16 matrix into the swizzled layout.
__device__ void StoreSwizzled(unsigned char* smem, const __nv_bfloat16* src,
                              int rows, int cols) {
  for (int i = threadIdx.x; i < rows * cols; i += kThreads) {
    const int r = i / cols, c = i % cols;
    *reinterpret_cast<__nv_bfloat16*>(smem + SwizzledOffset(r, c, rows)) = src[i];
  }
}

// Writes a warpgroup accumulator of N columns: warp w holds rows 16w + g and
// 16w + g + 8 (g = lane / 4); d[4i .. 4i+3] are columns 8i + 2 (lane % 4) and
// + 1 of those two rows.
template <int N>
__device__ void StoreAccumulator(const float (&d)[N / 2], float* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = 16 * warp + lane / 4, col = 2 * (lane % 4);
#pragma unroll
  for (int i = 0; i < N / 8; ++i) {
    out[row * N + 8 * i + col] = d[4 * i];
    out[row * N + 8 * i + col + 1] = d[4 * i + 1];
    out[(row + 8) * N + 8 * i + col] = d[4 * i + 2];
    out[(row + 8) * N + 8 * i + col + 1] = d[4 * i + 3];
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// ---------------------------------------------------------------------------
// Kernels: one block of one warpgroup each; empty unless built for sm_90a.

// s [64][64] = q [64][D] k [64][D]^T.
template <int D>
__global__ void __launch_bounds__(kThreads)
    ScoresKernel(const __nv_bfloat16* q, const __nv_bfloat16* k, float* s) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ __align__(kAtomBytes) unsigned char smem[2 * kRows * D * 2];
  unsigned char* q_tile = smem;
  unsigned char* k_tile = smem + kRows * D * 2;
  StoreSwizzled(q_tile, q, kRows, D);
  StoreSwizzled(k_tile, k, kRows, D);
  FenceProxyAsync();
  __syncthreads();

  const uint32_t q_addr = static_cast<uint32_t>(__cvta_generic_to_shared(q_tile));
  const uint32_t k_addr = static_cast<uint32_t>(__cvta_generic_to_shared(k_tile));
  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  WgmmaFence();
#pragma unroll
  for (int step = 0; step < D / 16; ++step) {
    const uint32_t offset = (step / 4) * kRows * 128 + (step % 4) * 32;
    WgmmaSS_m64n64k16(d, Descriptor(q_addr + offset, 16, kAtomBytes),
                      Descriptor(k_addr + offset, 16, kAtomBytes), step > 0);
  }
  WgmmaCommit();
  WgmmaWaitAll();
  StoreAccumulator<64>(d, s);
#endif
}

// o [64][128] = p [64][64] v [64][128], P from registers.
__global__ void __launch_bounds__(kThreads)
    ValuesKernel(const __nv_bfloat16* p, const __nv_bfloat16* v, float* o,
                 uint32_t lbo, uint32_t sbo) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kCols = 128;
  __shared__ __align__(kAtomBytes) unsigned char smem[kRows * kCols * 2];
  StoreSwizzled(smem, v, kRows, kCols);
  FenceProxyAsync();
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = 16 * warp + lane / 4, col = 2 * (lane % 4);
  auto pair = [&](int r, int c) {
    __nv_bfloat162 h;
    h.x = p[r * kRows + c];
    h.y = p[r * kRows + c + 1];
    return *reinterpret_cast<const uint32_t*>(&h);
  };
  const uint32_t v_addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  float d[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = 0.f;
  uint32_t a[kRows / 16][4];
#pragma unroll
  for (int step = 0; step < kRows / 16; ++step) {
    a[step][0] = pair(row, 16 * step + col);
    a[step][1] = pair(row + 8, 16 * step + col);
    a[step][2] = pair(row, 16 * step + 8 + col);
    a[step][3] = pair(row + 8, 16 * step + 8 + col);
  }
  WgmmaFence();
#pragma unroll
  for (int step = 0; step < kRows / 16; ++step)
    WgmmaRS_m64n128k16(d, a[step], Descriptor(v_addr + step * 16 * 128, lbo, sbo),
                       step > 0);
  WgmmaCommit();
  WgmmaWaitAll();
  StoreAccumulator<kCols>(d, o);
#endif
}

// ---------------------------------------------------------------------------
// Host side.

bool Ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  printf("FAIL: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// Small integers in [-2, 2], a different pattern per seed.
std::vector<__nv_bfloat16> Integers(int n, int seed) {
  std::vector<__nv_bfloat16> out(n);
  uint32_t x = 2463534242u + 977u * uint32_t(seed);
  for (int i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = __float2bfloat16(float(int(x % 5) - 2));
  }
  return out;
}

template <typename T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(size_t n) {
    if (cudaMalloc(&ptr, n * sizeof(T)) != cudaSuccess) ptr = nullptr;
  }
  ~DeviceBuffer() { cudaFree(ptr); }
};

// Compares got with want ([rows][cols]); prints the check's line.
bool Report(const char* name, const std::vector<float>& got,
            const std::vector<float>& want, int cols) {
  int wrong = 0, first = -1;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && wrong++ == 0) first = int(i);
  if (wrong == 0) {
    printf("PASS  %s\n", name);
    return true;
  }
  printf("FAIL  %s: %d of %zu elements differ; first at [%d][%d]: got %g, want %g\n",
         name, wrong, want.size(), first / cols, first % cols, got[first], want[first]);
  return false;
}

template <int D>
bool CheckScores(const char* name) {
  const std::vector<__nv_bfloat16> q = Integers(kRows * D, 1 + D);
  const std::vector<__nv_bfloat16> k = Integers(kRows * D, 2 + D);
  std::vector<float> want(kRows * kRows, 0.f), got(kRows * kRows, NAN);
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kRows; ++j)
      for (int c = 0; c < D; ++c)
        want[i * kRows + j] +=
            __bfloat162float(q[i * D + c]) * __bfloat162float(k[j * D + c]);

  DeviceBuffer<__nv_bfloat16> dq(q.size()), dk(k.size());
  DeviceBuffer<float> ds(got.size());
  if (!dq.ptr || !dk.ptr || !ds.ptr) return Ok(cudaErrorMemoryAllocation, name);
  if (!Ok(cudaMemcpy(dq.ptr, q.data(), q.size() * 2, cudaMemcpyHostToDevice), name) ||
      !Ok(cudaMemcpy(dk.ptr, k.data(), k.size() * 2, cudaMemcpyHostToDevice), name) ||
      !Ok(cudaMemcpy(ds.ptr, got.data(), got.size() * 4, cudaMemcpyHostToDevice), name))
    return false;
  ScoresKernel<D><<<1, kThreads>>>(dq.ptr, dk.ptr, ds.ptr);
  if (!Ok(cudaGetLastError(), name) || !Ok(cudaDeviceSynchronize(), name) ||
      !Ok(cudaMemcpy(got.data(), ds.ptr, got.size() * 4, cudaMemcpyDeviceToHost), name))
    return false;
  return Report(name, got, want, kRows);
}

bool CheckValues(const char* name, uint32_t lbo, uint32_t sbo) {
  constexpr int kCols = 128;
  const std::vector<__nv_bfloat16> p = Integers(kRows * kRows, 3);
  const std::vector<__nv_bfloat16> v = Integers(kRows * kCols, 4);
  std::vector<float> want(kRows * kCols, 0.f), got(kRows * kCols, NAN);
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kCols; ++j)
      for (int key = 0; key < kRows; ++key)
        want[i * kCols + j] +=
            __bfloat162float(p[i * kRows + key]) * __bfloat162float(v[key * kCols + j]);

  DeviceBuffer<__nv_bfloat16> dp(p.size()), dv(v.size());
  DeviceBuffer<float> dout(got.size());
  if (!dp.ptr || !dv.ptr || !dout.ptr) return Ok(cudaErrorMemoryAllocation, name);
  if (!Ok(cudaMemcpy(dp.ptr, p.data(), p.size() * 2, cudaMemcpyHostToDevice), name) ||
      !Ok(cudaMemcpy(dv.ptr, v.data(), v.size() * 2, cudaMemcpyHostToDevice), name) ||
      !Ok(cudaMemcpy(dout.ptr, got.data(), got.size() * 4, cudaMemcpyHostToDevice), name))
    return false;
  ValuesKernel<<<1, kThreads>>>(dp.ptr, dv.ptr, dout.ptr, lbo, sbo);
  if (!Ok(cudaGetLastError(), name) || !Ok(cudaDeviceSynchronize(), name) ||
      !Ok(cudaMemcpy(got.data(), dout.ptr, got.size() * 4, cudaMemcpyDeviceToHost), name))
    return false;
  return Report(name, got, want, kCols);
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
  if (major != 9) {
    printf("FAIL: needs a compute capability 9.0 device (sm_90a)\n");
    return 1;
  }
  bool ok = CheckScores<64>("1. S = Q K^T, head_dim 64, m64n64k16, K-major A and B");
  ok = CheckScores<128>("2. S = Q K^T, head_dim 128 (two column blocks)") && ok;
  constexpr uint32_t kBlockBytes = kRows * 128;  // one 64-column block of V
  const bool values = CheckValues(
      "3. O = P V, m64n128k16, P in registers, V MN-major (LBO 8192, SBO 1024)",
      kBlockBytes, kAtomBytes);
  if (!values)
    CheckValues("4. O = P V with LBO and SBO exchanged (diagnostic only)", kAtomBytes,
                kBlockBytes);
  ok = ok && values;
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
