#!/usr/bin/env python3
"""Coverage corpus for the x86 decoder: one or more encodings of every opcode_map.txt entry.

gen_coverage_corpus.py MAP MODE OUT_PREFIX  (MODE: 64 or 32)
writes OUT_PREFIX.s (GNU as input: every instruction as .byte under its own label, so that
objdump restarts at each one) and OUT_PREFIX.expect (one line per instruction:
"label length flow map-line space:opcode:mnemonic"), the length worked out here from the encoding rules, SDM vol. 2
chapter 2, independently of the C++ decoder).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
import x86_opcode_map as omap  # noqa: E402

COLUMN_PREFIX = [None, 0x66, 0xF3, 0xF2]
LEGACY_ESCAPES = {"1b": [], "0f": [0x0F], "0f38": [0x0F, 0x38], "0f3a": [0x0F, 0x3A]}
VEX_MAP = {"vex0f": 1, "vex0f38": 2, "vex0f3a": 3}
EVEX_MAP = {"evex0f": 1, "evex0f38": 2, "evex0f3a": 3, "evex5": 5, "evex6": 6}
XOP_MAP = {"xop8": 8, "xop9": 9, "xopa": 10}


def imm_bytes(kind, is64, opsize16, rexw, addr16=False):
    """Bytes of the immediate/offset fields (SDM vol. 2 appendix A.2.2 operand-size codes)."""
    osz = 2 if opsize16 and not rexw else 4
    return {
        "-": 0, "Ib": 1, "Iw": 2, "Id": 4, "Iz": osz, "Iv": 8 if rexw else osz,
        "IwIb": 3, "IbIb": 2, "Ap": osz + 2, "Ov": (8 if is64 else 4), "Jb": 1,
        "Jz": 4 if (is64 or not opsize16) else 2, "Jo": 2 if opsize16 and not rexw else 4,
    }[kind]


def modrm_forms(line, is64):
    """(modrm, extra bytes) samples for a line: a memory form and a register form."""
    forms = []
    reg = line.reg() if line.reg() is not None else 2
    ex = line.exact_range()
    if ex:
        return [(b, []) for b in range(ex[0], ex[1] + 1)]
    constraint = line.mod_constraint()
    register_always = line.modrm == "R" or line.modrm.endswith(":R")
    if constraint != "x":
        # [rsp+8]-style SIB + disp8, and [rip/abs + disp32].
        forms.append(((1 << 6) | (reg << 3) | 4, [0x24, 0x08]))
        if not register_always:
            forms.append(((0 << 6) | (reg << 3) | 5, [0x10, 0x00, 0x00, 0x00]))
    if constraint != "m":
        forms.append((0xC0 | (reg << 3) | 1, []))
        forms.append((0xC0 | (reg << 3), []))
    if register_always:
        forms = [(m, []) for m, _ in forms]  # mov cr/dr: the mod field is ignored, no SIB/disp
    return forms


def vector_payloads(space, col, line):
    """(VEX/EVEX/XOP introducer + payload, W) variants (W0/W1 x two vector lengths), vvvv = 1111.

    objdump, like the processor, refuses W/L values and masking an instruction does not
    define; the variants keep to what the map says exists (the unit tests check refusals)."""
    ws = [line.w()] if line.w() is not None else [0, 1]
    lengths = line.lengths()
    if space in VEX_MAP:
        for w in ws:
            for vl in lengths:
                yield [0xC4, 0xE0 | VEX_MAP[space], (w << 7) | 0x78 | (vl << 2) | col], w
    elif space in EVEX_MAP:
        preferred = [ll for ll in (2, 0) if ll in lengths] or lengths[:1]
        for w in ws:
            if "km" not in line.attrs:
                for ll in preferred:
                    yield [0x62, 0xF0 | EVEX_MAP[space], (w << 7) | 0x7C | col, 0x08 | (ll << 5)], w
            # Masking with k1 (gathers and scatters need a mask other than k0: SDM vol. 2
            # VPGATHERDD, #UD if EVEX.aaa = 000), unless the instruction has no {k}.
            if "nk" not in line.attrs:
                yield [0x62, 0xF0 | EVEX_MAP[space], (w << 7) | 0x7C | col, 0x09 | (preferred[0] << 5)], w
    elif space in XOP_MAP:
        for w in ws:
            yield [0x8F, 0xE0 | XOP_MAP[space], (w << 7) | 0x78 | col], w


def encodings(line, is64, index):
    """Yields the byte strings of a line's sample encodings."""
    space = line.space
    if line.flow in ("prefix", "escape", "invalid"):
        return
    if (line.mode == "i64" and is64) or (line.mode == "o64" and not is64):
        return
    if line.mode == "intel64" and is64:
        return  # the corpus is compared with objdump -M amd64 and the AMD decoder
    for col in line.columns:
        if line.any_prefix and col != 0:
            continue  # one sample is enough when prefixes do not select the opcode
        head = []
        rexw = False
        if space in LEGACY_ESCAPES:
            if COLUMN_PREFIX[col] is not None:
                head.append(COLUMN_PREFIX[col])
            opcode_bytes = LEGACY_ESCAPES[space] + [line.opcode]
        elif space == "3dnow":
            opcode_bytes = [0x0F, 0x0F]
        elif space in VEX_MAP or space in EVEX_MAP or space in XOP_MAP:
            for payload, w in vector_payloads(space, col, line):
                for body in with_operands(line, is64, index, col, head, payload + [line.opcode], w):
                    yield body
            continue
        else:
            raise ValueError(space)
        if space == "1b" and 0x40 <= line.opcode <= 0x4F:
            continue
        for body in with_operands(line, is64, index, col, head, opcode_bytes):
            yield body
        imm = imm_bytes(line.imm, is64, False, rexw)
        if line.imm in ("Iz", "Iv") and space == "1b":
            # 66 shrinks Iz/Iv to 2 bytes; REX.W widens Iv to 8 (B8+r).
            base = opcode_bytes + ([0xC0 | ((line.reg() or 0) << 3)] if line.has_modrm() else [])
            yield [0x66] + base + [0x11] * imm_bytes(line.imm, is64, True, False)
            if is64 and line.imm == "Iv":
                yield [0x48] + base + [0x11] * 8


