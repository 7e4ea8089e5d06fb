// Reference attention forward (flash_attention_fwd): the task's definition
// of the right answer, written to be read, not to be fast.
//
// For each query row the softmax is computed the textbook way, in fp32:
//   pass 1: m = max_j s_ij over the keys the row sees,
//   pass 2: l = sum_j exp(s_ij - m) and acc = sum_j exp(s_ij - m) * v_j,
//   then    o = acc / l, lse = m + log(l)  (natural log),
// with s_ij = (q_i . k_j) / sqrt(head_dim) accumulated in fp32. There is no
// online rescaling; both passes compute s_ij with the same code in the same
// order, so the second sees exactly the scores the first took the max of.
// A row that sees no key gets o = 0 and lse = -inf.
//
// Layout: q, o [batch, seqlen_q, heads_q, head_dim]; k, v [batch, seqlen_k,
// heads_kv, head_dim]; lse [batch, heads_q, seqlen_q] (f32). Query head h
// reads key/value head h / (heads_q / heads_kv). Causal masking is aligned
// bottom-right: row i sees key j when j <= i + seqlen_k - seqlen_q.
//
// Work split: one block of 256 threads per (32 query rows, query head,
// batch). Tiles of 32 keys (and values) are staged in shared memory as fp32;
// thread t owns query row t / 8 of the tile, scores of keys t % 8 + 8 * c,
// and output dims t % 8 + 8 * c. Shared rows are padded by one float so the
// column reads of a warp fall into different banks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>

#include "kernelseek/abi.h"

