// Reference row softmax for the host target: the kernel every host
// candidate is checked against, written to be evidently correct.
//
// Three passes per row, all arithmetic in double: max, sum of exp(x - max),
// then y = exp(x - max) / sum rounded once to the output dtype (nearest,
// ties to even). bf16 values are uint16_t bit patterns: the high half of
// an IEEE f32.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernelseek/abi.h"

namespace {

double Bf16ToDouble(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

// Rounds `v` to bf16 (8 significant bits, f32's exponent range) in one
// step: scale so that the last kept bit has weight 1, round to nearest even
// (the default rounding mode), scale back. Rounding through f32 first could
// round twice.
uint16_t DoubleToBf16(double v) {
  if (std::isnan(v)) return 0x7fc0;
  double rounded = v;
  if (v != 0.0 && std::isfinite(v)) {
    // Weight of the last significant bit; bf16 subnormals share 2^-133.
    const int exponent = std::max(std::ilogb(v) - 7, -133);
    rounded = std::ldexp(std::nearbyint(std::ldexp(v, -exponent)), exponent);
  }
  // Exact unless it overflows to infinity, which f32 shares with bf16.
  const float f = static_cast<float>(rounded);
  uint32_t wide;
  std::memcpy(&wide, &f, sizeof(wide));
  return static_cast<uint16_t>(wide >> 16);
}

double Load(const float* x, int64_t i) { return x[i]; }
double Load(const uint16_t* x, int64_t i) { return Bf16ToDouble(x[i]); }

void Store(float* y, int64_t i, double v) { y[i] = static_cast<float>(v); }
void Store(uint16_t* y, int64_t i, double v) { y[i] = DoubleToBf16(v); }

template <typename T>
void Softmax(const T* x, T* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x + r * cols;
    T* out = y + r * cols;
    double max_value = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < cols; ++j) max_value = std::max(max_value, Load(in, j));
    double sum = 0.0;
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
