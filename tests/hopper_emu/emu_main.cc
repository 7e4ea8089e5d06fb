#include <string>

#include "emu.h"
#include "hopper_emu.inc"  // made by transform.py from hopper.cu

namespace emu {
int g_sms = 132;
bool g_lazy_copies = false;
int g_launches = 0;
int g_clustered_launches = 0;
std::vector<std::pair<const char*, size_t>> g_readable;
bool g_failed = false;
Block* g_block = nullptr;
Thread* g_cur = nullptr;
jmp_buf g_sched;
dim3 g_grid, g_blockdim;
static const std::function<void()>* g_body;
uint64_t g_progress = 0;
int g_cc_major = 9;
bool g_lazy_async = false;
std::mt19937 g_async_rng(7);

// --- Warpgroup collectives --------------------------------------------------
static void WgCollective(int kind, uint64_t arg, const std::function<void(int wg)>& last) {
  Thread* t = g_cur;
  Block* b = g_block;
  const int wg = t->tid.x / 128;
  if (b->wg_arrived[wg] == 0) { b->wg_kind[wg] = kind; b->wg_arg[wg] = arg; }
  else if (b->wg_kind[wg] != kind || b->wg_arg[wg] != arg) Fail("divergent warpgroup collective");
  unsigned gen = b->wg_gen[wg];
  if (++b->wg_arrived[wg] == 128) {
    last(wg);
    b->wg_arrived[wg] = 0;
    b->wg_gen[wg]++;
    g_progress++;
  } else {
    while (b->wg_gen[wg] == gen) Yield();
  }
}

static uint32_t Swz(uint32_t addr) { return addr ^ (((addr >> 7) & 7) << 4); }
static float SmemElem(uint32_t addr, bool half) {
  addr = Swz(addr);
  if (addr % 2 || addr + 2 > g_block->smem.size()) Fail("wgmma operand outside shared memory");
  uint16_t v; memcpy(&v, g_block->smem.data() + addr, 2);
  return half ? HalfToFloat(v) : Bf16ToFloat(v);
}

static void ExecuteWgmma(const WgmmaOp& op) {
  auto dec = [](uint64_t d, uint32_t& start, uint32_t& lbo, uint32_t& sbo) {
    start = uint32_t(d & 0x3FFF) << 4; lbo = uint32_t((d >> 16) & 0x3FFF) << 4;
    sbo = uint32_t((d >> 32) & 0x3FFF) << 4;
    if ((d >> 62) != 1) Fail("descriptor without 128-byte swizzle");
    if (((d >> 49) & 7) != 0) Fail("descriptor base offset");
  };
  uint32_t sa = 0, la = 0, ba = 0, sb, lb, bb;
  if (!op.rs) dec(op.da, sa, la, ba);
  dec(op.db, sb, lb, bb);
  static float A[64][16], B[16][256];
  for (int m = 0; m < 64; ++m)
    for (int k = 0; k < 16; ++k) {
      if (op.rs) {
        int th = 32 * (m / 16) + 4 * (m % 8), r8 = (m % 16) / 8;
        int kh = k / 8, t4 = (k % 8) / 2, hi = k % 2;
        uint32_t w = op.a[th + t4][r8 + 2 * kh];
        uint16_t h = hi ? uint16_t(w >> 16) : uint16_t(w & 0xffff);
        A[m][k] = op.half ? HalfToFloat(h) : Bf16ToFloat(h);
      } else {
        A[m][k] = SmemElem(sa + (m / 8) * ba + (m % 8) * 128 + 2 * k, op.half);
      }
    }
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < op.n; ++n) {
      if (op.rs && !op.b_k_major)  // B MN-major (transposed)
        B[k][n] = SmemElem(sb + (k / 8) * bb + (k % 8) * 128 + (n / 64) * lb + (n % 64) * 2, op.half);
      else  // B K-major
        B[k][n] = SmemElem(sb + (n / 8) * bb + (n % 8) * 128 + 2 * k, op.half);
    }
  for (int th = 0; th < 128; ++th) {
    const int w = th / 32, l = th % 32;
    for (int i = 0; i < op.n / 8; ++i)
      for (int e = 0; e < 4; ++e) {
        const int row = 16 * w + l / 4 + 8 * (e / 2), col = 8 * i + 2 * (l % 4) + (e % 2);
        double acc = op.accumulate ? op.d[th][4 * i + e] : 0.0;
        for (int k = 0; k < 16; ++k) acc += double(A[row][k]) * double(B[k][col]);
        op.d[th][4 * i + e] = float(acc);
      }
  }
}

void WgmmaIssue(float* d, int n, bool rs, bool half, int accumulate, uint64_t da, uint64_t db,
                const uint32_t* a, bool b_k_major) {
  Thread* t = g_cur;
  Block* b = g_block;
  const int wg = t->tid.x / 128;
  if (b->wg_arrived[wg] == 0) {
    WgmmaOp& op = b->wg_pending_issue[wg];
    op.n = n; op.rs = rs; op.half = half; op.accumulate = accumulate; op.da = da; op.db = db;
    op.b_k_major = b_k_major;
  }
  WgmmaOp& op = b->wg_pending_issue[wg];
  op.d[t->tid.x % 128] = d;
  if (a) for (int i = 0; i < 4; ++i) op.a[t->tid.x % 128][i] = a[i];
  WgCollective(100 + n + (rs ? 1000 : 0) + (b_k_major ? 2000 : 0), da ^ (db * 31) ^ uint64_t(accumulate),
               [&](int g) {
    if (g_lazy_async) b->wg_open[g].push_back(b->wg_pending_issue[g]);
    else ExecuteWgmma(b->wg_pending_issue[g]);
  });
}
void WgmmaCommitEmu() {
  Block* b = g_block;
  WgCollective(2, 0, [&](int g) {
    b->wg_groups[g].push_back(std::move(b->wg_open[g]));
    b->wg_open[g].clear();
  });
}
void WgmmaWaitEmu(int pending) {
  Block* b = g_block;
  WgCollective(3, uint64_t(pending), [&](int g) {
    auto& q = b->wg_groups[g];
    while (int(q.size()) > pending) {
      for (auto& op : q.front()) ExecuteWgmma(op);
      q.erase(q.begin());
    }
  });
}

// --- mbarriers, TMA and setmaxnreg (emu_sync.h); the TMA issue and wait ---
#include "emu_sync.h"

