#include "insn/arm64/arm64_insn.h"
#include "insn/arm64/decode_groups.h"

namespace xprobe::insn::arm64 {

using detail::bit;
using detail::field;

uint32_t load_word(std::span<const uint8_t, 4> bytes) {
  return uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 | uint32_t{bytes[2]} << 16 | uint32_t{bytes[3]} << 24;
}

// The top-level A64 index: op0 = bit 31, op1 = bits 28:25.
Arm64Insn decode(uint32_t word, uint64_t address) {
  Arm64Insn insn;
  insn.word = word;
  insn.address = address;
  insn.cls = InsnClass::Other;
  const uint32_t op1 = field(word, 28, 25);
  switch (op1) {
    case 0b0000:
      // op0 = 0: reserved (UDF when bits 31:16 are zero, permanently undefined); op0 = 1: SME.
      insn.cls = bit(word, 31) ? InsnClass::Sve : InsnClass::Unallocated;
      break;
    case 0b0010:
      insn.cls = InsnClass::Sve;
      break;
    case 0b0001:
    case 0b0011:
      insn.cls = InsnClass::Unallocated;
      break;
    case 0b1000:
    case 0b1001:
      detail::decode_data_processing_immediate(insn);
      break;
    case 0b1010:
    case 0b1011:
      detail::decode_branch_exception_system(insn);
      break;
    case 0b0101:
    case 0b1101:
      detail::decode_data_processing_register(insn);
      break;
    case 0b0111:
    case 0b1111:
      detail::decode_simd_fp(insn);
      break;
    default:  // x1x0
      detail::decode_load_store(insn);
      break;
  }
  return insn;
}

std::optional<Arm64Insn> decode(std::span<const uint8_t> bytes, uint64_t address) {
  if (bytes.size() < 4) return std::nullopt;
  return decode(load_word(bytes.first<4>()), address);
}

}  // namespace xprobe::insn::arm64
