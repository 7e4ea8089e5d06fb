// CPU emulation of the CUDA features blackwell.cu uses. The thread,
// warp, block and 16-bit machinery is tests/hopper_emu/emu.h's (fibers per
// thread, warp collectives, block barriers); this adds what Blackwell has
// and Hopper has not: tensor memory (tcgen05.alloc / dealloc /
// relinquish_alloc_permit, tcgen05.ld / st / wait), tcgen05.mma with its
// instruction and shared-memory descriptors, tcgen05.commit to an
// mbarrier, and a warp vote. Definitions: emu_main.cc.
#pragma once
#include "emu.h"

#define __CUDA_ARCH_FEAT_SM100_ALL 1

namespace emu {
// Tensor memory (PTX ISA 9.7.16, "Tensor Memory"): 128 lanes x 512
// columns of 32 bits per CTA; an address is lane << 16 | column.
void TmemAlloc(uint32_t slot, uint32_t cols);
void TmemDealloc(uint32_t taddr, uint32_t cols);
void TmemLoad(uint32_t taddr, float* v, int n);
void TmemStore(uint32_t taddr, const float* v, int n);
void TmemWaitLd();
void TmemWaitSt();
void MmaIssue(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc, int accumulate);
void MmaCommit(uint32_t bar);
bool VoteAny(bool pred);
}  // namespace emu

inline bool __any_sync(unsigned, bool pred) { return emu::VoteAny(pred); }
