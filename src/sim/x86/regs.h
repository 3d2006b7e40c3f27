#pragma once
// The x86-64 register state the simulator works on: only what branch instructions read or
// write. General registers are indexed by their encoding number (rax=0 ... r15=15).
#include <cstdint>

namespace xprobe::sim::x86 {

enum Gpr : uint8_t { kRax, kRcx, kRdx, kRbx, kRsp, kRbp, kRsi, kRdi, kR8, kR9, kR10, kR11, kR12, kR13, kR14, kR15 };

namespace flag {
inline constexpr uint64_t kCarry = 1u << 0;
inline constexpr uint64_t kParity = 1u << 2;
inline constexpr uint64_t kZero = 1u << 6;
inline constexpr uint64_t kSign = 1u << 7;
inline constexpr uint64_t kOverflow = 1u << 11;
}  // namespace flag

struct X86Regs {
  uint64_t gpr[16] = {};
  uint64_t rip = 0;
  uint64_t rflags = 0;
  uint64_t fs_base = 0;  // for fs:/gs: memory operands
  uint64_t gs_base = 0;
};

}  // namespace xprobe::sim::x86
