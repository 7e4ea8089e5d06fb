// Optimised row softmax for the CUDA targets (sm_90a, sm_100a).
//
// Design
//   * A row is owned by a group of threads: 8, 16 or 32 lanes of a warp for
//     rows of up to 256 packets, a whole block (128..1024 threads) above.
//     A packet is 16 bytes: 4 f32 or 8 bf16 elements.
//   * The row is split into a head (elements before the first 16-byte
//     boundary), a body of whole packets, and a tail; head and tail have
//     fewer than one packet each and are held one element per lane. A row
//     start need not be aligned (cols = 1000 in bf16 is a 2000-byte stride).
//   * Each thread loads its kPackets packets with 16-byte loads and keeps
//     them in registers, so x is read from memory exactly once.
//   * Max and sum are reduced together: each thread computes its local max m
//     and s = sum exp(x - m); the (max, sum) pairs are then merged with
//     shuffles (and shared memory across warps), rescaling the smaller
//     side's sum. One reduction instead of two.
//   * Exponentials are computed as exp2(x * log2(e) - C) with one fma, where
//     C = M * log2(e) is the same rounded value for the whole row: its
//     rounding error scales numerator and denominator alike and cancels.
//     (Partial sums use the thread's own scaled max and are rescaled to C
//     by the merge.)
//   * All math in f32; bf16 inputs are widened exactly and outputs rounded
//     to nearest even (__floats2bfloat162_rn).
//   * Rows longer than 8192 packets (f32 beyond 32768 columns), and x/y
//     pointers whose offsets within a 16-byte line differ, take a streaming
//     kernel: one block per row, online max/sum over the row, then a second
//     read (mostly from L2) to write y.
//
// Measured (kseek eval, one H200, sm_90a): 32768 x 4096 f32 in 0.268 ms
// (4.0 TB/s of the 2 * rows * cols * size bytes), bf16 in 0.144 ms
// (3.7 TB/s), 4096 x 32000 f32 in 0.266 ms (3.9 TB/s); 26x the baseline
// (geometric mean over the task's 19 GPU scenarios).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernelseek/abi.h"

namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kWarp = 32;
constexpr int kPacketBytes = 16;
constexpr int kMaxRegisterPackets = 8192;  // 1024 threads x 8 packets
constexpr int kStreamingThreads = 1024;

// ---- Element access: packets and single elements -------------------------

template <typename T>
struct Elements;

template <>
struct Elements<float> {
  static constexpr int kPerPacket = 4;
  __device__ static float Load(const float* p) { return __ldg(p); }
  __device__ static void Store(float* p, float v) { *p = v; }
  __device__ static void Unpack(const uint4& raw, float (&v)[kPerPacket]) {
    v[0] = __uint_as_float(raw.x);
    v[1] = __uint_as_float(raw.y);
    v[2] = __uint_as_float(raw.z);
    v[3] = __uint_as_float(raw.w);
  }
  __device__ static uint4 Pack(const float (&v)[kPerPacket]) {
    return make_uint4(__float_as_uint(v[0]), __float_as_uint(v[1]), __float_as_uint(v[2]),
                      __float_as_uint(v[3]));
  }
};

template <>
struct Elements<__nv_bfloat16> {
  static constexpr int kPerPacket = 8;
  __device__ static float Load(const __nv_bfloat16* p) { return __bfloat162float(__ldg(p)); }
  __device__ static void Store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
  // A 32-bit word holds two bf16: element 2i in the low half.
  __device__ static void Unpack(const uint4& raw, float (&v)[kPerPacket]) {
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[2 * i] = __uint_as_float(words[i] << 16);
      v[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
    }
  }
  __device__ static uint32_t PackPair(float lo, float hi) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&pair);
  }
  __device__ static uint4 Pack(const float (&v)[kPerPacket]) {
    return make_uint4(PackPair(v[0], v[1]), PackPair(v[2], v[3]), PackPair(v[4], v[5]),
                      PackPair(v[6], v[7]));
  }
};

// ---- Row geometry ---------------------------------------------------------

struct RowSplit {
  int head;     // elements before the first 16-byte boundary
  int packets;  // whole packets after the head
  int tail;     // elements after the last packet
};

