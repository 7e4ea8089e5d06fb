// The host side that both emulations share (tests/hopper_emu for
// hopper.cu, tests/blackwell_emu for blackwell.cu): the tensor-map encoder
// and driver entry point that hand the kernel an emu::EmuMap, and the test
// driver (a shape, buffers with guard bytes on both sides, one launch
// checked against an fp64 reference with task.json's tolerances, and the
// command line). Each emu_main.cc includes it once, after its machinery,
// and lists its shapes in main: `return RunShapes(argc, argv, all);`.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "emu.h"

// cuTensorMapEncodeTiled as the kernels use it: rank 4, 16-bit elements,
// 128-byte rows swizzled by 128 bytes, no interleave, zero fill; anything
// else fails as the driver would refuse it.
static CUresult EmuEncodeTiled(CUtensorMap* map, CUtensorMapDataType, cuuint32_t rank, void* addr,
                               const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                               const cuuint32_t* es, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                               CUtensorMapL2promotion, CUtensorMapFloatOOBfill oob) {
  if (rank != 4 || uintptr_t(addr) % 16 || il != 0 || sw != CU_TENSOR_MAP_SWIZZLE_128B || oob != 0) return 1;
  emu::EmuMap em{};
  em.base = (const unsigned char*)addr; em.rank = 4;
  for (int i = 0; i < 4; ++i) {
    if (dims[i] == 0 || box[i] == 0 || box[i] > 256 || es[i] != 1) return 1;
    em.dims[i] = dims[i]; em.box[i] = box[i];
  }
  em.strides[0] = 2;
  for (int i = 0; i < 3; ++i) {
    if (strides[i] % 16) return 1;
    em.strides[i + 1] = strides[i];
  }
  if (box[0] * 2 > 128) return 1;
  memcpy(map, &em, sizeof em);
  return 0;
}
cudaError_t cudaGetDriverEntryPointByVersion(const char* sym, void** fn, unsigned, unsigned long long,
                                             cudaDriverEntryPointQueryResult* r) {
  if (strcmp(sym, "cuTensorMapEncodeTiled") != 0) { *r = cudaDriverEntryPointSymbolNotFound; return 0; }
  *fn = (void*)&EmuEncodeTiled;
  *r = cudaDriverEntryPointSuccess;
  return 0;
}

// ---------------------------------------------------------------------------
// Test driver.
struct Scen {
  const char* name; int batch, sq, sk, hq, hkv, d, causal; bool bf;
  int sms = 1;        // the device's SMs: with many, few-block shapes split keys
  float q_std = 1.f;  // the task draws normal(0, 1); larger moves row maxima more
  // Above 0: the key in the middle of each (batch, kv head) scaled by it, a
  // score that passes some rows' earlier maxima by far (P past 2^128 against
  // them, inf in fp32).
  float k_spike = 0.f;
};

static uint16_t Enc(float f, bool bf) { return bf ? FloatToBf16(f) : FloatToHalf(f); }
static float Dec(uint16_t b, bool bf) { return bf ? Bf16ToFloat(b) : HalfToFloat(b); }

// A buffer with guard bytes on both sides.
struct Guarded {
  std::vector<unsigned char> buf; size_t n;
  explicit Guarded(size_t bytes, unsigned char fill) : buf(bytes + 2 * 4096 + 64), n(bytes) {
    memset(buf.data(), 0xA5, buf.size());
    memset(data(), fill, bytes);
  }
  unsigned char* data() {
    uintptr_t p = uintptr_t(buf.data()) + 4096;
    p = (p + 63) & ~uintptr_t(63);
    return (unsigned char*)p;
  }
  bool guards_ok() {
    unsigned char* d = data();
    for (unsigned char* p = buf.data(); p < d; ++p) if (*p != 0xA5) return false;
    for (unsigned char* p = d + n; p < buf.data() + buf.size(); ++p) if (*p != 0xA5) return false;
    return true;
  }
};

#if KSEEK_FA_TRACE
// Rounds the item trace recorded over the run (printed at its end).
inline int g_traced_rounds = 0;
// --trace-json=DIR: each call's records as bench/item_trace.py --parse
// reads them, in DIR/SHAPE_eager.json and DIR/SHAPE_lazy.json.
inline std::string g_trace_json_dir;

