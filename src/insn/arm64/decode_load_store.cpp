// Loads and stores (op1 = x1x0): exclusive, ordered and compare-and-swap, literal loads,
// RCpc unscaled, memory copy/set, memory tags, pairs, single registers, atomics, PAC loads,
// and the Advanced SIMD structure loads/stores.
#include "insn/arm64/decode_groups.h"

namespace xprobe::insn::arm64::detail {

namespace {

void unallocated_unless(Arm64Insn& insn, bool allocated) {
  if (!allocated) insn.cls = InsnClass::Unallocated;
}

// size 001000 o2 L o1 Rs o0 Rt2 Rn Rt
void decode_exclusive_ordered_cas(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const uint32_t size = field(w, 31, 30), rs = field(w, 20, 16), rt2 = field(w, 14, 10), rt = field(w, 4, 0);
  const bool o2 = bit(w, 23), load = bit(w, 22), o1 = bit(w, 21);
  // In the ordered forms, fields the index marks "should be one" (Rs, Rt2) are required to be
  // 11111, as binutils does: other values are CONSTRAINED UNPREDICTABLE, so they are refused.
  if (o2) {
    if (o1) {
      unallocated_unless(insn, rt2 == 0b11111);  // CAS, CASA, CASL, CASAL (all sizes)
    } else {
      unallocated_unless(insn, rs == 0b11111 && rt2 == 0b11111);  // STLLR, STLR, LDLAR, LDAR
    }
    return;
  }
  const bool pair = o1;
  if (pair && (size & 0b10) == 0) {  // CASP family: Rt2 = 11111, even Rs and Rt
    unallocated_unless(insn, rt2 == 0b11111 && (rs & 1) == 0 && (rt & 1) == 0);
    return;
  }
  // Exclusives keep their class whatever the should-be-one fields hold (binutils decodes them
  // too): the checker must see every load-exclusive to find the sequences.
  insn.cls = InsnClass::Exclusive;
  insn.exclusive = load ? ExclusiveKind::Load : ExclusiveKind::Store;
  insn.exclusive_pair = pair;
}

// opc 011 V 00 imm19 Rt
void decode_load_literal(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const uint32_t opc = field(w, 31, 30);
  const bool simd = bit(w, 26);
  insn.rd = static_cast<uint8_t>(field(w, 4, 0));
  insn.offset = sign_extend(field(w, 23, 5), 19) * 4;
  insn.target = insn.address + static_cast<uint64_t>(insn.offset);
  insn.has_target = true;
  if (simd) {
    if (opc == 0b11) {
      insn.cls = InsnClass::Unallocated;
      insn.has_target = false;
      return;
    }
    insn.cls = InsnClass::LdrLiteralSimd;
    insn.literal_size = static_cast<uint8_t>(4u << opc);
    return;
  }
  switch (opc) {
    case 0b00: insn.cls = InsnClass::LdrLiteral; insn.literal_size = 4; break;
    case 0b01: insn.cls = InsnClass::LdrLiteral; insn.literal_size = 8; insn.is_64bit = true; break;
    case 0b10: insn.cls = InsnClass::LdrswLiteral; insn.literal_size = 4; insn.is_64bit = true; break;
    default: insn.cls = InsnClass::PrfmLiteral; break;
  }
}

// sz 011 o0 01 op1 0 Rs op2 01 Rn Rd (CPYF*, CPY*, SET*, SETG*)
// The registers must be distinct, and none but SET's value register (Rs) may be 31 (the
// pseudocode's CONSTRAINED UNPREDICTABLE and UNDEFINED cases, refused as binutils does).
void decode_memory_copy_set(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const bool set = field(w, 23, 22) == 0b11;
  const uint32_t rs = field(w, 20, 16), rn = field(w, 9, 5), rd = field(w, 4, 0);
  const bool registers_ok = rd != rn && rd != rs && rn != rs && rd != 31 && rn != 31 && (set || rs != 31);
  insn.memory_copy_set = true;
  unallocated_unless(insn, field(w, 31, 30) == 0 && (!set || field(w, 15, 14) != 0b11) && registers_ok);
}

// 11011001 opc 1 imm9 op2 Rn Rt
void decode_memory_tags(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  if (field(w, 31, 24) != 0b11011001) {
    insn.cls = InsnClass::Unallocated;
    return;
  }
  const uint32_t opc = field(w, 23, 22), op2 = field(w, 11, 10), imm9 = field(w, 20, 12);
  // STZGM, STGM, LDGM (op2 = 00, opc != 01) take no offset.
  if (op2 == 0 && opc != 0b01) unallocated_unless(insn, imm9 == 0);
}

// size 011001 opc 0 imm9 00 Rn Rt (STLUR*, LDAPUR*)
void decode_rcpc_unscaled(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const uint32_t size = field(w, 31, 30), opc = field(w, 23, 22);
  if (bit(w, 26)) {
    insn.cls = InsnClass::Unallocated;
    return;
  }
  unallocated_unless(insn, !(size == 0b11 && opc >= 0b10) && !(size == 0b10 && opc == 0b11));
}

// opc 101 V idx L imm7 Rt2 Rn Rt
void decode_pair(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const uint32_t opc = field(w, 31, 30), index_mode = field(w, 24, 23);
  if (opc == 0b11) {
    insn.cls = InsnClass::Unallocated;
    return;
  }
  // opc 01 without V is LDPSW (L = 1) or STGP (L = 0); neither has a no-allocate form.
  if (!bit(w, 26) && opc == 0b01) unallocated_unless(insn, index_mode != 0b00);
  // Loading both registers of a pair into one, or writing back into a loaded base, is
  // CONSTRAINED UNPREDICTABLE: refused (as binutils does).
  const bool load = bit(w, 22);
  const uint32_t rt = field(w, 4, 0), rt2 = field(w, 14, 10), rn = field(w, 9, 5);
  const bool writeback = index_mode == 0b01 || index_mode == 0b11;
  if (load && !(opc == 0b01 && !bit(w, 26) && !load)) {
    if (rt == rt2) insn.cls = InsnClass::Unallocated;
    if (writeback && rn != 31 && !bit(w, 26) && (rt == rn || rt2 == rn)) insn.cls = InsnClass::Unallocated;
  }
}

enum class Addressing { UnsignedOffset, RegisterOffset, Unscaled, PostIndex, PreIndex, Unprivileged };

void check_size_opc(Arm64Insn& insn, Addressing mode) {
  const uint32_t w = insn.word;
  const uint32_t size = field(w, 31, 30), opc = field(w, 23, 22);
  if (bit(w, 26)) {  // SIMD&FP registers: opc<1> selects Q, only with size 00
    unallocated_unless(insn, mode != Addressing::Unprivileged && ((opc & 0b10) == 0 || size == 0));
    return;
  }
  if (opc == 0b11) {
    unallocated_unless(insn, size <= 0b01);  // LDRSB/LDRSH into W
    return;
  }
  if (opc == 0b10 && size == 0b11) {  // PRFM / PRFUM
    unallocated_unless(insn, mode == Addressing::UnsignedOffset || mode == Addressing::RegisterOffset ||
                                 mode == Addressing::Unscaled);
  }
}

// size 111 V 00 A R 1 Rs o3 opc 00 Rn Rt
void decode_atomic(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  if (bit(w, 26)) {
    insn.cls = InsnClass::Unallocated;
    return;
  }
  const bool o3 = bit(w, 15), acquire = bit(w, 23), release = bit(w, 22);
  const uint32_t opc = field(w, 14, 12), size = field(w, 31, 30);
  if (!o3 || opc == 0b000) return;  // LDADD...LDUMIN, SWP
  const bool rs_all_ones = field(w, 20, 16) == 0b11111;
  if (opc == 0b100) {  // LDAPR (Rs should be 11111: other values are refused, as binutils does)
    unallocated_unless(insn, acquire && !release && rs_all_ones);
    return;
  }
  // ST64B (001), ST64BV0 (010), ST64BV (011), LD64B (101)
  const bool no_status = opc == 0b001 || opc == 0b101;  // ST64B, LD64B take no Rs
  const bool ls64 = size == 0b11 && !acquire && !release && (opc == 0b001 || opc == 0b010 || opc == 0b011 || opc == 0b101) &&
                    (!no_status || rs_all_ones);
  unallocated_unless(insn, ls64);
}

void decode_register_load_store(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  if (bit(w, 24)) {
    check_size_opc(insn, Addressing::UnsignedOffset);
    return;
  }
  const uint32_t op4 = field(w, 11, 10);
  if (!bit(w, 21)) {
    static constexpr Addressing kModes[] = {Addressing::Unscaled, Addressing::PostIndex, Addressing::Unprivileged,
                                            Addressing::PreIndex};
    check_size_opc(insn, kModes[op4]);
    return;
  }
  if (op4 == 0b00) {
    decode_atomic(insn);
  } else if (op4 == 0b10) {  // register offset: option<1> must be 1
    if (!bit(w, 14)) {
      insn.cls = InsnClass::Unallocated;
      return;
    }
    check_size_opc(insn, Addressing::RegisterOffset);
  } else {  // LDRAA, LDRAB
    unallocated_unless(insn, field(w, 31, 30) == 0b11 && !bit(w, 26));
  }
}

// 0 Q 0011 0 0x L ... : LD1-LD4/ST1-ST4 multiple and single structures
void decode_simd_structures(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  if (bit(w, 31)) {
    insn.cls = InsnClass::Unallocated;
    return;
  }
  const bool single = bit(w, 24), post_index = bit(w, 23), load = bit(w, 22);
  if (!single) {
    const bool register_field_ok = post_index ? !bit(w, 21) : field(w, 21, 16) == 0;
    const uint32_t opcode = field(w, 15, 12), size = field(w, 11, 10);
    const bool known = opcode == 0b0000 || opcode == 0b0010 || opcode == 0b0100 || opcode == 0b0110 ||
                       opcode == 0b0111 || opcode == 0b1000 || opcode == 0b1010;
    const bool interleaved = opcode == 0b0000 || opcode == 0b0100 || opcode == 0b1000;
    const bool reserved_size = interleaved && size == 0b11 && !bit(w, 30);
    unallocated_unless(insn, register_field_ok && known && !reserved_size);
    return;
  }
  if (!post_index && field(w, 20, 16) != 0) {
    insn.cls = InsnClass::Unallocated;
    return;
  }
  const uint32_t opcode = field(w, 15, 13), size = field(w, 11, 10);
  const bool s = bit(w, 12);
  switch (opcode >> 1) {
    case 0b00: return;                                                     // byte lanes
    case 0b01: unallocated_unless(insn, (size & 1) == 0); return;          // halfword lanes
    case 0b10: unallocated_unless(insn, size == 0 || (size == 1 && !s)); return;  // word / doubleword
    default: unallocated_unless(insn, load && !s); return;                 // LD1R..LD4R
  }
}

}  // namespace

void decode_load_store(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  switch (field(w, 29, 28)) {
    case 0b00:
      if (bit(w, 26)) {
        decode_simd_structures(insn);
      } else if (bit(w, 24)) {
        insn.cls = InsnClass::Unallocated;
      } else {
        decode_exclusive_ordered_cas(insn);
      }
      return;
    case 0b01:
      if (!bit(w, 24)) {
        decode_load_literal(insn);
      } else if (bit(w, 21)) {
        decode_memory_tags(insn);
      } else if (field(w, 11, 10) == 0b00) {
        decode_rcpc_unscaled(insn);
      } else if (field(w, 11, 10) == 0b01) {
        decode_memory_copy_set(insn);
      } else {
        insn.cls = InsnClass::Unallocated;
      }
      return;
    case 0b10:
      decode_pair(insn);
      return;
    default:
      decode_register_load_store(insn);
      return;
  }
}

}  // namespace xprobe::insn::arm64::detail
