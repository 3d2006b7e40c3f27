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
IMM_KINDS = ["-", "Ib", "Iw", "Id", "Iz", "Iv", "IwIb", "IbIb", "Ap", "Ov", "Jb", "Jz", "Jo"]
FLOWS = ["none", "jmp", "jcc", "call", "ret", "loop", "ijmp", "icall", "int", "syscall", "iret", "far", "ud"]
NON_INSTRUCTION_FLOWS = ["prefix", "escape", "invalid"]
# Bit numbers of xprobe::insn::x86::attr (x86_insn.h); lk is internal to the tables.
ATTRS = {"stack": 0, "priv": 1, "cs": 2, "flags": 5, "serial": 6, "simd": 7, "io": 9, "fsgs": 10,
         "tsx": 11, "sib": 13, "lk": 15, "w64": None}
# Operand rules (the map's header explains each token), bit numbers of the rule word that
# decoder.cpp checks once the opcode is known. W0/W1 select the half of an entry that a
# VEX/EVEX/XOP.W value uses; Lnnn (digits 0-2) lists the vector lengths that exist.
RULE_BITS = {"nv": 0, "kv": 6, "nr": 7, "kd": 8, "gr": 9, "bc": 10, "er": 11, "sae": 11, "st": 12,
             "nk": 13, "km": 14, "nz": 15, "gx": 16, "tm": 17, "td": 18, "dx": 19, "wi": 20}
RULE_NO_VVVV_LOW = 1        # VSIB: vvvv must be 1111b, EVEX.V' extends the index register
RULE_LENGTH_SHIFT = 2       # bits 2-5: vector length L (VEX.L / EVEX.L'L) 0-3 is #UD
RULE_W_UNDEFINED = 31       # the entry does not exist with this W
W_TOKENS = ("W0", "W1")


def is_length_token(a):
    return len(a) >= 2 and a[0] == "L" and all(c in "012" for c in a[1:])


def is_rule_token(a):
    return a in RULE_BITS or a in W_TOKENS or is_length_token(a)


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

    def w(self):
        """0 or 1 when the line exists for that VEX/EVEX/XOP.W only, None when W is ignored."""
        if "W0" in self.attrs:
            return 0
        if "W1" in self.attrs:
            return 1
        return None

    def lengths(self):
        """The vector lengths (VEX.L / EVEX.L'L values) the line exists for."""
        allowed = [0, 1, 2] if self.space.startswith("evex") else [0, 1]
        for a in self.attrs:
            if is_length_token(a):
                allowed = [int(c) for c in a[1:]]
        return allowed

    def rule_word(self):
        """The operand-rule bits decoder.cpp checks for this line (see RULE_BITS)."""
        word = 0
        for a in self.attrs:
            if a in RULE_BITS:
                word |= 1 << RULE_BITS[a]
        if "nv" in self.attrs and "sib" in self.attrs and self.space.startswith("evex"):
            word = (word & ~(1 << RULE_BITS["nv"])) | (1 << RULE_NO_VVVV_LOW)
        # L'L = 11 is reserved in EVEX (SDM vol. 2 2.7.10): only rounding control may use it.
        for length in range(4 if self.space.startswith("evex") else 2):
            if length not in self.lengths():
                word |= 1 << (RULE_LENGTH_SHIFT + length)
        return word

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
                if a not in ATTRS and not is_rule_token(a):
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


def for_w(lines, w):
    """The lines that exist when VEX/EVEX/XOP.W = w (lines without W0/W1 exist for both)."""
    return [line for line in lines if line.w() in (None, w)]


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