// A call's records, read once through kseek_fa_trace_read, and the record
// of a block's round of one kind (1 consumer, 2 producer) as hopper.cu's
// TraceRecord places it.
struct TraceRecords {
  std::vector<unsigned long long> words = std::vector<unsigned long long>(sizeof(g_trace) / sizeof(g_trace[0]));
  bool Read() { return kseek_fa_trace_read(words.data()) == 0; }
  const unsigned long long* Of(int blk, int n, int kind) const {
    return &words[((size_t(blk) * kTraceRounds + n) * 2 + kind - 1) * kTraceWords];
  }
};

inline bool WriteTraceJson(const Scen& s, bool lazy, const TraceRecords& t) {
  const std::string path =
      g_trace_json_dir + "/" + s.name + (lazy ? "_lazy" : "_eager") + ".json";
  FILE* f = fopen(path.c_str(), "w");
  if (!f) return false;
  fprintf(f, "{\"scenario\": \"%s\", \"layout\": [%d, %d, %d], \"records\": [", s.name,
          kTraceBlocks, kTraceRounds, kTraceWords);
  bool first = true;
  for (int blk = 0; blk < kTraceBlocks; ++blk)
    for (int n = 0; n < kTraceRounds; ++n)
      for (int kind = 1; kind <= 2; ++kind) {
        const unsigned long long* w = t.Of(blk, n, kind);
        bool any = false;
        for (int i = 0; i < kTraceWords; ++i) any = any || w[i] != 0;
        if (!any) continue;
        fprintf(f, "%s\n[%d, %d, %d", first ? "" : ",", blk, n, kind);
        for (int i = 0; i < kTraceWords; ++i) fprintf(f, ", %llu", w[i]);
        fprintf(f, "]");
        first = false;
      }
  fprintf(f, "]}\n");
  return fclose(f) == 0;
}

// The item trace after a call (hopper.cu "The item trace"): "" or its
// first fault. Every block's rounds are
// recorded from round 0 on without a gap; each round has a consumer and a
// producer record of the same item (query row, key tiles, SM = the block,
// head, batch within the shape), the global timer rising from the round's
// start to its end and the clock through the round's points in order
// (here one count that every stamp advances, so out of order is a stamp
// in the wrong place); and the rounds' query rows cover every (batch,
// head) from row 0 in equal steps to the last row.
inline std::string TraceFault(const Scen& s, const TraceRecords& t) {
  char why[200];
  auto fault = [&](int blk, int n, const char* what) {
    snprintf(why, sizeof why, "trace: block %d round %d: %s", blk, n, what);
    return std::string(why);
  };
  std::map<std::pair<unsigned, unsigned>, std::set<unsigned>> rows;  // (batch, head) -> q0
  bool full = false;
  for (int blk = 0; blk < kTraceBlocks; ++blk) {
    bool ended = false;
    for (int n = 0; n < kTraceRounds; ++n) {
      const unsigned long long* c = t.Of(blk, n, 1);
      const unsigned long long* p = t.Of(blk, n, 2);
      if (c[0] == 0) {
        ended = true;  // past the block's last item (or no round at all)
        continue;
      }
      if (ended) return fault(blk, n, "recorded after a round without an item");
      if (n == kTraceRounds - 1) full = true;
      if (c[0] >> 56 != 1) return fault(blk, n, "the consumer record's kind is not 1");
      if (p[0] >> 56 != 2) return fault(blk, n, "no producer record");
      const unsigned long long mask = (1ull << 56) - 1;
      if ((c[0] & mask) != (p[0] & mask) || c[9] != p[9])
        return fault(blk, n, "the consumer's and the producer's items differ");
      const unsigned tiles = (c[0] >> 32) & 0xffff, sm = (c[0] >> 48) & 0xff;
      const unsigned q0 = c[0] & 0xffffffffu, hq = c[9] & 0xffffffffu, b = c[9] >> 32;
      if (sm != (unsigned(blk) & 0xff)) return fault(blk, n, "the SM is not the block's");
      if (b >= unsigned(s.batch) || hq >= unsigned(s.hq) || q0 >= unsigned(s.sq))
        return fault(blk, n, "the item lies outside the shape");
      for (const unsigned long long* r : {c, p})
        if (!(r[1] < r[2])) return fault(blk, n, "the timer does not rise over the round");
      // The points stamped: consumer 3..8, producer 3..7; without key
      // tiles neither the first K nor the first S nor the last P V.
      const std::vector<int> cw = tiles ? std::vector<int>{3, 4, 5, 6, 7, 8} : std::vector<int>{3, 4, 8};
      const std::vector<int> pw = tiles ? std::vector<int>{3, 4, 5, 6, 7} : std::vector<int>{3, 4, 5, 7};
      for (size_t i = 1; i < cw.size(); ++i)
        if (!(c[cw[i - 1]] < c[cw[i]])) return fault(blk, n, "the consumer's points are out of order");
      for (size_t i = 1; i < pw.size(); ++i)
        if (!(p[pw[i - 1]] < p[pw[i]])) return fault(blk, n, "the producer's points are out of order");
      if (!tiles && (c[5] || c[6] || c[7] || p[6]))
        return fault(blk, n, "a point stamped for an item without key tiles");
      rows[{b, hq}].insert(q0);
      ++g_traced_rounds;
    }
  }
  if (rows.empty() || full) return "";  // not the WGMMA kernel, or rounds past the record
  if (rows.size() != size_t(s.batch) * s.hq) return "trace: some (batch, head) has no round";
  for (const auto& [bh, q0s] : rows) {
    std::vector<unsigned> v(q0s.begin(), q0s.end());
    const unsigned step = v.size() > 1 ? v[1] - v[0] : unsigned(s.sq);
    bool even = v[0] == 0 && v.back() + step >= unsigned(s.sq);
    for (size_t i = 1; i < v.size(); ++i) even = even && v[i] - v[i - 1] == step;
    if (!even) {
      snprintf(why, sizeof why, "trace: batch %u head %u: the rounds' query rows do not cover 0..%d",
               bh.first, bh.second, s.sq - 1);
      return why;
    }
  }
  return "";
}
#endif

