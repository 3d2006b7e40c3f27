#pragma once
// Internal: the decoders of the A64 top-level encoding groups. Each fills `insn` (its class
// starts as Other) and sets Unallocated for encodings the group's table leaves unallocated.
#include <cstdint>

#include "insn/arm64/arm64_insn.h"

namespace xprobe::insn::arm64::detail {

constexpr uint32_t field(uint32_t word, unsigned high, unsigned low) {
  return (word >> low) & ((1u << (high - low + 1)) - 1u);
}
constexpr bool bit(uint32_t word, unsigned n) { return ((word >> n) & 1u) != 0; }
constexpr int64_t sign_extend(uint64_t value, unsigned width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  return static_cast<int64_t>((value ^ sign) - sign);
}

void decode_data_processing_immediate(Arm64Insn& insn);
void decode_branch_exception_system(Arm64Insn& insn);
void decode_system(Arm64Insn& insn);
void decode_load_store(Arm64Insn& insn);
void decode_data_processing_register(Arm64Insn& insn);
void decode_simd_fp(Arm64Insn& insn);

}  // namespace xprobe::insn::arm64::detail
