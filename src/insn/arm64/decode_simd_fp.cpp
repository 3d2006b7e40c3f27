// Data processing -- scalar floating-point and Advanced SIMD (op1 = x111).
// The group structure (vector, scalar, crypto, scalar FP) is decoded fully, and so are the
// opcode tables of every group (decode_simd_tables.cpp for the larger ones).
#include "insn/arm64/decode_groups.h"
#include "insn/arm64/decode_simd_tables.h"

namespace xprobe::insn::arm64::detail {

namespace {

// ---- scalar floating-point (op0 = x0x1) ----

bool fp_conversion_integer(uint32_t w) {
  const bool sf = bit(w, 31);
  const uint32_t ftype = field(w, 23, 22), rmode = field(w, 20, 19), opcode = field(w, 18, 16);
  if (opcode <= 0b001) return ftype != 0b10;                 // FCVT[NPMZ][SU]
  if (opcode <= 0b101) return rmode == 0 && ftype != 0b10;  // SCVTF, UCVTF, FCVTA[SU]
  if (rmode == 0b00)                                          // FMOV general <-> FP
    return ftype == 0b11 || (ftype == 0b00 && !sf) || (ftype == 0b01 && sf);
  if (rmode == 0b01) return sf && ftype == 0b10;             // FMOV Xd <-> Vn.D[1]
  if (rmode == 0b11 && opcode == 0b110) return !sf && ftype == 0b01;  // FJCVTZS
  return false;
}

bool fp_conversion_fixed(uint32_t w) {
  const bool sf = bit(w, 31);
  const uint32_t ftype = field(w, 23, 22), rmode_opcode = field(w, 20, 16);
  if (ftype == 0b10 || (!sf && !bit(w, 15))) return false;
  return rmode_opcode == 0b00010 || rmode_opcode == 0b00011 || rmode_opcode == 0b11000 || rmode_opcode == 0b11001;
}

bool fp_one_source(uint32_t w) {
  const uint32_t ftype = field(w, 23, 22), opcode = field(w, 20, 15);
  if (opcode >= 0b000100 && opcode <= 0b000111) {  // FCVT between precisions, BFCVT
    const uint32_t to = opcode & 0b11;
    if (to == 0b10) return ftype == 0b01;  // BFCVT from single
    return ftype != 0b10 && to != ftype;
  }
  if (ftype == 0b10) return false;
  if (opcode <= 0b000011) return true;                         // FMOV FABS FNEG FSQRT
  if (opcode >= 0b001000 && opcode <= 0b001111) return opcode != 0b001101;  // FRINT[NPMZAXI]
  if (opcode >= 0b010000 && opcode <= 0b010011) return ftype <= 0b01;       // FRINT32/64[ZX]
  return false;
}

void decode_scalar_fp(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  bool allocated = false;
  const bool m_or_s = bit(w, 31) || bit(w, 29);
  const uint32_t ftype = field(w, 23, 22);
  if (bit(w, 24)) {  // FMADD, FMSUB, FNMADD, FNMSUB
    allocated = !m_or_s && ftype != 0b10;
  } else if (!bit(w, 21)) {
    allocated = !bit(w, 29) && fp_conversion_fixed(w);
  } else if (field(w, 15, 10) == 0) {
    allocated = !bit(w, 29) && fp_conversion_integer(w);
  } else if (m_or_s) {
    allocated = false;
  } else if (field(w, 14, 10) == 0b10000) {
    allocated = fp_one_source(w);
  } else if (field(w, 13, 10) == 0b1000) {  // FCMP, FCMPE
    allocated = ftype != 0b10 && field(w, 15, 14) == 0 && field(w, 2, 0) == 0;
  } else if (field(w, 12, 10) == 0b100) {  // FMOV (scalar, immediate)
    allocated = ftype != 0b10 && field(w, 9, 5) == 0;
  } else if (field(w, 11, 10) == 0b01) {  // FCCMP, FCCMPE
    allocated = ftype != 0b10;
  } else if (field(w, 11, 10) == 0b10) {  // FMUL ... FNMUL
    allocated = ftype != 0b10 && field(w, 15, 12) <= 0b1000;
  } else if (field(w, 11, 10) == 0b11) {  // FCSEL
    allocated = ftype != 0b10;
  }
  if (!allocated) insn.cls = InsnClass::Unallocated;
}

// ---- Advanced SIMD ----

bool simd_copy(uint32_t w, bool scalar) {
  const uint32_t imm5 = field(w, 20, 16), imm4 = field(w, 14, 11);
  if ((imm5 & 0b01111) == 0) return false;
  const bool op = bit(w, 29), q = bit(w, 30);
  if (scalar) return !op && imm4 == 0;  // DUP (element)
  if (op) return q;                     // INS (element)
  switch (imm4) {
    case 0b0000:  // DUP (element)
      return true;
    case 0b0001:  // DUP (general): 64-bit lanes need Q
      return !((imm5 & 0b1000) != 0 && (imm5 & 0b0111) == 0 && !q);
    case 0b0011:  // INS (general)
      return q;
    case 0b0101:  // SMOV: W form takes B/H, X form B/H/S
      return q ? (imm5 & 0b0111) != 0 : (imm5 & 0b0011) != 0;
    case 0b0111:  // UMOV: W form B/H/S, X form D
      return q ? (imm5 & 0b1111) == 0b1000 : (imm5 & 0b0111) != 0;
    default:
      return false;
  }
}

bool simd_modified_immediate(uint32_t w) {
  const bool q = bit(w, 30), op = bit(w, 29), o2 = bit(w, 11);
  const uint32_t cmode = field(w, 15, 12);
  if (o2) return !op && cmode == 0b1111;  // FMOV (vector, immediate), half precision
  if (op && cmode == 0b1111) return q;    // FMOV (vector, immediate), double precision
  return true;
}

// Bits 28:24 = 01110 or 11110 (bit 28 = scalar): three same/different, misc, lanes, copy, ...
bool simd_data_processing(uint32_t w, bool scalar) {
  const bool b10 = bit(w, 10);
  if (bit(w, 21)) {
    if (b10) return simd_three_same(w, scalar);
    if (field(w, 11, 10) == 0b00) return simd_three_different(w, scalar);
    const uint32_t selector = field(w, 20, 17);
    if (selector == 0b0000) return simd_two_register_misc(w, scalar);
    if (selector == 0b1000) return simd_across_lanes(w, scalar);
    if (selector == 0b1100) return bit(w, 22) && simd_two_register_misc_fp16(w, scalar);
    if (selector == 0b0100) {                                // AES / SHA two-register
      const uint32_t opcode = field(w, 16, 12);
      if (field(w, 31, 24) == 0b01001110 && field(w, 23, 22) == 0) return opcode >= 0b00100 && opcode <= 0b00111;
      if (field(w, 31, 24) == 0b01011110 && field(w, 23, 22) == 0) return opcode <= 0b00010;
      return false;
    }
    return false;
  }
  if (b10) {
    if (bit(w, 15)) return simd_three_extension(w, scalar);
    if (field(w, 22, 21) == 0b10) return !bit(w, 14) && simd_three_same_fp16(w, scalar);
    if (field(w, 23, 21) == 0b000) return simd_copy(w, scalar);          // copy
    return false;
  }
  if (scalar) {  // SHA three-register
    return field(w, 31, 24) == 0b01011110 && field(w, 23, 22) == 0 && !bit(w, 15) &&
           field(w, 11, 10) == 0 && field(w, 14, 12) != 0b111;
  }
  if (bit(w, 15)) return false;
  if (bit(w, 29)) return field(w, 23, 22) == 0 && (bit(w, 30) || !bit(w, 14));  // EXT
  if (field(w, 11, 10) == 0b00) return field(w, 23, 22) == 0;                      // TBL, TBX
  if (field(w, 11, 10) == 0b10) {                                                  // permute
    const uint32_t opcode = field(w, 14, 12);
    return opcode != 0b000 && opcode != 0b100 && (field(w, 23, 22) != 0b11 || bit(w, 30));
  }
  return false;
}

bool simd_shift_or_indexed(uint32_t w, bool scalar) {
  if (!bit(w, 10)) return simd_by_element(w, scalar);
  if (bit(w, 23)) return false;
  if (field(w, 22, 19) == 0) return !scalar && simd_modified_immediate(w);
  return simd_shift_by_immediate(w, scalar);
}

bool crypto(uint32_t w) {
  if (field(w, 27, 24) != 0b1110) return false;
  switch (field(w, 23, 21)) {
    case 0b000:  // EOR3, BCAX, SM3SS1
    case 0b001:
    case 0b010:
      if (!bit(w, 23) && !bit(w, 15)) return field(w, 22, 21) != 0b11;
      if (field(w, 23, 21) == 0b010) return field(w, 15, 14) == 0b10;  // SM3TT1A ... SM3TT2B
      return false;
    case 0b011:  // SHA512H ... SM4EKEY
      return bit(w, 15) && field(w, 13, 12) == 0 && (field(w, 14, 14) << 2 | field(w, 11, 10)) != 0b111;
    case 0b100:  // XAR
      return true;
    case 0b110:  // SHA512SU0, SM4E
      return field(w, 20, 12) == 0b000001000 && field(w, 11, 10) <= 0b01;
    default:
      return false;
  }
}

}  // namespace

void decode_simd_fp(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const uint32_t op0 = field(w, 31, 28);
  bool allocated = false;
  if ((op0 & 0b0101) == 0b0001) {
    decode_scalar_fp(insn);
    return;
  }
  if (op0 == 0b1100) {
    allocated = crypto(w);
  } else if ((op0 & 0b1001) == 0b0000) {  // vector
    allocated = bit(w, 24) ? simd_shift_or_indexed(w, false) : simd_data_processing(w, false);
  } else if ((op0 & 0b1101) == 0b0101) {  // scalar
    allocated = bit(w, 24) ? simd_shift_or_indexed(w, true) : simd_data_processing(w, true);
  }
  if (!allocated) insn.cls = InsnClass::Unallocated;
}

}  // namespace xprobe::insn::arm64::detail