template <typename T>
__device__ RowSplit SplitRow(const T* row, int cols) {
  constexpr int kN = Elements<T>::kPerPacket;
  const int misaligned = static_cast<int>(reinterpret_cast<uintptr_t>(row) % kPacketBytes) /
                         static_cast<int>(sizeof(T));
  RowSplit split;
  split.head = min(misaligned == 0 ? 0 : kN - misaligned, cols);
  split.packets = (cols - split.head) / kN;
  split.tail = cols - split.head - split.packets * kN;
  return split;
}

// ---- (max, sum) pairs -----------------------------------------------------

// A partial softmax normaliser in base-2 units: the largest x*log2(e) seen
// (`scaled_max`) and sum exp2(x*log2(e) - scaled_max). Empty: (-inf, 0).
struct Partial {
  float scaled_max;
  float sum;
};

__device__ Partial Merge(Partial a, Partial b) {
  const float m = fmaxf(a.scaled_max, b.scaled_max);
  if (m == -INFINITY) return a;  // both empty
  return {m, a.sum * exp2f(a.scaled_max - m) + b.sum * exp2f(b.scaled_max - m)};
}

// Merges across aligned groups of `width` lanes (a power of two <= 32).
template <int kWidth>
__device__ Partial MergeLanes(Partial p) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) {
    Partial other;
    other.scaled_max = __shfl_xor_sync(0xffffffffu, p.scaled_max, offset);
    other.sum = __shfl_xor_sync(0xffffffffu, p.sum, offset);
    p = Merge(p, other);
  }
  return p;
}

// Merges across the whole block; every thread gets the result.
template <int kThreads>
__device__ Partial MergeBlock(Partial p) {
  constexpr int kWarps = kThreads / kWarp;
  __shared__ Partial per_warp[kWarps];
  p = MergeLanes<kWarp>(p);
  const int lane = threadIdx.x % kWarp;
  if (lane == 0) per_warp[threadIdx.x / kWarp] = p;
  __syncthreads();
  p = lane < kWarps ? per_warp[lane] : Partial{-INFINITY, 0.0f};
  return MergeLanes<kWarp>(p);
}

// ---- Register-resident kernel ---------------------------------------------

// kGroup threads per row (kGroup <= 32: a part of a warp, several rows per
// block; kGroup == kThreads: one row per block). Each thread holds up to
// kPackets packets; the dispatcher guarantees kGroup * kPackets >= packets.
template <typename T, int kThreads, int kGroup, int kPackets>
__global__ void __launch_bounds__(kThreads)
    SoftmaxInRegisters(const T* __restrict__ x, T* __restrict__ y, int rows, int cols) {
  using E = Elements<T>;
  constexpr int kN = E::kPerPacket;
  static_assert(kGroup >= kN, "head and tail need one lane per element");
  static_assert(kGroup <= kWarp || kGroup == kThreads, "group shape");

  const int lane = threadIdx.x % kGroup;
  const int64_t grid_row =
      static_cast<int64_t>(blockIdx.x) * (kThreads / kGroup) + threadIdx.x / kGroup;
  // Surplus groups of the last block redo the last row and skip the stores,
  // so that every lane takes part in the shuffles.
  const bool owns_row = grid_row < rows;
  const int64_t row = owns_row ? grid_row : rows - 1;
  const T* in = x + row * cols;
  T* out = y + row * cols;
  const RowSplit split = SplitRow(in, cols);
  const uint4* in_packets = reinterpret_cast<const uint4*>(in + split.head);
  uint4* out_packets = reinterpret_cast<uint4*>(out + split.head);
  const int tail_start = split.head + split.packets * kN;

  const bool has_head = lane < split.head;
  const bool has_tail = lane < split.tail;
  const float head = has_head ? E::Load(in + lane) : -INFINITY;
  const float tail = has_tail ? E::Load(in + tail_start + lane) : -INFINITY;
  uint4 raw[kPackets];
#pragma unroll
  for (int k = 0; k < kPackets; ++k) {
    const int p = lane + k * kGroup;
    if (p < split.packets) raw[k] = __ldg(in_packets + p);
  }

  float local_max = fmaxf(head, tail);
#pragma unroll
  for (int k = 0; k < kPackets; ++k) {
    if (lane + k * kGroup < split.packets) {
      float v[kN];
      E::Unpack(raw[k], v);
#pragma unroll
      for (int i = 0; i < kN; ++i) local_max = fmaxf(local_max, v[i]);
    }
  }
  Partial partial{local_max * kLog2e, 0.0f};
  if (local_max != -INFINITY) {
    const float c = partial.scaled_max;
    if (has_head) partial.sum += exp2f(fmaf(head, kLog2e, -c));
    if (has_tail) partial.sum += exp2f(fmaf(tail, kLog2e, -c));
#pragma unroll
    for (int k = 0; k < kPackets; ++k) {
      if (lane + k * kGroup < split.packets) {
        float v[kN];
        E::Unpack(raw[k], v);
#pragma unroll
        for (int i = 0; i < kN; ++i) partial.sum += exp2f(fmaf(v[i], kLog2e, -c));
      }
    }
  }

  Partial row_total;
  if constexpr (kGroup == kThreads) {
    row_total = MergeBlock<kThreads>(partial);
  } else {
    row_total = MergeLanes<kGroup>(partial);
  }
  if (!owns_row) return;

  const float c = row_total.scaled_max;
  const float inv_sum = 1.0f / row_total.sum;
  if (has_head) E::Store(out + lane, exp2f(fmaf(head, kLog2e, -c)) * inv_sum);
  if (has_tail) {
    E::Store(out + tail_start + lane, exp2f(fmaf(tail, kLog2e, -c)) * inv_sum);
  }
#pragma unroll
  for (int k = 0; k < kPackets; ++k) {
    const int p = lane + k * kGroup;
    if (p < split.packets) {
      float v[kN];
      E::Unpack(raw[k], v);
#pragma unroll
      for (int i = 0; i < kN; ++i) v[i] = exp2f(fmaf(v[i], kLog2e, -c)) * inv_sum;
      out_packets[p] = E::Pack(v);
    }
  }
}

