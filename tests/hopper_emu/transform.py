#!/usr/bin/env python3
"""hopper.cu -> hopper_emu.inc: the kernel file with its PTX wrappers
replaced by the emulated ones, launches turned into emu::LaunchKernel calls
and its one inline-asm exponential turned into exp2f.

  transform.py HOPPER_CU EMU_WRAPPERS EMU_WGMMA OUT [--plant=NAME] [-DNAME=VALUE ...]

--plant=NAME first plants one of the bugs below, which the emulation must
catch (tests/hopper_emulation_test.cc). When hopper.cu's structure has
changed so that the transform (or the plant) no longer applies, OUT is a
kernel whose every launch fails with the reason: the build goes on, and the
emulation's tests fail and name what to update.
"""
import re
import sys

# A planted bug: the one occurrence of the first text replaced by the second.
PLANTS = {
    # The causal mask lets each query see one key too many.
    "mask_bug": ("if (key >= limit0) s[n][e] = -INFINITY;",
                 "if (key > limit0) s[n][e] = -INFINITY;"),
    # The producer keeps 32 registers while two consumers take 240 each:
    # more than the block's 3 x 168, so setmaxnreg.inc waits forever.
    "overdraft": ("LowerRegisters<C::kProducerRegisters>();", "LowerRegisters<32>();"),
}


class Stale(Exception):
    """hopper.cu no longer looks the way this transform expects."""


def expect(condition, what):
    if not condition:
        raise Stale(what)


def transform(src, wr, wg, plant):
    if plant:
        right, wrong = PLANTS[plant]
        expect(right in src, "plant %s: %r is not in hopper.cu: update PLANTS in "
               "tests/hopper_emu/transform.py" % (plant, right))
        src = src.replace(right, wrong, 1)
    expect("// PTX wrappers." in src and "// Two floats rounded" in src,
           "the mma.sync PTX wrapper section moved: update tests/hopper_emu/transform.py")
    a = src.index("// PTX wrappers.")
    b = src.index("// Two floats rounded")
    src = src[:a] + wr + src[b:]
    wgmma = ("// ---------------------------------------------------------------------------\n"
             "// PTX wrappers of the WGMMA kernel")
    end = "#endif  // __CUDA_ARCH_FEAT_SM90_ALL"
    expect(wgmma in src and end in src[src.find(wgmma):],
           "the WGMMA PTX wrapper section moved: update tests/hopper_emu/transform.py")
    a = src.index(wgmma)
    b = src.index(end, a) + len(end)
    src = src[:a] + wg + src[b:]
    ex2 = '  asm("ex2.approx.ftz.f32 %0, %1;\\n" : "=f"(y) : "f"(x));'
    expect(ex2 in src, "the exponential's inline asm changed: update tests/hopper_emu/transform.py")
    src = src.replace(ex2, "  y = exp2f(x);")
    src = re.sub(r"#include <cuda[^>]*>\n", "", src)
    src = src.replace("extern __shared__ __align__(128) unsigned char smem[];",
                      "unsigned char* smem = emu::g_block->smem.data();")
    src, n = re.subn(r"(\w+(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\((.*?)\);",
                     lambda m: "emu::LaunchKernel(%s, %s, %s);" % (m.group(1), m.group(2), m.group(3)),
                     src, flags=re.S)
    expect(n == 3, "expected 3 kernel launches, found %d: update tests/hopper_emu/transform.py" % n)
    expect("asm volatile" not in src and "asm(" not in src,
           "inline asm left after the transform: update tests/hopper_emu/transform.py")
    return src


# Stands in for the kernel when the transform does not apply.
STALE_KERNEL = """#include "kernelseek/abi.h"
extern "C" const char* kseek_error_message(void) { return %s; }
extern "C" int kseek_launch(const kseek_launch_args*) { return 1; }
"""


def main(argv):
    hopper_cu, wr_path, wg_path, out = argv[1:5]
    plant = ""
    defines = ""
    for arg in argv[5:]:
        if arg.startswith("--plant="):
            plant = arg[len("--plant="):]
            if plant not in PLANTS:
                sys.exit("transform.py: unknown plant %r (known: %s)" % (plant, ", ".join(PLANTS)))
        elif arg.startswith("-D"):
            defines += "#define %s %s\n" % tuple((arg[2:].split("=", 1) + ["1"])[:2])
        else:
            sys.exit("transform.py: unexpected argument %r" % arg)
    src = open(hopper_cu).read()
    wr = open(wr_path).read()
    wg = open(wg_path).read()
    try:
        text = defines + transform(src, wr, wg, plant)
    except Stale as e:
        print("transform.py: %s" % e, file=sys.stderr)
        text = STALE_KERNEL % ('"transform.py: %s"' % str(e).replace("\\", "\\\\").replace('"', '\\"'))
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv)
