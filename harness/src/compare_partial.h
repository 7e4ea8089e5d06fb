// The comparison of a candidate output with the reference, element by
// element, written once for both places it runs: the host device's loop
// (runner_data.cc) and the judge's CUDA kernel (judge_kernels.cu, compiled
// by nvcc, where KSEEK_HOST_DEVICE makes these functions callable from
// device code). Plain C++: no standard library beyond <cstdint>, no
// exceptions, nothing that needs the host.
//
// The rule: an element pair where both are finite adds to the sums (squared
// difference, squared reference, largest absolute difference); NaN in the
// candidate is counted, then NaN in the reference; an infinity counts
// unless the reference holds the same infinity. For each kind of offending
// element the first (smallest index) is kept.
#ifndef KERNELSEEK_HARNESS_COMPARE_PARTIAL_H_
#define KERNELSEEK_HARNESS_COMPARE_PARTIAL_H_

#include <cstdint>

#if defined(__CUDACC__)
#define KSEEK_HOST_DEVICE __host__ __device__
#else
#define KSEEK_HOST_DEVICE
#endif

namespace kseek {

// What a comparison found in a set of elements: the sums, counts and first
// offending elements (indices into the whole tensor). Plain doubles and
// 64-bit integers: the CUDA kernel writes this layout into memory the host
// reads.
struct ComparePartial {
  double diff2 = 0, ref2 = 0, max_abs = 0;
  uint64_t nan_count = 0, first_nan = 0;
  uint64_t ref_nan_count = 0, first_ref_nan = 0;
  uint64_t inf_count = 0, first_inf = 0;
  double inf_cand = 0, inf_ref = 0;
};
static_assert(sizeof(ComparePartial) == 88, "one layout on the host and the device");

// x - x is 0 exactly for finite x (NaN for NaN and infinities); x != x only
// for NaN. Neither needs <cmath>, which device code may not have.
KSEEK_HOST_DEVICE inline bool CompareIsFinite(double x) { return x - x == 0.0; }
KSEEK_HOST_DEVICE inline bool CompareIsNan(double x) { return x != x; }

// Element i: candidate x, reference r. The three sums are passed apart from
// `p` so that a loop can keep them in registers; `p` takes the rare cases.
KSEEK_HOST_DEVICE inline void CompareElement(uint64_t i, double x, double r, double& diff2,
                                             double& ref2, double& max_abs, ComparePartial& p) {
  if (CompareIsFinite(x) && CompareIsFinite(r)) {
    const double d = x - r;
    diff2 += d * d;
    ref2 += r * r;
    const double a = d < 0 ? -d : d;
    if (a > max_abs) max_abs = a;
    return;
  }
  // Elements reach one partial in ascending order, so its first is its
  // smallest.
  if (CompareIsNan(x)) {
    if (p.nan_count++ == 0) p.first_nan = i;
    return;
  }
  if (CompareIsNan(r)) {
    if (p.ref_nan_count++ == 0) p.first_ref_nan = i;
    return;
  }
  if (x == r) return;  // the same infinity
  if (p.inf_count++ == 0) {
    p.first_inf = i;
    p.inf_cand = x;
    p.inf_ref = r;
  }
}

// Adds b's elements to a's. Whichever holds the smaller first offending
// index of a kind keeps it, so the result does not depend on whether b's
// elements came before a's, after them, or between (the CUDA kernel's
// threads interleave).
KSEEK_HOST_DEVICE inline void MergeComparePartial(ComparePartial& a, const ComparePartial& b) {
  a.diff2 += b.diff2;
  a.ref2 += b.ref2;
  if (b.max_abs > a.max_abs) a.max_abs = b.max_abs;
  if (b.nan_count > 0 && (a.nan_count == 0 || b.first_nan < a.first_nan)) {
    a.first_nan = b.first_nan;
  }
  a.nan_count += b.nan_count;
  if (b.ref_nan_count > 0 && (a.ref_nan_count == 0 || b.first_ref_nan < a.first_ref_nan)) {
    a.first_ref_nan = b.first_ref_nan;
  }
  a.ref_nan_count += b.ref_nan_count;
  if (b.inf_count > 0 && (a.inf_count == 0 || b.first_inf < a.first_inf)) {
    a.first_inf = b.first_inf;
    a.inf_cand = b.inf_cand;
    a.inf_ref = b.inf_ref;
  }
  a.inf_count += b.inf_count;
}

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_COMPARE_PARTIAL_H_