// ---- Streaming kernel -----------------------------------------------------

__device__ Partial Absorb(Partial p, float v) {
  const float scaled = v * kLog2e;
  if (scaled > p.scaled_max) {
    p.sum *= exp2f(p.scaled_max - scaled);
    p.scaled_max = scaled;
  }
  p.sum += exp2f(fmaf(v, kLog2e, -p.scaled_max));
  return p;
}

// One block per row, any length. With kVectorized the body moves in
// 16-byte packets (x and y must share their offset within a 16-byte line);
// without it every element is a scalar access.
template <typename T, bool kVectorized>
__global__ void __launch_bounds__(kStreamingThreads)
    SoftmaxStreaming(const T* __restrict__ x, T* __restrict__ y, int cols) {
  using E = Elements<T>;
  constexpr int kN = E::kPerPacket;
  const T* in = x + static_cast<int64_t>(blockIdx.x) * cols;
  T* out = y + static_cast<int64_t>(blockIdx.x) * cols;
  RowSplit split{cols, 0, 0};
  if constexpr (kVectorized) split = SplitRow(in, cols);
  const uint4* in_packets = reinterpret_cast<const uint4*>(in + split.head);
  uint4* out_packets = reinterpret_cast<uint4*>(out + split.head);
  const int tail_start = split.head + split.packets * kN;

  Partial partial{-INFINITY, 0.0f};
  for (int i = threadIdx.x; i < split.head; i += kStreamingThreads) {
    partial = Absorb(partial, E::Load(in + i));
  }
  for (int p = threadIdx.x; p < split.packets; p += kStreamingThreads) {
    float v[kN];
    E::Unpack(__ldg(in_packets + p), v);
    float packet_max = v[0];
#pragma unroll
    for (int i = 1; i < kN; ++i) packet_max = fmaxf(packet_max, v[i]);
    Partial packet{packet_max * kLog2e, 0.0f};
#pragma unroll
    for (int i = 0; i < kN; ++i) packet.sum += exp2f(fmaf(v[i], kLog2e, -packet.scaled_max));
    partial = Merge(partial, packet);
  }
  for (int i = threadIdx.x; i < split.tail; i += kStreamingThreads) {
    partial = Absorb(partial, E::Load(in + tail_start + i));
  }
  const Partial row_total = MergeBlock<kStreamingThreads>(partial);

  const float c = row_total.scaled_max;
  const float inv_sum = 1.0f / row_total.sum;
  for (int i = threadIdx.x; i < split.head; i += kStreamingThreads) {
    E::Store(out + i, exp2f(fmaf(E::Load(in + i), kLog2e, -c)) * inv_sum);
  }
  for (int p = threadIdx.x; p < split.packets; p += kStreamingThreads) {
    float v[kN];
    E::Unpack(__ldg(in_packets + p), v);
#pragma unroll
    for (int i = 0; i < kN; ++i) v[i] = exp2f(fmaf(v[i], kLog2e, -c)) * inv_sum;
    out_packets[p] = E::Pack(v);
  }
  for (int i = threadIdx.x; i < split.tail; i += kStreamingThreads) {
    E::Store(out + tail_start + i, exp2f(fmaf(E::Load(in + tail_start + i), kLog2e, -c)) * inv_sum);
  }
}

