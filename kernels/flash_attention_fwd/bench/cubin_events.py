#!/usr/bin/env python3
"""The instructions sass_loops.py --waits reads, from an sm_90a cubin.

    python3 cubin_events.py FILE.cubin [--match REGEX] > FILE.sass
    python3 sass_loops.py --waits FILE.sass

For a machine without cuobjdump or nvdisasm (the CPU machines): reads the
cubin's code sections (`nvcc -cubin -gencode=arch=compute_90a,code=sm_90a`;
bench/sass_check.sh builds one as the harness does) and writes each
function in cuobjdump -sass's layout, but with only the instructions that
sass_loops.py's --waits verdict needs named:

    HGMMA.64xN    opcode 0x9f0 (B from shared memory) or 0xdf0 (A in
                  registers); N from bits 53-58 of the first word (N / 8 - 1);
                  ", gsb0" (the group's last) where bits 84-86 are not 7
    WARPGROUP.DEPBAR.LE gsb0, 0xK / WARPGROUP.ARRIVE
                  opcode 0x9c5; bit 47 set for the wait, K in bits 72-79
    FMNMX         opcodes 0x209 (two registers) and 0x809 (an immediate)
    MUFU.EX2      opcode 0x308, function 2 in bits 74-77
    SYNCS         opcodes 0x5a7, 0x9a7, 0x5b2 (mbarrier waits and arrives)
    BAR.SYNC / BAR.ARV  opcodes 0xb1d and 0x51d; the arrive has bit 77 set
    STL / LDL     opcodes 0x387 / 0x983 (spill stores and loads, local memory)
    BRA 0xTARGET  opcode 0x947; the offset, in 4-byte units from the next
                  instruction, has its low 8 bits in bits 16-23 and the
                  rest, signed, from bit 34 on

and every other instruction as OP_xxx (its 12-bit opcode), so that loop
sizes still count. The encodings were read off small kernels compiled
here (a loop, SS and RS wgmma of N 64-256, wait_group 0-2, mbarrier
waits, bar.sync, fmaxf, exp2f, a local array) and checked against
cuobjdump's listings of two builds of hopper.cu on the device (v4h and
KSEEK_FA_Q_REGS=3): the same event, spill class and branch target for
each of their 644,048 instructions. They are not a disassembler's, and an
instruction of another kind may share an opcode. A branch whose target
falls outside its function is reported on standard error (a sign the
offset's fields are read wrong) and written without a target.
"""
import argparse
import re
import signal
import struct
import sys


def sections(data):
    """[(name, bytes)] of an ELF64 file's sections."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("not an ELF64 file (is it a cubin? nvcc -cubin writes one)")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    out = []
    for name, _typ, _flags, _addr, off, size in heads:
        end = data.index(b"\0", names + name)
        out.append((data[names + name:end].decode(errors="replace"), data[off:off + size]))
    return out


def branch_target(addr, w0, w1):
    low = (w0 >> 16) & 0xFF
    high = (w0 >> 34) | ((w1 & 0x3FFFF) << 30)  # 48 bits, signed
    if high & (1 << 47):
        high -= 1 << 48
    return addr + 16 + 4 * ((high << 8) | low)


def text(addr, w0, w1, size, name):
    op = w0 & 0xFFF
    pred = (w0 >> 12) & 0xF
    guard = "" if pred == 7 else f"@{'!' if pred & 8 else ''}{'P' + str(pred & 7) if pred & 7 != 7 else 'PT'} "
    if op in (0x9F0, 0xDF0):
        gsb0 = ", gsb0" if (w1 >> 20) & 7 != 7 else ""  # 7: no group closed
        return f"{guard}HGMMA.64x{(((w0 >> 53) & 0x3F) + 1) * 8}x16{gsb0}"
    if op == 0x9C5:
        if w0 & (1 << 47):
            return f"{guard}WARPGROUP.DEPBAR.LE gsb0, 0x{(w1 >> 8) & 0xFF:x}"
        return f"{guard}WARPGROUP.ARRIVE"
    if op in (0x209, 0x809):
        return f"{guard}FMNMX"
    if op == 0x308:
        return f"{guard}MUFU.{'EX2' if (w1 >> 10) & 0xF == 2 else 'OTHER'}"
    if op in (0x5A7, 0x9A7, 0x5B2):
        return f"{guard}SYNCS"
    if op in (0x51D, 0xB1D):
        return f"{guard}BAR.{'ARV' if w1 & 0x2000 else 'SYNC'}"
    if op in (0x387, 0x983):
        return f"{guard}{'STL' if op == 0x387 else 'LDL'}"
    if op == 0x947:
        target = branch_target(addr, w0, w1)
        if 0 <= target < size:
            return f"{guard}BRA 0x{target:x}"
        print(f"cubin_events.py: {name} {addr:#x}: branch target {target:#x} outside the "
              f"function ({size:#x} bytes)", file=sys.stderr)
        return f"{guard}BRA"
    return f"{guard}OP_{op:03x}"


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cubin")
    ap.add_argument("--match", default=".", help="regex on the (mangled) function name")
    args = ap.parse_args()
    try:
        with open(args.cubin, "rb") as f:
            secs = sections(f.read())
    except (OSError, ValueError) as e:
        sys.exit(f"cubin_events.py: cannot read {args.cubin}: {getattr(e, 'strerror', None) or e}")
    match = re.compile(args.match)
    found = 0
    for name, body in secs:
        if not name.startswith(".text.") or not match.search(name[6:]):
            continue
        found += 1
        print(f"\t\tFunction : {name[6:]}")
        for addr in range(0, len(body) - 15, 16):
            w0, w1 = struct.unpack_from("<QQ", body, addr)
            print(f"        /*{addr:04x}*/                   {text(addr, w0, w1, len(body), name[6:])} ;")
    if not found:
        sys.exit(f"cubin_events.py: no function matches {args.match!r} in {args.cubin}")


if __name__ == "__main__":
    main()