def with_operands(line, is64, index, col, head, opcode_bytes, w=0):
    imm = imm_bytes(line.imm, is64, False, False)
    if not line.has_modrm():
        yield head + opcode_bytes + [0x11] * imm
        return
    candidates = omap.for_w(index.get((line.space, line.opcode, col), []), w)
    for modrm, extra in modrm_forms(line, is64):
        # Only forms for which this line is the one the map selects (not a more specific one).
        if line.space != "3dnow" and omap.resolve(candidates, modrm) is not line:
            continue
        if "sib" in line.attrs and (modrm & 7) != 4:
            continue  # #UD without a SIB byte (the unit tests check that refusal)
        if "td" in line.attrs and (modrm & 7) in ((modrm >> 3) & 7, 0):
            continue  # AMX: the three tile registers must differ (vvvv = 1111b names tmm0)
        body = head + opcode_bytes + [modrm] + extra
        if line.space == "3dnow":
            body.append(line.opcode)
        yield body + [0x11] * imm


def main():
    map_path, mode, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
    is64 = mode == "64"
    lines = omap.parse(map_path)
    index = omap.index(lines)
    asm = [f"# Generated by gen_coverage_corpus.py from {os.path.basename(map_path)}; mode {mode}",
           f"\t.code{mode}", "\t.text"]
    expect = []
    seen = set()
    n = 0
    for line in lines:
        for body in encodings(line, is64, index):
            key = bytes(body)
            if key in seen:
                continue
            seen.add(key)
            label = f"c{n}"
            n += 1
            asm.append(f"{label}:\t.byte {', '.join(f'0x{b:02x}' for b in body)}")
            name = line.text.split()[0] if line.text else "?"
            expect.append(f"{label} {len(body)} {line.flow} {line.number} {line.space}:{line.opcode:02x}:{name}")
        # Pad between entries is unnecessary: every instruction has its own label.
    with open(prefix + ".s", "w") as f:
        f.write("\n".join(asm) + "\n")
    with open(prefix + ".expect", "w") as f:
        f.write("\n".join(expect) + "\n")


if __name__ == "__main__":
    main()
