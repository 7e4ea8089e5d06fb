// Optimised row softmax for the host target, in GCC/Clang vector types
// as wide as the machine's SIMD registers (16 floats with AVX-512, else 8),
// so that g++ -O3 -march=native maps each lane operation to one
// instruction.
//
// Design
//   * One read pass computes max and sum together (online softmax) in
//     kLanes independent lanes: lane l sees elements l, l + kLanes, ...
//     The lanes are one vector (Vec), updated element-wise: no
//     reassociation of floating-point math beyond the lane split.
//   * The pass moves in tiles of kTile = kChunks * kLanes elements: the tile's
//     per-lane max is found first, so each lane rescales its running sum
//     once per tile (one extra exponential per kChunks elements). The last
//     partial tile is padded with the lowest float, whose terms vanish.
//   * A second pass writes y = exp(x - max) / sum, a vector at a time.
//   * Rows shorter than one tile take three short scalar passes instead.
//   * exp is a branch-free 2^t: t = n + f with n = round(t), 2^f by its
//     degree-7 Taylor polynomial on |f| <= 1/2 (truncation error < 1e-8),
//     2^n built in the exponent bits. Written here because libm's expf
//     does not vectorise without -ffast-math.
//   * bf16 values are uint16_t bit patterns (the high half of an f32),
//     widened by a shift and rounded to nearest even on output.
//   * Earlier this file wrote the lanes as plain float arrays and left the
//     vectorising to g++: with AVX-512 it did (16 lanes, one register), with
//     AVX2 it kept the exponentials of the tile loop scalar and the kernel
//     ran 5-7x slower, under the task's goal on such a host.
//
// Measured (kseek eval --task kernels/softmax --target host --max-samples 3
// --max-seconds 0.1, four runs, one AMD EPYC core with AVX2 and no
// AVX-512, g++ 12): 11/11 correct, geometric mean 3.05x to 3.35x over the
// baseline; 1024 x 1000 f32 in 1.27-1.69 ms against 10.7-14.5 ms, 6.1-11.3x
// on the large scenarios, 1.0-1.9x on the one- to 33-column ones. The
// array version there: 1.47x, under the goal; on an AVX-512 EPYC it had 3.6x.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernelseek/abi.h"

namespace {

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLowest = -std::numeric_limits<float>::max();
// One SIMD register of floats: 16 with AVX-512, else 8 (AVX2's ymm). A
// vector wider than the machine's registers is lowered lane by lane in
// places (g++ 12 converted 16 floats to integers one at a time on AVX2,
// 8 ms on 1024 x 1000 against 1.4 ms with 8 lanes).
#if defined(__AVX512F__)
constexpr int kLanes = 16;
#else
constexpr int kLanes = 8;
#endif
constexpr int kTile = 64;
constexpr int kChunks = kTile / kLanes;

// kLanes floats, and the same lanes as integers (comparisons give 0 or -1
// per lane; a cast between the two reinterprets the bits).
typedef float Vec __attribute__((vector_size(4 * kLanes)));
typedef int32_t IVec __attribute__((vector_size(4 * kLanes)));
typedef uint32_t UVec __attribute__((vector_size(4 * kLanes)));
typedef uint16_t HVec __attribute__((vector_size(2 * kLanes)));

inline Vec Splat(float x) { return Vec{} + x; }
inline Vec Max(Vec a, Vec b) { return a > b ? a : b; }

// 2^f for |f| <= 1/2, on a float or on every lane of a Vec: the Taylor
// polynomial of e^(f ln 2), coefficients (ln 2)^k / k!.
template <typename V>
inline V Exp2Fraction(V f) {
  V p = V{} + 1.5252733804059838e-05f;
  p = p * f + 1.5403530393381606e-04f;
  p = p * f + 1.3333558146428441e-03f;
  p = p * f + 9.6181291076284772e-03f;
  p = p * f + 5.5504108664821576e-02f;
  p = p * f + 2.4022650695910071e-01f;
  p = p * f + 6.9314718055994531e-01f;
  return p * f + 1.0f;
}

// 2^t for t <= 0; 0 when t < -126.
inline float Exp2NonPositive(float t) {
  const bool underflow = t < -126.0f;
  t = underflow ? -126.0f : t;
  // Adding and subtracting 1.5 * 2^23 rounds to the nearest integer.
  const float n = (t + 12582912.0f) - 12582912.0f;
  const float f = t - n;
  const float p = Exp2Fraction(f);
  const int32_t exponent_bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &exponent_bits, sizeof(scale));
  return underflow ? 0.0f : p * scale;
}

// The same 2^t on every lane; the underflowing lanes masked to 0.
inline Vec Exp2NonPositive(Vec t) {
  const IVec keep = t >= Splat(-126.0f);
  t = Max(t, Splat(-126.0f));
  const Vec n = (t + 12582912.0f) - 12582912.0f;
  const Vec f = t - n;
  const Vec p = Exp2Fraction(f);
  const IVec exponent_bits = (__builtin_convertvector(n, IVec) + 127) << 23;
  return (Vec)((IVec)(p * (Vec)exponent_bits) & keep);
}

