// Baseline attention forward (flash_attention_fwd): the plain tiled kernel a
// session starts from. FlashAttention-2 structure on CUDA cores only: no
// tensor-core instructions, no asynchronous copies, no Hopper or Blackwell
// features.
//
// Design
//   - One block of 256 threads per (64 query rows, query head, batch); it
//     walks the key sequence in tiles of 64 keys with an fp32 online softmax
//     and writes O and LSE once at the end.
//   - Shared memory, all fp32: Q^T [D][64] (pre-scaled by log2(e)/sqrt(D)),
//     K^T [D][64], V [64][D], P^T [64][68]. 214 KB at D = 256, so one
//     block per SM there; 107 KB at D = 128, 53 KB at D = 64.
//   - Thread (ty, tx) = (t / 16, t % 16) owns query rows 4*ty .. 4*ty+3 of
//     the tile, score columns 4*tx .. 4*tx+3 and output dims
//     64*x + 4*tx .. 64*x + 4*tx + 3 for x < D/64: a 4x4 register tile of
//     S = Q K^T and a 4 x D/16 register tile of O, each fed by float4
//     shared-memory reads. The 16 threads of a row are lanes of one warp, so
//     row max and row sum use shuffles.
//   - Per key tile: load K^T and V (16-byte global loads, converted to
//     fp32), compute S, mask, update the running max m and sum l of each
//     row (base-2 exponent), rescale O, write P^T, then O += P V.
//   - Causal masking is aligned bottom-right (row i sees key j when
//     j <= i + seqlen_k - seqlen_q); key tiles past the last row's diagonal
//     are skipped, and query tiles are visited heaviest first. A row that
//     sees no key keeps m = -inf and l = 0 and is written as O = 0,
//     LSE = -inf.
//   - GQA/MQA: query head h reads key/value head h / (heads_q / heads_kv).
//   - head_dim: any multiple of 8 from 64 to 256; the kernel is compiled
//     for D = 64, 128, 192 and 256 and a head_dim runs on the next D up,
//     its columns past head_dim zero-filled in shared memory (they add
//     nothing to S, and their O columns are not stored).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>

#include "kernelseek/abi.h"

namespace {

constexpr int kRows = 64;      // query rows per block
constexpr int kKeys = 64;      // keys per tile
constexpr int kThreads = 256;  // 16 x 16 threads, 4 x 4 scores each
constexpr int kPStride = kRows + 4;  // P^T row stride (floats)
// Blocks that fit on an SM by shared memory; tells ptxas its register budget.
template <int D>
constexpr int kBlocksPerSm = D >= 192 ? 1 : 2;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

const char* g_error = "";

// ---- 16-bit <-> fp32 in groups (8 elements in a uint4, 4 in a uint2) ----

__device__ float2 Unpack2(uint32_t bits, __nv_bfloat16) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&bits));
}
__device__ float2 Unpack2(uint32_t bits, __half) {
  return __half22float2(*reinterpret_cast<const __half2*>(&bits));
}
__device__ uint32_t Pack2(float a, float b, __nv_bfloat16) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}
__device__ uint32_t Pack2(float a, float b, __half) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}

template <typename T>
__device__ void Unpack8(uint4 raw, float (&f)[8]) {
  const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    float2 x = Unpack2(w[e], T());
    f[2 * e] = x.x;
    f[2 * e + 1] = x.y;
  }
}

struct Problem {
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, causal;
  int head_dim;      // elements per row in memory, <= the kernel's D
  float scale_log2;  // log2(e) / sqrt(head_dim)
};

// Max and sum over the 16 lanes that share a query row.
__device__ float RowMax(float x) {
#pragma unroll
  for (int w = 8; w > 0; w /= 2)
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, w));
  return x;
}
__device__ float RowSum(float x) {
#pragma unroll
  for (int w = 8; w > 0; w /= 2) x += __shfl_xor_sync(0xffffffffu, x, w);
  return x;
}

