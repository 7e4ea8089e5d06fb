#!/usr/bin/env python3
"""blackwell.cu -> blackwell_emu.inc: the kernel file with its PTX wrapper
section replaced by the emulated one (emu_tcgen05.inc), the kernel's own
descriptor builders kept, and its launch turned into an emu::LaunchKernel
call.

  transform.py BLACKWELL_CU EMU_TCGEN05 OUT [--plant=NAME] [-DNAME=VALUE ...]

--plant=NAME first plants one of the bugs below, which the emulation must
catch (tests/blackwell_emulation_test.cc). When blackwell.cu's structure
has changed so that the transform (or the plant) no longer applies, OUT is
a kernel whose every launch fails with the reason: the build goes on, and
the emulation's tests fail and name what to update.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hopper_emu"))
from transform_common import expect, host_side, main, plant  # noqa: E402

# A planted bug: the one occurrence of the first text replaced by the second.
PLANTS = {
    # O in the tensor-memory columns of S buffer 1.
    "tmem_column": ("static constexpr int kOCol = 2 * kBlockN;",
                    "static constexpr int kOCol = kBlockN;"),
    # P V never committed to the barrier that hands O on: the softmax's
    # wait for it never ends.
    "missing_commit": ("  MmaCommit(sm.bar(C::kPVDone));\n", ""),
    # The softmax uses its S registers without tcgen05.wait::ld.
    "missing_wait": ("      TmemLoad32(lane_addr + C::kSCol + buf * C::kBlockN + 32 * c, s + 32 * c);\n"
                     "    TmemWaitLd();\n",
                     "      TmemLoad32(lane_addr + C::kSCol + buf * C::kBlockN + 32 * c, s + 32 * c);\n"),
    # P V issued without waiting for V's TMA load: the MMA may read the
    # stage before the tile has landed.
    "missing_tma_wait": ("  Wait(sm.bar(C::kVFull + s), (i / C::kStages) & 1);\n", ""),
    # The load/MMA warpgroup keeps 160 registers while the softmax takes
    # 240 and the correction 152: more than the block's 3 x 168.
    "overdraft": ("LowerRegisters<kLoadRegisters>();", "LowerRegisters<160>();"),
}

# The kernel's own helpers kept inside the replaced wrapper section.
KEEP = ["uint64_t SmemDescriptor(", "uint32_t InstrDescriptor("]


def kept_function(section, signature):
    at = section.find(signature)
    expect(at >= 0, "%r is not in blackwell.cu's PTX wrappers: update KEEP in "
           "tests/blackwell_emu/transform.py" % signature)
    start = section.rfind("\n", 0, at) + 1
    previous = section.rfind("\n", 0, start - 1) + 1
    if section[previous:start].startswith("template"):
        start = previous
    end = section.find("\n}\n", at)
    expect(end >= 0, "the end of %r" % signature)
    return section[start:end + 3]


SCRIPT = "tests/blackwell_emu/transform.py"


def transform(src, emu, name):
    src = plant(src, PLANTS, name, "blackwell.cu", SCRIPT)
    begin = "// PTX wrappers (tcgen05, TMA, mbarriers, fences)."
    end = "// End of PTX wrappers."
    expect(begin in src and end in src,
           "the PTX wrapper section moved: update tests/blackwell_emu/transform.py")
    a = src.index(begin)
    b = src.index(end)
    section = src[a:b]
    kept = "".join(kept_function(section, sig) for sig in KEEP)
    src = src[:a] + emu + kept + src[b:]
    decl = "extern __shared__ __align__(128) unsigned char smem_raw[];"
    expect(decl in src, "the shared memory declaration changed: update %s" % SCRIPT)
    src = src.replace(decl, "unsigned char* smem_raw = emu::g_block->smem.data();")
    return host_side(src, 2, SCRIPT)


if __name__ == "__main__":
    main(sys.argv, 2, transform, PLANTS)