inline float ToFloat(float v) { return v; }
inline float ToFloat(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

inline void FromFloat(float v, float* out) { *out = v; }
inline void FromFloat(float v, uint16_t* out) {
  uint32_t wide;
  std::memcpy(&wide, &v, sizeof(wide));
  // Round to nearest, ties to even; a NaN stays a (quiet) NaN.
  const uint32_t rounded = (wide + 0x7fffu + ((wide >> 16) & 1u)) >> 16;
  const bool nan = (wide & 0x7fffffffu) > 0x7f800000u;
  *out = static_cast<uint16_t>(nan ? (wide >> 16) | 0x40u : rounded);
}

// kLanes values from `in`, widened to float.
inline Vec Load(const float* in) {
  Vec v;
  std::memcpy(&v, in, sizeof(v));
  return v;
}
inline Vec Load(const uint16_t* in) {
  HVec h;
  std::memcpy(&h, in, sizeof(h));
  return (Vec)(__builtin_convertvector(h, UVec) << 16);
}

inline void Store(Vec v, float* out) { std::memcpy(out, &v, sizeof(v)); }
inline void Store(Vec v, uint16_t* out) {
  const UVec wide = (UVec)v;
  // Round to nearest, ties to even; a NaN stays a (quiet) NaN.
  const UVec rounded = (wide + 0x7fffu + ((wide >> 16) & 1u)) >> 16;
  const UVec nan = (UVec)((wide & 0x7fffffffu) > 0x7f800000u);
  const UVec bits = (((wide >> 16) | 0x40u) & nan) | (rounded & ~nan);
  const HVec h = __builtin_convertvector(bits, HVec);
  std::memcpy(out, &h, sizeof(h));
}

// Running per-lane maxima and sums: sum[l] = sum exp(x - max[l]) over the
// elements lane l has seen.
struct Lanes {
  Vec max;
  Vec sum;
};

// Folds one tile of kTile values into the lanes.
template <typename T>
inline void AbsorbTile(const T* in, Lanes* lanes) {
  Vec chunk[kChunks];
  for (int c = 0; c < kChunks; ++c) chunk[c] = Load(in + c * kLanes);
  Vec tile_max = lanes->max;
  for (int c = 0; c < kChunks; ++c) tile_max = Max(tile_max, chunk[c]);
  Vec sum = lanes->sum * Exp2NonPositive((lanes->max - tile_max) * kLog2e);
  for (int c = 0; c < kChunks; ++c) sum += Exp2NonPositive((chunk[c] - tile_max) * kLog2e);
  lanes->max = tile_max;
  lanes->sum = sum;
}

// Rows shorter than a tile: three short passes over the (cached) row cost
// fewer exponentials than one padded tile.
template <typename T>
void SoftmaxShortRow(const T* in, T* out, int64_t cols) {
  float row_max = kLowest;
  for (int64_t i = 0; i < cols; ++i) row_max = std::max(row_max, ToFloat(in[i]));
  float row_sum = 0.0f;
  for (int64_t i = 0; i < cols; ++i) {
    row_sum += Exp2NonPositive((ToFloat(in[i]) - row_max) * kLog2e);
  }
  const float inv_sum = 1.0f / row_sum;
  for (int64_t i = 0; i < cols; ++i) {
    FromFloat(Exp2NonPositive((ToFloat(in[i]) - row_max) * kLog2e) * inv_sum, &out[i]);
  }
}

template <typename T>
void SoftmaxRow(const T* in, T* out, int64_t cols) {
  if (cols < kTile) {
    SoftmaxShortRow(in, out, cols);
    return;
  }
  Lanes lanes = {Splat(kLowest), Splat(0.0f)};
  int64_t j = 0;
  for (; j + kTile <= cols; j += kTile) AbsorbTile(in + j, &lanes);
  if (j < cols) {
    float tile[kTile];
    const int64_t rest = cols - j;
    for (int i = 0; i < kTile; ++i) tile[i] = i < rest ? ToFloat(in[j + i]) : kLowest;
    AbsorbTile(tile, &lanes);
  }

  // A lane that saw only padding has max == kLowest and drops out here.
  float row_max = kLowest;
  for (int l = 0; l < kLanes; ++l) row_max = std::max(row_max, lanes.max[l]);
  const Vec scaled = lanes.sum * Exp2NonPositive((lanes.max - row_max) * kLog2e);
  float row_sum = 0.0f;
  for (int l = 0; l < kLanes; ++l) row_sum += scaled[l];
  const float inv_sum = 1.0f / row_sum;
  int64_t i = 0;
  for (; i + kLanes <= cols; i += kLanes) {
    Store(Exp2NonPositive((Load(in + i) - row_max) * kLog2e) * inv_sum, out + i);
  }
  for (; i < cols; ++i) {
    FromFloat(Exp2NonPositive((ToFloat(in[i]) - row_max) * kLog2e) * inv_sum, &out[i]);
  }
}

template <typename T>
void Softmax(const T* x, T* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) SoftmaxRow(x + r * cols, y + r * cols, cols);
}

}  // namespace

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  if (args->num_tensors != 2) return 1;
  const int64_t rows = kseek_param_get(args, "rows", 0);
  const int64_t cols = kseek_param_get(args, "cols", 0);
  const int64_t dtype = kseek_param_get(args, "dtype", -1);
  if (rows <= 0 || cols <= 0) return 1;
  void* x = args->tensors[0].data;
  void* y = args->tensors[1].data;
  switch (dtype) {
    case KSEEK_F32:
      Softmax(static_cast<const float*>(x), static_cast<float*>(y), rows, cols);
      return 0;
    case KSEEK_BF16:
      Softmax(static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y), rows, cols);
      return 0;
    default:
      return 1;
  }
}
