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
import re
import sys

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


class Stale(Exception):
    """blackwell.cu no longer looks the way this transform expects."""


def expect(condition, what):
    if not condition:
        raise Stale(what)


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


def transform(src, emu, plant):
    if plant:
        right, wrong = PLANTS[plant]
        expect(right in src, "plant %s: %r is not in blackwell.cu: update PLANTS in "
               "tests/blackwell_emu/transform.py" % (plant, right))
        src = src.replace(right, wrong, 1)
    begin = "// PTX wrappers (tcgen05, TMA, mbarriers, fences)."
    end = "// End of PTX wrappers."
    expect(begin in src and end in src,
           "the PTX wrapper section moved: update tests/blackwell_emu/transform.py")
    a = src.index(begin)
    b = src.index(end)
    section = src[a:b]
    kept = "".join(kept_function(section, sig) for sig in KEEP)
    src = src[:a] + emu + kept + src[b:]
    src = re.sub(r"#include <cuda[^>]*>\n", "", src)
    decl = "extern __shared__ __align__(128) unsigned char smem_raw[];"
    expect(decl in src, "the shared memory declaration changed: update tests/blackwell_emu/transform.py")
    src = src.replace(decl, "unsigned char* smem_raw = emu::g_block->smem.data();")
    src, n = re.subn(r"(\w+(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\((.*?)\);",
                     lambda m: "emu::LaunchKernel(%s, %s, %s);" % (m.group(1), m.group(2), m.group(3)),
                     src, flags=re.S)
    expect(n == 2, "expected 2 kernel launches, found %d: update tests/blackwell_emu/transform.py" % n)
    expect("asm volatile" not in src and "asm(" not in src,
           "inline asm left after the transform: update tests/blackwell_emu/transform.py")
    return src


# Stands in for the kernel when the transform does not apply.
STALE_KERNEL = """#include "kernelseek/abi.h"
extern "C" const char* kseek_error_message(void) { return %s; }
extern "C" int kseek_launch(const kseek_launch_args*) { return 1; }
"""


def main(argv):
    kernel, emu_path, out = argv[1:4]
    plant = ""
    defines = ""
    for arg in argv[4:]:
        if arg.startswith("--plant="):
            plant = arg[len("--plant="):]
            if plant not in PLANTS:
                sys.exit("transform.py: unknown plant %r (known: %s)" % (plant, ", ".join(PLANTS)))
        elif arg.startswith("-D"):
            defines += "#define %s %s\n" % tuple((arg[2:].split("=", 1) + ["1"])[:2])
        else:
            sys.exit("transform.py: unexpected argument %r" % arg)
    src = open(kernel).read()
    emu = open(emu_path).read()
    try:
        text = defines + transform(src, emu, plant)
    except Stale as e:
        print("transform.py: %s" % e, file=sys.stderr)
        text = STALE_KERNEL % ('"transform.py: %s"' % str(e).replace("\\", "\\\\").replace('"', '\\"'))
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv)