namespace {

constexpr int kRows = 32;      // query rows per block
constexpr int kKeys = 32;      // keys per shared-memory tile
constexpr int kThreads = 256;  // 8 threads per query row
constexpr int kLanesPerRow = kThreads / kRows;

const char* g_error = "";

__device__ float ToFloat(__half x) { return __half2float(x); }
__device__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ T FromFloat(float x);
template <>
__device__ __half FromFloat<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

struct Problem {
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, causal;
  int head_dim;  // a multiple of kLanesPerRow, at most kMaxHeadDim
  float scale;
};

constexpr int kMaxHeadDim = 256;
constexpr int kMaxDimsPerLane = kMaxHeadDim / kLanesPerRow;

// Sum or max over the kLanesPerRow consecutive lanes that share a row.
__device__ float RowMax(float x) {
  for (int w = kLanesPerRow / 2; w > 0; w /= 2)
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, w));
  return x;
}
__device__ float RowSum(float x) {
  for (int w = kLanesPerRow / 2; w > 0; w /= 2)
    x += __shfl_xor_sync(0xffffffffu, x, w);
  return x;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    AttentionReference(Problem p, const T* __restrict__ q,
                       const T* __restrict__ k, const T* __restrict__ v,
                       T* __restrict__ o, float* __restrict__ lse) {
  const int D = p.head_dim;
  const int kPad = D + 1;
  extern __shared__ float smem[];
  float* qs = smem;                 // [kRows][D + 1]
  float* ks = qs + kRows * kPad;    // [kKeys][D + 1]
  float* vs = ks + kKeys * kPad;    // [kKeys][D + 1]
  float* ps = vs + kKeys * kPad;    // [kRows][kKeys + 1]

  const int t = threadIdx.x;
  const int row = t / kLanesPerRow;   // row of the tile this thread owns
  const int lane = t % kLanesPerRow;  // its key / dim offset
  const int q0 = blockIdx.x * kRows;
  const int hq = blockIdx.y;
  const int b = blockIdx.z;
  const int hkv = hq / (p.heads_q / p.heads_kv);
  const int i = q0 + row;  // this thread's query row
  const int offset = p.seqlen_k - p.seqlen_q;

  // Row r of q and key j of k/v in global memory.
  auto q_row = [&](int r) {
    return q + ((int64_t(b) * p.seqlen_q + r) * p.heads_q + hq) * D;
  };
  auto kv_row = [&](const T* base, int j) {
    return base + ((int64_t(b) * p.seqlen_k + j) * p.heads_kv + hkv) * D;
  };
  auto sees = [&](int j) {
    return i < p.seqlen_q && j < p.seqlen_k && (!p.causal || j <= i + offset);
  };

  for (int e = t; e < kRows * D; e += kThreads) {
    const int r = e / D, d = e % D;
    qs[r * kPad + d] = q0 + r < p.seqlen_q ? ToFloat(q_row(q0 + r)[d]) : 0.f;
  }
  // Keys at or past `key_end` are seen by no row of this block.
  const int last_row = min(q0 + kRows, p.seqlen_q) - 1;
  const int key_end =
      p.causal ? max(0, min(p.seqlen_k, last_row + offset + 1)) : p.seqlen_k;

  auto load_tile = [&](float* dst, const T* base, int j0) {
    for (int e = t; e < kKeys * D; e += kThreads) {
      const int c = e / D, d = e % D;
      dst[c * kPad + d] =
          j0 + c < p.seqlen_k ? ToFloat(kv_row(base, j0 + c)[d]) : 0.f;
    }
  };
  auto score = [&](int c) {
    float s = 0.f;
    for (int d = 0; d < D; ++d) s += qs[row * kPad + d] * ks[c * kPad + d];
    return s * p.scale;
  };

  // Pass 1: the row maximum.
  float m = -INFINITY;
  for (int j0 = 0; j0 < key_end; j0 += kKeys) {
    __syncthreads();
    load_tile(ks, k, j0);
    __syncthreads();
    for (int c = lane; c < kKeys; c += kLanesPerRow)
      if (sees(j0 + c)) m = fmaxf(m, score(c));
  }
  m = RowMax(m);

  // Pass 2: the denominator and the weighted sum of values.
  // acc[x] is output dim lane + x * kLanesPerRow, x < dims_per_lane (the
  // array is sized for the largest head_dim; unrolled loops with a bound
  // check keep it in registers).
  const int dims_per_lane = D / kLanesPerRow;
  float acc[kMaxDimsPerLane];
#pragma unroll
  for (int x = 0; x < kMaxDimsPerLane; ++x) acc[x] = 0.f;
  float l = 0.f;
  for (int j0 = 0; j0 < key_end; j0 += kKeys) {
    __syncthreads();
    load_tile(ks, k, j0);
    load_tile(vs, v, j0);
    __syncthreads();
    for (int c = lane; c < kKeys; c += kLanesPerRow) {
      const float pj = sees(j0 + c) ? expf(score(c) - m) : 0.f;
      ps[row * (kKeys + 1) + c] = pj;
      l += pj;
    }
    __syncthreads();
    for (int c = 0; c < kKeys; ++c) {
      const float pj = ps[row * (kKeys + 1) + c];
#pragma unroll
      for (int x = 0; x < kMaxDimsPerLane; ++x)
        if (x < dims_per_lane)
          acc[x] += pj * vs[c * kPad + lane + x * kLanesPerRow];
    }
  }
  l = RowSum(l);

  if (i >= p.seqlen_q) return;
  T* out = o + ((int64_t(b) * p.seqlen_q + i) * p.heads_q + hq) * D;
  const bool seen = l > 0.f;  // false only when the row sees no key
#pragma unroll
  for (int x = 0; x < kMaxDimsPerLane; ++x)
    if (x < dims_per_lane)
      out[lane + x * kLanesPerRow] = FromFloat<T>(seen ? acc[x] / l : 0.f);
  if (lane == 0)
    lse[(int64_t(b) * p.heads_q + hq) * p.seqlen_q + i] =
        seen ? m + logf(l) : -INFINITY;
}

template <typename T>
int Launch(const Problem& p, const kseek_launch_args* args) {
  const size_t smem = sizeof(float) * ((kRows + 2 * kKeys) * (p.head_dim + 1) +
                                       kRows * (kKeys + 1));
  auto kernel = AttentionReference<T>;
  // Reserved for the largest head_dim once, so that any call fits.
  static const cudaError_t reserved = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
      int(sizeof(float) * ((kRows + 2 * kKeys) * (kMaxHeadDim + 1) +
                           kRows * (kKeys + 1))));
  if (reserved != cudaSuccess) {
    g_error = "cannot reserve shared memory for the reference kernel";
    return 1;
  }
  const dim3 grid((p.seqlen_q + kRows - 1) / kRows, p.heads_q, p.batch);
  kernel<<<grid, kThreads, smem, (cudaStream_t)args->stream>>>(
      p, (const T*)args->tensors[0].data, (const T*)args->tensors[1].data,
      (const T*)args->tensors[2].data, (T*)args->tensors[3].data,
      (float*)args->tensors[4].data);
  if (cudaGetLastError() != cudaSuccess) {
    g_error = "reference kernel launch failed";
    return 1;
  }
  return 0;
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
  if (head_dim < 64 || head_dim > kMaxHeadDim || head_dim % 8 != 0) {
    g_error = "head_dim must be a multiple of 8 from 64 to 256";
    return 1;
  }
  p.head_dim = head_dim;
  p.scale = 1.0f / sqrtf(float(head_dim));
  if (dtype == KSEEK_BF16) return Launch<__nv_bfloat16>(p, args);
  if (dtype == KSEEK_F16) return Launch<__half>(p, args);
  g_error = "dtype must be bf16 or f16";
  return 1;
}
