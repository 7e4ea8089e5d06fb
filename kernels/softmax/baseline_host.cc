// Baseline row softmax for the host target: the naive kernel a host session
// starts from and is timed against.
//
// Plain loops in float, three passes per row: max, sum of exp(x - max),
// then y = exp(x - max) / sum. Calls to std::exp keep the compiler from
// vectorising the two exponential passes. bf16 values are uint16_t bit
// patterns (the high half of an f32), rounded to nearest even on output.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernelseek/abi.h"

namespace {

float Bf16ToFloat(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t wide;
  std::memcpy(&wide, &f, sizeof(wide));
  if (std::isnan(f)) return static_cast<uint16_t>((wide >> 16) | 0x40);
  // Round to nearest, ties to the even (low bit clear) result.
  wide += 0x7fffu + ((wide >> 16) & 1u);
  return static_cast<uint16_t>(wide >> 16);
}

float Load(const float* x, int64_t i) { return x[i]; }
float Load(const uint16_t* x, int64_t i) { return Bf16ToFloat(x[i]); }

void Store(float* y, int64_t i, float v) { y[i] = v; }
void Store(uint16_t* y, int64_t i, float v) { y[i] = FloatToBf16(v); }

template <typename T>
void Softmax(const T* x, T* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x + r * cols;
    T* out = y + r * cols;
    float max_value = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < cols; ++j) max_value = std::max(max_value, Load(in, j));
    float sum = 0.0f;
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(Load(in, j) - max_value);
    for (int64_t j = 0; j < cols; ++j) {
      Store(out, j, std::exp(Load(in, j) - max_value) / sum);
    }
  }
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
