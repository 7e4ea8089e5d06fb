#!/usr/bin/env python3
"""hopper.cu -> hopper_emu.inc: the kernel file with its PTX wrappers
replaced by the emulated ones, launches turned into emu::LaunchKernel calls
and its one inline-asm exponential turned into exp2f.

  transform.py HOPPER_CU EMU_WRAPPERS EMU_WGMMA OUT [-DNAME=VALUE ...]
"""
import re
import sys

src = open(sys.argv[1]).read()
wr = open(sys.argv[2]).read()
wg = open(sys.argv[3]).read()
defines = "".join("#define %s %s\n" % tuple((d[2:].split("=", 1) + ["1"])[:2])
                  for d in sys.argv[5:])
a = src.index("// PTX wrappers.")
b = src.index("// Two floats rounded")
src = src[:a] + wr + src[b:]
a = src.index("// ---------------------------------------------------------------------------\n// PTX wrappers of the WGMMA kernel")
b = src.index("#endif  // __CUDA_ARCH_FEAT_SM90_ALL", a) + len("#endif  // __CUDA_ARCH_FEAT_SM90_ALL")
src = src[:a] + wg + src[b:]
ex2 = '  asm("ex2.approx.ftz.f32 %0, %1;\\n" : "=f"(y) : "f"(x));'
assert ex2 in src, "the exponential's inline asm changed: update transform.py"
src = src.replace(ex2, "  y = exp2f(x);")
src = re.sub(r"#include <cuda[^>]*>\n", "", src)
src = src.replace("extern __shared__ __align__(128) unsigned char smem[];",
                  "unsigned char* smem = emu::g_block->smem.data();")
src, n = re.subn(r"(\w+(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\((.*?)\);",
                 lambda m: "emu::LaunchKernel(%s, %s, %s);" % (m.group(1), m.group(2), m.group(3)),
                 src, flags=re.S)
assert n == 3, "expected 3 kernel launches, found %d: update transform.py" % n
assert "asm volatile" not in src and "asm(" not in src, "inline asm left"
open(sys.argv[4], "w").write(defines + src)