void TmaLoad(uint32_t dst, const void* map, uint32_t bar, int c0, int c1, int c2, int c3) {
  TmaOp op{dst, map, bar, {c0, c1, c2, c3}};
  if (g_lazy_async) g_block->tma_pending.push_back(op);
  else DoTma(op);
}
bool MbarTest(uint32_t bar, uint32_t parity) { return (Bar(bar).phase & 1) != parity; }

// --- clusters ----------------------------------------------------------------
// A shared::cluster address (what mapa gives): bit 30 set, the block's
// cluster rank in bits 18-29 and its shared offset in bits 0-17 (offsets
// are below 2^18). A plain shared offset names the running thread's own
// block, as on the hardware, where a shared::cta address is also the
// shared::cluster address of the same location.
constexpr int kRankShift = 18;
constexpr uint32_t kOffsetMask = (1u << kRankShift) - 1;
constexpr uint32_t kRankMask = 0xFFFu << kRankShift;
constexpr uint32_t kClusterAddressTag = 1u << 30;

// The block of the running thread's cluster that shared::cluster address
// `addr` names, and in `offset` the shared offset there; `what` names the
// instruction in a failure.
static Block& ClusterBlock(uint32_t addr, uint32_t& offset, const char* what) {
  const Cluster& c = *g_block->cluster;
  uint32_t rank = g_block->rank;
  if (addr & ~kOffsetMask) {
    if ((addr & ~(kOffsetMask | kRankMask)) != kClusterAddressTag)
      Failf("%s: 0x%x is neither a shared offset nor a shared::cluster address from mapa", what, addr);
    rank = (addr & kRankMask) >> kRankShift;
  }
  offset = addr & kOffsetMask;
  if (rank >= c.blocks.size())
    Failf("%s: cluster rank %u outside the cluster of %zu block(s)", what, rank, c.blocks.size());
  Block& b = *c.blocks[rank];
  if (offset >= b.smem.size())
    Failf("%s: shared offset %u past the %zu bytes of block %u's shared memory", what, offset, b.smem.size(),
          b.idx.x);
  return b;
}

uint32_t ClusterRank() { return g_block->rank; }

// mapa.shared::cluster: the shared::cluster address of this block's shared
// offset `local` in the block of rank `rank`.
uint32_t ClusterAddress(uint32_t local, uint32_t rank) {
  const Cluster& c = *g_block->cluster;
  if (local >= g_block->smem.size()) Failf("mapa: 0x%x is not a shared offset of the block", local);
  if (rank >= c.blocks.size())
    Failf("mapa: cluster rank %u outside the cluster of %zu block(s)", rank, c.blocks.size());
  return kClusterAddressTag | rank << kRankShift | local;
}

// barrier.cluster.arrive + wait: every live thread of every block of the
// cluster.
void ClusterSync() {
  Cluster& c = *g_block->cluster;
  const unsigned gen = c.sync_gen;
  int live = 0;
  for (const Block* b : c.blocks) live += b->live;
  g_progress++;
  if (++c.sync_arrived == live) {
    c.sync_arrived = 0;
    c.sync_gen++;
  } else {
    while (c.sync_gen == gen) Yield();
  }
}

// mbarrier.arrive.shared::cluster: one arrival on the barrier that a
// shared::cluster address names, in any block of the cluster but one whose
// threads have all ended (its shared memory is gone).
void MbarArriveCluster(uint32_t addr) {
  uint32_t bar;
  Block& b = ClusterBlock(addr, bar, "mbarrier.arrive.shared::cluster");
  if (b.exited)
    Failf("mbarrier.arrive.shared::cluster onto the mbarrier at shared offset %u of block %u (cluster rank %u), "
          "whose threads have all ended",
          bar, b.idx.x, b.rank);
  MbarArriveOn(b, bar);
}

// st.shared::cluster.u32: 4 bytes at the shared::cluster address, in any
// block of the cluster but one whose threads have all ended.
void StoreCluster32(uint32_t addr, uint32_t v) {
  uint32_t offset;
  Block& b = ClusterBlock(addr, offset, "st.shared::cluster");
  if (b.exited)
    Failf("st.shared::cluster into shared offset %u of block %u (cluster rank %u), whose threads have all ended",
          offset, b.idx.x, b.rank);
  if (offset % 4 != 0 || offset + 4 > b.smem.size())
    Failf("st.shared::cluster.u32 at shared offset %u of block %u: unaligned or past its shared memory", offset,
          b.idx.x);
  g_progress++;
  memcpy(b.smem.data() + offset, &v, 4);
}

// cp.async.bulk.tensor...multicast::cluster: the box into shared offset
// `dst` of every block whose rank bit is set in `mask`, its bytes counted
// on the mbarrier at offset `bar` of each. Each block's copy is done at
// issue (eager) or pending in that block until one of its threads' waits
// completes it (lazy: no later than its wait on the barrier it signals).
void TmaLoadMulticast(uint32_t dst, const void* map, uint32_t bar, uint16_t mask, int c0, int c1, int c2,
                      int c3) {
  const Cluster& c = *g_block->cluster;
  uint32_t dst_offset, bar_offset;
  ClusterBlock(dst, dst_offset, "TMA multicast destination");
  ClusterBlock(bar, bar_offset, "TMA multicast mbarrier");
  if (mask == 0 || (mask >> c.blocks.size()) != 0)
    Failf("TMA multicast mask 0x%x: no rank, or a rank outside the cluster of %zu block(s)", mask, c.blocks.size());
  for (unsigned r = 0; r < c.blocks.size(); ++r) {
    if (!((mask >> r) & 1)) continue;
    Block& into = *c.blocks[r];
    if (into.exited)
      Failf("TMA multicast into block %u (cluster rank %u), whose threads have all ended", into.idx.x, into.rank);
    const TmaOp op{dst_offset, map, bar_offset, {c0, c1, c2, c3}, int(g_block->rank)};
    if (g_lazy_async) into.tma_pending.push_back(op);
    else DoTma(op, into);
  }
}

