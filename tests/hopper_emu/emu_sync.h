// The mbarrier, the TMA box copy and setmaxnreg, as both emulations model
// them (tests/hopper_emu for hopper.cu, tests/blackwell_emu for
// blackwell.cu; PTX ISA: mbarrier, cp.async.bulk.tensor, setmaxnreg). Each
// emu_main.cc includes it once inside namespace emu, after its Swz (the
// 128-byte swizzle) and before its TmaLoad and MbarWait, which differ: how
// late asynchronous work completes, and what it checks at issue.
#pragma once

#include "emu.h"

// --- mbarriers -------------------------------------------------------------
// The mbarrier at shared offset `bar` of block b (by default the running
// thread's; another block of its cluster for a shared::cluster arrive or a
// multicast copy), which must have been initialised.
static MBar& Bar(uint32_t bar, Block& b = *g_block) {
  if (bar % 8) Fail("mbarrier misaligned");
  auto it = b.mbars.find(bar);
  if (it == b.mbars.end() || !it->second.init) {
    if (&b == g_block) Fail("mbarrier not initialised");
    Failf("mbarrier at shared offset %u of block %u (cluster rank %u) not initialised", bar, b.idx.x, b.rank);
  }
  return it->second;
}
// A phase completes when its pending arrivals and transaction bytes reach
// 0. Bytes may come before the arrival that expects them (tx below 0: a
// peer's multicast landing before this block's expect_tx), but once every
// arrival is in, tx below 0 is more bytes than the phase expected.
static void MbarCheck(MBar& m, uint32_t bar, const Block& b) {
  if (m.pending == 0 && m.tx < 0)
    Failf("TMA bytes beyond the expected transaction count: the mbarrier at shared offset %u of block %u "
          "(cluster rank %u) has every arrival in and %ld bytes too many",
          bar, b.idx.x, b.rank, -m.tx);
  if (m.pending == 0 && m.tx == 0) { m.phase++; m.pending = m.count; g_progress++; }
}
void MbarInit(uint32_t bar, int count) {
  if (bar % 8 || bar + 8 > g_block->smem.size()) Fail("mbarrier address");
  MBar& m = g_block->mbars[bar];
  m.count = m.pending = count; m.tx = 0; m.phase = 0; m.init = true;
}
void MbarExpect(uint32_t bar, uint32_t bytes) { Bar(bar).tx += bytes; }
static void MbarArriveOn(Block& b, uint32_t bar) {
  MBar& m = Bar(bar, b);
  if (--m.pending < 0) Fail("mbarrier over-arrived");
  g_progress++;
  MbarCheck(m, bar, b);
}
void MbarArrive(uint32_t bar) { MbarArriveOn(*g_block, bar); }

// --- TMA -------------------------------------------------------------------
// The elements of a box of a 4-D tiled tensor map (op.map, at op.c) whose
// shared-memory side is at op.dst (1024-byte aligned, 128-byte swizzled;
// `unaligned`: the failure when it is not): f(the element's swizzled
// shared address, its address in the tensor, or nullptr out of bounds).
template <class F>
static void ForEachBoxElement(const TmaOp& op, const char* unaligned, F f) {
  EmuMap em; memcpy(&em, op.map, sizeof em);
  if (op.dst % 1024) Fail(unaligned);
  const uint32_t rowbytes = em.box[0] * 2;
  if (rowbytes != 128) Fail("TMA box row is not 128 bytes");
  for (uint32_t i3 = 0; i3 < em.box[3]; ++i3)
    for (uint32_t i2 = 0; i2 < em.box[2]; ++i2)
      for (uint32_t i1 = 0; i1 < em.box[1]; ++i1) {
        const uint32_t row = (i3 * em.box[2] + i2) * em.box[1] + i1;
        for (uint32_t i0 = 0; i0 < em.box[0]; ++i0) {
          const int64_t g[4] = {int64_t(op.c[0]) + i0, int64_t(op.c[1]) + i1, int64_t(op.c[2]) + i2,
                                int64_t(op.c[3]) + i3};
          bool in = true;
          for (int d = 0; d < 4; ++d) in = in && g[d] >= 0 && uint64_t(g[d]) < em.dims[d];
          const unsigned char* element =
              in ? em.base + g[0] * 2 + g[1] * em.strides[1] + g[2] * em.strides[2] + g[3] * em.strides[3]
                 : nullptr;
          f(Swz(op.dst + row * rowbytes + i0 * 2), element);
        }
      }
}

// One box of a 4-D tiled tensor map into the shared memory of block `into`
// (the running thread's, or for a multicast copy any block of its
// cluster), 128-byte swizzled, zero-filled out of bounds; its bytes
// complete that block's barrier's transaction.
static void DoTma(const TmaOp& op, Block& into = *g_block) {
  uint32_t total = 0;
  ForEachBoxElement(op, "TMA destination not 1024-byte aligned",
                    [&](uint32_t addr, const unsigned char* src) {
    uint16_t v = 0;  // out of bounds: zero fill
    if (src) {
      bool ok = false;
      for (auto& [p, n2] : g_readable)
        if ((const char*)src >= p && (const char*)src + 2 <= p + n2) ok = true;
      if (!ok) Fail("TMA read outside the input tensors");
      memcpy(&v, src, 2);
    }
    if (addr + 2 > into.smem.size()) Fail("TMA write outside shared memory");
    memcpy(into.smem.data() + addr, &v, 2);
    total += 2;
  });
  MBar& m = Bar(op.bar, into);
  m.tx -= total;
  g_progress++;
  MbarCheck(m, op.bar, into);
}

// --- setmaxnreg --------------------------------------------------------------
// The block's registers are what it got at launch; .dec returns a thread's
// surplus to the block's pool and .inc waits until the pool has enough (on
// the hardware per warp, here per thread: the same sums).
void SetMaxRegisters(int regs, bool inc) {
  Thread* t = g_cur;
  if (regs < 24 || regs > 256 || regs % 8) Fail("setmaxnreg count not a multiple of 8 in [24, 256]");
  if (inc ? regs < t->regs : regs > t->regs) Fail("setmaxnreg.inc below, or .dec above, the current count");
  if (!inc) {
    g_block->reg_pool += t->regs - regs;
  } else {
    t->regs_wait = true;
    while (g_block->reg_pool < regs - t->regs) Yield();
    t->regs_wait = false;
    g_block->reg_pool -= regs - t->regs;
  }
  t->regs = regs;
  g_progress++;
}
