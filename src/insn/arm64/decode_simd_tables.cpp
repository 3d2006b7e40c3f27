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
    case 0x11: case 0x13: case 0x15: case 0x17:  // FCMLA: half, or single with Q = 1 and L = 0
      return size == 0b01 || (size == 0b10 && q && !l);
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

}  // namespace xprobe::insn::arm64::detail