static bool RunScenario(const Scen& s, bool lazy, uint64_t seed) {
  emu::g_sms = s.sms; emu::g_lazy_copies = lazy; emu::g_lazy_async = lazy; emu::g_launches = 0;
  const size_t nq = size_t(s.batch) * s.sq * s.hq * s.d, nk = size_t(s.batch) * s.sk * s.hkv * s.d;
  const size_t nl = size_t(s.batch) * s.hq * s.sq;
  Guarded q(nq * 2, 0), k(nk * 2, 0), v(nk * 2, 0), o(nq * 2, 0xFF), lse(nl * 4, 0xFF);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  auto fill = [&](Guarded& g, size_t n) {
    uint16_t* p = (uint16_t*)g.data();
    for (size_t i = 0; i < n; ++i) p[i] = Enc(nd(rng), s.bf);
  };
  fill(q, nq); fill(k, nk); fill(v, nk);
  if (s.q_std != 1.f) {
    uint16_t* p = (uint16_t*)q.data();
    for (size_t i = 0; i < nq; ++i) p[i] = Enc(Dec(p[i], s.bf) * s.q_std, s.bf);
  }
  if (s.k_spike > 0.f) {
    uint16_t* p = (uint16_t*)k.data();
    for (int b = 0; b < s.batch; ++b)
      for (int h = 0; h < s.hkv; ++h) {
        uint16_t* row = p + ((size_t(b) * s.sk + s.sk / 2) * s.hkv + h) * s.d;
        for (int d = 0; d < s.d; ++d) row[d] = Enc(Dec(row[d], s.bf) * s.k_spike, s.bf);
      }
  }
  emu::g_readable = {{(const char*)q.data(), nq * 2}, {(const char*)k.data(), nk * 2}, {(const char*)v.data(), nk * 2}};
  kseek_param params[8] = {{"batch", s.batch}, {"seqlen_q", s.sq}, {"seqlen_k", s.sk}, {"heads_q", s.hq},
                           {"heads_kv", s.hkv}, {"head_dim", s.d}, {"causal", s.causal},
                           {"dtype", s.bf ? KSEEK_BF16 : KSEEK_F16}};
  kseek_tensor t[5] = {};
  void* ptrs[5] = {q.data(), k.data(), v.data(), o.data(), lse.data()};
  const char* names[5] = {"q", "k", "v", "o", "lse"};
  for (int i = 0; i < 5; ++i) { t[i].name = names[i]; t[i].data = ptrs[i]; }
  // With --streams=N the calls go round N streams (handles 1..N), else all
  // on the default stream.
  static int calls = 0;
  cudaStream_t stream = emu::g_streams > 0 ? (cudaStream_t)(uintptr_t)(1 + calls++ % emu::g_streams) : nullptr;
  kseek_launch_args args = {KSEEK_ABI_VERSION, 8, params, 5, t, stream};
#if KSEEK_FA_TRACE
  if (kseek_fa_trace_reset() != 0) {
    printf("%s: kseek_fa_trace_reset failed -> FAIL\n", s.name);
    return false;
  }
#endif
  const int rc = kseek_launch(&args);
  if (rc) {
    printf("%s: launch returned %d: %s\n", s.name, rc, kseek_error_message());
    return false;
  }
#if KSEEK_FA_TRACE
  TraceRecords trace;
  if (!trace.Read()) {
    printf("%s: kseek_fa_trace_read failed -> FAIL\n", s.name);
    return false;
  }
  if (const std::string why = TraceFault(s, trace); !why.empty()) {
    printf("%s: %s -> FAIL\n", s.name, why.c_str());
    return false;
  }
  if (!g_trace_json_dir.empty() && !WriteTraceJson(s, lazy, trace)) {
    printf("%s: cannot write the trace's records under %s -> FAIL\n", s.name,
           g_trace_json_dir.c_str());
    return false;
  }
#endif
  if (emu::g_pool_live != 0) {
    printf("%s: %d scratch allocations not freed after the call -> FAIL\n", s.name, emu::g_pool_live);
    return false;
  }
  // Reference in double, from the inputs decoded once (the reference reads
  // each element many times).
  auto decoded = [&](Guarded& g, size_t n) {
    std::vector<double> values(n);
    const uint16_t* p = (const uint16_t*)g.data();
    for (size_t i = 0; i < n; ++i) values[i] = Dec(p[i], s.bf);
    return values;
  };
  const std::vector<double> q_values = decoded(q, nq), k_values = decoded(k, nk), v_values = decoded(v, nk);
  const double *Q = q_values.data(), *K = k_values.data(), *V = v_values.data();
  const uint16_t* O = (uint16_t*)o.data();
  const float* LSE = (float*)lse.data();
  double err2 = 0, ref2 = 0, maxabs = 0, lerr2 = 0, lref2 = 0, lmax = 0;
  int bad_inf = 0, nan = 0;
  const int group = s.hq / s.hkv;
  std::vector<double> sc(s.sk), acc(s.d);
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.hq; ++h)
      for (int i = 0; i < s.sq; ++i) {
        const int hk = h / group;
        int lim = s.causal ? std::min(s.sk, i + s.sk - s.sq + 1) : s.sk;
        if (lim < 0) lim = 0;
        const double* qr = Q + ((size_t(b) * s.sq + i) * s.hq + h) * s.d;
        double m = -INFINITY;
        for (int j = 0; j < lim; ++j) {
          const double* kr = K + ((size_t(b) * s.sk + j) * s.hkv + hk) * s.d;
          double dot = 0;
          for (int d = 0; d < s.d; ++d) dot += qr[d] * kr[d];
          sc[j] = dot / std::sqrt(double(s.d));
          m = std::max(m, sc[j]);
        }
        double l = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int j = 0; j < lim; ++j) {
          const double p = std::exp(sc[j] - m);
          l += p;
          const double* vr = V + ((size_t(b) * s.sk + j) * s.hkv + hk) * s.d;
          for (int d = 0; d < s.d; ++d) acc[d] += p * vr[d];
        }
        const uint16_t* orow = O + ((size_t(b) * s.sq + i) * s.hq + h) * s.d;
        for (int d = 0; d < s.d; ++d) {
          const double r = lim > 0 ? acc[d] / l : 0.0, c = Dec(orow[d], s.bf);
          if (std::isnan(c)) { nan++; continue; }
          err2 += (c - r) * (c - r); ref2 += r * r; maxabs = std::max(maxabs, std::fabs(c - r));
        }
        const double rl = lim > 0 ? m + std::log(l) : -INFINITY;
        const float cl = LSE[(size_t(b) * s.hq + h) * s.sq + i];
        if (std::isnan(cl)) nan++;
        else if (std::isinf(rl) || std::isinf(cl)) {
          if (!(std::isinf(rl) && std::isinf(cl) && rl < 0 && cl < 0)) bad_inf++;
        } else {
          lerr2 += (cl - rl) * (cl - rl); lref2 += rl * rl; lmax = std::max(lmax, std::fabs(cl - rl));
        }
      }
  const double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  const double lrel = lref2 > 0 ? std::sqrt(lerr2 / lref2) : std::sqrt(lerr2);
  const double tol_rel = s.bf ? 2e-2 : 2e-3, tol_abs = s.bf ? 0.1 : 1e-2;  // task.json's tolerances
  bool ok = nan == 0 && bad_inf == 0 && rel <= tol_rel && maxabs <= tol_abs && lrel <= 1e-5 && lmax <= 1e-4;
  const bool guards = q.guards_ok() && k.guards_ok() && v.guards_ok() && o.guards_ok() && lse.guards_ok();
  ok = ok && guards;
  printf("%-40s %s launches=%d o rel_l2 %.2e max_abs %.2e | lse rel_l2 %.2e max_abs %.2e | nan %d inf-mismatch %d "
         "guards %s -> %s\n",
         s.name, lazy ? "lazy " : "eager", emu::g_launches, rel, maxabs, lrel, lmax, nan, bad_inf,
         guards ? "ok" : "BROKEN", ok ? "PASS" : "FAIL");
  fflush(stdout);
  return ok;
}