// ---- Dispatch -------------------------------------------------------------

template <typename T, int kThreads, int kGroup, int kPackets>
void LaunchInRegisters(const T* x, T* y, int rows, int cols, cudaStream_t stream) {
  constexpr int kRowsPerBlock = kThreads / kGroup;
  const unsigned blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  SoftmaxInRegisters<T, kThreads, kGroup, kPackets>
      <<<blocks, kThreads, 0, stream>>>(x, y, rows, cols);
}

template <typename T>
void Launch(const T* x, T* y, int rows, int cols, cudaStream_t stream) {
  constexpr int kN = Elements<T>::kPerPacket;
  const bool same_offset = reinterpret_cast<uintptr_t>(x) % kPacketBytes ==
                           reinterpret_cast<uintptr_t>(y) % kPacketBytes;
  // The most packets any row can hold (a row with no head).
  const int packets = cols / kN;
  if (!same_offset) {
    SoftmaxStreaming<T, false><<<rows, kStreamingThreads, 0, stream>>>(x, y, cols);
  } else if (packets <= 8) {
    LaunchInRegisters<T, 256, 8, 1>(x, y, rows, cols, stream);
  } else if (packets <= 16) {
    LaunchInRegisters<T, 256, 16, 1>(x, y, rows, cols, stream);
  } else if (packets <= 32) {
    LaunchInRegisters<T, 256, 32, 1>(x, y, rows, cols, stream);
  } else if (packets <= 64) {
    LaunchInRegisters<T, 256, 32, 2>(x, y, rows, cols, stream);
  } else if (packets <= 128) {
    LaunchInRegisters<T, 256, 32, 4>(x, y, rows, cols, stream);
  } else if (packets <= 256) {
    LaunchInRegisters<T, 256, 32, 8>(x, y, rows, cols, stream);
  } else if (packets <= 512) {
    LaunchInRegisters<T, 128, 128, 4>(x, y, rows, cols, stream);
  } else if (packets <= 1024) {
    LaunchInRegisters<T, 256, 256, 4>(x, y, rows, cols, stream);
  } else if (packets <= 2048) {
    LaunchInRegisters<T, 256, 256, 8>(x, y, rows, cols, stream);
  } else if (packets <= 4096) {
    LaunchInRegisters<T, 512, 512, 8>(x, y, rows, cols, stream);
  } else if (packets <= kMaxRegisterPackets) {
    LaunchInRegisters<T, 1024, 1024, 8>(x, y, rows, cols, stream);
  } else {
    SoftmaxStreaming<T, true><<<rows, kStreamingThreads, 0, stream>>>(x, y, cols);
  }
}

}  // namespace

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  if (args->num_tensors != 2) return 1;
  const int64_t rows = kseek_param_get(args, "rows", 0);
  const int64_t cols = kseek_param_get(args, "cols", 0);
  const int64_t dtype = kseek_param_get(args, "dtype", -1);
  if (rows <= 0 || cols <= 0 || rows > INT32_MAX || cols > INT32_MAX) return 1;
  const cudaStream_t stream = static_cast<cudaStream_t>(args->stream);
  void* x = args->tensors[0].data;
  void* y = args->tensors[1].data;
  switch (dtype) {
    case KSEEK_F32:
      Launch(static_cast<const float*>(x), static_cast<float*>(y), static_cast<int>(rows),
             static_cast<int>(cols), stream);
      break;
    case KSEEK_BF16:
      Launch(static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(y),
             static_cast<int>(rows), static_cast<int>(cols), stream);
      break;
    default:
      return 1;
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
