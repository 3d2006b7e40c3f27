// Data processing -- register (op1 = x101): logical and add/subtract (shifted, extended),
// add/subtract with carry, flag manipulation, conditional compare and select, 1-, 2- and
// 3-source operations.
#include "insn/arm64/decode_groups.h"

namespace xprobe::insn::arm64::detail {

namespace {

bool two_source_allocated(uint32_t w) {
  const bool sf = bit(w, 31), s = bit(w, 29);
  const uint32_t opcode = field(w, 15, 10);
  if (s) return opcode == 0 && sf;  // SUBPS
  switch (opcode) {
    case 0b000000:  // SUBP
    case 0b000100:  // IRG
    case 0b000101:  // GMI
    case 0b001100:  // PACGA
      return sf;
    case 0b000010:  // UDIV, SDIV
    case 0b000011:
    case 0b001000:  // LSLV, LSRV, ASRV, RORV
    case 0b001001:
    case 0b001010:
    case 0b001011:
    case 0b011000:  // SMAX, UMAX, SMIN, UMIN (register)
    case 0b011001:
    case 0b011010:
    case 0b011011:
      return true;
    case 0b010000:  // CRC32B/H/W and CRC32CB/CH/CW: 32-bit; CRC32X/CX: 64-bit
    case 0b010001:
    case 0b010010:
    case 0b010100:
    case 0b010101:
    case 0b010110:
      return !sf;
    case 0b010011:
    case 0b010111:
      return sf;
    default:
      return false;
  }
}

bool one_source_allocated(uint32_t w) {
  const bool sf = bit(w, 31);
  const uint32_t opcode2 = field(w, 20, 16), opcode = field(w, 15, 10), rn = field(w, 9, 5);
  if (bit(w, 29)) return false;
  if (opcode2 == 0b00000) {
    if (opcode == 0b000011) return sf;  // REV (64-bit)
    return opcode <= 0b001000;          // RBIT REV16 REV32/REV CLZ CLS CTZ CNT ABS
  }
  if (opcode2 == 0b00001 && sf) {  // pointer authentication
    if (opcode <= 0b000111) return true;                  // PACIA ... AUTDB
    if (opcode <= 0b001111) return rn == 0b11111;         // PACIZA ... AUTDZB
    if (opcode == 0b010000 || opcode == 0b010001) return rn == 0b11111;  // XPACI, XPACD
  }
  return false;
}

bool three_source_allocated(uint32_t w) {
  const bool sf = bit(w, 31);
  if (field(w, 30, 29) != 0) return false;
  const uint32_t op31_o0 = field(w, 23, 21) << 1 | field(w, 15, 15);
  switch (op31_o0) {
    case 0b0000:  // MADD, MSUB
    case 0b0001:
      return true;
    case 0b0010:  // SMADDL, SMSUBL, SMULH, UMADDL, UMSUBL, UMULH
    case 0b0011:
    case 0b0100:
    case 0b1010:
    case 0b1011:
    case 0b1100:
      return sf;
    default:
      return false;
  }
}

}  // namespace

void decode_data_processing_register(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const bool sf = bit(w, 31);
  bool allocated = true;
  if (!bit(w, 28)) {
    if (!bit(w, 24)) {  // logical (shifted register)
      allocated = sf || !bit(w, 15);
    } else if (!bit(w, 21)) {  // add/subtract (shifted register)
      allocated = field(w, 23, 22) != 0b11 && (sf || !bit(w, 15));
    } else {  // add/subtract (extended register)
      allocated = field(w, 23, 22) == 0 && field(w, 12, 10) <= 4;
    }
  } else if (bit(w, 24)) {
    allocated = three_source_allocated(w);
  } else {
    switch (field(w, 23, 21)) {
      case 0b000: {
        const uint32_t op3 = field(w, 15, 10);
        if (op3 == 0) {
          allocated = true;  // ADC, ADCS, SBC, SBCS
        } else if ((op3 & 0b011111) == 0b000001) {  // RMIF
          allocated = sf && field(w, 30, 29) == 0b01 && !bit(w, 4);
        } else if ((op3 & 0b001111) == 0b000010) {  // SETF8, SETF16
          allocated = !sf && field(w, 30, 29) == 0b01 && field(w, 20, 15) == 0 && field(w, 4, 0) == 0b01101;
        } else {
          allocated = false;
        }
        break;
      }
      case 0b010:  // conditional compare (register / immediate)
        allocated = bit(w, 29) && !bit(w, 10) && !bit(w, 4);
        break;
      case 0b100:  // conditional select
        allocated = !bit(w, 29) && !bit(w, 11);
        break;
      case 0b110:
        allocated = bit(w, 30) ? one_source_allocated(w) : two_source_allocated(w);
        break;
      default:
        allocated = false;
        break;
    }
  }
  if (!allocated) insn.cls = InsnClass::Unallocated;
}

}  // namespace xprobe::insn::arm64::detail