// One TMA store: a 1024-byte aligned, 128-byte swizzled box of shared
// memory into the map's tensor, elements out of bounds left out.
static void DoTmaStore(const TmaOp& op) {
  ForEachBoxElement(op, "TMA store source not 1024-byte aligned",
                    [&](uint32_t addr, const unsigned char* element) {
    if (element == nullptr) return;  // out of bounds: not written
    if (addr + 2 > g_block->smem.size()) Fail("TMA store read outside shared memory");
    unsigned char* dst = const_cast<unsigned char*>(element);
    for (auto& [p, n2] : g_readable)
      if ((const char*)dst + 2 > p && (const char*)dst < p + n2) Fail("TMA store into an input tensor");
    memcpy(dst, g_block->smem.data() + addr, 2);
  });
  g_progress++;
}
void FenceProxyAsync() { g_cur->unfenced = false; }
void TmaStore(const void* map, uint32_t src, int c0, int c1, int c2, int c3) {
  // The async proxy sees the warp's stmatrix writes only after each
  // writing thread's fence.proxy.async (and the warp's sync after it).
  for (int l = 0; l < 32; ++l)
    if (g_block->threads[g_cur->warp * 32 + l].unfenced)
      Fail("TMA store from shared memory written without fence.proxy.async");
  TmaOp op{src, map, 0, {c0, c1, c2, c3}};
  if (g_lazy_async) g_cur->bulk.push_back(op);
  else DoTmaStore(op);
}
// cp.async.bulk.wait_group(.read): the thread's stores but the newest
// `pending` done (lazy: only now do they read shared memory, so a write
// to a buffer before the wait that frees it changes what is stored).
void BulkWait(int pending) {
  auto& q = g_cur->bulk;
  while (int(q.size()) > pending) {
    DoTmaStore(q.front());
    q.erase(q.begin());
  }
}

void MbarWait(uint32_t bar, uint32_t parity) {
  for (;;) {
    if (MbarTest(bar, parity)) {
      g_cur->waiting_on = -1;
      return;
    }
    auto& pend = g_block->tma_pending;
    if (!pend.empty()) {
      size_t k = g_async_rng() % pend.size();
      TmaOp op = pend[k];
      pend.erase(pend.begin() + k);
      DoTma(op);
      continue;
    }
    g_cur->waiting_on = long(bar);
    Yield();
  }
}

// --- named barriers ----------------------------------------------------------
void NamedSync(int id, int threads) {
  NamedBar& nb = g_block->named[id];
  unsigned gen = nb.gen;
  if (++nb.arrived == threads) { nb.arrived = 0; nb.gen++; g_progress++; return; }
  if (nb.arrived > threads) Fail("named barrier over-arrived");
  while (nb.gen == gen) Yield();
}
void NamedArrive(int id, int threads) {
  NamedBar& nb = g_block->named[id];
  if (++nb.arrived == threads) { nb.arrived = 0; nb.gen++; g_progress++; }
  else if (nb.arrived > threads) Fail("named barrier over-arrived");
}

}  // namespace emu