template <typename T, int D>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm<D>)
    AttentionBaseline(Problem p, const T* __restrict__ q,
                      const T* __restrict__ k, const T* __restrict__ v,
                      T* __restrict__ o, float* __restrict__ lse) {
  static_assert(D % 64 == 0, "head_dim must be a multiple of 64");
  constexpr int kChunks = D / 8;   // 16-byte chunks per row
  constexpr int kDimGroups = D / 64;
  extern __shared__ __align__(16) float smem[];
  float* qt = smem;                // [D][kRows]
  float* kt = qt + D * kRows;      // [D][kKeys]
  float* vs = kt + D * kKeys;      // [kKeys][D]
  float* pt = vs + kKeys * D;      // [kKeys][kPStride]

  const int t = threadIdx.x;
  const int ty = t / 16, tx = t % 16;
  const int tile = p.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int q0 = tile * kRows;
  const int hq = blockIdx.y;
  const int b = blockIdx.z;
  const int hkv = hq / (p.heads_q / p.heads_kv);
  const int offset = p.seqlen_k - p.seqlen_q;
  const int hd = p.head_dim;
  const int64_t q_stride = int64_t(p.heads_q) * hd;   // between query rows
  const int64_t kv_stride = int64_t(p.heads_kv) * hd;  // between keys
  const T* q_base = q + (int64_t(b) * p.seqlen_q * p.heads_q + hq) * hd;
  const T* k_base = k + (int64_t(b) * p.seqlen_k * p.heads_kv + hkv) * hd;
  const T* v_base = v + (int64_t(b) * p.seqlen_k * p.heads_kv + hkv) * hd;
  const int valid_chunks = hd / 8;  // chunks past them are zero

  // Q^T, scaled; rows past seqlen_q are zero.
  for (int idx = t; idx < kRows * kChunks; idx += kThreads) {
    const int r = idx % kRows, chunk = idx / kRows;
    float f[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (q0 + r < p.seqlen_q && chunk < valid_chunks)
      Unpack8<T>(*reinterpret_cast<const uint4*>(
                     q_base + (q0 + r) * q_stride + chunk * 8),
                 f);
#pragma unroll
    for (int e = 0; e < 8; ++e)
      qt[(chunk * 8 + e) * kRows + r] = f[e] * p.scale_log2;
  }

  // Keys at or past key_end are seen by no row of this block.
  const int last_row = min(q0 + kRows, p.seqlen_q) - 1;
  const int key_end =
      p.causal ? max(0, min(p.seqlen_k, last_row + offset + 1)) : p.seqlen_k;

  float m[4], l[4];  // running max (base 2) and this thread's partial sum
  float acc[4][kDimGroups][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int x = 0; x < kDimGroups; ++x)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][x][e] = 0.f;
  }

  for (int k0 = 0; k0 < key_end; k0 += kKeys) {
    __syncthreads();  // the previous tile's readers are done
    for (int idx = t; idx < kKeys * kChunks; idx += kThreads) {
      const int c = idx % kKeys, chunk = idx / kKeys;
      float f[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (k0 + c < p.seqlen_k && chunk < valid_chunks)
        Unpack8<T>(*reinterpret_cast<const uint4*>(
                       k_base + (k0 + c) * kv_stride + chunk * 8),
                   f);
#pragma unroll
      for (int e = 0; e < 8; ++e) kt[(chunk * 8 + e) * kKeys + c] = f[e];
    }
    for (int idx = t; idx < kKeys * kChunks; idx += kThreads) {
      const int chunk = idx % kChunks, c = idx / kChunks;
      float f[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (k0 + c < p.seqlen_k && chunk < valid_chunks)
        Unpack8<T>(*reinterpret_cast<const uint4*>(
                       v_base + (k0 + c) * kv_stride + chunk * 8),
                   f);
      float4* dst = reinterpret_cast<float4*>(vs + c * D + chunk * 8);
      dst[0] = make_float4(f[0], f[1], f[2], f[3]);
      dst[1] = make_float4(f[4], f[5], f[6], f[7]);
    }
    __syncthreads();

    // S = Q K^T for this thread's 4 x 4 tile (already in base-2 units).
    float s[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) s[i][j] = 0.f;
#pragma unroll 8
    for (int d = 0; d < D; ++d) {
      const float4 a = *reinterpret_cast<const float4*>(qt + d * kRows + 4 * ty);
      const float4 c = *reinterpret_cast<const float4*>(kt + d * kKeys + 4 * tx);
      const float av[4] = {a.x, a.y, a.z, a.w};
      const float cv[4] = {c.x, c.y, c.z, c.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) s[i][j] += av[i] * cv[j];
    }

    // Mask, then the online softmax update of each row.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = q0 + 4 * ty + i;
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int col = k0 + 4 * tx + j;
        if (col >= p.seqlen_k || (p.causal && col > row + offset))
          s[i][j] = -INFINITY;
        mx = fmaxf(mx, s[i][j]);
      }
      const float m_new = fmaxf(m[i], RowMax(mx));
      // While a row has seen no key, m_new is -inf: subtract 0 instead so
      // that exp2(-inf - base) is 0 rather than NaN.
      const float base = m_new == -INFINITY ? 0.f : m_new;
      const float alpha = exp2f(m[i] - base);
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        s[i][j] = exp2f(s[i][j] - base);
        sum += s[i][j];
      }
      l[i] = l[i] * alpha + sum;
      m[i] = m_new;
#pragma unroll
      for (int x = 0; x < kDimGroups; ++x)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][x][e] *= alpha;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
      *reinterpret_cast<float4*>(pt + (4 * tx + j) * kPStride + 4 * ty) =
          make_float4(s[0][j], s[1][j], s[2][j], s[3][j]);
    __syncthreads();

    // O += P V.
