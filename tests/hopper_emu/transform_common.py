"""What the emulations' transforms share (tests/hopper_emu/transform.py for
hopper.cu, tests/blackwell_emu/transform.py for blackwell.cu): planting a
bug, the host-side rewrite (CUDA includes dropped, launches turned into
emu::LaunchKernel calls, no inline asm left), the stand-in kernel written
when a transform no longer applies, and the command line

  transform.py KERNEL_CU INPUT... OUT [--plant=NAME] [-DNAME=VALUE ...]
"""
import re
import sys


class Stale(Exception):
    """The kernel file no longer looks the way its transform expects."""


def expect(condition, what):
    if not condition:
        raise Stale(what)


def plant(src, plants, name, kernel, script):
    """src with a planted bug: plants[name] is a pair of texts, or a list of
    pairs, and the first occurrence of each pair's first text is replaced
    by its second; src itself when name is empty."""
    if not name:
        return src
    edits = plants[name]
    for right, wrong in [edits] if isinstance(edits, tuple) else edits:
        expect(right in src, "plant %s: %r is not in %s: update PLANTS in %s" % (name, right, kernel, script))
        src = src.replace(right, wrong, 1)
    return src


def host_side(src, launches, script):
    """src without its CUDA includes and with its `launches` kernel launches
    (<<<...>>>) turned into emu::LaunchKernel calls; no inline asm may be
    left."""
    src = re.sub(r"#include <cuda[^>]*>\n", "", src)
    src, n = re.subn(r"(\w+(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\((.*?)\);",
                     lambda m: "emu::LaunchKernel(%s, %s, %s);" % (m.group(1), m.group(2), m.group(3)),
                     src, flags=re.S)
    expect(n == launches, "expected %d kernel launches, found %d: update %s" % (launches, n, script))
    expect("asm volatile" not in src and "asm(" not in src,
           "inline asm left after the transform: update %s" % script)
    return src


# Stands in for the kernel when the transform does not apply.
STALE_KERNEL = """#include "kernelseek/abi.h"
extern "C" const char* kseek_error_message(void) { return %s; }
extern "C" int kseek_launch(const kseek_launch_args*) { return 1; }
"""


def main(argv, inputs, transform, plants):
    """Reads the kernel file and `inputs - 1` more files named on the command
    line, writes transform(*texts, plant) (after the -D defines) to OUT, or
    the stand-in kernel with the reason when the transform is stale."""
    if len(argv) < inputs + 2:
        sys.exit(sys.modules["__main__"].__doc__)
    paths, out = argv[1:1 + inputs], argv[1 + inputs]
    name = ""
    defines = ""
    for arg in argv[2 + inputs:]:
        if arg.startswith("--plant="):
            name = arg[len("--plant="):]
            if name not in plants:
                sys.exit("transform.py: unknown plant %r (known: %s)" % (name, ", ".join(plants)))
        elif arg.startswith("-D"):
            defines += "#define %s %s\n" % tuple((arg[2:].split("=", 1) + ["1"])[:2])
        else:
            sys.exit("transform.py: unexpected argument %r" % arg)
    texts = [open(p).read() for p in paths]
    try:
        text = defines + transform(*texts, name)
    except Stale as e:
        print("transform.py: %s" % e, file=sys.stderr)
        text = STALE_KERNEL % ('"transform.py: %s"' % str(e).replace("\\", "\\\\").replace('"', '\\"'))
    with open(out, "w") as f:
        f.write(text)