namespace emu {

void Fail(const char* what) {
  char where[80] = "the host side: no block runs";
  if (g_block) {
    char rank[24] = "";
    if (g_block->cluster && g_block->cluster->blocks.size() > 1)
      snprintf(rank, sizeof rank, " cluster rank %u", g_block->rank);
    snprintf(where, sizeof where, "block %u,%u%s thread %u", g_block->idx.x, g_block->idx.y, rank,
             g_cur ? g_cur->tid.x : 0);
  }
  fprintf(stderr, "EMU FAILURE: %s (%s)\n", what, where);
  g_failed = true;
  // Straight out: exit's handlers would run on a fiber's stack.
  fflush(stdout);
  fflush(stderr);
  _Exit(3);
}

void DoCopy(const CopyReq& r) {
  unsigned char* d = g_block->smem.data() + r.dst;
  if (r.valid) memcpy(d, r.src, 16); else memset(d, 0, 16);
}

void CpAsync(uint32_t dst, const void* src, bool valid) {
  if (dst % 16 || dst + 16 > g_block->smem.size()) Fail("cp.async destination out of shared memory");
  if (valid) {
    bool ok = false;
    for (auto& [p, n] : g_readable)
      if ((const char*)src >= p && (const char*)src + 16 <= p + n) ok = true;
    if (!ok) Fail("cp.async source outside the input tensors");
    if (uintptr_t(src) % 16) Fail("cp.async source misaligned");
  }
  CopyReq r{dst, src, valid};
  if (!g_lazy_copies) DoCopy(r);
  else g_cur->open_group.push_back(r);
}
void Commit() {
  g_cur->groups.push_back(std::move(g_cur->open_group));
  g_cur->open_group.clear();
}
void WaitGroups(int pending) {
  while (int(g_cur->groups.size()) > pending) {
    for (auto& r : g_cur->groups.front()) DoCopy(r);
    g_cur->groups.erase(g_cur->groups.begin());
  }
}

static uint16_t Elem(uint32_t addr, int c) {
  uint16_t v; memcpy(&v, g_block->smem.data() + addr + 2 * c, 2); return v;
}
static float Decode(uint16_t b, bool bf) { return bf ? Bf16ToFloat(b) : HalfToFloat(b); }

void PerformWarpOp(int warp) {
  Thread* L = &g_block->threads[warp * 32];
  int kind = L[0].kind;
  for (int l = 0; l < 32; ++l) if (L[l].kind != kind) Fail("divergent warp collective");
  g_progress++;
  switch (kind) {
    case kShfl: {
      uint32_t v[32];
      for (int l = 0; l < 32; ++l) v[l] = L[L[l].in[1]].in[0];
      for (int l = 0; l < 32; ++l) L[l].out[0] = v[l];
      break;
    }
    case kLdm: case kLdmT: {
      uint32_t res[32][4];
      for (int i = 0; i < 4; ++i) {
        uint32_t rows[8];
        for (int r = 0; r < 8; ++r) {
          rows[r] = L[8 * i + r].in[0];
          if (rows[r] % 16 || rows[r] + 16 > g_block->smem.size()) Fail("ldmatrix address");
        }
        for (int l = 0; l < 32; ++l) {
          uint16_t lo, hi;
          if (kind == kLdm) { lo = Elem(rows[l / 4], 2 * (l % 4)); hi = Elem(rows[l / 4], 2 * (l % 4) + 1); }
          else { lo = Elem(rows[2 * (l % 4)], l / 4); hi = Elem(rows[2 * (l % 4) + 1], l / 4); }
          res[l][i] = uint32_t(lo) | (uint32_t(hi) << 16);
        }
      }
      for (int l = 0; l < 32; ++l) for (int i = 0; i < 4; ++i) L[l].out[i] = res[l][i];
      break;
    }
    case kStm: {  // register i of lane l: row l / 4, columns 2 (l % 4), +1 of matrix i
      for (int i = 0; i < 4; ++i) {
        uint32_t rows[8];
        for (int r = 0; r < 8; ++r) {
          rows[r] = L[8 * i + r].in[0];
          if (rows[r] % 16 || rows[r] + 16 > g_block->smem.size()) Fail("stmatrix address");
        }
        for (int l = 0; l < 32; ++l)
          memcpy(g_block->smem.data() + rows[l / 4] + 4 * (l % 4), &L[l].in[1 + i], 4);
      }
      for (int l = 0; l < 32; ++l) L[l].unfenced = true;
      break;
    }
    case kMmaBf16: case kMmaF16: {
      bool bf = kind == kMmaBf16;
      float A[16][16], B[16][8], C[16][8];
      for (int l = 0; l < 32; ++l) {
        int g = l / 4, t = l % 4;
        auto lo = [&](uint32_t w) { return Decode(uint16_t(w & 0xffff), bf); };
        auto hi = [&](uint32_t w) { return Decode(uint16_t(w >> 16), bf); };
        A[g][2 * t] = lo(L[l].in[0]); A[g][2 * t + 1] = hi(L[l].in[0]);
        A[g + 8][2 * t] = lo(L[l].in[1]); A[g + 8][2 * t + 1] = hi(L[l].in[1]);
        A[g][2 * t + 8] = lo(L[l].in[2]); A[g][2 * t + 9] = hi(L[l].in[2]);
        A[g + 8][2 * t + 8] = lo(L[l].in[3]); A[g + 8][2 * t + 9] = hi(L[l].in[3]);
        B[2 * t][g] = lo(L[l].in[4]); B[2 * t + 1][g] = hi(L[l].in[4]);
        B[2 * t + 8][g] = lo(L[l].in[5]); B[2 * t + 9][g] = hi(L[l].in[5]);
        float c[4]; for (int i = 0; i < 4; ++i) memcpy(&c[i], &L[l].in[6 + i], 4);
        C[g][2 * t] = c[0]; C[g][2 * t + 1] = c[1]; C[g + 8][2 * t] = c[2]; C[g + 8][2 * t + 1] = c[3];
      }
      for (int l = 0; l < 32; ++l) {
        int g = l / 4, t = l % 4;
        int rr[4] = {g, g, g + 8, g + 8}, cc[4] = {2 * t, 2 * t + 1, 2 * t, 2 * t + 1};
        for (int i = 0; i < 4; ++i) {
          double acc = C[rr[i]][cc[i]];
          for (int k = 0; k < 16; ++k) acc += double(A[rr[i]][k]) * double(B[k][cc[i]]);
          float f = float(acc); memcpy(&L[l].out[i], &f, 4);
        }
      }
      break;
    }
    case kSyncWarp: break;
    default: Fail("unknown collective");
  }
}

// A thread's first entry; it never returns (its end jumps to the scheduler).
static void Trampoline() {
  (*g_body)();
  if (!g_cur->bulk.empty()) Fail("TMA stores still pending when the thread ends");
  g_cur->done = true;
  g_progress++;
  _longjmp(g_sched, 1);
}

static std::vector<std::vector<char>> g_stacks;

// Block `idx` of cluster c at rank `rank`: its shared memory poisoned, its
// threads as fibers on g_stacks[first_stack, first_stack + block.x).
static void StartBlock(Block& b, dim3 idx, Cluster& c, unsigned rank, dim3 block, size_t smem,
                       size_t first_stack) {
  const size_t kStack = g_stacks[0].size();
  b.idx = idx;
  b.cluster = &c;
  b.rank = rank;
  b.live = int(block.x);
  b.smem.assign(std::max<size_t>(smem, 16), 0xFF);
  b.threads.resize(block.x);
  b.warp_arrived.assign((block.x + 31) / 32, 0);
  b.warp_gen.assign((block.x + 31) / 32, 0);
  const int wgs = (block.x + 127) / 128;
  b.wg_arrived.assign(wgs, 0); b.wg_gen.assign(wgs, 0); b.wg_open.assign(wgs, {});
  b.wg_groups.assign(wgs, {}); b.wg_pending_issue.assign(wgs, WgmmaOp{}); b.wg_kind.assign(wgs, 0);
  b.wg_arg.assign(wgs, 0);
  for (unsigned i = 0; i < block.x; ++i) {
    Thread& t = b.threads[i];
    t.block = &b;
    t.tid = dim3(i, 0, 0); t.lane = i % 32; t.warp = i / 32;
    t.regs = std::min(255u, 65536u / block.x / 8 * 8);  // __launch_bounds__(threads, 1)
    getcontext(&t.ctx);
    t.ctx.uc_stack.ss_sp = g_stacks[first_stack + i].data();
    t.ctx.uc_stack.ss_size = kStack;
    t.ctx.uc_link = nullptr;
    makecontext(&t.ctx, Trampoline, 0);
  }
}

// When the last thread of block b has ended: nothing may still target its
// shared memory (a peer's multicast copy pending there; a peer's later
// arrive or multicast onto it fails at issue, b.exited), and nothing of
// its own may be left pending.
static void EndBlock(Block& b) {
  g_block = &b;
  b.exited = true;
  for (const TmaOp& op : b.tma_pending)
    if (op.from >= 0 && unsigned(op.from) != b.rank)
      Failf("a TMA multicast from cluster rank %d into block %u (cluster rank %u) still pending when the "
            "block's threads have all ended (it exits while a peer's copy targets its shared memory)",
            op.from, b.idx.x, b.rank);
  for (auto& nb : b.named) if (nb.arrived) Fail("named barrier arrivals pending at block exit");
  if (!b.tma_pending.empty()) Fail("TMA pending at block exit");
  for (auto& q : b.wg_groups) if (!q.empty()) Fail("wgmma group pending at block exit");
}

// One turn of each live thread of block b (until it yields or ends);
// whether any was live.
static bool Pass(Block& b) {
  bool live = false;
  for (auto& t : b.threads) {
    if (t.done) continue;
    live = true;
    g_block = &b;
    g_cur = &t;
    if (!_setjmp(g_sched)) {  // returns again when it yields or ends
      if (t.started) _longjmp(t.resume, 1);
      t.started = true;
      setcontext(&t.ctx);
    }
    if (t.done && --b.live == 0) EndBlock(b);
  }
  return live;
}

// Names what the stuck threads of cluster c wait for.
static void FailDeadlock(const Cluster& c) {
  for (const Block* b : c.blocks)
    for (const auto& t : b->threads)
      if (!t.done && t.regs_wait)
        Fail("deadlock: setmaxnreg.inc waits for registers the block does not have (the counts after "
             "setmaxnreg exceed the allocation at launch)");
  std::string msg = "deadlock:";
  for (const Block* b : c.blocks) {
    std::map<long, int> waits;
    for (const auto& t : b->threads)
      if (!t.done && t.waiting_on >= 0) waits[t.waiting_on]++;
    for (const auto& [bar, n] : waits) {
      const MBar& m = b->mbars.at(uint32_t(bar));
      char part[240];
      snprintf(part, sizeof part,
               " in block %u (cluster rank %u) %d thread(s) wait on the mbarrier at shared offset %ld (phase %u, "
               "%d of %d arrivals pending, %ld transaction bytes);",
               b->idx.x, b->rank, n, bar, m.phase, m.pending, m.count, m.tx);
      msg += part;
    }
  }
  if (c.sync_arrived > 0) msg += " " + std::to_string(c.sync_arrived) + " thread(s) wait at barrier.cluster;";
  g_block = c.blocks[0];
  Fail(msg.c_str());
}

// The blocks of cluster c as fibers under one scheduler, until all have
// ended. With more than one block, block `lead` runs until it cannot go
// on before each turn of the others, so that it gets as far ahead of them
// as the protocol lets it: a block that reuses a buffer its peers may
// still read, or signals them too early, shows.
static void RunCluster(Cluster& c, unsigned lead) {
  const size_t n = c.blocks.size();
  for (;;) {
    const uint64_t before = g_progress;
    bool live = false;
    for (size_t k = 0; k < n; ++k) {
      Block& b = *c.blocks[(lead + k) % n];
      if (k == 0 && n > 1) {
        uint64_t start;
        do {
          start = g_progress;
          live |= Pass(b);
        } while (g_progress != start && b.live > 0);
      } else {
        live |= Pass(b);
      }
    }
    if (!live) return;
    if (g_progress == before) FailDeadlock(c);
  }
}

// The grid as clusters of `size` blocks along x (1: every block its own),
// in a shuffled order, one cluster after another.
static void RunClusters(dim3 grid, dim3 block, size_t smem, unsigned size, const std::function<void()>& body) {
  g_launches++;
  g_grid = grid; g_blockdim = block; g_body = &body;
  if (smem > 227 * 1024) Fail("too much shared memory");
  std::vector<dim3> order;  // each cluster's first block
  for (unsigned z = 0; z < grid.z; ++z) for (unsigned y = 0; y < grid.y; ++y)
    for (unsigned x = 0; x < grid.x; x += size) order.push_back(dim3(x, y, z));
  std::mt19937 rng(order.size());
  std::shuffle(order.begin(), order.end(), rng);
  const size_t kStack = 256 * 1024;
  if (g_stacks.size() < size * block.x) g_stacks.resize(size * block.x, std::vector<char>(kStack));
  for (auto first : order) {
    std::vector<Block> blocks(size);
    Cluster c;
    for (auto& b : blocks) c.blocks.push_back(&b);
    for (unsigned r = 0; r < size; ++r)
      StartBlock(blocks[r], dim3(first.x + r, first.y, first.z), c, r, block, smem, size_t(r) * block.x);
    RunCluster(c, (first.x / size) % size);  // the lead alternates between clusters
    g_cur = nullptr;
    g_block = nullptr;
  }
}

void RunGrid(dim3 grid, dim3 block, size_t smem, const std::function<void()>& body) {
  RunClusters(grid, block, smem, 1, body);
}

// A launch with the cluster dimension attribute (cudaLaunchKernelEx).
void RunClusteredGrid(dim3 grid, dim3 block, size_t smem, dim3 cluster, const std::function<void()>& body) {
  if (cluster.y != 1 || cluster.z != 1) Fail("clusters other than N x 1 x 1 blocks are not emulated");
  if (cluster.x > 8) Fail("a cluster of more than 8 blocks (the portable maximum)");
  if (grid.x == 0 || grid.x % cluster.x != 0)
    Failf("a grid of %u blocks along x is not a positive multiple of the cluster's %u", grid.x, cluster.x);
  g_clustered_launches++;
  RunClusters(grid, block, smem, cluster.x, body);
}
}  // namespace emu

