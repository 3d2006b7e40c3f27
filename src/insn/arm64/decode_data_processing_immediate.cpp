// Data processing -- immediate (op1 = 100x): PC-rel addressing, add/sub (immediate, with tags),
// min/max (immediate), logical (immediate), move wide, bitfield, extract.
#include "insn/arm64/decode_groups.h"

namespace xprobe::insn::arm64::detail {

// DecodeBitMasks' reserved cases: N:NOT(imms) must have a set bit, and the element's run of
// ones must not fill the whole element.
static bool valid_bitmask_immediate(bool n, uint32_t imms) {
  const uint32_t combined = (n ? 0x40u : 0u) | (~imms & 0x3fu);
  if (combined == 0) return false;
  unsigned length = 6;
  while (((combined >> length) & 1u) == 0) --length;
  if (length < 1) return false;
  const uint32_t levels = (1u << length) - 1u;
  return (imms & levels) != levels;
}

static void decode_pc_relative(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const uint64_t immediate = uint64_t{field(w, 23, 5)} << 2 | field(w, 30, 29);
  const int64_t offset = sign_extend(immediate, 21);
  insn.rd = static_cast<uint8_t>(field(w, 4, 0));
  insn.has_target = true;
  if (bit(w, 31)) {
    insn.cls = InsnClass::Adrp;
    insn.offset = offset * 4096;
    insn.target = (insn.address & ~uint64_t{0xfff}) + static_cast<uint64_t>(insn.offset);
  } else {
    insn.cls = InsnClass::Adr;
    insn.offset = offset;
    insn.target = insn.address + static_cast<uint64_t>(offset);
  }
}

void decode_data_processing_immediate(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const bool sf = bit(w, 31);
  switch (field(w, 25, 23)) {
    case 0b000:
    case 0b001:
      decode_pc_relative(insn);
      return;
    case 0b010:  // add/subtract (immediate): every encoding allocated
      return;
    case 0b011:
      if (bit(w, 22)) {  // min/max (immediate): sf op=0 S=0, opc 00xx
        if (bit(w, 30) || bit(w, 29) || field(w, 21, 20) != 0) insn.cls = InsnClass::Unallocated;
      } else {  // ADDG/SUBG: 64-bit, S = 0, op3 = 00
        if (!sf || bit(w, 29) || field(w, 15, 14) != 0) insn.cls = InsnClass::Unallocated;
      }
      return;
    case 0b100:  // logical (immediate)
      if ((!sf && bit(w, 22)) || !valid_bitmask_immediate(bit(w, 22), field(w, 15, 10)))
        insn.cls = InsnClass::Unallocated;
      return;
    case 0b101:  // move wide: opc 01 unallocated; 32-bit needs hw < 2
      if (field(w, 30, 29) == 0b01 || (!sf && bit(w, 22))) insn.cls = InsnClass::Unallocated;
      return;
    case 0b110: {  // bitfield: opc 11 unallocated; N must equal sf; 32-bit needs immr, imms < 32
      const bool n = bit(w, 22);
      if (field(w, 30, 29) == 0b11 || n != sf || (!sf && (bit(w, 21) || bit(w, 15))))
        insn.cls = InsnClass::Unallocated;
      return;
    }
    case 0b111: {  // extract: op21 = 00, o0 = 0, N = sf; 32-bit needs imms < 32
      if (field(w, 30, 29) != 0 || bit(w, 21) || bit(w, 22) != sf || (!sf && bit(w, 15)))
        insn.cls = InsnClass::Unallocated;
      return;
    }
  }
}

}  // namespace xprobe::insn::arm64::detail
