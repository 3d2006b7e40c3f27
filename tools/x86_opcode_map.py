"""Reader for src/insn/x86/opcode_map.txt (format described at the top of that file).

Shared by the table generator (gen_x86_tables.py) and the coverage-corpus test, so both
read the map the same way.
"""
from dataclasses import dataclass
import sys

SPACES = ["1b", "0f", "0f38", "0f3a", "3dnow",
          "vex0f", "vex0f38", "vex0f3a",
          "evex0f", "evex0f38", "evex0f3a", "evex5", "evex6",
          "xop8", "xop9", "xopa"]
PREFIX_COLUMNS = ["np", "66", "f3", "f2"]  # index == VEX/EVEX pp field
IMM_KINDS = ["-", "Ib", "Iw", "Id", "Iz", "Iv", "IwIb", "IbIb", "Ap", "Ov", "Jb", "Jz"]
FLOWS = ["none", "jmp", "jcc", "call", "ret", "loop", "ijmp", "icall", "int", "syscall", "iret", "far", "ud"]
NON_INSTRUCTION_FLOWS = ["prefix", "escape", "invalid"]
# Bit numbers of xprobe::insn::x86::attr (x86_insn.h); lk is internal to the tables.
ATTRS = {"stack": 0, "priv": 1, "cs": 2, "flags": 5, "serial": 6, "simd": 7, "io": 9, "fsgs": 10,
         "tsx": 11, "sib": 13, "lk": 15, "w64": None, "nv": None, "L0": None, "L1": None,
         "W0": None, "W1": None, "kv": None, "nr": None}
# VEX/EVEX rules, kept in their own byte of the table entry.
VEX_RULES = {"nv": 1, "L0": 2, "L1": 4, "W0": 8, "W1": 16, "kv": 32, "nr": 64}
MODES = ["-", "i64", "o64", "intel64"]


@dataclass
class Line:
    number: int
    space: str
    opcode: int
    modrm: str          # "-", "r", "m", "x", "R", "/n", "/n:m", "/n:x", "=XX", "=XX-YY"
    columns: list       # indexes into PREFIX_COLUMNS the line applies to
    any_prefix: bool    # pfx "-": prefixes are not mandatory
    imm: str
    mode: str
    flow: str
    attrs: list
    text: str

    def has_modrm(self):
        return self.modrm != "-"

    def reg(self):
        return int(self.modrm[1]) if self.modrm.startswith("/") else None

    def mod_constraint(self):
        """'m' (memory only), 'x' (register only) or None."""
        if self.modrm in ("m", "x"):
            return self.modrm
        if self.modrm.startswith("/") and ":" in self.modrm and not self.modrm.endswith(":R"):
            return self.modrm.split(":")[1]
        if self.modrm.startswith("="):
            return "x"
        return None

    def exact_range(self):
        if not self.modrm.startswith("="):
            return None
        parts = self.modrm[1:].split("-")
        lo = int(parts[0], 16)
        hi = int(parts[-1], 16)
        return lo, hi

    def matches(self, modrm_byte):
        mod = modrm_byte >> 6
        reg = (modrm_byte >> 3) & 7
        ex = self.exact_range()
        if ex:
            return ex[0] <= modrm_byte <= ex[1]
        if self.reg() is not None and self.reg() != reg:
            return False
        c = self.mod_constraint()
        if c == "m" and mod == 3:
            return False
        if c == "x" and mod != 3:
            return False
        return True

    def specificity(self):
        if self.modrm.startswith("="):
            return 4
        if self.modrm.startswith("/"):
            return 3 if self.mod_constraint() else 2
        if self.modrm in ("m", "x"):
            return 1
        return 0


class MapError(Exception):
    pass


def parse(path):
    lines = []
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            body = raw.split("#", 1)[0].strip() if raw.lstrip().startswith("#") else raw.strip()
            if not body:
                continue
            toks = body.split()
            if len(toks) < 8:
                raise MapError(f"{path}:{number}: expected at least 8 columns: {raw.rstrip()}")
            space, opcodes, modrm, pfx, imm, mode, flow, attrs = toks[:8]
            text = " ".join(toks[8:])
            where = f"{path}:{number}"
            if space not in SPACES:
                raise MapError(f"{where}: unknown space {space}")
            if imm not in IMM_KINDS:
                raise MapError(f"{where}: unknown immediate kind {imm}")
            if mode not in MODES:
                raise MapError(f"{where}: unknown mode {mode}")
            if flow not in FLOWS and flow not in NON_INSTRUCTION_FLOWS:
                raise MapError(f"{where}: unknown flow {flow}")
            attr_list = [] if attrs == "-" else attrs.split(",")
            for a in attr_list:
                if a not in ATTRS:
                    raise MapError(f"{where}: unknown attribute {a}")
            if not (modrm in ("-", "r", "m", "x", "R") or modrm.startswith("=") or
                    (modrm.startswith("/") and modrm[1:2] in "01234567" and modrm[2:] in ("", ":m", ":x", ":R"))):
                raise MapError(f"{where}: bad modrm spec {modrm}")
            if pfx == "-":
                columns, any_prefix = list(range(4)), True
            else:
                columns, any_prefix = [], False
                for p in pfx.split("|"):
                    if p not in PREFIX_COLUMNS:
                        raise MapError(f"{where}: bad prefix {p}")
                    columns.append(PREFIX_COLUMNS.index(p))
            if space == "1b" and not any_prefix:
                raise MapError(f"{where}: the one-byte map has no mandatory prefixes")
            if "-" in opcodes:
                lo, hi = (int(x, 16) for x in opcodes.split("-"))
            else:
                lo = hi = int(opcodes, 16)
            if lo > hi or hi > 255:
                raise MapError(f"{where}: bad opcode range {opcodes}")
            for op in range(lo, hi + 1):
                lines.append(Line(number, space, op, modrm, columns, any_prefix, imm, mode, flow, attr_list, text))
    return lines


def resolve(lines_for_column, modrm_byte):
    """The most specific line matching modrm_byte, or None. Raises on an ambiguity."""
    best = None
    for line in lines_for_column:
        if not line.matches(modrm_byte):
            continue
        if best is None or line.specificity() > best.specificity():
            best = line
        elif line.specificity() == best.specificity():
            raise MapError(f"lines {best.number} and {line.number} both match {line.space} {line.opcode:02x} "
                           f"modrm {modrm_byte:02x} with the same specificity")
    return best


def index(lines):
    """{(space, opcode, column): [lines]}"""
    table = {}
    for line in lines:
        for col in line.columns:
            table.setdefault((line.space, line.opcode, col), []).append(line)
    return table


if __name__ == "__main__":
    parsed = parse(sys.argv[1])
    print(f"{len(parsed)} opcode lines")