// emu [FILTER] [--shard=I/N] [--captured] [--streams=N] [--trace-json=DIR]
// (the last in the item trace's build only): the shapes whose
// name contains FILTER, and of those the I-th of every N (0 <= I < N), so
// that N runs of it cover them all; --captured: every stream reports a
// graph capture, so calls take their scratch as captured calls do;
// --streams=N: the calls go round N streams (each stream's scratch its
// own, and past hopper.cu's 16 buffers of partials the least recently
// used freed), and the end says how many cudaFree calls there were. Each runs twice (asynchronous work completing at issue, then as late
// as it can). A shape's inputs depend only on its place in the list.
inline int RunShapes(int argc, char** argv, const std::vector<Scen>& all) {
  std::string only;
  int shard = 0, shards = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--captured") {
      emu::g_capturing = true;  // every call as if captured into a CUDA graph
    } else if (arg.rfind("--streams=", 0) == 0) {
      if (sscanf(arg.c_str(), "--streams=%d", &emu::g_streams) != 1 || emu::g_streams < 1) {
        fprintf(stderr, "bad %s: want --streams=N with N >= 1\n", arg.c_str());
        return 2;
      }
#if KSEEK_FA_TRACE
    } else if (arg.rfind("--trace-json=", 0) == 0) {
      g_trace_json_dir = arg.substr(strlen("--trace-json="));
#endif
    } else if (arg.rfind("--shard=", 0) == 0) {
      if (sscanf(arg.c_str(), "--shard=%d/%d", &shard, &shards) != 2 || shards < 1 || shard < 0 || shard >= shards) {
        fprintf(stderr, "bad %s: want --shard=I/N with 0 <= I < N\n", arg.c_str());
        return 2;
      }
    } else {
      only = arg;
    }
  }
  int fails = 0, runs = 0, matching = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const Scen& s = all[i];
    if (!only.empty() && std::string(s.name).find(only) == std::string::npos) continue;
    if (matching++ % shards != shard) continue;
    for (bool lazy : {false, true}) {
      runs++;
      fails += !RunScenario(s, lazy, 1235 + 2 * i + lazy);
    }
  }
  // So that a test can tell the cluster path ran (only hopper.cu has it).
  printf("emu: %d clustered launches\n", emu::g_clustered_launches);
  printf("emu: %d cudaFree calls\n", emu::g_frees);
#if KSEEK_FA_TRACE
  printf("emu: %d traced rounds\n", g_traced_rounds);
#endif
  printf("%d/%d passed\n", runs - fails, runs);
  return fails != 0;
}