#pragma unroll 4
    for (int c = 0; c < kKeys; ++c) {
      const float4 pc = *reinterpret_cast<const float4*>(pt + c * kPStride + 4 * ty);
      const float pv[4] = {pc.x, pc.y, pc.z, pc.w};
#pragma unroll
      for (int x = 0; x < kDimGroups; ++x) {
        const float4 vc =
            *reinterpret_cast<const float4*>(vs + c * D + 64 * x + 4 * tx);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          acc[i][x][0] += pv[i] * vc.x;
          acc[i][x][1] += pv[i] * vc.y;
          acc[i][x][2] += pv[i] * vc.z;
          acc[i][x][3] += pv[i] * vc.w;
        }
      }
    }
  }

  // Epilogue: O = acc / l, LSE = (m + log2 l) ln 2.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float total = RowSum(l[i]);
    const int row = q0 + 4 * ty + i;
    if (row >= p.seqlen_q) continue;
    const bool seen = total > 0.f;  // false only when the row sees no key
    const float inv = seen ? 1.f / total : 0.f;
    T* out = o + (int64_t(b) * p.seqlen_q + row) * q_stride + int64_t(hq) * hd;
#pragma unroll
    for (int x = 0; x < kDimGroups; ++x) {
      if (64 * x + 4 * tx >= hd) continue;  // a padding column
      uint2 packed;
      packed.x = Pack2(acc[i][x][0] * inv, acc[i][x][1] * inv, T());
      packed.y = Pack2(acc[i][x][2] * inv, acc[i][x][3] * inv, T());
      *reinterpret_cast<uint2*>(out + 64 * x + 4 * tx) = packed;
    }
    if (tx == 0)
      lse[(int64_t(b) * p.heads_q + hq) * p.seqlen_q + row] =
          seen ? (m[i] + log2f(total)) * kLn2 : -INFINITY;
  }
}

template <typename T, int D>
int Launch(const Problem& p, const kseek_launch_args* args) {
  const size_t smem =
      sizeof(float) * (D * kRows + D * kKeys + kKeys * D + kKeys * kPStride);
  auto kernel = AttentionBaseline<T, D>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           int(smem)) != cudaSuccess) {
    g_error = "cannot reserve shared memory for the baseline kernel";
    return 1;
  }
  const dim3 grid((p.seqlen_q + kRows - 1) / kRows, p.heads_q, p.batch);
  kernel<<<grid, kThreads, smem, (cudaStream_t)args->stream>>>(
      p, (const T*)args->tensors[0].data, (const T*)args->tensors[1].data,
      (const T*)args->tensors[2].data, (T*)args->tensors[3].data,
      (float*)args->tensors[4].data);
  if (cudaGetLastError() != cudaSuccess) {
    g_error = "baseline kernel launch failed";
    return 1;
  }
  return 0;
}

template <typename T>
int LaunchForDim(int head_dim, const Problem& p,
                 const kseek_launch_args* args) {
  if (head_dim >= 64 && head_dim <= 256 && head_dim % 8 == 0) {
    if (head_dim <= 64) return Launch<T, 64>(p, args);
    if (head_dim <= 128) return Launch<T, 128>(p, args);
    if (head_dim <= 192) return Launch<T, 192>(p, args);
    return Launch<T, 256>(p, args);
  }
  g_error = "head_dim must be a multiple of 8 from 64 to 256";
  return 1;
}

}  // namespace

extern "C" KSEEK_EXPORT const char* kseek_error_message(void) {
  return g_error;
}

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  if (args->abi_version != KSEEK_ABI_VERSION || args->num_tensors != 5) {
    g_error = "expected ABI version 1 and tensors q, k, v, o, lse";
    return 1;
  }
  for (int i = 0; i < 4; ++i) {
    if (reinterpret_cast<uintptr_t>(args->tensors[i].data) % 16 != 0) {
      g_error = "q, k, v and o must be 16-byte aligned";
      return 1;
    }
  }
  Problem p;
  p.batch = int(kseek_param_get(args, "batch", 0));
  p.seqlen_q = int(kseek_param_get(args, "seqlen_q", 0));
  p.seqlen_k = int(kseek_param_get(args, "seqlen_k", 0));
  p.heads_q = int(kseek_param_get(args, "heads_q", 0));
  p.heads_kv = int(kseek_param_get(args, "heads_kv", 0));
  p.causal = int(kseek_param_get(args, "causal", 0));
  const int head_dim = int(kseek_param_get(args, "head_dim", 0));
  const int64_t dtype = kseek_param_get(args, "dtype", -1);
  if (p.batch < 1 || p.seqlen_q < 1 || p.seqlen_k < 1 || p.heads_kv < 1 ||
      p.heads_q < 1 || p.heads_q % p.heads_kv != 0 || p.batch > 65535 ||
      p.heads_q > 65535) {
    g_error = "bad shape: need positive sizes and heads_kv dividing heads_q";
    return 1;
  }
  p.head_dim = head_dim;
  p.scale_log2 = kLog2e / sqrtf(float(head_dim));
  if (dtype == KSEEK_BF16) return LaunchForDim<__nv_bfloat16>(head_dim, p, args);
  if (dtype == KSEEK_F16) return LaunchForDim<__half>(head_dim, p, args);
  g_error = "dtype must be bf16 or f16";
  return 1;
}
