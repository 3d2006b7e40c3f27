#pragma once
// Internal: per-opcode allocation checks of the larger Advanced SIMD groups (word = the
// instruction; scalar = the scalar form of the group).
#include <cstdint>

namespace xprobe::insn::arm64::detail {

bool simd_by_element(uint32_t word, bool scalar);
bool simd_shift_by_immediate(uint32_t word, bool scalar);
bool simd_three_same(uint32_t word, bool scalar);
bool simd_three_same_fp16(uint32_t word, bool scalar);
bool simd_three_extension(uint32_t word, bool scalar);
bool simd_three_different(uint32_t word, bool scalar);
bool simd_two_register_misc(uint32_t word, bool scalar);
bool simd_two_register_misc_fp16(uint32_t word, bool scalar);
bool simd_across_lanes(uint32_t word, bool scalar);  // scalar: the pairwise group

}  // namespace xprobe::insn::arm64::detail