#include "emu_host.h"

int main(int argc, char** argv) {
  std::vector<Scen> all = {
      {"hd64_bf16_full_q200_k300_h2", 1, 200, 300, 2, 2, 64, 0, true, 4},
      // Items for two waves of 256 queries: two consumers (ThreeConsumers'
      // padding rule, KSEEK_FA_HD64_THREE_PAD_PCT).
      {"hd64_bf16_full_q256_k300_h8", 1, 256, 300, 8, 8, 64, 0, true, 4},
      {"hd64_f16_full_q129_k129", 1, 129, 129, 1, 1, 64, 0, false, 2},
      {"hd128_f16_causal_q300_k300_h2", 1, 300, 300, 2, 2, 128, 1, false, 4},
      {"hd128_bf16_causal_q300_k300", 1, 300, 300, 1, 1, 128, 1, true, 2},
      {"hd256_bf16_causal_q100_k77", 1, 100, 77, 2, 2, 256, 1, true, 4},
      {"hd256_f16_causal_q200_k90", 1, 200, 90, 1, 1, 256, 1, false, 2},
      {"hd64_f16_causal_q128_k1_b3", 3, 128, 1, 1, 1, 64, 1, false, 4},
      {"hd64_bf16_full_q130_k1", 1, 130, 1, 2, 2, 64, 0, true, 4},
      {"hd128_bf16_gqa3_causal_q70_k190", 1, 70, 190, 6, 2, 128, 1, true, 4},
      {"hd128_bf16_split_q1_k1000_b2_h2", 2, 1, 1000, 2, 2, 128, 0, true, 132},
      {"hd64_f16_split_causal_q16_k700_h3", 1, 16, 700, 3, 3, 64, 1, false, 132},
      {"hd64_bf16_split_causal_q1000_k1024", 1, 1000, 1024, 1, 1, 64, 1, true, 132},
      {"hd256_bf16_split_causal_q150_k520", 1, 150, 520, 1, 1, 256, 1, true, 132},
      {"hd256_f16_split_gqa2_q5_k777_h4", 1, 5, 777, 4, 2, 256, 0, false, 132},
      {"hd256_bf16_sections_q20_k2100_b3h3", 3, 20, 2100, 3, 3, 256, 0, true, 4},
      {"hd128_f16_sections_causal_gqa2", 2, 40, 4200, 4, 2, 128, 1, false, 4},
      {"hd128_f16_many_short_b5_s8_causal", 5, 8, 8, 2, 2, 128, 1, false, 132},
      {"hd64_bf16_mqa_causal_q260_k260_h4", 1, 260, 260, 4, 1, 64, 1, true, 8},
      {"x_q33_k4099_gqa3_hd128_causal", 1, 33, 4099, 3, 1, 128, 1, true, 132},
      {"x_q4099_k33_hd128_causal", 1, 4099, 33, 1, 1, 128, 1, true, 132},
      {"x_s17_b7_mqa_h3_hd256_full_f16", 7, 17, 17, 3, 1, 256, 0, false, 132},
      {"x_q63_k65_b9_gqa4_h20_hd64_causal", 9, 63, 65, 20, 5, 64, 1, true, 132},
      {"x_q1_k3001_b5_gqa4_h12_hd64_causal_f16", 5, 1, 3001, 12, 3, 64, 1, false, 132},
      {"x_q640_k1_b2_h12_hd128_full", 2, 640, 1, 12, 12, 128, 0, true, 132},
      {"x_q1000_k999_gqa2_hd256_causal_f16", 1, 1000, 999, 2, 1, 256, 1, false, 132},
      {"x_decode_q16_k8192_hd64_causal", 1, 16, 8192, 2, 2, 64, 1, true, 132},
      {"x_qlong_q1024_k512_hd128_full_f16", 1, 1024, 512, 1, 1, 128, 0, false, 132},
      // The WGMMA kernel (one SM: every shape fills its wave).
      {"w_hd128_bf16_full_q256_k700", 1, 256, 700, 1, 1, 128, 0, true, 1},
      {"w_hd128_f16_causal_q700_k700", 1, 700, 700, 1, 1, 128, 1, false, 1},
      {"w_hd64_bf16_full_q300_k1100_h2", 1, 300, 1100, 2, 2, 64, 0, true, 1},
      {"w_hd64_f16_causal_q513_k513", 1, 513, 513, 1, 1, 64, 1, false, 1},
      {"w_hd256_bf16_causal_q300_k333", 1, 300, 333, 1, 1, 256, 1, true, 1},
      {"w_hd256_f16_full_q130_k260_b2", 2, 130, 260, 1, 1, 256, 0, false, 1},
      {"w_hd128_bf16_gqa3_causal_q200_k450", 1, 200, 450, 6, 2, 128, 1, true, 1},
      {"w_hd64_bf16_mqa_full_q70_k129_h4", 2, 70, 129, 4, 1, 64, 0, true, 1},
      {"w_hd128_bf16_qlong_causal_q600_k100", 1, 600, 100, 1, 1, 128, 1, true, 1},
      {"w_hd256_bf16_qlong_causal_q300_k1", 1, 300, 1, 1, 1, 256, 1, true, 1},
      {"w_hd128_f16_full_q640_k1_b2", 2, 640, 1, 2, 2, 128, 0, false, 1},
      {"w_hd64_f16_many_short_b9_s8_causal", 9, 8, 8, 2, 2, 64, 1, false, 1},
      {"w_hd128_bf16_many_short_b5_s65", 5, 65, 65, 2, 1, 128, 0, true, 1},
      {"w_hd256_f16_many_short_b3_s40_causal", 3, 40, 40, 2, 2, 256, 1, false, 1},
      {"w_hd128_bf16_decode_q1_k1000_b3", 3, 1, 1000, 2, 2, 128, 1, true, 1},
      {"w_hd256_f16_sections_q150_k2100_b2h3", 2, 150, 2100, 3, 3, 256, 1, false, 1},
      {"w_hd64_bf16_causal_q100_k4000", 1, 100, 4000, 2, 1, 64, 1, true, 1},
      // Items of 32 or more key tiles on the D = 256 and D = 192 kernels:
      // O staged in the last tile's V (KSEEK_FA_TMA_IN_V).
      {"w_hd256_bf16_full_q130_k2600", 1, 130, 2600, 1, 1, 256, 0, true, 1},
      {"w_hd192_f16_causal_q140_k4000", 1, 140, 4000, 1, 1, 192, 1, false, 1},
      // Queries 6x the task's spread: row maxima that move after the first
      // tiles, by more than KSEEK_FA_LAZY_RESCALE's bound in some rows of a
      // warp and not in others (the lazy rescale at 128, 256, D = 192 and
      // the narrow dims; 176-key tiles rescale under the next S; split keys).
      {"r_hd128_bf16_full_q130_k700_qstd6", 1, 130, 700, 1, 1, 128, 0, true, 1, 6.f},
      {"r_hd128_f16_full_q130_k4400_qstd6", 1, 130, 4400, 1, 1, 128, 0, false, 1, 6.f},
      {"r_hd256_f16_causal_q200_k600_qstd6", 1, 200, 600, 1, 1, 256, 1, false, 1, 6.f},
      {"r_hd192_bf16_causal_q130_k500_qstd6", 1, 130, 500, 1, 1, 192, 1, true, 1, 6.f},
      {"r_hd96_bf16_full_q150_k900_qstd6", 1, 150, 900, 1, 1, 96, 0, true, 1, 6.f},
      {"r_hd64_f16_causal_q300_k800_qstd6", 1, 300, 800, 1, 1, 64, 1, false, 1, 6.f},
      {"r_hd128_bf16_split_q200_k3000_sm12_qstd6", 1, 200, 3000, 1, 1, 128, 0, true, 12, 6.f},
      // One key 40x the others (k_spike): its score passes some rows'
      // maxima from the earlier tiles by more than 128 in log2 units, so
      // P against them is inf (KSEEK_FA_SUM_CHECK's S again); causal items
      // from the end and from the start, 64-key to 176-key tiles.
      {"r_hd64_bf16_full_q300_k900_spike40", 1, 300, 900, 2, 1, 64, 0, true, 1, 1.f, 40.f},
      {"r_hd128_f16_causal_q400_k1000_spike40", 1, 400, 1000, 1, 1, 128, 1, false, 1, 1.f, 40.f},
      {"r_hd128_bf16_full_q256_k7000_spike40", 1, 256, 7000, 1, 1, 128, 0, true, 1, 1.f, 40.f},
      {"r_hd256_bf16_causal_q300_k700_spike40", 1, 300, 700, 1, 1, 256, 1, true, 1, 1.f, 40.f},
      {"r_hd96_f16_full_q200_k800_spike40", 1, 200, 800, 2, 2, 96, 0, false, 1, 1.f, 40.f},
      {"p_hd128_bf16_causal_q700_k700_h3_sm3", 1, 700, 700, 3, 3, 128, 1, true, 3},
      {"s_hd128_bf16_full_q256_k4000_sm16", 1, 256, 4000, 1, 1, 128, 0, true, 16},
      {"s_hd256_f16_causal_q300_k3000_b2_sm12", 2, 300, 3000, 1, 1, 256, 1, false, 12},
      {"s_hd64_bf16_causal_q200_k5000_gqa2_sm20", 1, 200, 5000, 4, 2, 64, 1, true, 20},
      {"s_hd128_f16_full_q333_k4097_h3_sm40", 1, 333, 4097, 3, 3, 128, 0, false, 40},
      {"s_hd128_bf16_qlong_causal_q400_k300_sm16", 1, 400, 300, 2, 2, 128, 1, true, 16},
      {"p_hd64_f16_full_q300_k500_b3_sm2", 3, 300, 500, 2, 1, 64, 0, false, 2},
      {"p_hd256_bf16_qlong_causal_q900_k200_sm3", 1, 900, 200, 2, 2, 256, 1, true, 3},
      {"p_hd128_f16_ragged_causal_q333_k1000_b2_sm4", 2, 333, 1000, 3, 1, 128, 1, false, 4},
      // head dims between the compiled widths (64, 128, 256): zero-filled
      // columns past head_dim, stores that skip them.
      {"dim_hd80_bf16_full_q200_k300_h2_sm4", 1, 200, 300, 2, 2, 80, 0, true, 4},
      {"dim_hd96_f16_causal_q300_k300_h2_sm4", 1, 300, 300, 2, 2, 96, 1, false, 4},
      {"dim_hd160_bf16_causal_q100_k77_sm4", 1, 100, 77, 2, 2, 160, 1, true, 4},
      {"dim_hd192_f16_full_q130_k260_b2_sm1", 2, 130, 260, 1, 1, 192, 0, false, 1},
      // P V over the first 192 columns only (KSEEK_FA_NARROW_PV), whole
      // items and split keys.
      {"dim_hd160_f16_causal_q300_k300_h2_sm2", 1, 300, 300, 2, 2, 160, 1, false, 2},
      {"dim_hd184_bf16_split_q200_k3000_sm8", 1, 200, 3000, 1, 1, 184, 0, true, 8},
      {"dim_hd72_bf16_many_short_b5_s65_sm1", 5, 65, 65, 2, 1, 72, 0, true, 1},
      {"dim_hd176_f16_many_short_b5_s65_sm1", 5, 65, 65, 2, 2, 176, 1, false, 1},
      {"dim_hd96_bf16_split_q1_k1000_b2_h2", 2, 1, 1000, 2, 2, 96, 0, true, 132},
      {"dim_hd200_f16_split_gqa2_q5_k777_h4", 1, 5, 777, 4, 2, 200, 0, false, 132},
      {"dim_hd136_bf16_split_causal_q150_k520", 1, 150, 520, 1, 1, 136, 1, true, 132},
      // GQA heads packed into the mma.sync kernel's row tiles (pack = group).
      {"pk_hd128_bf16_decode_q1_k3000_gqa16_b3", 3, 1, 3000, 16, 1, 128, 0, true, 132},
      {"pk_hd64_f16_decode_q4_k1600_gqa8_causal", 2, 4, 1600, 16, 2, 64, 1, false, 132},
      {"pk_hd256_bf16_q16_k900_gqa8_causal", 1, 16, 900, 8, 1, 256, 1, true, 132},
      {"pk_hd128_f16_q33_k700_gqa5_causal_b2", 2, 33, 700, 10, 2, 128, 1, false, 132},
      {"pk_hd96_bf16_q1_k2000_mqa12", 2, 1, 2000, 12, 1, 96, 0, true, 132},
      {"pk_hd128_bf16_q3_k130_gqa4_b12", 12, 3, 130, 8, 2, 128, 1, true, 132},
      {"pk_hd128_bf16_q2_k300_gqa4_b4_sm4", 4, 2, 300, 8, 2, 128, 1, true, 4},
      {"pk_hd256_f16_q16_k200_gqa2_b3_sm4", 3, 16, 200, 4, 2, 256, 0, false, 4},
      // GQA decode that the mma.sync kernel would split many ways: the decode
      // kernel with long splits (one block per SM), and from 16 splits on the
      // block-per-row combine.
      {"g_hd128_bf16_q1_k10000_gqa16_sm20", 1, 1, 10000, 16, 1, 128, 0, true, 20},
      {"g_hd64_f16_q1_k10000_gqa8_sm20", 1, 1, 10000, 16, 2, 64, 0, false, 20},
      {"g_hd128_bf16_q1_k8192_gqa4_b3_h12", 3, 1, 8192, 12, 3, 128, 0, true, 132},
      {"g_hd80_f16_q1_k20000_gqa8", 1, 1, 20000, 8, 1, 80, 0, false, 132},
      {"g_hd128_bf16_q2_k12000_gqa8_causal", 1, 2, 12000, 16, 2, 128, 1, true, 132},
      {"g_hd96_bf16_q1_k8000_gqa4", 1, 1, 8000, 8, 2, 96, 0, true, 132},
      {"g_hd192_f16_q1_k12000_gqa8", 1, 1, 12000, 8, 1, 192, 0, false, 132},
      // Row groups of 17-32 rows (4 and 3 queries x 8 heads): two 16-row
      // decode blocks per group, or one with two row tiles per warp
      // (KSEEK_FA_DECODE_TWO_TILES: by default at head_dim 64); split keys,
      // the last row tile partly past the group's rows.
      {"g_hd64_bf16_q4_k6000_gqa8_causal", 1, 4, 6000, 16, 2, 64, 1, true, 132},
      {"g_hd128_bf16_q4_k9000_gqa8_causal", 1, 4, 9000, 16, 2, 128, 1, true, 132},
      {"g_hd128_f16_q3_k3000_gqa8_causal_b2", 2, 3, 3000, 8, 1, 128, 1, false, 132},
      // Clusters of two blocks with K/V multicast (KSEEK_FA_CLUSTER: whole
      // items without causal masking, no more queries than keys, an even
      // number of 128-row query tiles per head; head_dim 104-128 on
      // D = 128, 200-256 on 256, 136-192 on the D = 192 kernel): 4 SMs, so
      // 2 clusters, each taking several pairs of query tiles. head_dim 128's 144-key and 128-key tiles (two Q
      // buffers, up to 4096 keys) and 176-key tiles (more keys), 256's
      // 80-key tiles, O staged in V from 32 tiles on, D = 192's 112-key
      // tiles; partial last query and key tiles, head dims under D
      // (zero-filled columns), GQA.
      {"c_hd128_bf16_full_q512_k700_h2_sm4", 1, 512, 700, 2, 2, 128, 0, true, 4},
      {"c_hd128_f16_full_q1000_k1100_sm4", 1, 1000, 1100, 1, 1, 128, 0, false, 4},
      {"c_hd112_bf16_full_q256_k1000_gqa3_sm4", 1, 256, 1000, 3, 1, 112, 0, true, 4},
      {"c_hd128_bf16_full_q256_k300_h3_sm4", 1, 256, 300, 3, 3, 128, 0, true, 4},
      {"c_hd128_f16_full_q256_k4200_h3_sm4", 1, 256, 4200, 3, 3, 128, 0, false, 4},
      {"c_hd256_bf16_full_q512_k530_h2_sm4", 1, 512, 530, 2, 2, 256, 0, true, 4},
      {"c_hd256_f16_full_q1000_k1030_sm4", 1, 1000, 1030, 1, 1, 256, 0, false, 4},
      {"c_hd224_bf16_full_q256_k333_b3_sm4", 3, 256, 333, 1, 1, 224, 0, true, 4},
      {"c_hd256_bf16_full_q256_k2600_h3_sm4", 1, 256, 2600, 3, 3, 256, 0, true, 4},
      {"c_hd192_f16_full_q512_k600_h2_sm4", 1, 512, 600, 2, 2, 192, 0, false, 4},
      {"c_hd160_bf16_full_q256_k1000_h3_sm4", 1, 256, 1000, 3, 3, 160, 0, true, 4},
      // Whole items without causal masking that leave a last round partly
      // empty (items not a multiple of the blocks or clusters): clustered
      // at head_dim 128 (pairs), 256 and 192, unclustered (an odd number of
      // query tiles, head_dim 64, the narrow 96 instance, GQA), partial
      // last query and key tiles.
      {"t_hd128_bf16_full_q768_k2100_h3_sm4", 1, 768, 2100, 3, 3, 128, 0, true, 4},
      {"t_hd128_f16_full_q384_k1500_sm2", 1, 384, 1500, 1, 1, 128, 0, false, 2},
      {"t_hd64_bf16_full_q640_k2000_sm2", 1, 640, 2000, 1, 1, 64, 0, true, 2},
      {"t_hd256_f16_full_q768_k1000_sm4", 1, 768, 1000, 1, 1, 256, 0, false, 4},
      {"t_hd192_bf16_full_q768_k900_sm4", 1, 768, 900, 1, 1, 192, 0, true, 4},
      {"t_hd96_f16_full_q300_k1000_sm2", 1, 300, 1000, 1, 1, 96, 0, false, 2},
      {"t_hd128_bf16_full_q600_k3000_gqa4_sm3", 1, 600, 3000, 4, 1, 128, 0, true, 3},
      // Clusters with causal masking (KSEEK_FA_CAUSAL_CLUSTER): the block of
      // a pair's earlier query tile walks the pair's key tiles, those past
      // its rows masked; every other round of the clusters' static order
      // backwards (rounds of 2-3 clusters, the last one partly empty).
      // head_dim 128's two-Q-buffer kernel (up to 512 keys), its 128-key
      // tiles and 176-key tiles from the end (mean item 6244 keys), D = 256
      // and D = 192; partial last query and key tiles, queries fewer than
      // keys, GQA.
      {"cz_hd128_bf16_causal_q512_k512_h2_sm4", 1, 512, 512, 2, 2, 128, 1, true, 4},
      {"cz_hd128_f16_causal_q1000_k1100_sm4", 1, 1000, 1100, 1, 1, 128, 1, false, 4},
      {"cz_hd128_bf16_causal_q768_k900_gqa3_sm6", 1, 768, 900, 3, 1, 128, 1, true, 6},
      {"cz_hd112_bf16_causal_q512_k6500_h2_sm4", 1, 512, 6500, 2, 2, 112, 1, true, 4},
      {"cz_hd256_bf16_causal_q512_k600_h2_sm4", 1, 512, 600, 2, 2, 256, 1, true, 4},
      {"cz_hd224_f16_causal_q1000_k1030_sm4", 1, 1000, 1030, 1, 1, 224, 1, false, 4},
      {"cz_hd192_bf16_causal_q512_k530_h2_sm4", 1, 512, 530, 2, 2, 192, 1, true, 4},
      {"cz_hd160_f16_causal_q768_k768_sm6", 1, 768, 768, 1, 1, 160, 1, false, 6},
      // The last rounds' key tiles in even shares (KSEEK_FA_TAIL_SPLIT):
      // whole pairs first (none in some), then each cluster's share pair
      // by pair, one or two pairs' tiles, a pair in one or two shares; the
      // split pairs' partials and counters, the last segment's merge;
      // fewer pairs than clusters (every cluster on a share); head_dim
      // 128's two-Q-buffer kernel and 176-key tiles, D = 256 and D = 192;
      // partial last query and key tiles, head dims under D, GQA. Run one
      // after another on one stream, so a counter left above 0 fails the
      // next run.
      {"tl_hd128_bf16_full_q1280_k2100_h2_sm6", 1, 1280, 2100, 2, 2, 128, 0, true, 6},
      {"tl_hd128_f16_full_q1000_k3000_h3_sm10", 1, 1000, 3000, 3, 3, 128, 0, false, 10},
      {"tl_hd128_bf16_full_q768_k2600_gqa2_sm8", 1, 768, 2600, 2, 1, 128, 0, true, 8},
      {"tl_hd128_bf16_full_q1024_k2000_sm10", 1, 1024, 2000, 1, 1, 128, 0, true, 10},
      {"tl_hd112_f16_full_q512_k5000_h3_sm8", 1, 512, 5000, 3, 3, 112, 0, false, 8},
      {"tl_hd256_bf16_full_q512_k1500_h5_sm6", 1, 512, 1500, 5, 5, 256, 0, true, 6},
      {"tl_hd224_f16_full_q768_k1000_sm4", 1, 768, 1000, 1, 1, 224, 0, false, 4},
      {"tl_hd160_bf16_full_q768_k1300_sm4", 1, 768, 1300, 1, 1, 160, 0, true, 4},
  };
  return RunShapes(argc, argv, all);
}
