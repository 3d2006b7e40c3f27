// Per-opcode allocation of the larger Advanced SIMD groups: by element, shift by immediate,
// three same (and its FP16 and extension variants), three different. From the Arm ARM's
// tables of each group (opcode, U and the size/Q constraints of each instruction).
#include "insn/arm64/decode_simd_tables.h"

#include "insn/arm64/decode_groups.h"

namespace xprobe::insn::arm64::detail {

namespace {

bool integer_halfword_or_word(uint32_t size) { return size == 0b01 || size == 0b10; }

// FMLA/FMLS/FMUL/FMULX by element: size 00 half, 10 single, 11 double (L = 0; vector: Q = 1).
bool fp_by_element_size(uint32_t size, bool l, bool q, bool scalar) {
  if (size == 0b01) return false;
  if (size == 0b11) return !l && (scalar || q);
  return true;
}

}  // namespace

bool simd_by_element(uint32_t w, bool scalar) {
  const bool q = bit(w, 30), u = bit(w, 29), l = bit(w, 21);
  const uint32_t size = field(w, 23, 22), opcode = field(w, 15, 12);
  const uint32_t key = (u ? 0x10u : 0u) | opcode;
  if (scalar) {
    switch (key) {
      case 0x01: case 0x05: case 0x09: case 0x19:  // FMLA FMLS FMUL FMULX
        return fp_by_element_size(size, l, q, true);
      case 0x03: case 0x07: case 0x0b: case 0x0c: case 0x0d:  // SQDMLAL SQDMLSL SQDMULL SQDMULH SQRDMULH
      case 0x1d: case 0x1f:                                  // SQRDMLAH SQRDMLSH
        return integer_halfword_or_word(size);
      default:
        return false;
    }
  }
  switch (key) {
    case 0x01: case 0x05: case 0x09: case 0x19:  // FMLA FMLS FMUL FMULX
      return fp_by_element_size(size, l, q, false);
    case 0x00: case 0x04: case 0x18: case 0x1c:  // FMLAL FMLSL FMLAL2 FMLSL2
    case 0x0e: case 0x1e:                        // SDOT UDOT
      return size == 0b10;
    case 0x0f:  // SUDOT (00), BFDOT (01), USDOT (10), BFMLAL (11)
      return true;
    case 0x02: case 0x03: case 0x06: case 0x07: case 0x08: case 0x0a: case 0x0b: case 0x0c: case 0x0d:
    case 0x10: case 0x12: case 0x14: case 0x16: case 0x1a: case 0x1d: case 0x1f:
      return integer_halfword_or_word(size);
    case 0x11: case 0x13: case 0x15: case 0x17:  // FCMLA: the pair index must fit the vector
      if (size == 0b01) return q || !bit(w, 11);
      return size == 0b10 && q && !l;
    default:
      return false;
  }
}

bool simd_shift_by_immediate(uint32_t w, bool scalar) {
  const bool q = bit(w, 30), u = bit(w, 29);
  const uint32_t immh = field(w, 22, 19), opcode = field(w, 15, 11);
  const bool wide = (immh & 0b1000) != 0;
  const uint32_t key = (u ? 0x20u : 0u) | opcode;
  auto fixed_point = [&] {  // SCVTF/UCVTF/FCVTZS/FCVTZU: half (001x), single (01xx), double (1xxx)
    if (immh == 0b0001) return false;
    return scalar || !wide || q;
  };
  switch (key) {
    case 0x00: case 0x02: case 0x04: case 0x06: case 0x0a:  // SSHR SSRA SRSHR SRSRA SHL
    case 0x20: case 0x22: case 0x24: case 0x26: case 0x28: case 0x2a:  // USHR USRA URSHR URSRA SRI SLI
      return scalar ? wide : (!wide || q);
    case 0x0e: case 0x2c: case 0x2e:  // SQSHL SQSHLU UQSHL (immediate)
      return scalar || !wide || q;
    case 0x10: case 0x11:  // SHRN RSHRN
    case 0x14: case 0x34:  // SSHLL USHLL
      return !scalar && !wide;
    case 0x12: case 0x13: case 0x30: case 0x31: case 0x32: case 0x33:  // SQ(R)SHRN SQ(R)SHRUN UQ(R)SHRN
      return !wide;
    case 0x1c: case 0x1f: case 0x3c: case 0x3f:
      return fixed_point();
    default:
      return false;
  }
}

bool simd_three_same(uint32_t w, bool scalar) {
  const bool q = bit(w, 30), u = bit(w, 29);
  const uint32_t size = field(w, 23, 22), opcode = field(w, 15, 11);
  const bool size_high = (size & 0b10) != 0;
  const uint32_t key = (u ? 0x20u : 0u) | opcode;
  if (scalar) {
    switch (key) {
      case 0x01: case 0x05: case 0x09: case 0x0b: case 0x21: case 0x25: case 0x29: case 0x2b:  // saturating
        return true;
      case 0x06: case 0x07: case 0x08: case 0x0a: case 0x10: case 0x11:  // CMGT CMGE SSHL SRSHL ADD CMTST
      case 0x26: case 0x27: case 0x28: case 0x2a: case 0x30: case 0x31:  // CMHI CMHS USHL URSHL SUB CMEQ
        return size == 0b11;
      case 0x16: case 0x36:  // SQDMULH SQRDMULH
        return integer_halfword_or_word(size);
      case 0x1b: case 0x1c:  // FMULX FCMEQ
        return !size_high;
      case 0x1f: case 0x3c: case 0x3d:  // FRECPS/FRSQRTS, FCMGE/FCMGT, FACGE/FACGT
        return true;
      case 0x3a:  // FABD
        return size_high;
      default:
        return false;
    }
  }
  const bool fp_size_ok = !((size & 1) && !q);  // double-precision lanes need Q
  const bool int_size_ok = size != 0b11 || q;
  switch (key) {
    case 0x03: case 0x23:  // logical: AND BIC ORR ORN / EOR BSL BIT BIF
      return true;
    case 0x01: case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0a: case 0x0b: case 0x10:
    case 0x11: case 0x17: case 0x21: case 0x25: case 0x26: case 0x27: case 0x28: case 0x29: case 0x2a:
    case 0x2b: case 0x30: case 0x31:
      return int_size_ok;
    case 0x00: case 0x02: case 0x04: case 0x0c: case 0x0d: case 0x0e: case 0x0f: case 0x12: case 0x13:
    case 0x14: case 0x15: case 0x20: case 0x22: case 0x24: case 0x2c: case 0x2d: case 0x2e: case 0x2f:
    case 0x32: case 0x34: case 0x35:
      return size != 0b11;
    case 0x33:  // PMUL
      return size == 0b00;
    case 0x16: case 0x36:  // SQDMULH SQRDMULH
      return integer_halfword_or_word(size);
    case 0x18: case 0x19: case 0x1a: case 0x1e: case 0x1f: case 0x38: case 0x3a: case 0x3c: case 0x3d: case 0x3e:
      return fp_size_ok;
    case 0x1b: case 0x1c: case 0x3b: case 0x3f:  // FMULX FCMEQ FMUL FDIV
      return !size_high && fp_size_ok;
    case 0x1d: case 0x39:  // FMLAL/FMLSL, FMLAL2/FMLSL2
      return (size & 1) == 0;
    default:
      return false;
  }
}

bool simd_three_same_fp16(uint32_t w, bool scalar) {
  const bool u = bit(w, 29), a = bit(w, 23);
  const uint32_t opcode = field(w, 13, 11);
  const uint32_t key = (u ? 0x10u : 0u) | (a ? 0x8u : 0u) | opcode;
  if (scalar) {
    switch (key) {
      case 0x03: case 0x04: case 0x07: case 0x0f: case 0x14: case 0x15: case 0x1a: case 0x1c: case 0x1d:
        return true;
      default:
        return false;
    }
  }
  switch (key) {
    case 0x00: case 0x01: case 0x02: case 0x03: case 0x04: case 0x06: case 0x07:  // FMAXNM FMLA FADD FMULX FCMEQ FMAX FRECPS
    case 0x08: case 0x09: case 0x0a: case 0x0e: case 0x0f:                        // FMINNM FMLS FSUB FMIN FRSQRTS
    case 0x10: case 0x12: case 0x13: case 0x14: case 0x15: case 0x16: case 0x17:  // FMAXNMP FADDP FMUL FCMGE FACGE FMAXP FDIV
    case 0x18: case 0x1a: case 0x1c: case 0x1d: case 0x1e:                        // FMINNMP FABD FCMGT FACGT FMINP
      return true;
    default:
      return false;
  }
}

bool simd_three_extension(uint32_t w, bool scalar) {
  const bool q = bit(w, 30), u = bit(w, 29);
  const uint32_t size = field(w, 23, 22), opcode = field(w, 14, 11);
  const uint32_t key = (u ? 0x10u : 0u) | opcode;
  if (scalar) return (key == 0x10 || key == 0x11) && integer_halfword_or_word(size);  // SQRDMLAH/SH
  switch (key) {
    case 0x10: case 0x11:  // SQRDMLAH SQRDMLSH
      return integer_halfword_or_word(size);
    case 0x02: case 0x12: case 0x03:  // SDOT UDOT USDOT
      return size == 0b10;
    case 0x04: case 0x14: case 0x05:  // SMMLA UMMLA USMMLA
      return size == 0b10 && q;
    case 0x18: case 0x19: case 0x1a: case 0x1b:  // FCMLA
    case 0x1c: case 0x1e:                        // FCADD
      return size != 0b00 && (size != 0b11 || q);
    case 0x1f:  // BFDOT (size 01), BFMLAL (size 11)
      return size == 0b01 || size == 0b11;
    case 0x1d:  // BFMMLA
      return size == 0b01 && q;
    default:
      return false;
  }
}

bool simd_three_different(uint32_t w, bool scalar) {
  const bool u = bit(w, 29);
  const uint32_t size = field(w, 23, 22), opcode = field(w, 15, 12);
  if (scalar) return !u && (opcode == 0b1001 || opcode == 0b1011 || opcode == 0b1101) && integer_halfword_or_word(size);
  switch (opcode) {
    case 0b1001: case 0b1011: case 0b1101:  // SQDMLAL SQDMLSL SQDMULL
      return !u && integer_halfword_or_word(size);
    case 0b1110:  // PMULL (8-bit and 64-bit polynomials); U = 1 is unallocated
      return !u && (size == 0b00 || size == 0b11);
    case 0b1111:
      return false;
    default:
      return size != 0b11;
  }
}

bool simd_two_register_misc(uint32_t w, bool scalar) {
  const bool q = bit(w, 30), u = bit(w, 29);
  const uint32_t size = field(w, 23, 22), opcode = field(w, 16, 12);
  const bool high = (size & 0b10) != 0, sz = (size & 1) != 0;
  const uint32_t key = (u ? 0x20u : 0u) | opcode;
  const bool fp_lanes_ok = scalar || !(sz && !q);  // double lanes need Q
  const bool int_lanes_ok = scalar ? size == 0b11 : (size != 0b11 || q);
  if (scalar) {
    switch (key) {
      case 0x03: case 0x07: case 0x23: case 0x27:  // SUQADD SQABS USQADD SQNEG
        return true;
      case 0x08: case 0x09: case 0x0a: case 0x0b: case 0x28: case 0x29: case 0x2b:  // compares with 0, ABS, NEG
        return size == 0b11;
      case 0x0c: case 0x0d: case 0x0e: case 0x2c: case 0x2d: case 0x1f:  // FCMxx #0, FRECPX
        return high;
      case 0x14: case 0x32: case 0x34:  // SQXTN SQXTUN UQXTN
        return size != 0b11;
      case 0x36:  // FCVTXN
        return size == 0b01;
      case 0x1a: case 0x1b: case 0x3a: case 0x3b: case 0x1d: case 0x3d:  // FCVT[NPMZ][SU], SCVTF/FRECPE, UCVTF/FRSQRTE
        return true;
      case 0x1c: case 0x3c:  // FCVTAS FCVTAU
        return !high;
      default:
        return false;
    }
  }
  switch (key) {
    case 0x00: case 0x02: case 0x04: case 0x06: case 0x22: case 0x24: case 0x26:  // REV64 SADDLP CLS SADALP UADDLP CLZ UADALP
    case 0x12: case 0x14: case 0x32: case 0x33: case 0x34:                        // XTN SQXTN SQXTUN SHLL UQXTN
      return size != 0b11;
    case 0x01: case 0x05:  // REV16, CNT
      return size == 0b00;
    case 0x20:  // REV32
      return size <= 0b01;
    case 0x25:  // NOT, RBIT
      return size <= 0b01;
    case 0x03: case 0x07: case 0x08: case 0x09: case 0x0a: case 0x0b:  // SUQADD SQABS CMGT CMEQ CMLT ABS
    case 0x23: case 0x27: case 0x28: case 0x29: case 0x2b:             // USQADD SQNEG CMGE CMLE NEG
      return int_lanes_ok;
    case 0x0c: case 0x0d: case 0x0e: case 0x0f: case 0x2c: case 0x2d: case 0x2f:  // FCMxx #0, FABS, FNEG
      return high && fp_lanes_ok;
    case 0x16:  // FCVTN (single/double source), BFCVTN (size 10)
      return !high || size == 0b10;
    case 0x17:  // FCVTL
      return !high;
    case 0x36:  // FCVTXN
      return size == 0b01;
    case 0x18: case 0x19: case 0x1a: case 0x1b: case 0x1d:  // FRINTN/P FRINTM/Z FCVTNS/PS FCVTMS/ZS SCVTF/FRECPE
    case 0x39: case 0x3a: case 0x3b: case 0x3d:             // FRINTX/I FCVTNU/PU FCVTMU/ZU UCVTF/FRSQRTE
      return fp_lanes_ok;
    case 0x1c: case 0x3c:  // FCVTAS/FCVTAU (size 0x), URECPE/URSQRTE (size 10)
      return high ? size == 0b10 : fp_lanes_ok;
    case 0x38: case 0x1e: case 0x1f: case 0x3e:  // FRINTA, FRINT32Z FRINT64Z FRINT32X
      return !high && fp_lanes_ok;
    case 0x3f:  // FRINT64X (size 0x), FSQRT (size 1x)
      return fp_lanes_ok;
    default:
      return false;
  }
}

bool simd_across_lanes(uint32_t w, bool scalar) {
  const bool q = bit(w, 30), u = bit(w, 29);
  const uint32_t size = field(w, 23, 22), opcode = field(w, 16, 12);
  const bool sz = (size & 1) != 0;
  if (scalar) {  // pairwise
    if (!u && opcode == 0b11011) return size == 0b11;  // ADDP
    if (opcode == 0b01100 || opcode == 0b01111) return u || !sz;  // FMAXNMP/FMINNMP, FMAXP/FMINP
    if (opcode == 0b01101) return u ? (size & 0b10) == 0 : size == 0b00;  // FADDP
    return false;
  }
  switch (opcode) {
    case 0b00011: case 0b01010: case 0b11010:  // [SU]ADDLV [SU]MAXV [SU]MINV
      return size <= 0b01 || (size == 0b10 && q);
    case 0b11011:  // ADDV
      return !u && (size <= 0b01 || (size == 0b10 && q));
    case 0b01100: case 0b01111:  // FMAXNMV/FMINNMV, FMAXV/FMINV: half (U = 0) or single (U = 1, Q)
      return !sz && (!u || q);
    default:
      return false;
  }
}

bool simd_two_register_misc_fp16(uint32_t w, bool scalar) {
  const bool u = bit(w, 29), a = bit(w, 23);
  const uint32_t opcode = field(w, 16, 12);
  const uint32_t key = (u ? 0x40u : 0u) | (a ? 0x20u : 0u) | opcode;
  if (scalar) {
    switch (key) {
      case 0x1a: case 0x1b: case 0x1c: case 0x1d:                                // FCVTNS FCVTMS FCVTAS SCVTF
      case 0x2c: case 0x2d: case 0x2e: case 0x3a: case 0x3b: case 0x3d: case 0x3f:  // FCMxx FCVTPS FCVTZS FRECPE FRECPX
      case 0x5a: case 0x5b: case 0x5c: case 0x5d:                                // FCVTNU FCVTMU FCVTAU UCVTF
      case 0x6c: case 0x6d: case 0x7a: case 0x7b: case 0x7d:                     // FCMGE FCMLE FCVTPU FCVTZU FRSQRTE
        return true;
      default:
        return false;
    }
  }
  switch (key) {
    case 0x18: case 0x19: case 0x1a: case 0x1b: case 0x1c: case 0x1d:
    case 0x2c: case 0x2d: case 0x2e: case 0x2f: case 0x38: case 0x39: case 0x3a: case 0x3b: case 0x3d:
    case 0x58: case 0x59: case 0x5a: case 0x5b: case 0x5c: case 0x5d:
    case 0x6c: case 0x6d: case 0x6f: case 0x79: case 0x7a: case 0x7b: case 0x7d: case 0x7f:
      return true;
    default:
      return false;
  }
}

}  // namespace xprobe::insn::arm64::detail
