#!/usr/bin/env python3
"""Generates the x86 decoder's lookup tables (a C++ header) from src/insn/x86/opcode_map.txt.

Run by CMake at build time: gen_x86_tables.py MAP OUTPUT_HEADER.
Every (opcode map, opcode, mandatory-prefix column) gets one 8-byte Entry. When the ModRM
byte selects between lines, the entry points at a group: 16 resolved entries indexed by
(mod == 11) * 8 + reg, or 72 (8 memory forms by reg, then 64 register forms by modrm & 63)
when some line names an exact ModRM byte. The decoder does one lookup per opcode, and a
second one for groups.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import x86_opcode_map as omap  # noqa: E402

KIND_INVALID, KIND_OP, KIND_GROUP, KIND_GROUP_EXACT, KIND_PREFIX, KIND_ESCAPE = range(6)
MODRM_KINDS = {"-": 0, "r": 1, "m": 2, "x": 3, "R": 4}
# bit 0: invalid in 64-bit mode, bit 1: invalid in 32-bit mode, bit 2: invalid in 64-bit mode on AMD
MODE_BITS = {"-": 0, "i64": 1, "o64": 2, "intel64": 4}

# Table name -> spaces; maps with mandatory-prefix columns get 4 * 256 entries.
TABLES = [
    ("kPrimary", ["1b"], False),
    ("kMap0F", ["0f"], True),
    ("kMap0F38", ["0f38"], True),
    ("kMap0F3A", ["0f3a"], True),
    ("k3DNow", ["3dnow"], False),
    ("kVex", ["vex0f", "vex0f38", "vex0f3a"], True),
    ("kEvex", ["evex0f", "evex0f38", "evex0f3a", "evex5", "evex6"], True),
    ("kXop", ["xop8", "xop9", "xopa"], True),
]


def attr_bits(line):
    bits = 0
    for a in line.attrs:
        b = omap.ATTRS.get(a)
        if b is not None:
            bits |= 1 << b
    return bits


def op_entry(line, modrm_kind, rules):
    if line.flow == "invalid":
        return INVALID
    kind = {"prefix": KIND_PREFIX, "escape": KIND_ESCAPE}.get(line.flow, KIND_OP)
    flow = omap.FLOWS.index(line.flow) if line.flow in omap.FLOWS else 0
    bits = attr_bits(line) | (0 if line.any_prefix else MANDATORY_PREFIX_BIT)
    return (kind, modrm_kind, omap.IMM_KINDS.index(line.imm), MODE_BITS[line.mode], flow, rules, bits)


MANDATORY_PREFIX_BIT = 1 << 14  # the line names its prefix column: 66/F2/F3 selected the opcode
INVALID = (KIND_INVALID, 0, 0, 0, 0, 0, 0)
W_UNDEFINED = 1 << omap.RULE_W_UNDEFINED


class Generator:
    def __init__(self, lines):
        self.index = omap.index(lines)
        self.groups16 = []
        self.groups72 = []
        # Rule sets: (rule word when W = 0, rule word when W = 1); index 0 = no rules.
        self.rule_sets = [(0, 0)]

    def rules_index(self, line_w0, line_w1):
        pair = tuple(line.rule_word() if line is not None else W_UNDEFINED for line in (line_w0, line_w1))
        if pair == (0, 0):
            return 0
        if pair not in self.rule_sets:
            self.rule_sets.append(pair)
            if len(self.rule_sets) > 256:
                raise omap.MapError("more than 256 distinct operand-rule sets: widen Entry::rules")
        return self.rule_sets.index(pair)

    def merged_entry(self, line_w0, line_w1, modrm_kind):
        """One entry for the lines selected with W = 0 and W = 1 (either may be None)."""
        base = line_w0 or line_w1
        if base is None or base.flow == "invalid":
            return INVALID
        for other in (line_w0, line_w1):
            if other is not None and other is not base and (
                    other.imm != base.imm or other.mode != base.mode or other.flow != base.flow or
                    attr_bits(other) != attr_bits(base) or other.any_prefix != base.any_prefix):
                raise omap.MapError(f"lines {base.number} and {other.number}: W0 and W1 forms of one opcode "
                                    f"must share immediate, mode, flow and attributes")
        return op_entry(base, modrm_kind, self.rules_index(line_w0, line_w1))

    def sub_entry(self, candidates, modrm_byte):
        lines = [omap.resolve(omap.for_w(candidates, w), modrm_byte) for w in (0, 1)]
        base = lines[0] or lines[1]
        if base is None:
            return INVALID
        return self.merged_entry(lines[0], lines[1], MODRM_KINDS["R"] if base.modrm.endswith(":R") else MODRM_KINDS["r"])

    def entry(self, space, opcode, column):
        candidates = self.index.get((space, opcode, column), [])
        if not candidates:
            return INVALID
        # One ModRM form for every line (W0/W1 twins included): no group needed.
        if candidates[0].modrm in MODRM_KINDS and all(c.modrm == candidates[0].modrm for c in candidates):
            by_w = [omap.for_w(candidates, w) for w in (0, 1)]
            if all(len(lines) <= 1 for lines in by_w):
                return self.merged_entry(by_w[0][0] if by_w[0] else None, by_w[1][0] if by_w[1] else None,
                                         MODRM_KINDS[candidates[0].modrm])
        for c in candidates:
            if not c.has_modrm() or c.modrm == "R":
                raise omap.MapError(f"line {c.number}: {space} {opcode:02x} mixes a ModRM group with a "
                                    f"form without a selectable ModRM")
        mem = [self.sub_entry(candidates, (0 << 6) | (reg << 3)) for reg in range(8)]
        exact = any(c.modrm.startswith("=") for c in candidates)
        if exact:
            regs = [self.sub_entry(candidates, 0xC0 | low) for low in range(64)]
            return (KIND_GROUP_EXACT, 1, 0, 0, 0, 0, self.intern(self.groups72, mem + regs))
        regs = [self.sub_entry(candidates, 0xC0 | (reg << 3)) for reg in range(8)]
        return (KIND_GROUP, 1, 0, 0, 0, 0, self.intern(self.groups16, mem + regs))

    @staticmethod
    def intern(groups, group):
        if group in groups:
            return groups.index(group)
        groups.append(group)
        return len(groups) - 1


def format_entry(e):
    kind, modrm, imm, mode, flow, rules, aux = e
    if kind in (KIND_GROUP, KIND_GROUP_EXACT):
        return f"{{{kind},{modrm},0,0,0,0,{aux}}}"
    return f"{{{kind},{modrm},{imm},{mode},{flow},{rules},{aux:#x}}}"


def main():
    map_path, out_path = sys.argv[1], sys.argv[2]
    lines = omap.parse(map_path)
    gen = Generator(lines)
    out = []
    out.append("// Generated by tools/gen_x86_tables.py from src/insn/x86/opcode_map.txt. Do not edit.")
    out.append("#pragma once")
    out.append("#include <cstdint>")
    out.append("namespace xprobe::insn::x86::tables {")
    out.append("enum : uint8_t { kKindInvalid, kKindOp, kKindGroup, kKindGroupExact, kKindPrefix, kKindEscape };")
    out.append("enum : uint8_t { kModrmNone, kModrmAny, kModrmMem, kModrmReg, kModrmRegAlways };")
    out.append("enum : uint8_t { " + ", ".join("kImm" + (k if k != "-" else "None") for k in omap.IMM_KINDS) + " };")
    out.append("enum : uint8_t { kInvalidIn64 = 1, kInvalidIn32 = 2, kInvalidIn64OnAmd = 4 };")
    out.append("inline constexpr uint16_t kAttrNeedsSib = 1u << 13;")
    out.append("inline constexpr uint16_t kAttrLockable = 1u << 15;")
    out.append("inline constexpr uint16_t kAttrMandatoryPrefix = 1u << 14;")
    out.append("struct Entry {")
    out.append("  uint8_t kind;   // kKind*")
    out.append("  uint8_t modrm;  // kModrm*")
    out.append("  uint8_t imm;    // kImm*")
    out.append("  uint8_t mode;   // kInvalidIn*")
    out.append("  uint8_t flow;   // FlowKind")
    out.append("  uint8_t rules;  // index into kRuleSets (0: no operand rules)")
    out.append("  uint16_t aux;   // attr:: bits (+ kAttrLockable), or the group index for groups")
    out.append("};")
    out.append("static_assert(sizeof(Entry) == 8);")
    for name, spaces, columns in TABLES:
        ncols = 4 if columns else 1
        entries = []
        for space in spaces:
            for col in range(ncols):
                for op in range(256):
                    if not columns:
                        # No mandatory prefixes in this space: every column is the same.
                        entries.append(gen.entry(space, op, 0))
                    else:
                        entries.append(gen.entry(space, op, col))
        out.append(f"// {name}: spaces {' '.join(spaces)}; index = (space * {ncols} + column) * 256 + opcode")
        out.append(f"inline constexpr Entry {name}[{len(entries)}] = {{")
        for i in range(0, len(entries), 8):
            out.append("  " + ",".join(format_entry(e) for e in entries[i:i + 8]) + ",")
        out.append("};")
    names = {"nv": "NoVvvv", "kv": "MaskVvvv", "nr": "NoRexR", "kd": "RegIsMask", "gr": "RegIsGpr",
             "bc": "Broadcast", "er": "RoundingOrSae", "st": "Store", "nk": "NoMasking", "km": "NeedsMask",
             "nz": "NoZeroing", "gx": "GatherRegisters", "tm": "TileRegisters", "td": "DistinctTiles", "dx": "DestinationDistinct", "wi": "W1AsW0Outside64"}
    out.append("// Operand-rule bits (opcode_map.txt header), one word per W value.")
    out.append("enum : uint32_t {")
    for token, bit in omap.RULE_BITS.items():
        if token in names:
            out.append(f"  kRule{names[token]} = 1u << {bit},  // {token}")
    out.append(f"  kRuleNoVvvvLow = 1u << {omap.RULE_NO_VVVV_LOW},  // nv on a VSIB line")
    out.append(f"  kRuleWUndefined = 1u << {omap.RULE_W_UNDEFINED},")
    out.append("};")
    out.append(f"inline constexpr unsigned kRuleLengthShift = {omap.RULE_LENGTH_SHIFT};  // + L: that length is #UD")
    out.append(f"inline constexpr uint32_t kRuleSets[{len(gen.rule_sets)}][2] = {{")
    for w0, w1 in gen.rule_sets:
        out.append(f"  {{{w0:#x}, {w1:#x}}},")
    out.append("};")
    for name, groups, width in (("kGroups16", gen.groups16, 16), ("kGroups72", gen.groups72, 72)):
        out.append(f"inline constexpr Entry {name}[{max(len(groups), 1)}][{width}] = {{")
        for g in groups:
            out.append("  {" + ",".join(format_entry(e) for e in g) + "},")
        if not groups:
            out.append("  {},")
        out.append("};")
    out.append("}  // namespace xprobe::insn::x86::tables")
    text = "\n".join(out) + "\n"
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, out_path)


if __name__ == "__main__":
    try:
        main()
    except omap.MapError as e:
        sys.exit(f"gen_x86_tables.py: {e}")
